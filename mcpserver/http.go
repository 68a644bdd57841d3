package mcpserver

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where lemmings mcp --http serves MCP's streamable HTTP transport.
const HTTPPath = "/mcp"

// HTTPHandler serves the server over MCP's streamable HTTP transport, with
// lemmings serve's access rule: with a token (any address that is not
// loopback), every request must carry it, as "Authorization: Bearer <token>"
// or ?token=; without one (loopback), only requests whose Host names this
// machine are answered, so a web page cannot reach the server through a DNS
// name that rebinds to 127.0.0.1. Requests a browser marks as cross-site are
// refused either way.
func (s *Server) HTTPHandler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute})
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, http.NewCrossOriginProtection().Handler(h))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			if !sameSecret(bearer(r), token) && !sameSecret(r.URL.Query().Get("token"), token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="lemmings mcp"`)
				http.Error(w, "this server needs its token: send Authorization: Bearer <token> (the one lemmings mcp printed, or its --token-file)", http.StatusUnauthorized)
				return
			}
		} else if !loopbackHost(r.Host) {
			http.Error(w, "this server answers to localhost and loopback addresses only", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func bearer(r *http.Request) string {
	v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sameSecret(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
