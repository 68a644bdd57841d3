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
	"os"

	"github.com/lemmings-dev/lemmings/internal/tinymodel"
)

func main() {
	out := flag.String("out", ".", "folder to write the models and Modelfiles into")
	seed := flag.Uint64("seed", 1, "random seed: the same seed writes byte-identical files")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "tinymodel: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	set, err := tinymodel.Generate(*out, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tinymodel:", err)
		os.Exit(1)
	}
	fmt.Println(set.ChatGGUF)
	fmt.Println(set.EmbedGGUF)
	for _, k := range tinymodel.Kinds() {
		fmt.Println(set.Modelfiles[k])
	}
}
