// Command lemmings carries out a remit on a git repository with a team of LLM
// agents wired as a typed state graph. See the README for a newcomer's path.
package main

import (
	"os"
)

func main() {
	os.Exit(execute(os.Args[1:]))
}
