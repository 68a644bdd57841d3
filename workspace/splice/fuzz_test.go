package splice

import (
	"context"
	"strings"
	"testing"
)

// Model output never panics the splice, and what it returns parses.
func FuzzGoRewrite(f *testing.F) {
	for _, s := range []string{meanFixed, "func Mean(", "package stats\n\n" + meanFixed, "import \"x\"\nfunc Join() {}", "// ...\nfunc (a *Acc) Add(x int) {}", "type Acc struct{}\nvar x, y = 1, 2", "func Average() {}"} {
		f.Add(s, "Mean")
	}
	f.Fuzz(func(t *testing.T, code, target string) {
		res, err := Parser{}.Rewrite(context.Background(), Request{Path: "stats.go", Src: statsGo, Target: target, Code: code,
			Rename: func(n string) bool { return strings.HasPrefix(n, "A") }})
		if err != nil {
			return
		}
		if perr := (Parser{}).Check(context.Background(), "stats.go", []byte(res.Content)); perr != nil {
			t.Fatalf("a rewrite that does not parse was returned: %v\n%s", perr, res.Content)
		}
	})
}
