package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/run"
)

// A run's report and board are resources: lemmings://runs/<run-id>/report
// and …/board, both Markdown, read from the run's folder as lemmings report
// and the web page read them.
const runURIPrefix = "lemmings://runs/"

func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "report", Title: "Run report", MIMEType: "text/markdown",
		URITemplate: runURIPrefix + "{run_id}/report",
		Description: "A run's report (written whenever the run stops): status, tasks, commits, failures and why, directives, knowledge written, tokens and cost, how to go on.",
	}, s.readRunFile)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "board", Title: "Run board", MIMEType: "text/markdown",
		URITemplate: runURIPrefix + "{run_id}/board",
		Description: "A run's kanban board: its milestones and tasks with their state, kept current while it runs.",
	}, s.readRunFile)
}

func (s *Server) readRunFile(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, what, ok := strings.Cut(strings.TrimPrefix(uri, runURIPrefix), "/")
	if !strings.HasPrefix(uri, runURIPrefix) || !ok || !graph.ValidRunID(id) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var data []byte
	var err error
	switch what {
	case "report":
		data, err = inspect.ReadReport(s.opts.Root, id)
	case "board":
		if err := run.CheckRunFiles(s.opts.Root, id); err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		data, err = os.ReadFile(filepath.Join(inspect.RunDir(s.opts.Root, id), "board.md"))
		if errors.Is(err, os.ErrNotExist) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
	default:
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: string(data)}}}, nil
}
