//go:build race

package buildtest

const raceEnabled = true
