package main

import (
	"fmt"

	"github.com/lemmings-dev/lemmings/internal/doctor"
	"github.com/spf13/cobra"
)

func newDoctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check that everything a run needs is in place, and say how to fix what is not",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			checks := doctor.Run(cmd.Context(), doctor.Options{Dir: a.dir, Root: a.repoRoot(), Flags: a.flagOverrides()})
			for _, c := range checks {
				if a.jsonOut {
					a.printJSON(c)
					continue
				}
				mark := map[string]string{"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[c.Status]
				fmt.Fprintf(a.stdout, "%s  %-18s %s\n", mark, c.Name, c.Detail)
				if c.Fix != "" {
					fmt.Fprintf(a.stdout, "      %-18s fix: %s\n", "", c.Fix)
				}
			}
			if failed := doctor.Failed(checks); failed > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("%d check(s) failed", failed)}
			}
			return nil
		},
	}
}
