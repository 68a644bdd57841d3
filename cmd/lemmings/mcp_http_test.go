package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lemmings mcp --http on loopback answers only requests with its token (a
// coding CLI with the network could start runs otherwise): the token it
// prints, kept 0600 in its state folder.
func TestMCPOverHTTPNeedsItsTokenOnLoopback(t *testing.T) {
	c := newCLI(t)
	repo := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "mcp", "--http", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGINT); _ = cmd.Wait() }()
	r := bufio.NewReader(out)
	var url, printed string
	for url == "" || printed == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("mcp --http printed no URL and token: %v", err)
		}
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "lemmings mcp: "); ok {
			url = u
		}
		if tok, ok := strings.CutPrefix(strings.TrimSpace(line), "token: "); ok {
			printed = tok
		}
	}
	go io.Copy(io.Discard, r)
	file := filepath.Join(c.stateHome, "lemmings", "tokens", "mcp.token")
	data, err := os.ReadFile(file)
	if fi, _ := os.Stat(file); err != nil || strings.TrimSpace(string(data)) != printed || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %q %v (printed %q)", file, data, err, printed)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	post := func(auth string) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != 401 {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code := post("Bearer " + printed); code != 200 {
		t.Errorf("with the token: %d, want 200", code)
	}
}

// One malformed line, or one of 60 MB, no longer ends lemmings mcp (issue
// 33): each is answered with its JSON-RPC error, and the session goes on.
func TestMCPOverStdioAnswersABadLineAndGoesOn(t *testing.T) {
	c := newCLI(t)
	repo := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, repo, "mcp")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	replies := bufio.NewScanner(out)
	replies.Buffer(make([]byte, 1<<20), 1<<20)
	go func() {
		for _, line := range []string{`{"jsonrpc": "2.0", "id": 1, "method": `, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("a", 60<<20) + `"}}`,
			`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`} {
			if _, err := io.WriteString(in, line+"\n"); err != nil {
				return
			}
		}
	}()
	for i, want := range []string{`"code":-32700`, `"code":-32600`, `"id":3,"result":`} {
		if !replies.Scan() {
			t.Fatalf("reply %d: none, lemmings mcp ended (%v)", i+1, replies.Err())
		}
		if !strings.Contains(replies.Text(), want) {
			t.Errorf("reply %d: %s, want %s", i+1, replies.Text(), want)
		}
	}
}
