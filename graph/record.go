package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Status is the state of a stored run.
type Status string

// Run statuses. Every status but StatusDone can be resumed.
const (
	StatusRunning     Status = "running"     // a process is advancing it, or it crashed (see RunInfo.Active)
	StatusPaused      Status = "paused"      // an interrupt stopped it
	StatusHalted      Status = "halted"      // the stop check stopped it
	StatusInterrupted Status = "interrupted" // its context was cancelled
	StatusFailed      Status = "failed"      // a node, router, merge or store failed
	StatusDone        Status = "done"        // it reached End
)

var statusCodes = [...]Status{1: StatusRunning, 2: StatusPaused, 3: StatusHalted, 4: StatusInterrupted, 5: StatusFailed, 6: StatusDone}

func statusCode(s Status) byte {
	for i, v := range statusCodes {
		if v == s && i > 0 {
			return byte(i)
		}
	}
	return 0
}

const (
	payloadVersion   = 1
	flagPausedBefore = 1 << 0 // paused before Next ran: Resume does not pause there again
	flagMeta         = 1 << 1
	flagSends        = 1 << 2 // a step's record: the Send tasks of the next step follow the changes
	flagTask         = 1 << 3 // a branch write: the branch is Send task number k (follows the changes)
	flagTaskStep     = 1 << 4 // a step's record: the next tasks keep the step they were scheduled in
	knownFlags       = flagPausedBefore | flagMeta | flagSends | flagTask | flagTaskStep
)

// entry is a decoded record: one checkpoint, branch write or status change.
type entry struct {
	kind         RecordKind
	step         int
	status       Status
	pausedBefore bool
	created      time.Time
	time         time.Time
	nodes        []string // nodes that ran (delta, snapshot) or the branch (write)
	next         []string
	reason       string // interrupt reason
	errMsg       string
	meta         map[string]string // nil when not stored in this record
	changes      []change
	// sends: the Send tasks of the next step, each input stored as its
	// changes from this record's state; their nodes end next.
	sends []sendRec
	task  int // a branch write of Send task task-1; 0 for a node reached by an edge
	// taskStep: the step the next tasks were scheduled in, when an update
	// kept them (0: this record's step + 1); it names their subgraph runs.
	taskStep int
	size     int // bytes of the stored payload
}

// sendRec is a stored Send task: its node and its input as changes.
type sendRec struct {
	node    string
	changes []change
}

var errShort = errors.New("truncated payload")

// encodePayload appends the binary form of e (kind and step live in the frame).
func encodePayload(buf []byte, e *entry) []byte {
	flags := byte(0)
	if e.pausedBefore {
		flags |= flagPausedBefore
	}
	if e.meta != nil {
		flags |= flagMeta
	}
	if len(e.sends) > 0 {
		flags |= flagSends
	}
	if e.task > 0 {
		flags |= flagTask
	}
	if e.taskStep > 0 {
		flags |= flagTaskStep
	}
	buf = append(buf, payloadVersion, statusCode(e.status), flags)
	buf = binary.AppendVarint(buf, e.created.UnixNano())
	buf = binary.AppendVarint(buf, e.time.UnixNano())
	buf = appendStrings(buf, e.nodes)
	buf = appendStrings(buf, e.next)
	buf = appendString(buf, e.reason)
	buf = appendString(buf, e.errMsg)
	if e.meta != nil {
		keys := make([]string, 0, len(e.meta))
		for k := range e.meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf = binary.AppendUvarint(buf, uint64(len(keys)))
		for _, k := range keys {
			buf = appendString(buf, k)
			buf = appendString(buf, e.meta[k])
		}
	}
	buf = appendChanges(buf, e.changes)
	if len(e.sends) > 0 {
		buf = binary.AppendUvarint(buf, uint64(len(e.sends)))
		for _, sr := range e.sends {
			buf = appendString(buf, sr.node)
			buf = appendChanges(buf, sr.changes)
		}
	}
	if e.task > 0 {
		buf = binary.AppendUvarint(buf, uint64(e.task))
	}
	if e.taskStep > 0 {
		buf = binary.AppendUvarint(buf, uint64(e.taskStep))
	}
	return buf
}

