package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/localtoken"
	"github.com/lemmings-dev/lemmings/mcpserver"
	"github.com/lemmings-dev/lemmings/serve"
)

func newMCPCmd(a *app) *cobra.Command {
	var addr, tokenFile string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve this repository's runs to another coding agent over MCP (stdio, or --http)",
		Long: `lemmings mcp is a Model Context Protocol server: a coding agent (Claude Code, Codex,
Qwen Code…) starts runs on this repository, follows them with progress notifications,
approves or rejects their pauses, halts and resumes them, reads reports, knowledge and
the index. It speaks on stdin/stdout; --http 127.0.0.1:7767 serves streamable HTTP at
/mcp instead, where every request needs Authorization: Bearer <token>, on loopback too
(the token it prints, kept in its token file, or --token-file's).
Runs are detached lemmings processes: they go on when the agent's session ends.
See docs/mcp.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.jsonOut {
				return usageErr("mcp has no --json form: it speaks MCP's JSON-RPC")
			}
			root, err := a.gitRoot(cmd.Context())
			if err != nil {
				return err
			}
			if _, _, err := a.loadConfig(root); err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("mcp: find the lemmings binary to start runs with: %w", err)
			}
			srv, err := mcpserver.New(mcpserver.Options{Root: root, Exe: exe, Args: a.globalArgs(), Version: versionString(), Log: a.stderr,
				LoadConfig: func() (*config.Config, error) { cfg, _, err := a.loadConfig(root); return cfg, err }})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if addr == "" {
				return srv.ServeStdio(ctx)
			}
			return a.serveMCPHTTP(ctx, srv, addr, tokenFile, root)
		},
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:7767) instead of stdio; every request needs the token")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "with --http: the token is the one in this file (default: lemmings' own, made once, kept in your state folder)")
	return cmd
}

// globalArgs are the global flags given to lemmings mcp, for the runs it starts.
func (a *app) globalArgs() []string {
	var args []string
	if a.offline {
		args = append(args, "--offline")
	}
	if a.noSupervisors {
		args = append(args, "--no-supervisors")
	}
	if a.model != "" {
		args = append(args, "--model", a.model)
	}
	if a.embedModel != "" {
		args = append(args, "--embed-model", a.embedModel)
	}
	return args
}

func (a *app) serveMCPHTTP(ctx context.Context, srv *mcpserver.Server, addr, tokenFile, root string) error {
	var token string
	if tokenFile != "" {
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return usageErr("--token-file: %v", err)
		}
		if token = strings.TrimSpace(string(data)); len(token) < 16 {
			return usageErr("--token-file %s: the token must be at least 16 characters (e.g. openssl rand -hex 16 > %s)", tokenFile, tokenFile)
		}
		// Outside the tokens' folder, which the sandbox hides: hidden as
		// well, for as long as this server runs (runs it starts, and any
		// other lemmings' sandboxed commands, cannot read it).
		if err := localtoken.Hide(tokenFile); err != nil {
			return fmt.Errorf("mcp: --token-file %s: cannot hide it from sandboxed commands: %w", tokenFile, err)
		}
		defer func() { _ = localtoken.Unhide(tokenFile) }()
	} else {
		var err error
		if token, tokenFile, err = localtoken.Load("mcp"); err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageErr("mcp: %v (is another lemmings mcp running? --http picks another address)", err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	fmt.Fprintf(a.stdout, "lemmings mcp: http://%s%s\nrepository: %s\n", net.JoinHostPort(host, port), mcpserver.HTTPPath, root)
	// Not redacted: the token is this server's own, made for the user to give its clients.
	fmt.Fprintf(a.rawStdout, "token: %s\n", token)
	fmt.Fprintf(a.stdout, "every request needs the header Authorization: Bearer <token> (the token is in %s, yours only)\n", tokenFile)
	if !serve.IsLoopback(addr) {
		fmt.Fprintln(a.stdout, "not a loopback address: anyone with the token can start runs; no TLS: prefer an SSH tunnel on untrusted networks")
	}
	hs := &http.Server{Handler: srv.HTTPHandler(token), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
