// Command tinymodel writes the tiny random-weight test models and their Modelfiles:
//
//	go run ./cmd/tinymodel -out DIR -seed N
//
// then, against a running Ollama server, for example:
//
//	ollama create tiny-chat -f DIR/chat.Modelfile
//
// See docs/testing-real-ollama.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/lemmings-dev/lemmings/internal/tinymodel"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: it prints the paths it wrote and returns the exit code (2 for bad
// usage, 1 when writing fails).
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tinymodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", ".", "folder to write the models and Modelfiles into")
	seed := fs.Uint64("seed", 1, "random seed: the same seed writes byte-identical files")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tinymodel: unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return 2
	}
	set, err := tinymodel.Generate(*out, *seed)
	if err != nil {
		fmt.Fprintln(stderr, "tinymodel:", err)
		return 1
	}
	fmt.Fprintln(stdout, set.ChatGGUF)
	fmt.Fprintln(stdout, set.EmbedGGUF)
	for _, k := range tinymodel.Kinds() {
		fmt.Fprintln(stdout, set.Modelfiles[k])
	}
	return 0
}
