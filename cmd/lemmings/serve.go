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
It listens on 127.0.0.1:7766. Any other address needs the token printed at start.`,
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
			token := ""
			if !serve.IsLoopback(addr) {
				token = serve.RandomToken()
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
			host, port, _ := net.SplitHostPort(ln.Addr().String())
			if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
				host = "127.0.0.1" // all interfaces: this machine reaches it here
			}
			query := ""
			if token != "" {
				query = "?token=" + token
			}
			// Not redacted: the token is this server's own, made for the user to open it.
			fmt.Fprintf(a.rawStdout, "lemmings serve: http://%s/%s\n", net.JoinHostPort(host, port), query)
			fmt.Fprintf(a.stdout, "repository: %s\n", root)
			if token != "" {
				if name, err := os.Hostname(); err == nil {
					fmt.Fprintf(a.rawStdout, "from other machines: http://%s/%s\n", net.JoinHostPort(name, port), query)
				}
				fmt.Fprintln(a.stdout, "not a loopback address: the token in the URL is required (anyone with it can act on your runs; no TLS: prefer an SSH tunnel on untrusted networks)")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
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
	cmd.Flags().StringVar(&addr, "addr", serve.DefaultAddr, "address to listen on (not loopback: a token is required)")
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
