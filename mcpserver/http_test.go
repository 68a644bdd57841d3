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
			req.Host = v
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

func TestHTTPOnLoopbackAnswersOnlyLoopbackHosts(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), Exe: "lemmings"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.HTTPHandler(""))
	defer ts.Close()
	url := ts.URL + HTTPPath
	if resp := post(t, url, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("loopback: %d, want 200", resp.StatusCode)
	}
	if resp := post(t, url, map[string]string{"Host": "localhost"}); resp.StatusCode != http.StatusOK {
		t.Errorf("Host localhost: %d, want 200", resp.StatusCode)
	}
	// A web page whose DNS name rebinds to 127.0.0.1 sends its own name.
	if resp := post(t, url, map[string]string{"Host": "rebound.example:80"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host rebound.example: %d, want 403", resp.StatusCode)
	}
	if resp := post(t, ts.URL+"/other", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a path other than %s: %d, want 404", HTTPPath, resp.StatusCode)
	}
}
