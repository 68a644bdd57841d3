package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/internal/redact"
)

// What the server answers and the progress it sends are redacted like every
// other output of lemmings (docs/security.md): a tool's text and structured
// result, a resource's text, a progress message.

// redactResults redacts what a handled request returns.
func redactResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		redactResult(res)
		return res, err
	}
}

// redactNotifications redacts the progress messages the server sends.
func redactNotifications(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if req != nil {
			if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok && p != nil {
				p.Message = redact.String(p.Message)
			}
		}
		return next(ctx, method, req)
	}
}

// redactResult rewrites the texts of a tool's or a resource's result in place.
func redactResult(res mcp.Result) {
	red := redact.Default()
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if r == nil {
			return
		}
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				tc.Text = red.String(tc.Text)
			}
		}
		if r.StructuredContent != nil {
			r.StructuredContent = redact.Value(red, r.StructuredContent)
		}
	case *mcp.ReadResourceResult:
		if r == nil {
			return
		}
		for _, c := range r.Contents {
			if c != nil {
				c.Text = red.String(c.Text)
			}
		}
	}
}
