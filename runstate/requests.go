package runstate

// Requests a user leaves for a run from outside it (lemmings tell, lemmings
// undo): files in the run's folder, written whole (a dot name renamed), which
// the running process takes in between nodes (nodes/steer.go) and serve lists
// while they wait.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Folders of a run's requests, in its run folder.
const (
	TellDir = "tell"
	UndoDir = "undo"
)

// SourceUser is the source of the directives a user told a run.
const SourceUser = "user"

// MaxTellBytes is the longest message lemmings tell takes.
const MaxTellBytes = 4000

// TellRequest is a message left for a run.
type TellRequest struct {
	ID       string    `json:"id"`
	Message  string    `json:"message"`
	Priority string    `json:"priority"` // critical | normal | low
	At       time.Time `json:"at"`
	file     string
}

// UndoRequest is an undo left for a running run.
type UndoRequest struct {
	ID     string    `json:"id"`
	Task   string    `json:"task"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	file   string
}

// RequestTell leaves message for the run whose folder is runDir; the run
// files it as a directive at its next checkpoint.
func RequestTell(runDir, message, priority string) (TellRequest, error) {
	message = strings.TrimSpace(message)
	switch {
	case message == "":
		return TellRequest{}, errors.New(`tell: the message is empty: lemmings tell RUN "what the run should do"`)
	case len(message) > MaxTellBytes:
		return TellRequest{}, fmt.Errorf("tell: the message is %d bytes, more than %d: say it shorter, or put the details in a file of the repository and name it", len(message), MaxTellBytes)
	}
	if priority == "" {
		priority = PrioNormal
	}
	if priority != PrioCritical && priority != PrioNormal && priority != PrioLow {
		return TellRequest{}, fmt.Errorf("tell: priority %q: want %s, %s or %s", priority, PrioCritical, PrioNormal, PrioLow)
	}
	r := TellRequest{Message: message, Priority: priority, At: time.Now().UTC()}
	r.ID = RequestID(r.At)
	return r, WriteRequest(filepath.Join(runDir, TellDir), r.ID, r)
}

// RequestUndo leaves an undo of task for the run whose folder is runDir; the
// run carries it out at its next task boundary.
func RequestUndo(runDir, task, reason string) (UndoRequest, error) {
	r := UndoRequest{Task: strings.TrimSpace(task), Reason: strings.TrimSpace(reason), At: time.Now().UTC()}
	if r.Task == "" {
		return r, errors.New("undo: name the task (t3)")
	}
	r.ID = RequestID(r.At)
	return r, WriteRequest(filepath.Join(runDir, UndoDir), r.ID, r)
}

// RequestID orders requests by time; the random part keeps two made in the
// same nanosecond apart.
func RequestID(at time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%s", at.UnixNano(), hex.EncodeToString(b[:]))
}

// WriteRequest writes v as dir/id.json under a dot name and renames it, so
// the run never reads half a request (lemmings tell and undo, serve's
// knowledge review decisions).
func WriteRequest(dir, id string, v any) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+id+".json")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, id+".json"))
}

// ReadRequests decodes the requests in dir, oldest first (their names are
// RequestIDs); one that does not parse or is not valid is set aside under a
// dot name (never read again) and reported.
func ReadRequests[T any](dir string, valid func(*T) bool, setFile func(*T, string)) ([]T, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []T
	var names []string
	var errs []error
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var r T
		if err := json.Unmarshal(data, &r); err != nil || !valid(&r) {
			aside := filepath.Join(dir, "."+name+".bad")
			_ = os.Rename(p, aside)
			errs = append(errs, fmt.Errorf("request %s is not one lemmings wrote (%v): set aside as %s", p, err, aside))
			continue
		}
		setFile(&r, p)
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// PendingTells lists the messages waiting in runDir, oldest first.
func PendingTells(runDir string) ([]TellRequest, error) {
	return ReadRequests(filepath.Join(runDir, TellDir),
		func(r *TellRequest) bool { return r.ID != "" && strings.TrimSpace(r.Message) != "" },
		func(r *TellRequest, p string) { r.file = p })
}

// PendingUndos lists the undos waiting in runDir, oldest first.
func PendingUndos(runDir string) ([]UndoRequest, error) {
	return ReadRequests(filepath.Join(runDir, UndoDir),
		func(r *UndoRequest) bool { return r.ID != "" && r.Task != "" },
		func(r *UndoRequest, p string) { r.file = p })
}

// Remove deletes the request's file: its message is in a checkpoint.
func (r TellRequest) Remove() error { return os.Remove(r.file) }

// Remove deletes the request's file: the undo is in a checkpoint, or can
// never apply.
func (r UndoRequest) Remove() error { return os.Remove(r.file) }
