package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

func post(t *testing.T, url string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			if v != "" {
				req.Host = v
			}
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// bearerTransport adds a token to every request, as a client configured with
// an Authorization header does.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPWithATokenAnswersOnlyRequestsThatCarryIt(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), Exe: "lemmings"})
	if err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef"
	ts := httptest.NewServer(s.HTTPHandler(token))
	defer ts.Close()
	url := ts.URL + HTTPPath
	for name, h := range map[string]map[string]string{
		"no token":                     nil,
		"a wrong token":                {"Authorization": "Bearer nope"},
		"a token not sent as a bearer": {"Authorization": token},
	} {
		if resp := post(t, url, h); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, resp.StatusCode)
		}
	}
	if resp := post(t, url+"?token="+token, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("token in the query: %d, want 200", resp.StatusCode)
	}
	if resp := post(t, url, map[string]string{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site browser request with the token: %d, want 403", resp.StatusCode)
	}

	// The Go SDK's client with the token lists the tools.
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != len(allTools) {
		t.Fatalf("tools over HTTP: %v, %d tools", err, len(res.Tools))
	}
	var out RunsOutput
	if err := call(t, cs, "runs", nil, &out); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Errorf("runs outside a repository: %v", err)
	}
}

// Loopback is no boundary (a coding CLI with the network, another user):
// without the token every request is refused there too, whatever its Host,
// and a handler given no token refuses everything.
func TestHTTPOnLoopbackNeedsTheTokenToo(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), Exe: "lemmings"})
	if err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef"
	ts := httptest.NewServer(s.HTTPHandler(token)) // on 127.0.0.1
	defer ts.Close()
	url := ts.URL + HTTPPath
	for _, host := range []string{"", "localhost", "127.0.0.1:80"} {
		if resp := post(t, url, map[string]string{"Host": host}); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Host %q without the token: %d, want 401", host, resp.StatusCode)
		}
	}
	if resp := post(t, url, map[string]string{"Authorization": "Bearer " + token}); resp.StatusCode != http.StatusOK {
		t.Errorf("with the token: %d, want 200", resp.StatusCode)
	}
	if resp := post(t, ts.URL+"/other", map[string]string{"Authorization": "Bearer " + token}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a path other than %s: %d, want 404", HTTPPath, resp.StatusCode)
	}
	open := httptest.NewServer(s.HTTPHandler(""))
	defer open.Close()
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer "}, {"Authorization": "Bearer x"}} {
		if resp := post(t, open.URL+HTTPPath+"?token=", h); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a handler without a token answered %v: %d, want 401", h, resp.StatusCode)
		}
	}
}
