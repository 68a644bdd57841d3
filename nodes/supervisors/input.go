package supervisors

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
)

type promptData struct {
	Bootstrap bool
	Trigger   string
}

// PromptSamples are samples of the data a supervisor's template is executed
// with (nodes.PromptSamples): every field empty, then every field set.
func PromptSamples() []any {
	return []any{promptData{}, promptData{Bootstrap: true, Trigger: TriggerMilestoneComplete}}
}

// Caps on what one supervisor input may carry; packing to the token budget
// then drops the least important sections first.
const (
	supRecentTasks = 10
	supMaxFiles    = 12
	supFileBytes   = 6000
	supSampleFiles = 6
	// supRemitBytes bounds the remit, a required section, well inside the
	// default input budget.
	supRemitBytes = 4000
)

// Input compresses the state for a supervisor (docs/supervisors.md
// "Cost and privacy"): remit and milestones, done list, carry-forward, recent results
// and QA feedback, the files changed (read from the work tree, deny-listed
// files never included) and the knowledge store.
func (d *Runner) Input(s *runstate.State, job runstate.SupervisorJob) []llm.Section {
	var secs []llm.Section
	secs = append(secs, llm.Section{Title: prompts.SecRemitMilestones, Body: "Remit: " + textutil.ClipTrimmed(s.Remit, supRemitBytes) + "\n\n" + s.MilestoneOverview(), Required: true})
	secs = append(secs, llm.Section{Title: prompts.SecKnowledgeStore, Body: d.knowledgeDigest(job.Supervisor), Priority: prompts.PrioKnowledge})

	var done strings.Builder
	start := max(0, len(s.DoneList)-supRecentTasks)
	for _, e := range s.DoneList[start:] {
		fmt.Fprintf(&done, "- %s [%s] %s: %s (files: %s)\n", e.TaskID, e.QA, e.Title, e.Summary, strings.Join(e.Files, ", "))
	}
	secs = append(secs, llm.Section{Title: prompts.SecDoneList, Body: orNone(done.String()), Priority: prompts.PrioContext})

	var plan strings.Builder
	for _, t := range s.CarryForward {
		fmt.Fprintf(&plan, "- %s\n", t.Title)
	}
	secs = append(secs, llm.Section{Title: prompts.SecCarryForward, Body: orNone(plan.String()), Priority: prompts.PrioOverview})

	var recent strings.Builder
	fs := max(0, len(s.Failures)-5)
	for _, f := range s.Failures[fs:] {
		fmt.Fprintf(&recent, "- FAILED %s %s: %s\n", f.TaskID, f.Title, textutil.ClipTrimmed(f.Reason, 400))
	}
	if s.EscalationContext != "" {
		fmt.Fprintf(&recent, "Escalations:\n%s\n", textutil.ClipTrimmed(s.EscalationContext, 1500))
	}
	if s.Assessment != nil {
		fmt.Fprintf(&recent, "Last assessment: %s — %s\n", s.Assessment.Verdict, s.Assessment.Notes)
	}
	secs = append(secs, llm.Section{Title: prompts.SecRecentResults, Body: orNone(recent.String()), Priority: prompts.PrioContext})

	files := d.changedSince(s, job)
	title := prompts.SecFilesChanged
	if job.Bootstrap && len(files) < supSampleFiles {
		files = append(files, d.codeSample(supSampleFiles-len(files), files)...)
		title = prompts.SecCodeSample
	}
	secs = append(secs, llm.Section{Title: title, Body: d.fileContents(files), Priority: prompts.PrioHistory + 5})

	if t, ok := s.Supervisors[job.Supervisor]; ok && len(t.LastFindings) > 0 {
		secs = append(secs, llm.Section{Title: prompts.SecPreviousFindings, Body: "- " + strings.Join(t.LastFindings, "\n- "), Priority: prompts.PrioHistory})
	}
	return secs
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return strings.TrimSpace(s)
}

// changedSince lists files touched by tasks since the supervisor last ran.
func (d *Runner) changedSince(s *runstate.State, job runstate.SupervisorJob) []string {
	var files []string
	since := 0
	for i := len(s.SupervisorRunLog) - 1; i >= 0; i-- {
		if r := s.SupervisorRunLog[i]; r.Supervisor == job.Supervisor && r.Status == "ok" {
			since = r.AtTask
			break
		}
	}
	for i := len(s.DoneList) - 1; i >= 0 && len(files) < supMaxFiles; i-- {
		e := s.DoneList[i]
		if i < since && len(files) > 0 {
			break
		}
		for _, f := range e.Files {
			if !slices.Contains(files, f) && !d.denies(f) {
				files = append(files, f)
			}
		}
	}
	return files
}

// codeSample picks source files for a bootstrap run, smallest directories first.
func (d *Runner) codeSample(n int, have []string) []string {
	entries, err := d.Work.FS().List(".", 400)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if len(out) >= n {
			break
		}
		if e.Dir || slices.Contains(have, e.Path) || d.denies(e.Path) || !isSource(e.Path) {
			continue
		}
		out = append(out, e.Path)
	}
	return out
}

func isSource(p string) bool {
	switch path.Ext(p) {
	case ".go", ".py", ".js", ".ts", ".rs", ".java", ".rb", ".c", ".h", ".cpp", ".cs", ".kt", ".swift":
		return !strings.Contains(p, "docs/knowledge/")
	}
	return false
}

func (d *Runner) fileContents(files []string) string {
	if len(files) == 0 {
		return "(no files)"
	}
	var b strings.Builder
	for _, f := range files {
		data, err := d.Work.FS().ReadFile(f)
		if err != nil {
			fmt.Fprintf(&b, "### %s\n(deleted or unreadable)\n\n", f)
			continue
		}
		fmt.Fprintf(&b, "### %s\n%s\n\n", f, textutil.ClipTrimmed(string(data), supFileBytes))
	}
	return strings.TrimSpace(b.String())
}

// knowledgeDigest shows a supervisor the store: its own documents in full,
// the others by title.
func (d *Runner) knowledgeDigest(supervisor string) string {
	store, err := d.knowledgeStore()
	if err != nil || store.Empty() {
		return "(the knowledge store is empty)"
	}
	own := map[string][]string{prompts.CodeStyle: {"conventions/"}, prompts.Design: {"design/"}, prompts.Internaliser: {"lessons/", "domain/"}}[supervisor]
	var b strings.Builder
	for _, doc := range store.Docs() {
		mine := false
		for _, dir := range own {
			mine = mine || strings.HasPrefix(doc.Path, dir)
		}
		if mine {
			fmt.Fprintf(&b, "### %s [%s]\n%s\n\n", doc.Path, doc.Status, strings.TrimSpace(string(doc.Render())))
		} else {
			fmt.Fprintf(&b, "- %s [%s] %s\n", doc.Path, doc.Status, doc.Title)
		}
	}
	return strings.TrimSpace(b.String())
}

// denies says whether a file must never leave the machine. A Runner wired
// without a deny-list sends no file at all rather than every file.
func (d *Runner) denies(p string) bool { return d.Denied == nil || d.Denied(p) }

func totals(u llm.Usage) runstate.UsageTotals {
	return runstate.UsageTotals{Calls: u.Calls, PromptTokens: u.PromptTokens, PromptCached: u.PromptCached, CompletionTokens: u.CompletionTokens, CostUSD: u.CostUSD, Elapsed: u.Elapsed}
}
