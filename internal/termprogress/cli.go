package termprogress

import (
	"fmt"
	"time"

	"github.com/lemmings-dev/lemmings/events"
)

// cliProgress shows the coding CLI's work: its tool calls on the live line,
// one line per CLI run with what it spent.
func (p *Progress) cliProgress(data events.Payload) {
	switch d := data.(type) {
	case *events.CLIStart:
		p.cliTools = 0
	case *events.CLIEvent:
		if d.EventKind == "tool_call" {
			p.cliTools++
		}
	case *events.CLIRun:
		end := "done"
		switch {
		case d.TimedOut:
			end = "TIMED OUT"
		case d.ExitCode != 0:
			end = fmt.Sprintf("EXIT %v", d.ExitCode)
		case d.Failed != "":
			end = "ERROR"
		}
		p.printf("%s   cli %v %s: %v tool calls, %v/%v tokens, $%.4f, %s", p.elapsed(), d.CLI, end, d.ToolCalls,
			d.InputTokens, d.OutputTokens, d.CostUSD, time.Duration(d.DurationMS)*time.Millisecond)
	case *events.CLIOutside:
		p.printf("%s   cli changed things outside the work tree: %v", p.elapsed(), d.Changes)
	case *events.CLICommitsDropped:
		p.printf("%s   cli made %v commit(s) of its own: kept the changes, not the commits", p.elapsed(), d.Commits)
	}
}
