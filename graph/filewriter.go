package graph

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// fileWriter appends to one run of a FileCheckpointer while holding its lock.
type fileWriter struct {
	c       *FileCheckpointer
	runID   string
	rd      string
	lockf   *os.File
	seg     storeFile // current segment, opened for append
	segPath string
	size    int64 // end of the last committed record in seg
	buf     []byte

	dirDirty, rootDirty bool  // directory entries not yet synced
	broken              error // a failed write could not be undone
	closed              bool
}

// Open implements Checkpointer.
func (c *FileCheckpointer) Open(_ context.Context, runID string, create bool) (RunWriter, error) {
	rd, err := c.runDir(runID)
	if err != nil {
		return nil, err
	}
	w := &fileWriter{c: c, runID: runID, rd: rd}
	if create {
		if err := c.fs.Mkdir(rd, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("run %s: create %s: %w", runID, rd, err)
		}
		w.rootDirty = true
	} else if _, err := c.segments(runID, rd); err != nil {
		return nil, err
	}
	lf, err := c.lock(runID, rd)
	if err != nil {
		return nil, err
	}
	w.lockf = lf
	if err := w.prepare(create); err != nil {
		_ = c.unlock(runID, lf)
		return nil, err
	}
	return w, nil
}

// prepare runs under the lock: a new run must still be empty; an existing
// run's last segment loses a torn tail and is opened for appending.
func (w *fileWriter) prepare(create bool) error {
	c := w.c
	if ents, err := c.fs.ReadDir(w.rd); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), segSuffix+".tmp") {
				_ = c.fs.Remove(filepath.Join(w.rd, e.Name())) // a rotation that never finished
			}
		}
	}
	segs, err := c.segments(w.runID, w.rd)
	if create {
		if err == nil {
			return fmt.Errorf("run %s: %w", w.runID, ErrRunExists)
		}
		if !errors.Is(err, ErrRunNotFound) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		sr, err := c.readSegment(s, true)
		if err != nil {
			return err
		}
		if len(sr.recs) == 0 {
			// A segment whose snapshot never completed (power loss during a rotation):
			// drop it and go on from the one before.
			if err := c.fs.Remove(s.path); err != nil {
				return fmt.Errorf("run %s: remove incomplete segment %s: %w", w.runID, s.path, err)
			}
			w.dirDirty = true
			continue
		}
		f, err := c.fs.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("run %s: open %s: %w", w.runID, s.path, err)
		}
		if sr.torn {
			if err := f.Truncate(int64(sr.valid)); err != nil {
				f.Close()
				return fmt.Errorf("run %s: cut torn tail of %s: %w", w.runID, s.path, err)
			}
		}
		w.seg, w.segPath, w.size = f, s.path, int64(sr.valid)
		return nil
	}
	return fmt.Errorf("run %s: %w", w.runID, ErrRunNotFound)
}

func (w *fileWriter) usable() error {
	if w.closed {
		return fmt.Errorf("run %s: writer closed", w.runID)
	}
	if w.broken != nil {
		return fmt.Errorf("run %s: store unusable after an earlier write failure: %w", w.runID, w.broken)
	}
	return nil
}

// Append implements RunWriter.
func (w *fileWriter) Append(_ context.Context, rec Record) error {
	if err := w.usable(); err != nil {
		return err
	}
	if !rec.Kind.valid() {
		return fmt.Errorf("run %s: invalid record kind %d", w.runID, rec.Kind)
	}
	if rec.Kind == RecordSnapshot {
		return w.rotate(rec)
	}
	if w.seg == nil {
		return fmt.Errorf("run %s: the first record must be a snapshot", w.runID)
	}
	w.buf = appendFrame(w.buf[:0], rec)
	return w.write()
}

// AppendBatch implements BatchWriter: the records between two snapshots go
// out in one write(2); a snapshot starts its segment as Append does.
func (w *fileWriter) AppendBatch(ctx context.Context, recs []Record) error {
	if err := w.usable(); err != nil {
		return err
	}
	for i := 0; i < len(recs); {
		if recs[i].Kind == RecordSnapshot || w.seg == nil {
			if err := w.Append(ctx, recs[i]); err != nil {
				return err
			}
			i++
			continue
		}
		w.buf = w.buf[:0]
		for ; i < len(recs) && recs[i].Kind != RecordSnapshot; i++ {
			if !recs[i].Kind.valid() {
				return fmt.Errorf("run %s: invalid record kind %d", w.runID, recs[i].Kind)
			}
			w.buf = appendFrame(w.buf, recs[i])
		}
		if err := w.write(); err != nil {
			return err
		}
	}
	return nil
}

