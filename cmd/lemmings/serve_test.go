package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServe starts lemmings serve in dir and returns the URL it printed.
func startServe(t *testing.T, c *cli, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := c.command(ctx, dir, append([]string{"serve"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Ctrl-C stops the server cleanly, with exit 0.
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve after Ctrl-C: %v", err)
		}
		cancel()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no URL: %v", err)
	}
	go io.Copy(io.Discard, out)
	m := regexp.MustCompile(`lemmings serve: (http://\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve's first line: %q", line)
	}
	return m[1]
}

// serveClient splits the URL lemmings serve printed into its base and a
// client that sends its token as a bearer, as a script does.
func serveClient(t *testing.T, printed string) (string, *http.Client) {
	t.Helper()
	base, token, ok := strings.Cut(printed, "/?token=")
	if !ok {
		t.Fatalf("serve printed %q: no token", printed)
	}
	return base, &http.Client{Timeout: 20 * time.Second, Transport: bearerTransport{token}}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestServeCommandServesTheRepositorysRuns(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(t.TempDir(), "demo")
	if r := c.run(t.TempDir(), "demo", "--dir", dir, "--no-supervisors"); r.code != 0 {
		t.Fatalf("demo: %d\n%s", r.code, r.stderr)
	}
	runs, _ := os.ReadDir(filepath.Join(dir, ".lemmings", "runs"))
	if len(runs) != 1 {
		t.Fatalf("demo runs: %d", len(runs))
	}
	// The printed URL carries the token (on loopback too) and sets a cookie.
	url := startServe(t, c, dir, "--addr", "127.0.0.1:0")
	m := regexp.MustCompile(`^http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32})$`).FindStringSubmatch(url)
	if m == nil {
		t.Fatalf("loopback URL %q has no token", url)
	}
	local := "http://127.0.0.1:" + m[1] + "/"
	if resp, err := http.Get(local); err != nil || resp.StatusCode != 401 {
		t.Fatalf("without the token: %v %v", resp.StatusCode, err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), runs[0].Name()) || resp.Request.URL.RawQuery != "" {
		t.Fatalf("GET %s: %d (then the cookie, the token gone from the URL)\n%s", url, resp.StatusCode, body)
	}
	// The token is kept, yours only, and serves as a bearer; a restart keeps it.
	tokenFile := filepath.Join(c.stateHome, "lemmings", "tokens", "serve.token")
	data, err := os.ReadFile(tokenFile)
	if fi, _ := os.Stat(tokenFile); err != nil || strings.TrimSpace(string(data)) != m[2] || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %q %v", tokenFile, data, err)
	}
	again := startServe(t, c, dir, "--addr", "0.0.0.0:0")
	if !strings.HasSuffix(again, "/?token="+m[2]) {
		t.Fatalf("a second serve printed %q, want the same token", again)
	}
}
