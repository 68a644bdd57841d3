package graph

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// faultFS fails writes once a byte budget is spent (a full disk), or refuses
// to create anything (a read-only store).
type faultFS struct {
	osFS
	mu       sync.Mutex
	budget   int64 // bytes that may still be written; < 0 means unlimited
	readOnly bool
	syncs    int
}

func (f *faultFS) take(n int) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.budget < 0 {
		return n, true
	}
	if int64(n) <= f.budget {
		f.budget -= int64(n)
		return n, true
	}
	k := int(f.budget)
	f.budget = 0
	return k, false
}

func (f *faultFS) Mkdir(p string, perm os.FileMode) error {
	if f.readOnly {
		return &os.PathError{Op: "mkdir", Path: p, Err: syscall.EROFS}
	}
	return f.osFS.Mkdir(p, perm)
}

func (f *faultFS) OpenFile(name string, flag int, perm os.FileMode) (storeFile, error) {
	if f.readOnly && flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EROFS}
	}
	file, err := f.osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{storeFile: file, fs: f}, nil
}

type faultFile struct {
	storeFile
	fs *faultFS
}

func (w *faultFile) Sync() error {
	w.fs.mu.Lock()
	w.fs.syncs++
	w.fs.mu.Unlock()
	return w.storeFile.Sync()
}

func (w *faultFile) Write(p []byte) (int, error) {
	n, ok := w.fs.take(len(p))
	if ok {
		return w.storeFile.Write(p)
	}
	// Part of the record reaches the disk, then the disk is full.
	k, _ := w.storeFile.Write(p[:n])
	return k, &os.PathError{Op: "write", Path: "segment", Err: syscall.ENOSPC}
}

func lastSegment(t *testing.T, dir, run string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, run, "*.seg"))
	if len(m) == 0 {
		t.Fatal("no segment")
	}
	return m[len(m)-1]
}

func TestDiskFullLeavesNoPartialCheckpoint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cp, _ := NewFileCheckpointer(dir)
	ffs := &faultFS{budget: -1}
	cp.fs = ffs
	g := New[simple]()
	var once sync.Once
	g.AddNode("a", func(_ context.Context, s simple) (simple, error) {
		s.N++
		s.Log = append(s.Log, strings.Repeat("x", 50))
		if s.N == 3 {
			once.Do(func() {
				ffs.mu.Lock()
				ffs.budget = 40 // the next record is cut after 40 bytes
				ffs.mu.Unlock()
			})
		}
		return s, nil
	}).AddEdge(Start, "a").AddConditionalEdges("a", func(s simple) string {
		if s.N < 6 {
			return "a"
		}
		return End
	}, "a", End)
	c := mustCompile(t, g, WithCheckpointer(cp))
	_, err := c.Run(ctx, "full", simple{})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "store step 3") {
		t.Fatalf("err = %v", err)
	}
	snap, err := c.State(ctx, "full")
	if err != nil || snap.Step != 2 || snap.State.N != 2 || snap.Status != StatusRunning {
		t.Fatalf("State after a full disk = %+v, %v", snap, err)
	}
	data, _ := os.ReadFile(lastSegment(t, dir, "full"))
	if sr, err := scanSegment(data, "seg"); err != nil || sr.torn {
		t.Fatalf("the segment keeps a partial record: torn=%v err=%v", sr.torn, err)
	}
	ffs.mu.Lock()
	ffs.budget = -1
	ffs.mu.Unlock()
	s, err := c.Resume(ctx, "full")
	if err != nil || s.N != 6 || len(s.Log) != 6 {
		t.Fatalf("Resume once space is back: %+v, %v", s, err)
	}
}

func TestReadOnlyStoreIsAnError(t *testing.T) {
	dir := t.TempDir()
	cp, _ := NewFileCheckpointer(dir)
	cp.fs = &faultFS{budget: -1, readOnly: true}
	c := mustCompile(t, line("a"), WithCheckpointer(cp))
	_, err := c.Run(context.Background(), "ro", simple{})
	if !errors.Is(err, syscall.EROFS) {
		t.Fatalf("err = %v", err)
	}
	runs, err := c.ListRuns(context.Background())
	if err != nil || len(runs) != 0 {
		t.Fatalf("ListRuns = %v, %v", runs, err)
	}
}

