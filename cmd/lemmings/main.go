// Command lemmings carries out a remit on a git repository with a team of LLM
// agents wired as a typed state graph. See the README for a newcomer's path.
package main

import (
	"os"

	// The binary is its own sandbox helper: the helper's init confines
	// the command it was started for and execs it, before main runs.
	_ "github.com/lemmings-dev/lemmings/sandbox/helper"
)

func main() {
	os.Exit(execute(os.Args[1:]))
}
