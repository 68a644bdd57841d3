package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/knowledge"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/workspace"
)

// KnowledgeInput names a knowledge store: the checkout's, or a run's.
type KnowledgeInput struct {
	RunID string `json:"run_id,omitempty" jsonschema:"read the store in this run's worktree (what its supervisors wrote); empty: the repository checkout's"`
}

// KnowledgeDoc is one knowledge document.
type KnowledgeDoc struct {
	Path      string `json:"path" jsonschema:"relative to the knowledge directory, e.g. conventions/errors.md"`
	Title     string `json:"title"`
	Status    string `json:"status" jsonschema:"established, provisional or deprecated"`
	UpdatedBy string `json:"updated_by,omitempty"`
	Summary   string `json:"summary,omitempty"`
}

// KnowledgeListOutput lists a knowledge store.
type KnowledgeListOutput struct {
	Dir      string         `json:"dir"`
	Docs     []KnowledgeDoc `json:"docs"`
	Problems int            `json:"problems" jsonschema:"documents with problems (lemmings knowledge lint shows them)"`
	Note     string         `json:"note,omitempty"`
}

// KnowledgeShowInput names one document.
type KnowledgeShowInput struct {
	Doc   string `json:"doc" jsonschema:"the document's path (conventions/errors.md) or title"`
	RunID string `json:"run_id,omitempty" jsonschema:"read it from this run's worktree; empty: the repository checkout"`
}

