package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// One bad line must not end the session (issue 33: a malformed line, or a
// 60 MB one, ended lemmings mcp): each gets its JSON-RPC error and the next
// request is served.
func TestABadLineGetsAnErrorAndTheSessionGoesOn(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), Exe: "lemmings"})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.serveLines(ctx, inR, outW); outW.Close() }()
	replies := bufio.NewScanner(outR)
	replies.Buffer(make([]byte, 1<<20), 1<<20)
	next := func() map[string]any {
		t.Helper()
		if !replies.Scan() {
			t.Fatalf("no reply: the session ended (%v)", replies.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(replies.Bytes(), &m); err != nil {
			t.Fatalf("reply %q: %v", replies.Text(), err)
		}
		return m
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	errCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	for _, c := range []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not JSON", `{"jsonrpc": "2.0", "id": 1, "method": `, -32700, nil},
		{"a batch", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600, nil},
		{"no version", `{"id": 3, "method": "ping"}`, -32600, 3.0},
		{"60 MB", `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"` + strings.Repeat("a", 60<<20) + `"}}`, -32600, nil},
	} {
		send(c.line)
		m := next()
		if id, ok := m["id"]; errCode(m) != c.code || !ok || id != c.id {
			t.Errorf("%s: reply %v, want code %v and id %v", c.name, m, c.code, c.id)
		}
	}
	send(initialize)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize after the bad lines: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if m := next(); m["id"] != 5.0 || m["result"] == nil {
		t.Fatalf("tools/list: %v", m)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("the session ended with %v", err)
	}
}
