package mcpserver

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's text and structured result and a resource's text are redacted
// before they are sent.
func TestResultsAreRedacted(t *testing.T) {
	secret := "gh" + "p_" + "Rm1tK9pQ2wE4rT6yU8iO0pA3sD5fG7hJ9kL1"
	type out struct{ Remit string }
	tool := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "token " + secret}}, StructuredContent: out{Remit: "use " + secret}}
	redactResult(tool)
	if strings.Contains(tool.Content[0].(*mcp.TextContent).Text, secret) || strings.Contains(tool.StructuredContent.(out).Remit, secret) {
		t.Errorf("a tool result keeps the secret: %+v", tool)
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "x", Text: "report " + secret}}}
	redactResult(res)
	if strings.Contains(res.Contents[0].Text, secret) || res.Contents[0].URI != "x" {
		t.Errorf("a resource keeps the secret: %+v", res.Contents[0])
	}
	redactResult(nil) // no result (an error): nothing to do
}
