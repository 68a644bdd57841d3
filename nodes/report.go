package nodes

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/internal/atomicfile"
	"github.com/lemmings-dev/lemmings/llm"
)

// Report ends the run: it settles the outcome (done only with evidence, see
// evidence.go) and writes report.md (what was done, commits, failures and
// why, directives, supervisor runs, knowledge written, tokens and cost, time
// per node, the graph).
func (d *Deps) Report(ctx context.Context, in WorkflowState) (WorkflowState, error) {
	s := in.Clone()
	s.Phase = PhaseDone
	if err := d.settleOutcome(ctx, &s); err != nil {
		return s, err
	}
	st := StandingOf(Stored{Status: graph.StatusDone}, &s)
	if d.RunDir != "" {
		path, err := d.saveReport(ctx, &s, st)
		if err != nil {
			return s, err
		}
		s.ReportPath = path
	}
	graph.Emit(ctx, "report", map[string]any{"path": s.ReportPath, "outcome": s.Outcome,
		"status": st.Status, "reason": st.Reason, "next": st.Next, "resumable": st.Resumable})
	return s, nil
}

func (d *Deps) saveReport(ctx context.Context, s *WorkflowState, st Standing) (string, error) {
	var b strings.Builder
	d.writeReport(ctx, &b, s, st)
	path := filepath.Join(d.RunDir, "report.md")
	if err := WriteFileAtomic(path, []byte(llm.Redact(b.String()))); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}

// EndReport writes report.md for a run that stopped before its Report node
// (failed, stopped, interrupted or paused), so every run that ends leaves
// one: its status, the reason and how to go on, with everything done so far.
func (d *Deps) EndReport(ctx context.Context, s WorkflowState, st Standing) (string, error) {
	if d.RunDir == "" {
		return "", nil
	}
	return d.saveReport(ctx, &s, st)
}

func allMilestonesDone(s *WorkflowState) bool {
	for _, m := range s.Milestones {
		if m.Status != MilestoneDone {
			return false
		}
	}
	return true
}