// KnowledgeShowOutput is one document.
type KnowledgeShowOutput struct {
	Path     string `json:"path"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Markdown string `json:"markdown"`
}

// SearchInput is a query of the retrieval index.
type SearchInput struct {
	Query string `json:"query" jsonschema:"what you look for, in words or identifiers"`
	K     int    `json:"k,omitempty" jsonschema:"number of hits (default 5, at most 50)"`
	Kind  string `json:"kind,omitempty" jsonschema:"only code or only knowledge; empty: both"`
}

// SearchOutput is what the index found.
type SearchOutput struct {
	Hits     []rag.Hit `json:"hits"`
	Method   string    `json:"method" jsonschema:"hybrid, or keyword when the index's embedding model does not answer"`
	Warnings []string  `json:"warnings,omitempty"`
}

func (s *Server) addKnowledgeTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "knowledge_list", Title: "List knowledge documents", Description: describe("knowledge_list"), Annotations: readOnly}, s.knowledgeListTool)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "knowledge_show", Title: "Show a knowledge document", Description: describe("knowledge_show"), Annotations: readOnly}, s.knowledgeShowTool)
	searchSchema := inputSchema[SearchInput]()
	searchSchema.Properties["kind"].Enum = []any{rag.KindCode, rag.KindKnowledge}
	searchSchema.Properties["query"].MinLength = ptr(1)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "search", Title: "Search the index", Description: describe("search"), InputSchema: searchSchema, Annotations: readOnly}, s.searchTool)
}

// knowledgeDir is the configured knowledge directory of the checkout or of
// a run's worktree.
func (s *Server) knowledgeDir(ctx context.Context, runID string) (string, error) {
	cfg, err := s.opts.LoadConfig()
	if err != nil {
		return "", err
	}
	if runID == "" {
		return filepath.Join(s.opts.Root, cfg.Knowledge.Dir), nil
	}
	repo, err := workspace.OpenRepo(ctx, s.opts.Root)
	if err != nil {
		return "", err
	}
	if _, id, err := s.pick(ctx, runID, nil); err != nil {
		return "", err
	} else if dir := repo.WorktreeDir(id); fileExists(dir) {
		return filepath.Join(dir, cfg.Knowledge.Dir), nil
	}
	return "", fmt.Errorf("run %s has no worktree (removed by lemmings clean): its knowledge is on branch %s%s", runID, workspace.BranchPrefix, runID)
}

func (s *Server) knowledgeListTool(ctx context.Context, _ *mcp.CallToolRequest, in KnowledgeInput) (*mcp.CallToolResult, KnowledgeListOutput, error) {
	dir, err := s.knowledgeDir(ctx, in.RunID)
	if err != nil {
		return nil, KnowledgeListOutput{}, err
	}
	store, probs, err := knowledge.Open(dir)
	if err != nil {
		return nil, KnowledgeListOutput{}, err
	}
	out := KnowledgeListOutput{Dir: dir, Docs: []KnowledgeDoc{}, Problems: len(probs)}
	for _, d := range store.Docs() {
		out.Docs = append(out.Docs, KnowledgeDoc{Path: d.Path, Title: d.Title, Status: string(d.EffectiveStatus()), UpdatedBy: d.UpdatedBy, Summary: d.Summary()})
	}
	if len(out.Docs) == 0 {
		if _, err := os.Stat(dir); err != nil {
			out.Note = fmt.Sprintf("no knowledge store in %s (lemmings knowledge init scaffolds it)", dir)
		} else {
			out.Note = fmt.Sprintf("no knowledge documents in %s yet: the _example.md files are templates, not documents", dir)
		}
	}
	return nil, out, nil
}

func (s *Server) knowledgeShowTool(ctx context.Context, _ *mcp.CallToolRequest, in KnowledgeShowInput) (*mcp.CallToolResult, KnowledgeShowOutput, error) {
	dir, err := s.knowledgeDir(ctx, in.RunID)
	if err != nil {
		return nil, KnowledgeShowOutput{}, err
	}
	store, _, err := knowledge.Open(dir)
	if err != nil {
		return nil, KnowledgeShowOutput{}, err
	}
	want := strings.TrimPrefix(filepath.ToSlash(in.Doc), "docs/knowledge/")
	for _, d := range store.Docs() {
		if d.Path == want || d.Path == want+".md" || strings.EqualFold(d.Title, in.Doc) {
			out := KnowledgeShowOutput{Path: d.Path, Title: d.Title, Status: string(d.EffectiveStatus()), Markdown: string(d.Render())}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.Markdown}}}, out, nil
		}
	}
	return nil, KnowledgeShowOutput{}, fmt.Errorf("no knowledge document %q (lemmings knowledge list shows them)", in.Doc)
}

func (s *Server) searchTool(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	query := strings.TrimSpace(in.Query)
	if query == "" {
		return nil, SearchOutput{}, errors.New(`give a query: lemmings search "what you look for"`)
	}
	k := in.K
	if k <= 0 {
		k = 5
	}
	k = min(k, 50)
	root := s.opts.Root
	dir := filepath.Join(root, run.DataDir, run.IndexDir)
	if _, _, err := rag.Recorded(dir); errors.Is(err, rag.ErrNoIndex) {
		return nil, SearchOutput{}, fmt.Errorf("%s has no index yet: lemmings index builds it (lemmings -C %s index)", root, root)
	}
	cfg, err := s.opts.LoadConfig()
	if err != nil {
		return nil, SearchOutput{}, err
	}
	router, err := llm.NewRouter(run.RouterConfigFrom(cfg, false))
	if err != nil {
		return nil, SearchOutput{}, err
	}
	defer router.Close()
	var warn strings.Builder
	idx, method, err := run.OpenIndexForSearch(ctx, dir, cfg, router, &warn)
	if err != nil {
		return nil, SearchOutput{}, err
	}
	defer idx.Close()
	if idx.Len() == 0 {
		return nil, SearchOutput{}, fmt.Errorf("the index of %s is empty: lemmings index fills it", root)
	}
	hits, err := idx.SearchWith(ctx, query, k, rag.Filter{Kind: in.Kind}, method)
	if err != nil {
		return nil, SearchOutput{}, err
	}
	out := SearchOutput{Hits: hits, Method: string(method)}
	if out.Hits == nil {
		out.Hits = []rag.Hit{}
	}
	for _, l := range strings.Split(strings.TrimSpace(warn.String()), "\n") {
		if l != "" {
			out.Warnings = append(out.Warnings, strings.TrimPrefix(l, "warning: "))
		}
	}
	return nil, out, nil
}
