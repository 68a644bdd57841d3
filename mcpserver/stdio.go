package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxFrameBytes bounds one JSON-RPC message read on standard input; a
// longer line is skipped, answered with an error, and serving goes on.
const MaxFrameBytes = mcp.DefaultMaxLineLength

// JSON-RPC error codes of a frame the server cannot take.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// ServeStdio serves MCP on standard input and output until the client
// closes its end or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.serveLines(ctx, os.Stdin, os.Stdout)
}

// serveLines serves newline-delimited JSON-RPC. The SDK's transport ends
// the session at the first line it cannot decode, and buffers a frame of
// any size first: each line is checked here instead — one that is not a
// JSON-RPC message, or longer than MaxFrameBytes, gets an error reply
// (-32700 or -32600, as JSON-RPC says) and the next line is read.
func (s *Server) serveLines(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &frameWriter{w: out}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.filterFrames(in, pw, w)) }()
	err := s.mcp.Run(ctx, codedTransport{&mcp.IOTransport{Reader: pr, Writer: w}})
	pr.Close()
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// filterFrames copies the well-formed messages of in to sdk, one a line,
// and answers the others on w.
func (s *Server) filterFrames(in io.Reader, sdk io.Writer, w *frameWriter) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readFrame(r, MaxFrameBytes)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if reply := s.check(line, tooLong); reply != nil {
				if werr := w.reply(reply); werr != nil {
					return werr
				}
			} else if _, werr := sdk.Write(append(line, '\n')); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// readFrame reads one line without its newline, keeping at most max bytes:
// the rest of a longer line is read and dropped.
func readFrame(r *bufio.Reader, max int) ([]byte, bool, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// check returns the error reply a frame gets, or nil when the SDK may
// have it.
func (s *Server) check(line []byte, tooLong bool) *errorReply {
	fail := func(id jsonrpc.ID, code int64, format string, args ...any) *errorReply {
		s.logf("refused a message: "+format, args...)
		return &errorReply{JSONRPC: "2.0", ID: id.Raw(), Error: jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}}
	}
	if tooLong {
		return fail(jsonrpc.ID{}, codeInvalidRequest, "a message over %d bytes was skipped", MaxFrameBytes)
	}
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		return fail(jsonrpc.ID{}, codeParseError, "parse error: the line is not JSON")
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	id := jsonrpc.ID{}
	if trimmed[0] != '{' {
		return fail(id, codeInvalidRequest, "invalid request: one JSON-RPC object a line (no batches)")
	}
	if json.Unmarshal(trimmed, &probe) == nil && len(probe.ID) > 0 {
		var raw any
		if json.Unmarshal(probe.ID, &raw) == nil {
			if v, err := jsonrpc.MakeID(raw); err == nil {
				id = v
			}
		}
	}
	if _, err := jsonrpc.DecodeMessage(trimmed); err != nil {
		return fail(id, codeInvalidRequest, "invalid request: %v", err)
	}
	return nil
}

// frameWriter writes whole frames to the client, the SDK's and this
// server's error replies, one at a time.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Write(p)
}

func (f *frameWriter) Close() error { return nil }

// errorReply is a JSON-RPC error response whose id, when unknown, is
// written null, as JSON-RPC asks (the SDK's encoder would leave it out).
type errorReply struct {
	JSONRPC string        `json:"jsonrpc"`
	ID      any           `json:"id"`
	Error   jsonrpc.Error `json:"error"`
}

func (f *frameWriter) reply(r *errorReply) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	return err
}

// codedTransport gives every error reply a JSON-RPC code. The SDK answers some requests with a
// plain Go error (a request before initialize: "method \"tools/list\" is invalid during session
// initialization"), which goes out with code 0, a code JSON-RPC does not have.
type codedTransport struct{ mcp.Transport }

func (t codedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return codedConn{c}, nil
}

type codedConn struct{ mcp.Connection }

func (c codedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
		var wire *jsonrpc.Error
		if !errors.As(r.Error, &wire) {
			coded := *r
			coded.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: r.Error.Error()}
			if strings.Contains(r.Error.Error(), "during session initialization") {
				// A request the session cannot take yet.
				coded.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: r.Error.Error() + ": send initialize first"}
			}
			msg = &coded
		}
	}
	return c.Connection.Write(ctx, msg)
}