func (d *Deps) writeReport(ctx context.Context, b *strings.Builder, s *WorkflowState, st Standing) {
	fmt.Fprintf(b, "# lemmings report — run %s\n\n", s.RunID)
	fmt.Fprintf(b, "- **Remit:** %s\n- **Status:** %s", s.Remit, st.Status)
	if st.Status == RunDone {
		fmt.Fprintf(b, "\n- **Evidence:** %s", orNoneRecorded(st.Reason))
	} else {
		fmt.Fprintf(b, "\n- **Reason:** %s", orNoneRecorded(st.Reason))
	}
	if st.Next != "" {
		fmt.Fprintf(b, "\n- **How to go on:** %s", st.Next)
	}
	fmt.Fprintf(b, "\n- **Branch:** `%s` (from `%s`)\n", s.Branch, short(s.BaseCommit))
	fmt.Fprintf(b, "- **Sandbox:** %s\n", d.sandboxLine())
	if !s.StartedAt.IsZero() {
		// One line, so that comparisons of two runs' reports drop it whole.
		finished := time.Now().UTC()
		fmt.Fprintf(b, "- **Started:** %s · **Finished:** %s · **Took:** %s\n", s.StartedAt.UTC().Format(time.RFC3339),
			finished.Format(time.RFC3339), finished.Sub(s.StartedAt).Round(time.Second))
	}
	fmt.Fprintf(b, "- **Tasks:** %d completed, %d failed\n\n", s.TasksCompleted, s.TasksFailed)

	b.WriteString("## Milestones\n\n")
	for _, m := range s.Milestones {
		fmt.Fprintf(b, "- %s [%s] %s\n", m.ID, MilestoneShown(m.Status, st), m.Goal)
	}

	b.WriteString("\n## Tasks done\n\n| task | milestone | title | QA | attempts | commit |\n|---|---|---|---|---|---|\n")
	for _, e := range s.DoneList {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s |\n", e.TaskID, e.Milestone, cell(e.Title), e.QA, e.Attempts, short(e.Commit))
	}
	for _, e := range s.DoneList {
		if e.Summary != "" {
			fmt.Fprintf(b, "\n- **%s:** %s", e.TaskID, cell(e.Summary))
		}
	}
	b.WriteString("\n")

	if len(s.Overruled) > 0 {
		b.WriteString("\n## Claims overruled\n\n")
		for _, o := range s.Overruled {
			fmt.Fprintf(b, "- %s\n", cell(o))
		}
	}

	b.WriteString("\n## Failures\n\n")
	if len(s.Failures) == 0 {
		b.WriteString("None.\n")
	}
	for _, f := range s.Failures {
		fmt.Fprintf(b, "- **%s %s** (%d attempts): %s\n", f.TaskID, f.Title, f.Attempts, indentReason(f.Reason))
	}
	if attempts := failedAttempts(filepath.Join(d.RunDir, "events.jsonl")); len(attempts) > 0 {
		b.WriteString("\n## Failed attempts\n\n")
		for _, a := range attempts {
			fmt.Fprintf(b, "- **%s attempt %d:** %s\n", a.TaskID, a.Attempt, cell(a.Reason))
		}
	}

	if d.Work != nil && s.BaseCommit != "" {
		if log, err := d.Work.Log(ctx, s.BaseCommit); err == nil {
			b.WriteString("\n## Commits\n\n")
			for _, c := range log {
				fmt.Fprintf(b, "- `%s` %s\n", short(c.SHA), c.Subject)
			}
		}
	}

	b.WriteString("\n## Directives\n\n")
	if len(s.DirectiveLog) == 0 && len(s.PendingDirectives) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| directive | source | fate | task | description | note |\n|---|---|---|---|---|---|\n")
		for _, r := range DirectiveRows(s.DirectiveLog, s.PendingDirectives) {
			fate := r.Fate
			if fate == PendingFate {
				fate = "pending at end"
			}
			note := r.Note
			if r.Trail != "" {
				note = strings.TrimSuffix(r.Trail+"; "+note, "; ")
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", r.ID, r.Source, fate, r.TaskID, cell(r.Description), cell(note))
		}
	}

	b.WriteString("\n## Supervisor runs\n\n")
	if len(s.SupervisorRunLog) == 0 {
		b.WriteString("None.\n")
	} else {
		b.WriteString("| supervisor | trigger | after task | status | tokens in/out | cost | directives | docs | summary |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range s.SupervisorRunLog {
			fmt.Fprintf(b, "| %s | %s | %d | %s | %d/%d | $%.4f | %s | %s | %s |\n", r.Supervisor, r.Trigger, r.AtTask, r.Status,
				r.PromptTokens, r.CompletionTokens, r.CostUSD, strings.Join(r.Directives, " "), strings.Join(r.Docs, " "), cell(firstNonEmpty(r.Summary, r.Warning)))
		}
	}
	b.WriteString(escalationsSection(s))
	var docs []string
	for _, r := range s.SupervisorRunLog {
		docs = append(docs, r.Docs...)
	}
	b.WriteString("\n## Knowledge written\n\n")
	if len(docs) == 0 {
		b.WriteString("None.\n")
	}
	slices.Sort(docs)
	for _, p := range slices.Compact(docs) {
		fmt.Fprintf(b, "- `%s/%s`\n", d.Settings.KnowledgeDir, p)
	}

	b.WriteString("\n## Tokens and cost\n\n| who | calls | prompt tokens | completion tokens | cost | model time |\n|---|---|---|---|---|---|\n")
	var total UsageTotals
	for _, label := range slices.Sorted(maps.Keys(s.Usage)) {
		u := s.Usage[label]
		fmt.Fprintf(b, "| %s | %d | %d | %d | $%.4f | %s |\n", label, u.Calls, u.PromptTokens, u.CompletionTokens, u.CostUSD, u.Elapsed.Round(time.Millisecond))
		total.Calls += u.Calls
		total.PromptTokens += u.PromptTokens
		total.CompletionTokens += u.CompletionTokens
		total.CostUSD += u.CostUSD
		total.Elapsed += u.Elapsed
	}
	fmt.Fprintf(b, "| **total** | %d | %d | %d | $%.4f | %s |\n", total.Calls, total.PromptTokens, total.CompletionTokens, total.CostUSD, total.Elapsed.Round(time.Millisecond))

	if times := nodeTimes(filepath.Join(d.RunDir, "events.jsonl")); len(times) > 0 {
		b.WriteString("\n## Time per node\n\n| node | runs | total |\n|---|---|---|\n")
		for _, name := range slices.Sorted(maps.Keys(times)) {
			t := times[name]
			fmt.Fprintf(b, "| %s | %d | %s |\n", name, t.runs, t.total.Round(time.Millisecond))
		}
	}
	if d.Mermaid != "" {
		fmt.Fprintf(b, "\n## Graph\n\n```mermaid\n%s\n```\n", strings.TrimSpace(d.Mermaid))
	}
}

type nodeTime struct {
	runs  int
	total time.Duration
}

// nodeTimes sums node durations from the run's event log, across every
// process that worked on the run (a resumed run included).
// sandboxLine says how model-written code was confined, and which gates
// had the network.
func (d *Deps) sandboxLine() string {
	line := "the default sandbox (lemmings doctor says what this machine offers)"
	if d.Sandbox != nil {
		line = d.Sandbox.Describe()
	}
	var net []string
	for _, g := range d.Gates {
		if g.Network {
			net = append(net, g.Name)
		}
	}
	if len(net) > 0 {
		line += "; network for gates " + strings.Join(net, ", ") + " (gates[].network)"
	}
	return line
}

func nodeTimes(path string) map[string]nodeTime {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]nodeTime{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev graph.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Kind != graph.EventNodeEnd {
			continue
		}
		t := out[ev.Node]
		t.runs++
		t.total += ev.Duration
		out[ev.Node] = t
	}
	return out
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

func cell(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

func indentReason(r string) string {
	r = strings.TrimSpace(r)
	if !strings.Contains(r, "\n") {
		return r
	}
	return "\n\n  ```\n  " + strings.ReplaceAll(clip(r, 1500), "\n", "\n  ") + "\n  ```"
}

// WriteFileAtomic writes one of the run's files (report, board, choices)
// through a synced temporary file and a rename, so a reader, or a process
// killed mid-write, never sees half a file. Run files are the user's only:
// 0600.
func WriteFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o600)
}
