package llm

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// pack fits sections within budget tokens; see Compose. head is a fixed
// start of the user message (ComposeAfter's shared head), counted but never
// cut.
func pack(system, head string, secs []Section, budget int) ([]Section, []string, error) {
	total := func(ss []Section) int {
		return countMessages(promptMessages(system, joinHead(head, renderSections(ss))), nil)
	}
	if budget <= 0 || total(secs) <= budget {
		return secs, nil, nil
	}
	var required []Section
	for _, s := range secs {
		if s.Required {
			required = append(required, s)
		}
	}
	if need := total(required); need > budget {
		return nil, nil, &Error{Kind: KindContextTooLarge, PromptTokens: need, Window: budget,
			Err:  fmt.Errorf("the preambles, role template and required sections need about %d tokens, over the budget of %d", need, budget),
			Hint: "raise the prompt budget, shorten the preambles, or use a model with a larger context window"}
	}
	kept := slices.Clone(secs)
	alive := make([]bool, len(kept))
	for i := range alive {
		alive[i] = true
	}
	current := func() []Section {
		var out []Section
		for i, s := range kept {
			if alive[i] {
				out = append(out, s)
			}
		}
		return out
	}
	var dropped []string
	// 1. Whole sections, lowest priority first, while each is no bigger
	// than the overflow (it would have to go entirely anyway).
	order := make([]int, 0, len(kept))
	for i, s := range kept {
		if !s.Required {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		sa, sb := kept[order[a]], kept[order[b]]
		if sa.Priority != sb.Priority {
			return sa.Priority < sb.Priority
		}
		return order[a] > order[b]
	})
	for _, i := range order {
		over := total(current()) - budget
		if over <= 0 {
			break
		}
		alive[i] = false
		if size := over + budget - total(current()); size > over {
			alive[i] = true
			break
		}
		dropped = append(dropped, kept[i].Title)
	}
	// 2. Cut the largest of the lowest-priority optional sections left, at a
	// line boundary.
	plain := map[int]string{} // cut bodies without their marker
	for over := total(current()) - budget; over > 0; over = total(current()) - budget {
		j := -1
		for i, s := range kept {
			if !alive[i] || s.Required {
				continue
			}
			if j < 0 || s.Priority < kept[j].Priority || s.Priority == kept[j].Priority && len(s.Body) > len(kept[j].Body) {
				j = i
			}
		}
		if j < 0 {
			break // cannot happen: the required parts fit
		}
		body, wasCut := plain[j]
		if !wasCut {
			body = kept[j].Body
		}
		body = cutLines(body, len(kept[j].Body)-3*(over+markerTokens))
		if body == "" {
			alive[j] = false
			if wasCut {
				dropped = slices.DeleteFunc(dropped, func(s string) bool { return s == kept[j].Title+" (truncated)" })
			}
			dropped = append(dropped, kept[j].Title)
			continue
		}
		plain[j] = body
		cut := lineCount(secs[j].Body) - lineCount(body)
		kept[j].Body = body + fmt.Sprintf("\n[… %d more lines cut to fit the context budget]", cut)
		if !wasCut {
			dropped = append(dropped, kept[j].Title+" (truncated)")
		}
	}
	return current(), dropped, nil
}

// markerTokens is the room kept for the truncation marker.
const markerTokens = 16

// cutLines keeps the leading whole lines of body within maxBytes, and always
// at least one line fewer than body has, so each cut makes progress.
func cutLines(body string, maxBytes int) string {
	lines := strings.SplitAfter(strings.TrimRight(body, "\n"), "\n")
	size, n := 0, 0
	for n < len(lines)-1 && size+len(lines[n]) <= maxBytes {
		size += len(lines[n])
		n++
	}
	return strings.TrimRight(body[:size], "\n")
}

func lineCount(s string) int {
	return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
}
