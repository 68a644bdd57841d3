package workspace

import (
	"slices"
	"strings"
)

// Below this similarity the closest lines are not worth showing.
const minSimilarity = 0.5

// At most this many SEARCH lines are scored, to bound the cost on huge blocks.
const maxScoredLines = 200

// noMatch builds the error for a SEARCH text that matches nowhere, with the
// window of file lines most similar to it.
func noMatch(content string, e Edit) *NoMatchError {
	err := &NoMatchError{Path: e.Path}
	if r := strings.TrimSpace(e.Replace); r != "" && strings.Contains(content, r) {
		err.AlreadyApplied = true
	}
	search := blockLines(e.Search)
	for len(search) > 0 && isBlank(search[0]) {
		search = search[1:]
	}
	for len(search) > 0 && isBlank(search[len(search)-1]) {
		search = search[:len(search)-1]
	}
	file := splitFileLines(content)
	if len(search) == 0 || len(file) == 0 {
		return err
	}
	start, sim := closestWindow(file, search)
	if sim < minSimilarity {
		return err
	}
	n := min(len(search), len(file)-start)
	lines := make([]string, n)
	for i := range n {
		lines[i] = file[start+i].text
	}
	err.Closest = strings.Join(lines, "\n") + "\n"
	err.StartLine = start + 1
	err.Similarity = sim
	return err
}

// closestWindow finds the run of len(search) file lines most similar to the
// search lines, by the mean similarity of line pairs. It returns the 0-based
// start and the similarity in [0, 1].
func closestWindow(file []fileLine, search []string) (int, float64) {
	scored := search
	if len(scored) > maxScoredLines {
		scored = scored[:maxScoredLines]
	}
	want := make([]lineGrams, len(scored))
	for i, s := range scored {
		want[i] = newLineGrams(s)
	}
	have := make([]lineGrams, len(file))
	for i, l := range file {
		have[i] = newLineGrams(l.text)
	}
	m := len(scored)
	best, bestStart := -1.0, 0
	last := max(len(file)-m, 0)
	for s := 0; s <= last; s++ {
		total := 0.0
		for j := 0; j < m && s+j < len(file); j++ {
			total += similarity(have[s+j], want[j])
		}
		if score := total / float64(m); score > best {
			best, bestStart = score, s
		}
	}
	return bestStart, best
}

// lineGrams is a line trimmed of its whitespace with its sorted character
// bigrams, for a cheap Dice similarity.
type lineGrams struct {
	text  string
	grams []uint64
}

func newLineGrams(s string) lineGrams {
	t := collapseSpace(s)
	r := []rune(t)
	g := make([]uint64, 0, max(len(r)-1, 0))
	for i := 0; i+1 < len(r); i++ {
		g = append(g, uint64(r[i])<<32|uint64(r[i+1]))
	}
	slices.Sort(g)
	return lineGrams{text: t, grams: g}
}

// similarity is the Dice coefficient of two lines' bigrams (1 for equal
// lines, 0 for nothing in common).
func similarity(a, b lineGrams) float64 {
	if a.text == b.text {
		return 1
	}
	if len(a.grams) == 0 || len(b.grams) == 0 {
		return 0
	}
	common, i, j := 0, 0, 0
	for i < len(a.grams) && j < len(b.grams) {
		switch {
		case a.grams[i] == b.grams[j]:
			common++
			i++
			j++
		case a.grams[i] < b.grams[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a.grams)+len(b.grams))
}
