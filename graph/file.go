package graph

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FileCheckpointer is the durable store: one directory per run under dir,
// holding append-only segment files of checksummed records. Its directories
// are created 0700 and its files 0600: a run's state is its owner's only. Each segment
// starts with a full snapshot, so the latest state loads from the last
// segment alone and pruning deletes whole older segments.
//
//	dir/<run-id>/lock                     flock'ed by the writer; says who holds it
//	dir/<run-id>/0000000000000000.seg     snapshot of step 0, then deltas
//	dir/<run-id>/0000000000006512.seg     next snapshot (step 6512), then deltas
//
// An Append is one write(2) of one record: once it returns, the record is in
// the OS and survives the death of the process. Durability against power loss
// comes from Sync (the runtime calls it before and after side-effect nodes and
// when a run stops) or from SyncEveryCommit. Readers in other processes see
// every committed record; a record being written is not yet visible.
type FileCheckpointer struct {
	dir      string
	fs       fileSystem
	syncEach bool

	mu      sync.Mutex
	writing map[string]bool // runs open for writing in this process

	// refuse, when set, names the runs the store must not read or list
	// (an error saying why), such as runs committed in the repository.
	refuse func(runID string) error
}

// FileOption configures a FileCheckpointer.
type FileOption func(*FileCheckpointer)

// SyncEveryCommit makes every Append durable (fsync) before it returns:
// nothing committed is lost even to a power loss, at the cost of one fsync
// per step (about half a millisecond on the disk measured).
func SyncEveryCommit() FileOption { return func(c *FileCheckpointer) { c.syncEach = true } }

// RefuseRuns makes the store treat the runs refuse names (a non-nil error)
// as not its own: not listed by Runs, and their reads and writes fail with
// that error. lemmings refuses the runs a repository commits under
// .lemmings/ (their state came with a clone, not from a run).
func RefuseRuns(refuse func(runID string) error) FileOption {
	return func(c *FileCheckpointer) { c.refuse = refuse }
}

// NewFileCheckpointer opens (creating if needed) a store rooted at dir.
func NewFileCheckpointer(dir string, opts ...FileOption) (*FileCheckpointer, error) {
	if !lockingSupported {
		return nil, errors.New("graph: the file checkpointer needs file locking, which this platform lacks")
	}
	c := &FileCheckpointer{dir: dir, fs: osFS{}, writing: map[string]bool{}}
	for _, o := range opts {
		o(c)
	}
	if err := c.fs.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("graph: checkpoint store %s: %w", dir, err)
	}
	return c, nil
}

// Dir returns the store's root directory.
func (c *FileCheckpointer) Dir() string { return c.dir }

const segSuffix = ".seg"

type segRef struct {
	path  string
	first int // step of the segment's snapshot
}

func segName(step int) string { return fmt.Sprintf("%016d%s", step, segSuffix) }

func (c *FileCheckpointer) runDir(runID string) (string, error) {
	if !ValidRunPath(runID) { // a subgraph's run is a folder inside its parent's
		return "", fmt.Errorf("%w: %q", ErrInvalidRunID, runID)
	}
	if c.refuse != nil {
		top, _, _ := strings.Cut(runID, "/")
		if err := c.refuse(top); err != nil {
			return "", err
		}
	}
	return filepath.Join(c.dir, runID), nil
}

// runSegments lists the segments of the run runID (checked as a name first).
func (c *FileCheckpointer) runSegments(runID string) ([]segRef, error) {
	rd, err := c.runDir(runID)
	if err != nil {
		return nil, err
	}
	return c.segments(runID, rd)
}

