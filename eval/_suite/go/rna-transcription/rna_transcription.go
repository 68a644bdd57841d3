package strand

// ToRNA returns the RNA complement of the DNA strand dna.
func ToRNA(dna string) string {
	panic("Please implement the ToRNA function")
}
