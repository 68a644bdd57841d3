package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/knowledge"
)

func newKnowledgeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "knowledge",
		Short: "The knowledge store (docs/knowledge/): conventions, design, lessons, domain",
		Long: `The knowledge store holds short rule documents that planning prompts carry and
supervisors maintain. Seed it with your own conventions before the first run:
lemmings knowledge init scaffolds it, lemmings knowledge lint checks it.
The format is described in docs/knowledge.md.`,
	}
	cmd.AddCommand(newKnowledgeInitCmd(a), newKnowledgeListCmd(a), newKnowledgeShowCmd(a), newKnowledgeLintCmd(a))
	groupCommand(cmd)
	return cmd
}

// knowledgeDir is the configured knowledge directory of the repository.
func (a *app) knowledgeDir() (string, error) {
	root := a.repoRoot()
	cfg, _, err := a.loadConfig(root)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, cfg.Knowledge.Dir), nil
}

func newKnowledgeInitCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Scaffold the knowledge store with a README of the format and one example per category",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The store belongs to a repository (runs start from its HEAD).
			if _, err := a.gitRoot(cmd.Context()); err != nil {
				return err
			}
			dir, err := a.knowledgeDir()
			if err != nil {
				return err
			}
			created, err := knowledge.Init(dir)
			if err != nil {
				return err
			}
			if a.jsonOut {
				a.printJSON(map[string]any{"kind": "knowledge_init", "dir": dir, "created": created})
				return nil
			}
			if len(created) == 0 {
				fmt.Fprintf(a.stdout, "%s already set up; nothing created\n", dir)
				return nil
			}
			for _, p := range created {
				fmt.Fprintf(a.stdout, "created %s\n", p)
			}
			fmt.Fprintln(a.stdout, "the _example.md files are templates: copy one to <category>/<name>.md (e.g. conventions/errors.md), edit it into your own rule, then: lemmings knowledge lint")
			return nil
		},
	}
}

func newKnowledgeListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the knowledge documents with their status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := a.knowledgeDir()
			if err != nil {
				return err
			}
			store, probs, err := knowledge.Open(dir)
			if err != nil {
				return err
			}
			for _, d := range store.Docs() {
				if a.jsonOut {
					a.printJSON(map[string]any{"path": d.Path, "title": d.Title, "status": d.EffectiveStatus(), "updated_by": d.UpdatedBy, "summary": d.Summary()})
					continue
				}
				fmt.Fprintf(a.stdout, "%-40s %-12s %s\n", d.Path, d.EffectiveStatus(), d.Title)
			}
			if len(store.Docs()) == 0 && !a.jsonOut {
				if _, err := os.Stat(dir); err != nil {
					fmt.Fprintf(a.stdout, "no knowledge store in %s (lemmings knowledge init scaffolds it)\n", dir)
				} else {
					fmt.Fprintf(a.stdout, "no knowledge documents in %s yet: the _example.md files are templates, not documents; copy one to <category>/<name>.md (e.g. conventions/errors.md) and edit it\n", dir)
				}
			}
			if len(probs) > 0 {
				fmt.Fprintf(a.stderr, "%d problem(s); lemmings knowledge lint shows them\n", len(probs))
			}
			return nil
		},
	}
}

func newKnowledgeShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show <doc>",
		Short: "Print one knowledge document (by path, e.g. conventions/errors.md, or title)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := a.knowledgeDir()
			if err != nil {
				return err
			}
			store, _, err := knowledge.Open(dir)
			if err != nil {
				return err
			}
			want := strings.TrimPrefix(filepath.ToSlash(args[0]), "docs/knowledge/")
			for _, d := range store.Docs() {
				if d.Path == want || d.Path == want+".md" || strings.EqualFold(d.Title, args[0]) {
					if a.jsonOut {
						a.printJSON(map[string]any{"path": d.Path, "title": d.Title, "status": d.EffectiveStatus(), "markdown": string(d.Render())})
						return nil
					}
					_, err := a.stdout.Write(d.Render())
					return err
				}
			}
			return usageErr("no knowledge document %q (lemmings knowledge list shows them)", args[0])
		},
	}
}

func newKnowledgeLintCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "lint",
		Short: "Check the knowledge documents; every problem with file and line (exit 1 if any)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := a.knowledgeDir()
			if err != nil {
				return err
			}
			if _, err := os.Stat(dir); err != nil {
				return fmt.Errorf("no knowledge store at %s (lemmings knowledge init scaffolds one)", dir)
			}
			probs := knowledge.Lint(dir)
			if a.jsonOut {
				for _, p := range probs {
					a.printJSON(p)
				}
			} else if len(probs) > 0 {
				fmt.Fprint(a.stdout, knowledge.FormatProblems(probs))
			} else {
				fmt.Fprintf(a.stdout, "%s: no problems\n", dir)
			}
			if len(probs) > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("%d problem(s) in %s", len(probs), dir)}
			}
			return nil
		},
	}
}
