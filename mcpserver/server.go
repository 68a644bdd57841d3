// Package mcpserver is lemmings mcp: a Model Context Protocol server through
// which another coding agent (Claude Code, Codex, Qwen Code, …) hands a remit
// to lemmings and follows it: start a run, its status and events, wait for it
// with progress notifications, its report and board, approve or reject a
// pause, halt, resume, read the knowledge store, search the index.
//
// It acts only through the CLI's own channels, so every effect on disk is the
// CLI's: a run, resume, approve or reject is a detached `lemmings run` or
// `lemmings resume` process (its own session, so it outlives the MCP client
// and this server), a halt is the halt request file, and every read goes
// through the functions the CLI reads with (inspect, knowledge, run, rag).
package mcpserver

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lemmings-dev/lemmings/config"
)

//go:embed tools/*.md
var toolDocs embed.FS

// Options configure a Server.
type Options struct {
	// Root is the repository whose runs the server starts and reads.
	Root string
	// Exe is the lemmings binary the runs it starts are run with.
	Exe string
	// Args are global flags given to every lemmings process it starts
	// (--offline, --no-supervisors, --model, --embed-model as given to
	// lemmings mcp); -C Root is added.
	Args []string
	// Env is the environment of the processes it starts (nil: this process's).
	Env []string
	// LoadConfig reads the repository's configuration (knowledge directory,
	// embedding model); nil uses config.Load on Root.
	LoadConfig func() (*config.Config, error)
	// Version is reported to clients.
	Version string
	// StartWait is how long run, resume, approve and reject wait for the
	// process they start to either fail (an error the CLI would print) or
	// take the run's lock (default 10s). The run goes on either way.
	StartWait time.Duration
	// Poll is how often a wait looks for new events (default 250ms).
	Poll time.Duration
	// Log receives one line per action taken (run, resume, halt…).
	Log io.Writer
}

// Server is the MCP server of one repository.
type Server struct {
	opts Options
	mcp  *mcp.Server

	mu       sync.Mutex
	children map[string]*child // by run id: processes started by this server
}

// New builds the server and registers its tools and resources.
func New(o Options) (*Server, error) {
	if o.Root == "" {
		return nil, errors.New("mcp: no repository root")
	}
	if o.Exe == "" {
		return nil, errors.New("mcp: no lemmings binary to start runs with")
	}
	if o.LoadConfig == nil {
		o.LoadConfig = func() (*config.Config, error) {
			cfg, _, err := config.Load(config.LoadOptions{RepoRoot: o.Root})
			return cfg, err
		}
	}
	if o.StartWait <= 0 {
		o.StartWait = 10 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	s := &Server{opts: o, children: map[string]*child{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "lemmings", Title: "lemmings", Version: o.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       slog.New(slog.DiscardHandler),
		})
	s.mcp.AddReceivingMiddleware(redactResults)
	s.mcp.AddSendingMiddleware(redactNotifications)
	s.addRunTools()
	s.addTimeTravelTools()
	s.addReadTools()
	s.addKnowledgeTools()
	s.addResources()
	return s, nil
}

// instructions tell a calling agent how the tools fit together.
const instructions = `lemmings carries out a remit on this git repository with a team of local LLM agents
(planning, implementation, gates, review), committing each finished task on its own branch
lemmings/<run-id> in a separate worktree: the user's checkout is never touched.
A run takes minutes to hours. Start one with run (it answers at once with the run id),
then follow it with wait (blocks until the run stops or a timeout, sending progress
notifications) or status, and read report when it has ended. A run started with approve
pauses for a decision: answer with approve, or reject with a reason. halt stops a running
run within a second (it stands stopped); resume continues a stopped, interrupted, crashed or
failed run.`

// MCP is the protocol server, for a transport to serve.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// describe returns the description of a tool from tools/<name>.md.
func describe(name string) string {
	data, err := toolDocs.ReadFile(path.Join("tools", name+".md"))
	if err != nil {
		panic(fmt.Sprintf("mcpserver: no description for tool %s: %v", name, err)) // a build mistake, caught by every test
	}
	return strings.TrimSpace(string(data))
}

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.opts.Log, time.Now().Format("15:04:05")+" mcp: "+format+"\n", args...)
}