func appendChanges(buf []byte, changes []change) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(changes)))
	for _, c := range changes {
		buf = appendString(buf, c.field)
		buf = append(buf, c.op)
		buf = binary.AppendUvarint(buf, uint64(len(c.value)))
		buf = append(buf, c.value...)
	}
	return buf
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendStrings(buf []byte, ss []string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(ss)))
	for _, s := range ss {
		buf = appendString(buf, s)
	}
	return buf
}

// decoder reads a payload; every length is checked against what remains, so
// corrupted bytes give an error, never a panic or a huge allocation.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) byte1() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errors.New("bad varint"))
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errors.New("bad varint"))
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytesN() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) str() string { return string(d.bytesN()) }

// count reads a count of items each at least min bytes long.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.fail(fmt.Errorf("count %d exceeds payload", n))
		return 0
	}
	return int(n)
}

func (d *decoder) strs() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.str())
	}
	return out
}

// changes reads a count and that many field changes.
func (d *decoder) changes() ([]change, error) {
	n := d.count(3)
	var out []change
	if n > 0 {
		out = make([]change, 0, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		var c change
		c.field = d.str()
		c.op = d.byte1()
		c.value = d.bytesN()
		if d.err == nil && c.op != opSet && c.op != opAppend {
			return nil, fmt.Errorf("unknown field operation %d", c.op)
		}
		out = append(out, c)
	}
	return out, nil
}

// decodePayload parses a record's payload.
func decodePayload(kind RecordKind, step int, b []byte) (*entry, error) {
	d := &decoder{b: b}
	e := &entry{kind: kind, step: step, size: len(b)}
	if v := d.byte1(); d.err == nil && v != payloadVersion {
		return nil, fmt.Errorf("unknown payload version %d", v)
	}
	sc := d.byte1()
	if d.err == nil && (sc == 0 || int(sc) >= len(statusCodes)) {
		return nil, fmt.Errorf("unknown status code %d", sc)
	}
	flags := d.byte1()
	if d.err == nil && flags&^knownFlags != 0 {
		return nil, fmt.Errorf("unknown flags %#x", flags)
	}
	e.pausedBefore = flags&flagPausedBefore != 0
	e.created = time.Unix(0, d.varint())
	e.time = time.Unix(0, d.varint())
	e.nodes = d.strs()
	e.next = d.strs()
	e.reason = d.str()
	e.errMsg = d.str()
	if flags&flagMeta != 0 {
		n := d.count(2)
		e.meta = make(map[string]string, n)
		for i := 0; i < n && d.err == nil; i++ {
			k := d.str()
			e.meta[k] = d.str()
		}
	}
	var err error
	if e.changes, err = d.changes(); err != nil {
		return nil, err
	}
	if flags&flagSends != 0 {
		n := d.count(2)
		e.sends = make([]sendRec, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			sr := sendRec{node: d.str()}
			if sr.changes, err = d.changes(); err != nil {
				return nil, err
			}
			e.sends = append(e.sends, sr)
		}
		if d.err == nil && len(e.sends) > len(e.next) {
			return nil, fmt.Errorf("%d Send tasks but %d next nodes", len(e.sends), len(e.next))
		}
	}
	if flags&flagTask != 0 {
		if k := d.uvarint(); d.err == nil {
			if k == 0 || k > 1<<31 {
				return nil, fmt.Errorf("bad Send task number %d", k)
			}
			e.task = int(k)
		}
	}
	if flags&flagTaskStep != 0 {
		if ts := d.uvarint(); d.err == nil {
			if ts == 0 || ts > uint64(step) {
				return nil, fmt.Errorf("bad task step %d at step %d", ts, step)
			}
			e.taskStep = int(ts)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if sc > 0 {
		e.status = statusCodes[sc]
	}
	return e, nil
}
