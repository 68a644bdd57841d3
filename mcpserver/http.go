package mcpserver

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where lemmings mcp --http serves MCP's streamable HTTP transport.
const HTTPPath = "/mcp"

// HTTPHandler serves the server over MCP's streamable HTTP transport. Every
// request must carry token as "Authorization: Bearer <token>" (or
// ?token=), on loopback too: any process of the machine can connect to
// 127.0.0.1, a coding CLI with the network among them. An empty token
// refuses everything. Requests a browser marks as cross-site are refused.
func (s *Server) HTTPHandler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute})
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, http.NewCrossOriginProtection().Handler(h))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameSecret(bearer(r), token) && !sameSecret(r.URL.Query().Get("token"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="lemmings mcp"`)
			http.Error(w, "this server needs its token: send Authorization: Bearer <token> (the one lemmings mcp printed, in its token file)", http.StatusUnauthorized)
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

func sameSecret(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
