package nodes

// The quick path: a remit that is one task goes straight to the Implementor.
// The nodes stay the same (one graph, one set of hooks), but the ScopeAgent,
// the planner and the Assessor make no model call: the remit is the task, the
// gates and lemmings' own checks are QA's verdict where they cover the
// criteria, and the summary comes from the diff. A quick run whose attempts
// keep failing, or whose implementor says it is blocked, escalates into the
// full pipeline: the work tree goes back to the start and the ScopeAgent
// plans the remit with what the quick attempts learned — unless the quick
// path was asked for (--quick), when the task fails instead.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lemmings-dev/lemmings/events"
	"github.com/lemmings-dev/lemmings/internal/textutil"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// quickPath is what the quick path uses: the task moves, the settings, the
// gates, and where a remit's words point in the work tree (place).
type quickPath struct {
	taskWork
	Settings Settings
	Gates    []workspace.Gate
	place    func(ctx context.Context, remit string) placement
}

func quickOf(d *Deps) quickPath {
	return quickPath{taskWork: tasksOf(d), Settings: d.Settings, Gates: d.Gates, place: placerOf(d).place}
}

// Pipeline modes (Settings.Pipeline.Mode, config pipeline.mode, --quick/--full).
const (
	PipelineAuto  = "auto"
	PipelineQuick = "quick"
	PipelineFull  = "full"
)

// Summary sources (Settings.Pipeline.Summaries).
const (
	SummariesAuto  = "auto"  // the summarizer model in the full pipeline, the diff in the quick one
	SummariesModel = "model" // always the summarizer model
	SummariesDiff  = "diff"  // never a model call
)

// PipelineSettings size the pipeline to the work.
type PipelineSettings struct {
	Mode string
	// QuickAttempts is how many attempts a quick task gets before the run
	// escalates into the full pipeline (0: never escalate).
	QuickAttempts int
	Summaries     string
}

// Limits of a remit the quick path takes on its own (auto mode).
const (
	quickMaxWords = 80
	quickMaxFiles = 2
)

// remitShape is a cheap reading of a remit: how much work it names.
type remitShape struct {
	Words int
	// Files are the paths it names (a slash or a known extension).
	Files []string
	// Behaviours counts the actions it asks for: a verb opening a clause
	// ("add …, then fix …"), or an item of a list.
	Behaviours int
	// Broad is a word that says the work spans the project ("every", "refactor").
	Broad string
}

var (
	remitFile   = regexp.MustCompile(`(?i)(?:^|[\s"'` + "`" + `(\[])((?:[\w.-]+/)*[\w-]+\.(?:go|py|js|mjs|cjs|ts|tsx|jsx|rs|java|kt|c|h|cc|cpp|hpp|rb|php|cs|swift|md|txt|json|ya?ml|toml|ini|cfg|sh|mod|sum|html|css|sql|proto))\b`)
	remitBroad  = regexp.MustCompile(`(?i)\b(every|entire|whole|across|all (?:the )?(?:files|packages|modules|functions|tests|commands)|codebase|project-wide|refactor|migrate|redesign|rewrite|architecture|framework)\b`)
	remitQuoted = regexp.MustCompile("\"([^\"\n]{1,200})\"|`([^`\n]{1,200})`")
)

// actionVerbs open a clause that asks for a change.
var actionVerbs = map[string]bool{
	"add": true, "fix": true, "change": true, "rename": true, "remove": true, "delete": true, "update": true,
	"write": true, "create": true, "implement": true, "make": true, "move": true, "refactor": true,
	"document": true, "test": true, "replace": true, "support": true, "extract": true, "convert": true,
	"split": true, "merge": true, "introduce": true, "drop": true, "handle": true, "use": true,
	"print": true, "log": true, "raise": true, "validate": true, "bump": true, "upgrade": true,
	"port": true, "migrate": true, "allow": true, "ensure": true, "improve": true, "clean": true,
	"return": true, "set": true, "solve": true, "correct": true, "translate": true,
}

// clauseJoiners are words after which a verb opens a new clause.
var clauseJoiners = map[string]bool{"and": true, "then": true, "also": true, "plus": true}

