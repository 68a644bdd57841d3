package collatzconjecture

// CollatzConjecture counts the steps from n to 1.
func CollatzConjecture(n int) (int, error) {
	return 0, nil
}
