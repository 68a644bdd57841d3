package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// The exit code rule (README, "Exit codes"): whatever the user can fix by
// changing the command line or the configuration — an unknown command or
// flag, a wrong number of arguments, an empty remit or query, a bad plan
// file, a directory or run that does not exist — is a usage error (2).
// A command that was understood but could not do its work fails (1).
// Cobra's own argument errors are plain errors, so every command's argument
// check is wrapped here to carry the usage code.

// usageArgs wraps the argument checks of cmd and all its subcommands so
// their errors exit 2 and point at the command's help.
func usageArgs(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			err := check(c, args)
			var ee *exitError
			if err == nil || errors.As(err, &ee) {
				return err
			}
			return usageErr("%v (see %s --help)", err, c.CommandPath())
		}
	}
	for _, sub := range cmd.Commands() {
		usageArgs(sub)
	}
}

// groupCommand makes a command that only holds subcommands refuse an unknown
// subcommand with a usage error (cobra prints the help and exits 0 instead),
// naming the closest ones.
func groupCommand(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %s", args[0], c.CommandPath())
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2 // cobra's own default, set only on its path
		}
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return usageErr("%s (see %s --help)", msg, c.CommandPath())
	}
}

// remitArgs accepts one remit; several words mean the quotes were forgotten.
func remitArgs(_ *cobra.Command, args []string) error {
	if len(args) > 1 {
		return usageErr("run takes the remit as one argument, got %d: quote it, as in lemmings run %q", len(args), strings.Join(args, " "))
	}
	return nil
}

// existingDir refuses a directory that does not exist instead of creating
// it: a typo in -C or a path must not leave a .lemmings/ somewhere new.
func existingDir(flag, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return usageErr("%s %s: no such directory", flag, dir)
	case err != nil:
		return usageErr("%s %s: %v", flag, dir, err)
	case !st.IsDir():
		return usageErr("%s %s: not a directory", flag, dir)
	}
	return nil
}
