package textstats

import "testing"

func TestWordCount(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"one", 1},
		{"the quick  brown\tfox", 4},
	}
	for _, c := range cases {
		if got := WordCount(c.text); got != c.want {
			t.Errorf("WordCount(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestMeanWordLength(t *testing.T) {
	cases := []struct {
		text string
		want float64
	}{
		{"", 0},
		{"abcd", 4},
		{"go is fun", 7.0 / 3.0},
	}
	for _, c := range cases {
		if got := MeanWordLength(c.text); got != c.want {
			t.Errorf("MeanWordLength(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