func TestTornTailIsRecoveredSilently(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cp, _ := NewFileCheckpointer(dir)
	c := mustCompile(t, line("a", "b", "c", "d"), WithCheckpointer(cp), WithInterruptBefore("c"))
	if _, err := c.Run(ctx, "t", simple{}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	seg := lastSegment(t, dir, "t")
	good, _ := os.ReadFile(seg)
	// Half of a further record, as a kill during write(2) leaves it.
	frame := appendFrame(nil, Record{Kind: RecordDelta, Step: 3, Data: []byte("a record that never finished")})
	for _, cut := range []int{1, 5, frameHeader, frameHeader + 3, len(frame) - 1} {
		if err := os.WriteFile(seg, append(append([]byte(nil), good...), frame[:cut]...), 0o644); err != nil {
			t.Fatal(err)
		}
		snap, err := c.State(ctx, "t")
		if err != nil || snap.Step != 2 || snap.Status != StatusPaused {
			t.Fatalf("cut at %d: State = %+v, %v", cut, snap, err)
		}
		if _, err := c.History(ctx, "t"); err != nil {
			t.Fatalf("cut at %d: History: %v", cut, err)
		}
		if runs, err := c.ListRuns(ctx); err != nil || len(runs) != 1 || runs[0].Step != 2 {
			t.Fatalf("cut at %d: ListRuns = %+v, %v", cut, runs, err)
		}
	}
	s, err := c.Resume(ctx, "t")
	if err != nil || s.N != 4 {
		t.Fatalf("Resume over a torn tail: %+v, %v", s, err)
	}
	data, _ := os.ReadFile(seg)
	if sr, err := scanSegment(data, seg); err != nil || sr.torn {
		t.Fatalf("after resume: torn=%v err=%v", sr.torn, err)
	}
}

func TestCorruptionIsAnErrorNamingTheFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cp, _ := NewFileCheckpointer(dir)
	c := mustCompile(t, line("a", "b", "c"), WithCheckpointer(cp))
	if _, err := c.Run(ctx, "k", simple{}); err != nil {
		t.Fatal(err)
	}
	seg := lastSegment(t, dir, "k")
	good, _ := os.ReadFile(seg)
	sr, _ := scanSegment(good, seg)
	second := len(segMagic) + frameOver + 1 + 1 + len(sr.recs[0].Data) // start of the second record
	cases := map[string]func(b []byte){
		"a flipped payload byte":   func(b []byte) { b[second+frameHeader+6] ^= 0x40 },
		"a damaged length":         func(b []byte) { b[second] ^= 0x01 },
		"a damaged checksum":       func(b []byte) { b[second+9] ^= 0xff },
		"a bad segment header":     func(b []byte) { b[0] = 'X' },
		"garbage after the end":    func(b []byte) { copy(b[len(b)-4:], "zzzz") },
		"a cut before a later one": nil,
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			b := append([]byte(nil), good...)
			if damage == nil {
				// A torn record in a segment that is not the last one.
				next := filepath.Join(dir, "k", segName(99))
				defer os.Remove(next)
				os.WriteFile(next, good[:len(good)], 0o644)
				b = b[:len(b)-3]
			} else {
				damage(b)
			}
			if err := os.WriteFile(seg, b, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(seg, good, 0o644)
			_, err := c.History(ctx, "k")
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), seg) {
				t.Fatalf("History: %v", err)
			}
			if _, err := c.Resume(ctx, "k"); err == nil {
				t.Fatal("Resume over corruption succeeded")
			}
		})
	}
}

func TestTwoWritersAreRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cp1, _ := NewFileCheckpointer(dir)
	cp2, _ := NewFileCheckpointer(dir) // a second handle: its own file descriptors, like another process
	c := mustCompile(t, line("a", "b"), WithCheckpointer(cp1), WithInterruptBefore("b"))
	if _, err := c.Run(ctx, "l", simple{}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	w, err := cp1.Open(ctx, "l", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp1.Open(ctx, "l", false); !errors.Is(err, ErrRunLocked) {
		t.Fatalf("same handle: %v", err)
	}
	_, err = cp2.Open(ctx, "l", false)
	if !errors.Is(err, ErrRunLocked) || !strings.Contains(err.Error(), "held by pid") {
		t.Fatalf("second handle: %v", err)
	}
	runs, _ := cp2.Runs(ctx)
	if len(runs) != 1 || !runs[0].Active {
		t.Fatalf("Runs while locked: %+v", runs)
	}
	w.Close()
	c2 := mustCompile(t, line("a", "b"), WithCheckpointer(cp2))
	if s, err := c2.Resume(ctx, "l"); err != nil || s.N != 2 {
		t.Fatalf("Resume after the lock is released: %+v, %v", s, err)
	}
	if runs, _ := cp2.Runs(ctx); runs[0].Active {
		t.Fatalf("finished run still active")
	}
}