// readRemit reads the shape of a remit.
func readRemit(remit string) remitShape {
	sh := remitShape{Words: len(strings.Fields(remit))}
	seen := map[string]bool{}
	for _, m := range remitFile.FindAllStringSubmatch(remit, -1) {
		if p := strings.TrimSuffix(m[1], "."); !seen[p] && !strings.Contains(p, "://") {
			seen[p] = true
			sh.Files = append(sh.Files, p)
		}
	}
	if m := remitBroad.FindString(remit); m != "" {
		sh.Broad = m
	}
	lists := remitList(remit)
	clauses := remitClauses(remit)
	for i, clause := range clauses {
		w := strings.ToLower(strings.Trim(clause[0], ".,;:!?()[]\"'`"))
		// "…; make go test pass" at the end says how the change before it
		// is checked, not a second change ("make the tests pass, then add
		// X" first is one).
		if actionVerbs[w] && !(i > 0 && i == len(clauses)-1 && len(clause) <= 8 && gatePhrase.MatchString(strings.Join(clause, " "))) {
			sh.Behaviours++
		}
	}
	if lists > 1 {
		sh.Behaviours = max(sh.Behaviours, lists)
	}
	return sh
}

// remitClauses splits a remit into clauses of words: a clause ends at a
// sentence mark or a comma, and a joiner ("and", "then") opens a new one.
func remitClauses(remit string) [][]string {
	var out [][]string
	var cur []string
	for _, raw := range strings.Fields(remit) {
		w := strings.ToLower(strings.Trim(raw, ".,;:!?()[]\"'`"))
		if clauseJoiners[w] {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, raw)
		if strings.ContainsAny(raw[len(raw)-1:], ".;:!?,\n") {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// quick says whether the remit is one task a model can do in one go, and why
// (or why not).
func (sh remitShape) quick() (bool, string) {
	switch {
	case sh.Behaviours > 1:
		return false, fmt.Sprintf("the remit asks for %d changes", sh.Behaviours)
	case len(sh.Files) > quickMaxFiles:
		return false, fmt.Sprintf("the remit names %d files", len(sh.Files))
	case sh.Words > quickMaxWords:
		return false, fmt.Sprintf("the remit is %d words long", sh.Words)
	case sh.Broad != "":
		return false, fmt.Sprintf("the remit spans the project (%q)", sh.Broad)
	}
	where := "no file named"
	if len(sh.Files) > 0 {
		where = strings.Join(sh.Files, ", ")
	}
	return true, "one change, " + where
}

// choosePipeline decides the run's shape before the first plan, and places a
// quick remit: the files its one task works on, found by lemmings.
func (d quickPath) choosePipeline(ctx context.Context, s *runstate.State) placement {
	if s.Plan == nil && d.Settings.Pipeline.Mode != PipelineQuick {
		if p := d.listPlan(ctx, s.Remit); p != nil {
			s.Plan = p
			s.PipelineReason = fmt.Sprintf("a list of %d changes: a task each, planned by lemmings", len(p.Milestones[0].Tasks))
			return placement{}
		}
	}
	switch {
	case s.Plan != nil:
		s.PipelineReason = "an operator plan"
		return placement{}
	case d.Settings.Pipeline.Mode == PipelineQuick:
		s.Quick, s.PipelineReason = true, "asked for (--quick)"
	case d.Settings.Pipeline.Mode == PipelineFull:
		s.PipelineReason = "asked for (--full)"
		return placement{}
	default:
		sh := readRemit(s.Remit)
		s.Quick, s.PipelineReason = sh.quick()
		if !s.Quick && !placeable(sh) {
			return placement{}
		}
	}
	p := d.place(ctx, s.Remit)
	if p.How != "" {
		events.Emit(ctx, events.Placed{Change: p.Change, Show: p.Show, How: p.How, Tests: p.Tests})
	}
	if !s.Quick && p.placed() {
		// One change in a file lemmings found needs no plan.
		s.Quick, s.PipelineReason = true, "one change, placed by lemmings: "+p.How
	}
	return p
}

// placeable says whether a remit the shape reading sent to the full
// pipeline only for its length is one change once lemmings places it (an
// exercise's instructions: long, one thing to do).
func placeable(sh remitShape) bool {
	return sh.Behaviours <= 1 && len(sh.Files) <= quickMaxFiles && sh.Broad == ""
}

// quickMilestone is the one milestone of a quick run: the remit as one task,
// on the files lemmings placed it in (the tests that pin it shown beside).
func (d quickPath) quickMilestone(s *runstate.State, p placement) runstate.Milestone {
	t := runstate.PlannedTask{Title: quickTitle(s.Remit),
		Instructions: "Carry out the remit (PROJECT CONTEXT): all of it is this one task.", Tests: p.Tests, Placed: p.placed()}
	for _, f := range p.Change {
		if len(t.TargetFiles) < quickMaxFiles {
			t.TargetFiles = append(t.TargetFiles, f)
		}
	}
	for _, f := range p.Show {
		if len(t.TargetFiles) < 2*quickMaxFiles {
			t.TargetFiles = appendNew(t.TargetFiles, f)
		}
	}
	t.AcceptanceCriteria = d.quickCriteria(s.Remit, t.TargetFiles)
	if p.BaselineFails() && len(t.AcceptanceCriteria) > 1 && t.AcceptanceCriteria[len(t.AcceptanceCriteria)-1] == critRemit+": "+textutil.ClipTrimmed(s.Remit, 200) {
		// The tests that fail at the start are what placed the remit: they
		// passing is the evidence, as when the remit says so.
		t.AcceptanceCriteria = t.AcceptanceCriteria[:len(t.AcceptanceCriteria)-1]
	}
	return runstate.Milestone{ID: "m1", Goal: textutil.ClipTrimmed(s.Remit, 300), Status: runstate.MilestonePending, Tasks: []runstate.PlannedTask{t}}
}

// quickTitle is the remit's first sentence, short.
func quickTitle(remit string) string {
	first := strings.TrimSpace(remit)
	if i := strings.IndexAny(first, "\n"); i > 0 {
		first = first[:i]
	}
	if i := strings.Index(first, ". "); i > 0 {
		first = first[:i]
	}
	return textutil.ClipTrimmed(strings.TrimSuffix(first, "."), 120)
}

// Criteria lemmings decides without a model.
const (
	critGates = "The gates pass"
	// critAdds is followed by a quoted text the change must add.
	critAdds = "The change adds "
	// critRemit is the one a model reviews: nothing else can check it.
	critRemit = "The change does what the remit asks"
)

// newTextCue are the words after which a short remit quotes text the change
// must add: change X *to* "Y", a line *reading* "Y", *print* "Y".
var newTextCue = map[string]bool{
	"to": true, "with": true, "into": true, "say": true, "says": true, "print": true, "prints": true,
	"return": true, "returns": true, "read": true, "reads": true, "reading": true, "line": true,
	"text": true, "message": true, "named": true, "called": true, "add": true, "adds": true,
	"output": true, "outputs": true, "show": true, "shows": true,
}

// quickCriteria are what QA checks of a quick task: the gates, each new text
// a short remit quotes (which the change must add), and, when neither covers
// the remit, the remit itself (the one criterion a model reviews). A long
// remit (an exercise's instructions) quotes too much to read that way: the
// gates, or the model, decide it.
func (d quickPath) quickCriteria(remit string, files []string) []string {
	var out []string
	if len(d.Gates) > 0 {
		out = append(out, critGates)
	}
	adds := 0
	// A remit whose goal is the tests passing (an exercise: "make the tests
	// in leap_test.go pass") quotes examples, not text the change must add:
	// the gates decide it.
	testsDecide := len(d.Gates) > 0 && gatePhrase.MatchString(remit)
	if readRemit(remit).Words <= quickMaxWords && !testsDecide {
		for _, lit := range newTexts(remit) {
			if !d.anyFileHas(files, lit) && !d.gateCommand(lit) {
				out = append(out, critAdds+strconv.Quote(lit))
				adds++
			}
		}
	}
	if adds == 0 && !testsDecide {
		out = append(out, critRemit+": "+textutil.ClipTrimmed(remit, 200))
	}
	return out
}

// newTexts are the quoted texts of a remit that follow a newTextCue within
// three words (not the "from" side of a change, not a file name).
func newTexts(remit string) []string {
	var out []string
	for _, loc := range remitQuoted.FindAllStringSubmatchIndex(remit, -1) {
		var lit string
		if loc[2] >= 0 {
			lit = remit[loc[2]:loc[3]]
		} else {
			lit = remit[loc[4]:loc[5]]
		}
		words := strings.Fields(remit[:loc[0]])
		cued := false
		for i := len(words) - 1; i >= 0 && i >= len(words)-3; i-- {
			if newTextCue[strings.ToLower(strings.Trim(words[i], ".,;:()"))] {
				cued = true
				break
			}
		}
		if cued && strings.TrimSpace(lit) != "" && !remitFile.MatchString(" "+lit) {
			out = append(out, lit)
		}
	}
	return out
}

// gateCommand says whether a quoted text is a gate's command ("the tests
// run with `go test ./...`"): the remit names how it is checked, not what the
// change adds.
func (d quickPath) gateCommand(text string) bool {
	for _, g := range d.Gates {
		if strings.TrimSpace(g.Command) == strings.TrimSpace(text) {
			return true
		}
	}
	return false
}

// anyFileHas says whether one of files already has text.
func (d quickPath) anyFileHas(files []string, text string) bool {
	for _, f := range files {
		if b, err := d.Work.FS().ReadFile(f); err == nil && strings.Contains(string(b), text) {
			return true
		}
	}
	return false
}

// planQuick is the planner's round in a quick run, without a model call:
// start the task, try it again with the feedback, escalate, or finish.
func (d quickPath) planQuick(ctx context.Context, s runstate.State) (runstate.State, error) {
	t := s.CurrentTask
	if t == nil {
		return d.takeNext(ctx, s)
	}
	blocked := s.Implementation != nil && (s.Implementation.Status == runstate.ImplBlocked || s.Implementation.Status == runstate.ImplQuestion)
	attempts := d.Settings.Pipeline.QuickAttempts
	if !blocked && (attempts <= 0 || t.Attempt < attempts) {
		if t.Retries > d.Settings.MaxRetries {
			s.PlannerDecision = DecisionAbort
			return s, nil
		}
		s.PlannerDecision = DecisionImplement // the same task again, with the feedback
		return d.prepareAttempt(s), nil
	}
	if t.Passing != "" && !blocked {
		// An attempt passed its gates and only its review failed: that
		// change is kept (mark_failed commits it flagged), not planned over.
		t.Feedback = strings.TrimSpace(fmt.Sprintf("%d quick attempts did not pass QA; attempt %d passed the gates. Last feedback: %s", t.Attempt, t.PassingAttempt, textutil.ClipTrimmed(t.Feedback, 600)))
		s.PlannerDecision = DecisionAbort
		return s, nil
	}
	if d.Settings.Pipeline.Mode == PipelineQuick {
		// The quick path was asked for (--quick, an eval): the remit is one
		// task by the asker's word, and planning it would spend the model's
		// time on a plan nobody asked for. The task fails with its feedback.
		why := fmt.Sprintf("%d quick attempts did not pass", t.Attempt)
		if blocked {
			why = "the implementor was blocked"
		}
		t.Feedback = strings.TrimSpace(why + "; the quick path was asked for, so the run does not escalate into the full pipeline (run without --quick to let it plan). Last feedback: " + textutil.ClipTrimmed(t.Feedback, 600))
		events.Emit(ctx, events.PipelineChange{Name: events.KindPipelineKeptQuick, Task: t.ID, Attempts: t.Attempt, Why: why})
		s.PlannerDecision = DecisionAbort
		return s, nil
	}
	if !blocked && t.Placed {
		// lemmings placed the remit in its file and the model could not
		// write the change there twice: planning it in tasks would ask the
		// same model the same thing at many times the cost (Qwen-1.5B on a
		// real task: 2 direct attempts, then a ScopeAgent, a planner and
		// another attempt). The task fails; --full plans such a remit.
		why := fmt.Sprintf("%d quick attempts did not pass", t.Attempt)
		t.Feedback = strings.TrimSpace(why + " in the file lemmings placed the remit in; the run does not escalate into the full pipeline (run with --full to have it planned in tasks). Last feedback: " + textutil.ClipTrimmed(t.Feedback, 600))
		events.Emit(ctx, events.PipelineChange{Name: events.KindPipelineKeptQuick, Task: t.ID, Attempts: t.Attempt, Why: why})
		s.PlannerDecision = DecisionAbort
		return s, nil
	}
	return d.escalateQuick(ctx, s, blocked)
}

// escalateQuick hands a quick run that turned out larger to the full
// pipeline: the quick attempts are undone, what they learned goes to the
// ScopeAgent, which plans the remit as it would have from the start.
func (d quickPath) escalateQuick(ctx context.Context, s runstate.State, blocked bool) (runstate.State, error) {
	t := s.CurrentTask
	if err := d.resetTo(ctx, t); err != nil {
		return s, fmt.Errorf("escalate the quick run: %w", err)
	}
	why := fmt.Sprintf("%d quick attempts did not pass", t.Attempt)
	if blocked {
		why = "the implementor was blocked"
	}
	s.EscalationContext = strings.TrimSpace(s.EscalationContext + fmt.Sprintf("\nThe remit was tried as one quick task and %s; plan it in smaller tasks. Last feedback: %s", why, textutil.ClipTrimmed(t.Feedback, 600)))
	events.Emit(ctx, events.PipelineChange{Name: events.KindPipelineEscalated, Task: t.ID, Attempts: t.Attempt, Why: why})
	s.Quick = false
	s.PipelineReason = "escalated: " + why
	s.CurrentTask, s.Implementation, s.QA = nil, nil, nil
	s.CarryForward = slices.DeleteFunc(s.CarryForward, func(p runstate.PlannedTask) bool { return p.DirectiveID == "" })
	s.PlannerDecision = DecisionRescope
	return s, nil
}
