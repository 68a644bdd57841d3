package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/run"
	"github.com/lemmings-dev/lemmings/workspace"
)

// indexRoot is the directory an index belongs to: the top of the git
// repository around dir (as for runs), or dir itself outside git.
func (a *app) indexRoot(cmd *cobra.Command, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if repo, err := workspace.OpenRepo(cmd.Context(), abs); err == nil {
		return repo.Root(), nil
	}
	return abs, nil
}

// router opens the model router the index commands embed with.
func (a *app) indexRouter(root string) (*config.Config, *llm.Router, error) {
	cfg, _, err := a.loadConfig(root)
	if err != nil {
		return nil, nil, err
	}
	router, err := llm.NewRouter(run.RouterConfigFrom(cfg, false))
	if err != nil {
		return nil, nil, err
	}
	return cfg, router, nil
}

func newIndexCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "index [dir]",
		Short: "Index a repository's code and knowledge for retrieval (incremental)",
		Long: `Index the code and knowledge of the repository around dir (default: -C, or the current
directory) for lemmings search and the agents' retrieval. Inside a git repository the
index covers the whole repository and lives in its .lemmings/index; outside git it covers
dir. With Ollama's embedding model unavailable it says so once and uses the offline embedder;
with --offline (or rag.embedder: offline) it asks no model at all and uses the offline embedder
(an index built with a model is then left as it is).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := a.dir
			if len(args) == 1 {
				dir = args[0]
				if err := existingDir("index", dir); err != nil {
					return err
				}
			}
			root, err := a.indexRoot(cmd, dir)
			if err != nil {
				return err
			}
			if repo, err := workspace.OpenRepo(cmd.Context(), root); err == nil {
				if err := repo.ExcludeRunData(); err != nil {
					return err
				}
			}
			cfg, router, err := a.indexRouter(root)
			if err != nil {
				return err
			}
			defer router.Close()
			indexDir := filepath.Join(root, run.DataDir, run.IndexDir)
			// Offline, the index asks no model, not even the local Ollama.
			offline := cfg.Offline || cfg.RAG.Embedder == "offline"
			var idx *rag.Index
			if offline {
				idx, err = run.OpenIndexOffline(indexDir, a.stderr)
			} else {
				idx, err = run.OpenIndex(cmd.Context(), indexDir, cfg, router, a.stderr)
			}
			if err != nil {
				return err
			}
			defer idx.Close()
			st, err := idx.Update(cmd.Context(), root, rag.UpdateOptions{MaxFileSize: int64(cfg.RAG.MaxFileBytes), KnowledgeDir: cfg.Knowledge.Dir})
			if err != nil {
				return err
			}
			if a.jsonOut {
				a.printJSON(map[string]any{"kind": "index", "root": root, "embedder": idx.Embedder(), "chunks": idx.Len(), "stats": st})
			} else {
				fmt.Fprintf(a.stdout, "%s\nembedder: %s\nindex: %s\n", st.String(), idx.Embedder(), indexDir)
				if offline && cfg.RAG.Embedder != "offline" {
					if role, err := cfg.ResolvedRole(config.RoleEmbedding); err == nil {
						fmt.Fprintf(a.stdout, "offline: no model asked; a run or lemmings index that reaches %s re-embeds the index with it (rag.embedder: offline keeps the offline embedder)\n", role.Model)
					}
				}
			}
			for _, s := range st.Skipped {
				fmt.Fprintf(a.stderr, "skipped %s (%s)\n", s.Path, s.Reason)
			}
			return nil
		},
	}
}

func newSearchCmd(a *app) *cobra.Command {
	var k int
	var kind string
	cmd := &cobra.Command{
		Use:   `search "query"`,
		Short: "Search the index: path, lines, score and a snippet per hit",
		Long: `Search the index of the repository around -C (or the current directory), from any of
its subdirectories. The query is embedded with the embedder the index was built with;
when that is a model that does not answer, the search goes by keywords only. A search
never creates an index: lemmings index builds it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.TrimSpace(args[0])
			if query == "" {
				return usageErr(`give a query: lemmings search "what you look for"`)
			}
			if kind != "" && kind != rag.KindCode && kind != rag.KindKnowledge {
				return usageErr("--kind takes code or knowledge, not %q", kind)
			}
			if k <= 0 {
				return usageErr("-k takes a number of hits above 0, not %d", k)
			}
			root, err := a.indexRoot(cmd, a.dir)
			if err != nil {
				return err
			}
			dir := filepath.Join(root, run.DataDir, run.IndexDir)
			if _, _, err := rag.Recorded(dir); errors.Is(err, rag.ErrNoIndex) {
				return fmt.Errorf("%s has no index yet: lemmings index builds it (lemmings -C %s index)", root, root)
			}
			cfg, router, err := a.indexRouter(root)
			if err != nil {
				return err
			}
			defer router.Close()
			idx, method, err := run.OpenIndexForSearch(cmd.Context(), dir, cfg, router, a.stderr)
			if err != nil {
				return err
			}
			defer idx.Close()
			if idx.Len() == 0 {
				return fmt.Errorf("the index of %s is empty: lemmings index fills it", root)
			}
			hits, err := idx.SearchWith(cmd.Context(), query, k, rag.Filter{Kind: kind}, method)
			if err != nil {
				return err
			}
			return rag.FormatHits(a.stdout, hits, a.jsonOut)
		},
	}
	cmd.Flags().IntVarP(&k, "k", "k", 5, "number of hits")
	cmd.Flags().StringVar(&kind, "kind", "", "only code or only knowledge")
	return cmd
}
