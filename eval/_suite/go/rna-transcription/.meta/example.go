package strand

import "strings"

var complement = strings.NewReplacer("G", "C", "C", "G", "T", "A", "A", "U")

// ToRNA returns the RNA complement of the DNA strand dna.
func ToRNA(dna string) string {
	return complement.Replace(dna)
}
