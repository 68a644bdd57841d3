package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// JSONLSink writes each event as one JSON line, for audit logs. A failed write
// does not stop the run: the first error is kept and reported by Err and Close.
type JSONLSink struct {
	mu  sync.Mutex
	w   io.Writer
	f   *os.File // set when the sink owns a file
	err error
	buf []byte
}

// NewJSONLSink writes to w.
func NewJSONLSink(w io.Writer) *JSONLSink { return &JSONLSink{w: w} }

// OpenJSONLSink appends to the file at path, creating it (0600) and its
// directory (0700). A last line cut short (a process killed while writing
// it) is closed with a newline first, so the next event starts a line of its
// own instead of being swallowed by the torn one.
func OpenJSONLSink(path string) (*JSONLSink, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("graph: event log %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("graph: event log %s: %w", path, err)
	}
	if err := closeTornLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("graph: event log %s: %w", path, err)
	}
	return &JSONLSink{w: f, f: f}, nil
}

// closeTornLine ends the file with a newline if its last line has none.
func closeTornLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.Write([]byte{'\n'})
	return err
}

// Handle implements Sink: one write per line, so lines never interleave.
func (s *JSONLSink) Handle(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	b, err := json.Marshal(ev)
	if err != nil {
		s.err = fmt.Errorf("graph: encode %s event: %w", ev.Kind, err)
		return
	}
	s.buf = append(append(s.buf[:0], b...), '\n')
	if _, err := s.w.Write(s.buf); err != nil {
		s.err = fmt.Errorf("graph: write event log: %w", err)
	}
}

// Err returns the first write error, if any.
func (s *JSONLSink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close syncs and closes the file the sink opened, and returns the first error.
func (s *JSONLSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		if err := s.f.Sync(); err != nil && s.err == nil {
			s.err = fmt.Errorf("graph: sync event log: %w", err)
		}
		if err := s.f.Close(); err != nil && s.err == nil {
			s.err = fmt.Errorf("graph: close event log: %w", err)
		}
		s.f = nil
	}
	return s.err
}