// segments lists a run's segments by step; a missing run gives ErrRunNotFound.
func (c *FileCheckpointer) segments(runID, rd string) ([]segRef, error) {
	ents, err := c.fs.ReadDir(rd)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s: %w", runID, ErrRunNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	var segs []segRef
	for _, e := range ents {
		name := e.Name()
		if len(name) != 16+len(segSuffix) || !strings.HasSuffix(name, segSuffix) {
			continue
		}
		step, err := strconv.ParseUint(name[:16], 10, 63)
		if err != nil {
			continue
		}
		segs = append(segs, segRef{path: filepath.Join(rd, name), first: int(step)})
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].first < segs[j].first })
	if len(segs) == 0 {
		return nil, fmt.Errorf("run %s: %w", runID, ErrRunNotFound)
	}
	return segs, nil
}

// readSegment parses one segment; only the last one may end in a torn record.
func (c *FileCheckpointer) readSegment(s segRef, last bool) (scanResult, error) {
	data, err := c.fs.ReadFile(s.path)
	if err != nil {
		return scanResult{}, fmt.Errorf("read checkpoint segment: %w", err)
	}
	sr, err := scanSegment(data, s.path)
	if err != nil {
		return sr, err
	}
	if sr.torn && !last {
		return sr, fmt.Errorf("%w: %s at offset %d: record cut short before a later segment", ErrCorrupt, s.path, sr.valid)
	}
	if len(sr.recs) > 0 && sr.recs[0].Step != s.first {
		return sr, fmt.Errorf("%w: %s: first record is step %d", ErrCorrupt, s.path, sr.recs[0].Step)
	}
	if len(sr.recs) == 0 && !last {
		return sr, fmt.Errorf("%w: %s: empty segment before a later segment", ErrCorrupt, s.path)
	}
	return sr, nil
}

// Tail implements Checkpointer: it reads the last segment only.
func (c *FileCheckpointer) Tail(_ context.Context, runID string) ([]Record, error) {
	segs, err := c.runSegments(runID)
	if err != nil {
		return nil, err
	}
	for i := len(segs) - 1; i >= 0; i-- {
		sr, err := c.readSegment(segs[i], i == len(segs)-1)
		if err != nil {
			return nil, err
		}
		if len(sr.recs) > 0 {
			return sr.recs, nil
		}
		// A last segment with no complete record: a rotation cut short by a power loss.
	}
	return nil, fmt.Errorf("run %s: %w", runID, ErrRunNotFound)
}

