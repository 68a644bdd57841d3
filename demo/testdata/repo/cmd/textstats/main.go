// Command textstats prints statistics about the text on standard input.
package main

import (
	"fmt"
	"io"
	"os"

	"example.com/textstats"
)

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "textstats:", err)
		os.Exit(1)
	}
	text := string(data)
	fmt.Printf("words: %d\n", textstats.WordCount(text))
	fmt.Printf("mean word length: %.2f\n", textstats.MeanWordLength(text))
}
