package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/localtoken"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/serve"
)

func newServeCmd(a *app) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Watch and steer this repository's runs in a browser",
		Long: `lemmings serve runs a local web app: the runs, each run's board (live while it runs),
workflow graph, events, gates, commits, token and cost chart, directives, supervisor runs
and report; the knowledge store with a review queue; approve, reject and halt.
It listens on 127.0.0.1:7766. Every request needs its token, on loopback too (any process
of this machine can connect there): open the URL it prints, which carries the token once
and leaves a cookie; scripts send Authorization: Bearer with the token in its token file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := a.gitRoot(cmd.Context())
			if err != nil {
				return err
			}
			if _, _, err := a.loadConfig(root); err != nil {
				return err
			}
			src, closeSource, err := a.serveSource(cmd.Context(), root)
			if err != nil {
				return err
			}
			defer closeSource()
			token, tokenFile, err := localtoken.Load("serve")
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			srv, err := serve.New(serve.Options{Root: root, Token: token, Log: a.stderr,
				LoadConfig: a.serveConfig(root), Source: src, Redactor: a.red})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageErr("serve: %v (is another lemmings serve running? --addr picks another address)", err)
			}
			// Ctrl-C is caught before the URL is shown: a user (or a
			// script) acting on the URL may stop the server at once.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			host, port, _ := net.SplitHostPort(ln.Addr().String())
			if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
				host = "127.0.0.1" // all interfaces: this machine reaches it here
			}
			query := "?token=" + token
			// Not redacted: the token is this server's own, made for the user to open it.
			fmt.Fprintf(a.rawStdout, "lemmings serve: http://%s/%s\n", net.JoinHostPort(host, port), query)
			fmt.Fprintf(a.stdout, "repository: %s\n", root)
			fmt.Fprintf(a.stdout, "token: in %s (yours only; scripts send Authorization: Bearer <token>)\n", tokenFile)
			if !serve.IsLoopback(addr) {
				if name, err := os.Hostname(); err == nil {
					fmt.Fprintf(a.rawStdout, "from other machines: http://%s/%s\n", net.JoinHostPort(name, port), query)
				}
				fmt.Fprintln(a.stdout, "not a loopback address: anyone with the token can act on your runs; no TLS: prefer an SSH tunnel on untrusted networks")
			}
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
			done := make(chan error, 1)
			go func() { done <- hs.Serve(ln) }()
			select {
			case err := <-done:
				srv.Close()
				return err
			case <-ctx.Done():
			}
			// Runs resumed here stop at their next checkpoint, resumable.
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			go srv.Close()
			if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			srv.Close()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", serve.DefaultAddr, "address to listen on (every request needs the token it prints, on any address)")
	return cmd
}

// serveConfig loads the configuration serve uses: for a run resumed from the
// browser, the choices the run was started with (as `lemmings resume` does),
// with serve's own flags over them.
func (a *app) serveConfig(root string) func(runID string) (*config.Config, error) {
	return func(runID string) (*config.Config, error) {
		flags := run.Choices{}
		if runID != "" {
			ch, err := run.LoadChoices(root, runID)
			if err != nil {
				return nil, err
			}
			maps.Copy(flags, ch)
		}
		maps.Copy(flags, a.flagOverrides())
		cfg, _, err := config.Load(config.LoadOptions{RepoRoot: root, Flags: flags})
		return cfg, err
	}
}
