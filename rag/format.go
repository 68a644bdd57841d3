package rag

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// FormatHits writes hits for a person (path:lines, score, what the chunk is,
// and its best lines indented) or, with jsonOut, as one JSON object per line
// with path, start_line, end_line, score, kind, language, context, snippet.
func FormatHits(w io.Writer, hits []Hit, jsonOut bool) error {
	if jsonOut {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, h := range hits {
			if err := enc.Encode(h); err != nil {
				return err
			}
		}
		return nil
	}
	if len(hits) == 0 {
		_, err := fmt.Fprintln(w, "no results")
		return err
	}
	for i, h := range hits {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		what := h.Kind
		if h.Language != "" {
			what += ", " + h.Language
		}
		if h.Context != "" {
			what += ": " + h.Context
		}
		if _, err := fmt.Fprintf(w, "%s:%d-%d  score %.4f  (%s)\n", h.Path, h.StartLine, h.EndLine, h.Score, what); err != nil {
			return err
		}
		for _, l := range strings.Split(h.Snippet, "\n") {
			if _, err := fmt.Fprintf(w, "    %s\n", l); err != nil {
				return err
			}
		}
	}
	return nil
}

// String summarises an update in one line for people, e.g. "115 files: 3 new
// or changed, 112 unchanged, 2 skipped, 0 removed; chunks: 40 embedded, 12
// reused, 9 removed, 3547 in the index; 0.21s".
func (s Stats) String() string {
	return fmt.Sprintf("%d files: %d new or changed, %d unchanged, %d skipped, %d removed; chunks: %d embedded, %d reused, %d removed, %d in the index; %.2fs",
		s.FilesSeen, s.FilesIndexed, s.FilesUnchanged, s.FilesSkipped, s.FilesRemoved,
		s.ChunksEmbedded, s.ChunksReused, s.ChunksRemoved, s.Chunks, s.Duration.Seconds())
}
