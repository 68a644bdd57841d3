package runview

import (
	"slices"
	"testing"
)

func TestFailureGistFindsTheFailingLines(t *testing.T) {
	cases := []struct {
		name, feedback string
		want           []string
	}{
		{"go test", "Gate \"test\" (go test ./...) failed, exit code 1. Output (tail):\nok  \texample.com/a\t0.1s\n--- FAIL: TestTopWords (0.00s)\n    topwords_test.go:12: TopWords = [c a], want [b a]\nFAIL\nFAIL\texample.com/textstats\t0.002s\n",
			[]string{"--- FAIL: TestTopWords (0.00s)", "topwords_test.go:12: TopWords = [c a], want [b a]", "FAIL"}},
		{"criteria", "Acceptance criteria not met:\n- the table test covers ties: no test with equal counts\n",
			[]string{"- the table test covers ties: no test with equal counts"}},
		{"one line", "implementor loop: attempt 2 produced the same change as attempt 1", nil},
		{"empty", "", nil},
	}
	for _, tc := range cases {
		if got := FailureGist(tc.feedback); !slices.Equal(got, tc.want) {
			t.Errorf("%s: FailureGist = %q, want %q", tc.name, got, tc.want)
		}
	}
}