// Records implements Checkpointer.
func (c *FileCheckpointer) Records(_ context.Context, runID string) ([]Record, error) {
	segs, err := c.runSegments(runID)
	if err != nil {
		return nil, err
	}
	var out []Record
	for i, s := range segs {
		sr, err := c.readSegment(s, i == len(segs)-1)
		if err != nil {
			return nil, err
		}
		out = append(out, sr.recs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("run %s: %w", runID, ErrRunNotFound)
	}
	return out, nil
}

// Runs implements Checkpointer. It reads the last record of each run from the
// end of its last segment, so listing does not grow with the runs' length. A
// run it cannot read does not stop it: the others are returned with a
// *DamagedRunsError naming that one.
func (c *FileCheckpointer) Runs(ctx context.Context) ([]StoredRun, error) {
	ents, err := c.fs.ReadDir(c.dir)
	if err != nil {
		return nil, fmt.Errorf("graph: list runs in %s: %w", c.dir, err)
	}
	var out []StoredRun
	var damaged DamagedRunsError
	for _, e := range ents {
		if !e.IsDir() || !ValidRunID(e.Name()) {
			continue
		}
		id := e.Name()
		if c.refuse != nil && c.refuse(id) != nil {
			continue // not this store's (committed in the repository)
		}
		rd := filepath.Join(c.dir, id)
		segs, err := c.segments(id, rd)
		if errors.Is(err, ErrRunNotFound) {
			continue // being created, or deleted meanwhile
		}
		if err != nil {
			damaged.add(id, err)
			continue
		}
		last, ok := c.readLast(segs[len(segs)-1])
		if !ok {
			recs, err := c.Tail(ctx, id)
			if errors.Is(err, ErrRunNotFound) {
				continue
			}
			if err != nil {
				damaged.add(id, err)
				continue
			}
			last = recs[len(recs)-1]
		}
		out = append(out, StoredRun{ID: id, Last: last, Active: c.active(id, rd)})
	}
	if len(damaged.Runs) > 0 {
		return out, &damaged
	}
	return out, nil
}

// readLast reads the final record of a segment backwards from its end; false
// when that does not check out (a torn tail), and the caller scans instead.
func (c *FileCheckpointer) readLast(s segRef) (Record, bool) {
	f, err := c.fs.OpenFile(s.path, os.O_RDONLY, 0)
	if err != nil {
		return Record{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Record{}, false
	}
	size := st.Size()
	if size < int64(len(segMagic)+frameOver+2) {
		return Record{}, false
	}
	var tb [4]byte
	if _, err := f.ReadAt(tb[:], size-4); err != nil {
		return Record{}, false
	}
	n := int64(tb[0]) | int64(tb[1])<<8 | int64(tb[2])<<16 | int64(tb[3])<<24
	start := size - frameOver - n
	if n > maxBody || start < int64(len(segMagic)) {
		return Record{}, false
	}
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil {
		return Record{}, false
	}
	rec, used, res, _ := parseFrame(buf)
	if res != frameOK || used != len(buf) {
		return Record{}, false
	}
	return rec, true
}

// active reports whether a writer holds the run's lock now.
func (c *FileCheckpointer) active(runID, rd string) bool {
	c.mu.Lock()
	mine := c.writing[runID]
	c.mu.Unlock()
	if mine {
		return true
	}
	f, err := os.Open(filepath.Join(rd, "lock"))
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := flock(f, false)
	if err != nil {
		return false
	}
	if ok {
		_ = funlock(f)
	}
	return !ok
}

// lockWait is how long a writer retries a lock that a reader's probe may hold.
const lockWait = 250 * time.Millisecond

// lock takes the run's exclusive lock, in this process and across processes.
func (c *FileCheckpointer) lock(runID, rd string) (*os.File, error) {
	c.mu.Lock()
	if c.writing[runID] {
		c.mu.Unlock()
		return nil, fmt.Errorf("run %s: %w (by this process)", runID, ErrRunLocked)
	}
	c.writing[runID] = true
	c.mu.Unlock()
	f, err := c.lockFile(runID, rd)
	if err != nil {
		c.mu.Lock()
		delete(c.writing, runID)
		c.mu.Unlock()
	}
	return f, err
}

func (c *FileCheckpointer) lockFile(runID, rd string) (*os.File, error) {
	path := filepath.Join(rd, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run %s: lock: %w", runID, err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		ok, err := flock(f, true)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("run %s: lock %s: %w", runID, path, err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			holder, _ := os.ReadFile(path)
			f.Close()
			return nil, fmt.Errorf("run %s: %w (%s)", runID, ErrRunLocked, strings.TrimSpace(string(holder)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	host, _ := os.Hostname()
	info := fmt.Sprintf("held by pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(info), 0) // for the message another writer gets; the flock is what counts
	}
	return f, nil
}

func (c *FileCheckpointer) unlock(runID string, f *os.File) error {
	_ = f.Truncate(0)
	err := funlock(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	c.mu.Lock()
	delete(c.writing, runID)
	c.mu.Unlock()
	return err
}

// Delete implements Checkpointer.
func (c *FileCheckpointer) Delete(_ context.Context, runID string) error {
	rd, err := c.runDir(runID)
	if err != nil {
		return err
	}
	if _, err := c.segments(runID, rd); err != nil {
		return err
	}
	lf, err := c.lock(runID, rd)
	if err != nil {
		return err
	}
	err = c.fs.RemoveAll(rd)
	if uerr := c.unlock(runID, lf); err == nil && !errors.Is(uerr, fs.ErrNotExist) {
		err = uerr
	}
	if err != nil {
		return fmt.Errorf("run %s: delete: %w", runID, err)
	}
	return nil
}
