package graph

import (
	"context"
	"regexp"
)

// RecordKind says what a stored record holds. Stores index records by kind
// and step only; the data is the runtime's own encoding.
type RecordKind uint8

// Record kinds.
const (
	RecordSnapshot RecordKind = 1 // the full state at Step; loading starts at the last one
	RecordDelta    RecordKind = 2 // the fields that Step changed
	RecordWrite    RecordKind = 3 // one finished branch of the parallel step Step, not yet committed
	RecordStatus   RecordKind = 4 // the run's status changed at Step (paused, failed, …)
)

func (k RecordKind) valid() bool { return k >= RecordSnapshot && k <= RecordStatus }

// Record is the unit a Checkpointer stores.
type Record struct {
	Kind RecordKind
	Step int
	Data []byte
}

// StoredRun is a run as a Checkpointer lists it.
type StoredRun struct {
	ID     string
	Last   Record // the run's newest record
	Active bool   // a writer holds the run now
}

// Checkpointer stores runs as sequences of records. Implementations must keep
// records in append order, return every error, and let readers (Tail, Records,
// Runs) work while a writer appends, from this process or another.
//
// NewMemoryCheckpointer and NewFileCheckpointer are the implementations here.
type Checkpointer interface {
	// Open gives exclusive write access to a run. With create it makes a new
	// run (ErrRunExists if one is stored); without, the run must exist
	// (ErrRunNotFound). A run another writer holds gives ErrRunLocked.
	Open(ctx context.Context, runID string, create bool) (RunWriter, error)
	// Tail returns the records from the run's last snapshot to its end.
	Tail(ctx context.Context, runID string) ([]Record, error)
	// Records returns every retained record of the run, oldest first.
	Records(ctx context.Context, runID string) ([]Record, error)
	// Runs lists the stored runs.
	Runs(ctx context.Context) ([]StoredRun, error)
	// Delete removes a run; ErrRunLocked if a writer holds it.
	Delete(ctx context.Context, runID string) error
}

// RunWriter appends to one run. It is not safe for concurrent use.
type RunWriter interface {
	// Append commits rec. Once it returns nil, readers see the record and it
	// survives a crash of this process; on error nothing of rec is visible.
	// The first record of a new run is a snapshot.
	Append(ctx context.Context, rec Record) error
	// Sync makes every appended record durable against power loss.
	Sync(ctx context.Context) error
	// Prune drops records no longer needed to load any checkpoint at a step
	// ≥ keepFrom, and reports the bytes freed. The last snapshot and what
	// follows it are always kept.
	Prune(ctx context.Context, keepFrom int) (freed int64, err error)
	// Close releases the run.
	Close() error
}

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// ValidRunID reports whether id can name a run: 1–128 characters of
// [A-Za-z0-9._-], not starting with '.' or '-' (ids become directory names).
func ValidRunID(id string) bool { return runIDPattern.MatchString(id) }
