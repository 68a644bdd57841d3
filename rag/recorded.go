package rag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoIndex says that a directory holds no index yet.
var ErrNoIndex = errors.New("no index")

// Recorded returns the embedder an index in dir was built with (its name and
// vector size, from the manifest), without opening or changing anything: a
// search must embed its query with that embedder, and must not create an
// index where there is none.
func Recorded(dir string) (name string, dims int, err error) {
	data, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, ErrNoIndex
	}
	if err != nil {
		return "", 0, err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return "", 0, fmt.Errorf("index manifest %s is corrupted: %w", filepath.Join(dir, manifestFile), err)
	}
	return m.Embedder, m.Dimensions, nil
}

// IsOffline reports whether name is the offline embedder's.
func IsOffline(name string) bool { return name == NewOfflineEmbedder().Name() }

// KeywordOnly stands in for an embedder that cannot be reached: it has the
// recorded name and size, so the index opens without being rebuilt, and it
// refuses to embed, so only keyword searches (SearchWith Keyword) work.
func KeywordOnly(name string, dims int, why error) Embedder {
	return keywordOnly{name: name, dims: dims, why: why}
}

type keywordOnly struct {
	name string
	dims int
	why  error
}

func (k keywordOnly) Name() string    { return k.name }
func (k keywordOnly) Dimensions() int { return k.dims }
func (k keywordOnly) Embed(context.Context, []string) ([][]float32, error) {
	return nil, fmt.Errorf("embedder %s unavailable: %w", k.name, k.why)
}
