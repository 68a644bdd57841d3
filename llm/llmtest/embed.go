package llmtest

import (
	"hash/fnv"
	"math"
)

// Vector is the server's default embedding of text: a unit vector of dim
// dimensions drawn from a generator seeded by a hash of the text. The same text
// always gives the same vector; different texts give unrelated ones.
func Vector(text string, dim int) []float32 {
	if dim <= 0 {
		dim = 64
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	state := h.Sum64()
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		// splitmix64: a tiny generator good enough for spreading vectors.
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		f := float64(z>>11)/float64(1<<53)*2 - 1
		v[i] = float32(f)
		norm += f * f
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		v[0], norm = 1, 1
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}
