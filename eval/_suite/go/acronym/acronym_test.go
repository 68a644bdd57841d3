package acronym

import "testing"

func TestAbbreviate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Portable Network Graphics", "PNG"}, {"Ruby on Rails", "ROR"},
		{"First In, First Out", "FIFO"}, {"GNU Image Manipulation Program", "GIMP"},
		{"Complementary metal-oxide semiconductor", "CMOS"},
		{"Something - I made up from thin air", "SIMUFTA"},
		{"The Road _Not_ Taken", "TRNT"},
	} {
		if got := Abbreviate(tc.in); got != tc.want {
			t.Errorf("Abbreviate(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
