package codingcli

// Reading the CLI's output: its stdout parsed line by line into events
// (bounded), the tail of its stderr.
import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"sync"
)

// maxLine bounds one stdout line: a longer line is skipped (and counted
// unparsed) rather than held in memory; reading goes on after it so the CLI
// never blocks on a full pipe. maxText bounds a text-format CLI's kept output.
const (
	maxLine = 16 << 20
	maxText = 1 << 20
)

// read parses stdout line by line; with no parser the whole output (its last
// maxText bytes) is the final message. It reads to EOF whatever the lines hold.
func read(out io.Reader, parse parser, onEvent func(Event)) Result {
	var res Result
	br := bufio.NewReaderSize(out, 64<<10)
	var text []byte
	var line []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			tooLong, line = true, line[:0]
		} else if !tooLong {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(chunk) > 0 || len(line) > 0 || tooLong {
			switch {
			case parse == nil:
				if !tooLong {
					text = append(text, line...)
					if len(text) > 2*maxText {
						text = append(text[:0], text[len(text)-maxText:]...)
					}
				}
			case tooLong:
				res.Unparsed++
			default:
				res.parseLine(bytes.TrimSpace(line), parse, onEvent)
			}
		}
		line, tooLong = line[:0], false
		if err != nil {
			break
		}
	}
	if parse == nil {
		if len(text) > maxText {
			text = text[len(text)-maxText:]
		}
		res.Final = strings.TrimSpace(string(text))
	}
	return res
}

func (res *Result) parseLine(line []byte, parse parser, onEvent func(Event)) {
	if len(line) == 0 {
		return
	}
	evs, ok := parse(line)
	if !ok {
		res.Unparsed++
		return
	}
	for _, ev := range evs {
		res.add(ev)
		if onEvent != nil {
			onEvent(ev)
		}
	}
}

func (res *Result) add(ev Event) {
	res.Events = append(res.Events, ev)
	switch ev.Kind {
	case EventToolCall:
		res.ToolCalls++
	case EventMessage, EventResult:
		if ev.Text != "" {
			res.Final = ev.Text
		}
	case EventError:
		res.Failed = ev.Text
	}
	// A result's usage is the CLI's own total for the run: it replaces the
	// sum of what the turns reported so far.
	if ev.Kind == EventResult && ev.Usage != (Usage{}) {
		res.Usage = ev.Usage
		return
	}
	res.Usage = res.Usage.Add(ev.Usage)
}

// tailBuffer keeps the last 8 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if n := len(t.buf); n > 8<<10 {
		t.buf = t.buf[n-8<<10:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