// write appends the frames in w.buf to the current segment with one write(2).
func (w *fileWriter) write() error {
	if _, err := w.seg.Write(w.buf); err != nil {
		// Take back whatever part of the record reached the file, so that
		// nothing partial stays behind the next record.
		if terr := w.seg.Truncate(w.size); terr != nil {
			w.broken = fmt.Errorf("write %s: %v; then truncate: %w", w.segPath, err, terr)
		}
		return fmt.Errorf("run %s: append to %s: %w", w.runID, w.segPath, err)
	}
	w.size += int64(len(w.buf))
	if w.c.syncEach {
		if err := w.seg.Sync(); err != nil {
			return fmt.Errorf("run %s: sync %s: %w", w.runID, w.segPath, err)
		}
	}
	return nil
}

// rotate starts a new segment with a snapshot. The segment is written under a
// temporary name and renamed when complete, so a crash never leaves a segment
// without its snapshot; the previous segment is synced first, so a power loss
// cannot keep the newer segment and lose the end of the older one.
func (w *fileWriter) rotate(rec Record) error {
	path := filepath.Join(w.rd, segName(rec.Step))
	if path == w.segPath {
		return fmt.Errorf("run %s: a segment for step %d exists already", w.runID, rec.Step)
	}
	tmp := path + ".tmp"
	f, err := w.c.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("run %s: create segment: %w", w.runID, err)
	}
	fail := func(err error) error {
		f.Close()
		_ = w.c.fs.Remove(tmp)
		return fmt.Errorf("run %s: new segment %s: %w", w.runID, path, err)
	}
	w.buf = appendFrame(append(w.buf[:0], segMagic...), rec)
	if _, err := f.Write(w.buf); err != nil {
		return fail(err)
	}
	if w.c.syncEach {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if w.seg != nil {
		if err := w.seg.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := w.c.fs.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if w.seg != nil {
		_ = w.seg.Close()
	}
	w.seg, w.segPath, w.size = f, path, int64(len(w.buf))
	w.dirDirty = true
	if w.c.syncEach {
		return w.syncDirs()
	}
	return nil
}

func (w *fileWriter) syncDirs() error {
	if w.dirDirty {
		if err := syncDir(w.c.fs, w.rd); err != nil {
			return fmt.Errorf("run %s: sync %s: %w", w.runID, w.rd, err)
		}
		w.dirDirty = false
	}
	if w.rootDirty {
		if err := syncDir(w.c.fs, w.c.dir); err != nil {
			return fmt.Errorf("run %s: sync %s: %w", w.runID, w.c.dir, err)
		}
		w.rootDirty = false
	}
	return nil
}

func syncDir(fsys fileSystem, dir string) error {
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Sync implements RunWriter: the segment, then any new directory entries.
func (w *fileWriter) Sync(context.Context) error {
	if err := w.usable(); err != nil {
		return err
	}
	if w.seg != nil {
		if err := w.seg.Sync(); err != nil {
			return fmt.Errorf("run %s: sync %s: %w", w.runID, w.segPath, err)
		}
	}
	return w.syncDirs()
}

// Prune implements RunWriter: it deletes the segments before the one holding
// keepFrom; the current segment is never deleted.
func (w *fileWriter) Prune(_ context.Context, keepFrom int) (int64, error) {
	if err := w.usable(); err != nil {
		return 0, err
	}
	segs, err := w.c.segments(w.runID, w.rd)
	if err != nil {
		return 0, err
	}
	keep := 0
	for i, s := range segs {
		if s.first <= keepFrom {
			keep = i
		}
	}
	var freed int64
	for _, s := range segs[:keep] {
		if s.path == w.segPath {
			break
		}
		if st, err := os.Stat(s.path); err == nil {
			freed += st.Size()
		}
		if err := w.c.fs.Remove(s.path); err != nil {
			return freed, fmt.Errorf("run %s: prune %s: %w", w.runID, s.path, err)
		}
		w.dirDirty = true
	}
	return freed, nil
}

// Close implements RunWriter: it releases the lock; it does not sync.
func (w *fileWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.seg != nil {
		err = w.seg.Close()
	}
	if uerr := w.c.unlock(w.runID, w.lockf); err == nil {
		err = uerr
	}
	return err
}
