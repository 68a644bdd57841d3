package workspace

import "testing"

func TestLineNumbersCopiedFromAViewAreStripped(t *testing.T) {
	e := Edit{Path: "a.go",
		Search:  "  11| \ttotal := 0\n  12| \tfor _, w := range words {\n  13| \n",
		Replace: "  11| \ttotal := 0.0\n\tcount := 0\n  12| \tfor _, w := range words {\n"}
	got, ok := StripLineNumbers(e)
	if !ok {
		t.Fatal("the prefixes were not recognised")
	}
	if got.Search != "\ttotal := 0\n\tfor _, w := range words {\n\n" {
		t.Errorf("search = %q", got.Search)
	}
	if got.Replace != "\ttotal := 0.0\n\tcount := 0\n\tfor _, w := range words {\n" {
		t.Errorf("replace = %q", got.Replace)
	}
	content := "func f() {\n\ttotal := 0\n\tfor _, w := range words {\n\n\t}\n}\n"
	if _, err := ApplyEdit(content, got); err != nil {
		t.Errorf("the stripped edit does not apply: %v", err)
	}
}

func TestTextThatMerelyStartsWithNumbersIsLeftAlone(t *testing.T) {
	for _, search := range []string{
		"1| a\nb\n",        // not every line
		"3| a\n2| b\n",     // numbers do not rise
		"10 | x\n11 | y\n", // not the view's form
		"",
	} {
		e := Edit{Path: "t.md", Search: search, Replace: "z\n"}
		if got, ok := StripLineNumbers(e); ok || got != e {
			t.Errorf("%q was changed to %+v", search, got)
		}
	}
}
