package main

import (
	"github.com/spf13/cobra"

	"github.com/lemmings-dev/lemmings/config"
)

func newConfigCmd(a *app) *cobra.Command {
	var example bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration and where each value came from (secrets masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if example {
				if a.jsonOut {
					return usageErr("config --example has no JSON form: it prints a commented YAML file")
				}
				_, err := a.stdout.Write([]byte(config.Example()))
				return err
			}
			cfg, src, err := a.loadConfig(a.repoRoot())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return config.PrintJSON(a.stdout, cfg, src)
			}
			return config.Print(a.stdout, cfg, src)
		},
	}
	cmd.Flags().BoolVar(&example, "example", false, "print a complete, commented example lemmings.yaml")
	return cmd
}
