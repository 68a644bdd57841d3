package rag

import (
	"context"
	"math"
	"runtime"
	"sync"
)

// OfflineDimensions is the size of the offline embedder's vectors.
const OfflineDimensions = 512

// offlineEmbedder hashes features of a text into a fixed-size vector (the
// "hashing trick"): stemmed words and identifier parts, whole identifiers, and
// character trigrams of each word for near matches. Feature counts are
// damped (1+ln n) and the vector is L2-normalised, so the dot product is a
// cosine similarity. It needs no model and no server, and is deterministic.
type offlineEmbedder struct{ dims int }

// NewOfflineEmbedder returns the embedder for --offline runs and tests.
func NewOfflineEmbedder() Embedder { return offlineEmbedder{dims: OfflineDimensions} }

func (e offlineEmbedder) Name() string    { return "offline-hash-v1" }
func (e offlineEmbedder) Dimensions() int { return e.dims }

// Embed embeds each text, spreading a batch over the CPUs; it only fails
// when ctx is done.
func (e offlineEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	workers := min(runtime.GOMAXPROCS(0), (len(texts)+7)/8)
	var wg sync.WaitGroup
	for w := range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts := map[uint64]float32{}
			for i := w; i < len(texts); i += max(workers, 1) {
				if ctx.Err() != nil {
					return
				}
				clear(counts)
				features(texts[i], counts)
				out[i] = e.vector(counts)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

const (
	weightWord    = 1.0
	weightTrigram = 0.5
)

// features counts the feature hashes of text; the low bit of a hash tells a
// word (0) from a trigram (1).
func features(text string, counts map[uint64]float32) {
	words(text, func(w string, part bool) {
		if isStop(w) || len(w) < 2 {
			return
		}
		counts[hashString(0, stem(w))&^1]++
		if part {
			return // trigrams of the whole identifier cover its parts
		}
		// Trigrams of "<word>" so that prefixes and suffixes count.
		var buf [64]byte
		b := append(buf[:0], '<')
		b = append(b, w...)
		b = append(b, '>')
		for j := 0; j+3 <= len(b); j++ {
			counts[hashBytes(1, b[j:j+3])|1]++
		}
	})
}

func (e offlineEmbedder) vector(counts map[uint64]float32) []float32 {
	v := make([]float32, e.dims)
	for h, c := range counts {
		w := float32(weightWord)
		if h&1 == 1 {
			w = weightTrigram
		}
		w *= 1 + float32(math.Log(float64(c)))
		idx := int((h >> 1) % uint64(e.dims))
		if h&(1<<63) != 0 {
			w = -w
		}
		v[idx] += w
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0] = 1 // chromem needs a unit vector; an empty text matches nothing in particular
		return v
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// FNV-1a, inline: deterministic across processes (vectors are persisted).
func hashString(seed uint64, s string) uint64 {
	h := uint64(14695981039346656037) ^ seed
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix(h)
}

func hashBytes(seed uint64, s []byte) uint64 {
	h := uint64(14695981039346656037) ^ seed
	for _, c := range s {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return mix(h)
}

// mix spreads FNV's weak low bits (splitmix64 finaliser).
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}
