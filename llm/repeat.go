package llm

import (
	"errors"
	"strings"
)

// errLooping ends a stream whose reply loops.
var errLooping = errors.New("the reply is looping")

// A reply that has started to loop is stopped while it streams, not left to
// fill its reply budget: on a CPU every token of a 512-token loop is a tenth
// of a second of someone's machine (SmolLM2 wrote one paragraph over and over
// until the limit). The test is deliberately narrow, so code is not cut: the
// last block of one to maxRepeatBlock lines is the same as the two blocks
// before it, and the block holds at least minRepeatChars of text.
const (
	maxRepeatBlock = 4
	repeatTimes    = 3
	minRepeatChars = 40
)

// looping says whether text ends in a block of lines repeated repeatTimes
// times in a row. Only the complete lines at the end are read.
func looping(text string) bool {
	end := strings.LastIndexByte(text, '\n')
	if end < 0 {
		return false
	}
	// The last maxRepeatBlock*repeatTimes complete lines, newest last.
	want := maxRepeatBlock * repeatTimes
	lines := make([]string, 0, want)
	for i := end; i > 0 && len(lines) < want; {
		j := strings.LastIndexByte(text[:i], '\n')
		lines = append(lines, strings.TrimSpace(text[j+1:i]))
		i = j
		if j < 0 {
			break
		}
	}
	for l, r := 0, len(lines)-1; l < r; l, r = l+1, r-1 {
		lines[l], lines[r] = lines[r], lines[l]
	}
	for size := 1; size <= maxRepeatBlock && size*repeatTimes <= len(lines); size++ {
		last := lines[len(lines)-size:]
		chars := 0
		for _, l := range last {
			chars += len(l)
		}
		if chars < minRepeatChars {
			continue
		}
		same := true
		for k := 2; k <= repeatTimes && same; k++ {
			block := lines[len(lines)-k*size : len(lines)-(k-1)*size]
			for i := range block {
				if block[i] != last[i] {
					same = false
					break
				}
			}
		}
		if same {
			return true
		}
	}
	return false
}
