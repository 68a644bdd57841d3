// Package textstats computes simple statistics about text.
package textstats

import "strings"

// Words splits text into words on white space.
func Words(text string) []string {
	return strings.Fields(text)
}

// WordCount returns the number of words in text.
func WordCount(text string) int {
	return len(Words(text))
}

func MeanWordLength(text string) float64 {
	words := Words(text)
	if len(words) == 0 {
		return 0
	}
	total := 0
	for _, w := range words {
		total += len(w)
	}
	return float64(total / len(words))
}
