package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/rag"
	"github.com/lemmings-dev/lemmings/workspace"
)

// openIndex opens the retrieval index of dir (any directory, git or not) with
// the configured embedder; when that is Ollama and it does not answer, it
// says so once and uses the offline embedder.
func (a *app) openIndex(cmd *cobra.Command, dir string) (*rag.Index, *config.Config, func(), error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if repo, err := workspace.OpenRepo(cmd.Context(), abs); err == nil {
		if err := repo.ExcludeRunData(); err != nil {
			return nil, nil, nil, err
		}
	}
	cfg, _, err := a.loadConfig(abs)
	if err != nil {
		return nil, nil, nil, err
	}
	rc := nodes.RouterConfigFrom(cfg, false)
	router, err := llm.NewRouter(rc)
	if err != nil {
		return nil, nil, nil, err
	}
	idx, err := nodes.OpenIndex(cmd.Context(), filepath.Join(abs, nodes.DataDir, nodes.IndexDir), cfg, router, a.stderr)
	if err != nil {
		router.Close()
		return nil, nil, nil, err
	}
	return idx, cfg, func() { idx.Close(); router.Close() }, nil
}

func newIndexCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "index [dir]",
		Short: "Index a directory's code and knowledge for retrieval (incremental)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := a.dir
			if len(args) == 1 {
				dir = args[0]
			}
			idx, cfg, done, err := a.openIndex(cmd, dir)
			if err != nil {
				return err
			}
			defer done()
			abs, _ := filepath.Abs(dir)
			st, err := idx.Update(cmd.Context(), abs, rag.UpdateOptions{MaxFileSize: int64(cfg.RAG.MaxFileBytes), KnowledgeDir: cfg.Knowledge.Dir})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s\nembedder: %s\n", st.String(), idx.Embedder())
			for _, s := range st.Skipped {
				fmt.Fprintf(a.stderr, "skipped %s\n", s)
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if kind != "" && kind != rag.KindCode && kind != rag.KindKnowledge {
				return usageErr("--kind takes code or knowledge, not %q", kind)
			}
			idx, _, done, err := a.openIndex(cmd, a.dir)
			if err != nil {
				return err
			}
			defer done()
			if idx.Len() == 0 {
				return fmt.Errorf("the index of %s is empty: run lemmings index first", a.dir)
			}
			hits, err := idx.Search(cmd.Context(), args[0], k, rag.Filter{Kind: kind})
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
