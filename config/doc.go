// Package config loads, merges and validates the configuration of lemmings.
//
// Sources, lowest to highest: Default() → user file → project file →
// environment → flags. Every value remembers where it came from (Sources), and
// every problem names its file, line and dotted key (Error). The package
// imports nothing else of lemmings.
package config
