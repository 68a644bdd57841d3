package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/lemmings-dev/lemmings/internal/atomicfile"
)

// Exercise statuses in a result.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
	// StatusError: the attempt could not be made (not the model's doing); a
	// resumed eval tries it again.
	StatusError = "error"
)

// FileVersion is the version of the results file's format.
const FileVersion = 1

// Result is one exercise's result.
type Result struct {
	ID       string `json:"id"`
	Language string `json:"language,omitempty"`
	Slug     string `json:"slug,omitempty"`
	Dir      string `json:"dir"`
	Status   string `json:"status"`
	// PassedAttempt is the attempt whose tests passed (0: none).
	PassedAttempt int  `json:"passed_attempt"`
	Pass1         bool `json:"pass1"`
	Pass2         bool `json:"pass2"`
	Attempts      int  `json:"attempts"`
	PromptTokens  int  `json:"prompt_tokens"`
	// PromptCached is the part of PromptTokens the server's cache served:
	// the server read PromptTokens - PromptCached.
	PromptCached     int     `json:"prompt_cached,omitempty"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	Calls            int     `json:"calls,omitempty"`
	ModelSeconds     float64 `json:"model_seconds,omitempty"`
	WallSeconds      float64 `json:"wall_seconds"`
	TestSeconds      float64 `json:"test_seconds"`
	// Reason says why the exercise failed, was skipped or errored; Fix says
	// what to do about a skip.
	Reason string `json:"reason,omitempty"`
	Fix    string `json:"fix,omitempty"`
	// Toolchain marks an oracle failure: the reference solution did not pass,
	// so the machine's toolchain (or the harness) is at fault.
	Toolchain bool `json:"toolchain,omitempty"`
	// Localisation, for a task from real history: the files its first
	// attempt changed against those the real change did.
	Localisation *Localisation `json:"localisation,omitempty"`
	Runs         []Outcome     `json:"runs,omitempty"`
	TestOutput   string        `json:"test_output,omitempty"`
	WorkDir      string        `json:"work_dir,omitempty"`
	Finished     time.Time     `json:"finished"`
}

// Tokens is prompt plus completion tokens.
func (r Result) Tokens() int { return r.PromptTokens + r.CompletionTokens }

// Scored reports whether the result counts in the pass rates.
func (r Result) Scored() bool { return r.Status == StatusPassed || r.Status == StatusFailed }

// File is one eval: what ran, with what, and every exercise's result. It is
// rewritten (atomically) after each exercise, so a killed eval resumes.
type File struct {
	Version     int       `json:"version"`
	Label       string    `json:"label"`
	Solver      string    `json:"solver"`
	Model       string    `json:"model,omitempty"`
	Implementor string    `json:"implementor,omitempty"`
	MaxAttempts int       `json:"max_attempts"`
	Dirs        []string  `json:"dirs"`
	Started     time.Time `json:"started"`
	Updated     time.Time `json:"updated"`
	Results     []Result  `json:"results"`
	// Totals and Languages are recomputed on every write.
	Totals    Totals   `json:"totals"`
	Languages []Totals `json:"languages"`
}

// what names what an eval measured, for messages.
func (f *File) what() string {
	s := f.Solver
	if f.Implementor != "" {
		s += " with implementor " + f.Implementor
	}
	return fmt.Sprintf("%s (model %q, %d attempts)", s, f.Model, f.MaxAttempts)
}

// Totals sums a set of results.
type Totals struct {
	Language  string `json:"language,omitempty"`
	Exercises int    `json:"exercises"`
	Scored    int    `json:"scored"`
	Pass1     int    `json:"pass1"`
	Pass2     int    `json:"pass2"`
	Skipped   int    `json:"skipped"`
	Errors    int    `json:"errors"`
	// Tasks are the scored tasks from real history; Localised those whose
	// first attempt changed a file the real change changed.
	Tasks       int     `json:"tasks,omitempty"`
	Localised   int     `json:"localised,omitempty"`
	Tokens      int     `json:"tokens"`
	CostUSD     float64 `json:"cost_usd"`
	WallSeconds float64 `json:"wall_seconds"`
	// What the model's time bought: calls, prompt tokens (and the part the
	// server's cache served) and model seconds, of the scored exercises
	// that passed (solved) and of those that did not (failed).
	Solved Spend `json:"solved"`
	Failed Spend `json:"failed"`
}

// Spend is what a set of exercises cost in model time.
type Spend struct {
	Exercises        int     `json:"exercises"`
	Calls            int     `json:"calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	PromptCached     int     `json:"prompt_cached"`
	CompletionTokens int     `json:"completion_tokens"`
	ModelSeconds     float64 `json:"model_seconds"`
}

func (s *Spend) add(r Result) {
	s.Exercises++
	s.Calls += r.Calls
	s.PromptTokens += r.PromptTokens
	s.PromptCached += r.PromptCached
	s.CompletionTokens += r.CompletionTokens
	s.ModelSeconds += r.ModelSeconds
}

// PerExercise is the mean model seconds of an exercise of the set.
func (s Spend) PerExercise() float64 {
	if s.Exercises == 0 {
		return 0
	}
	return s.ModelSeconds / float64(s.Exercises)
}

// Rate1 and Rate2 are the pass@1 and pass@2 rates in percent of the scored
// exercises (0 when none).
func (t Totals) Rate1() float64 { return pct(t.Pass1, t.Scored) }

// Rate2 is the pass@2 rate in percent.
func (t Totals) Rate2() float64 { return pct(t.Pass2, t.Scored) }

// MeanWall is the mean wall time of a scored exercise, in seconds.
func (t Totals) MeanWall() float64 {
	if t.Scored == 0 {
		return 0
	}
	return t.WallSeconds / float64(t.Scored)
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func (t *Totals) add(r Result) {
	t.Exercises++
	switch r.Status {
	case StatusSkipped:
		t.Skipped++
		return
	case StatusError:
		t.Errors++
	default:
		t.Scored++
		if r.Pass1 {
			t.Pass1++
		}
		if r.Pass2 {
			t.Pass2++
		}
	}
	if r.Scored() && r.Status != StatusError {
		if r.Pass1 || r.Pass2 {
			t.Solved.add(r)
		} else {
			t.Failed.add(r)
		}
	}
	if r.Localisation != nil && r.Scored() {
		t.Tasks++
		if r.Localisation.Hit {
			t.Localised++
		}
	}
	t.Tokens += r.Tokens()
	t.CostUSD += r.CostUSD
	t.WallSeconds += r.WallSeconds
}

// summarize sorts the results and recomputes the totals.
func (f *File) summarize() {
	sort.Slice(f.Results, func(i, j int) bool { return f.Results[i].ID < f.Results[j].ID })
	f.Totals = Totals{}
	by := map[string]*Totals{}
	var names []string
	for _, r := range f.Results {
		f.Totals.add(r)
		lang := r.Language
		if lang == "" {
			lang = "unknown"
		}
		if by[lang] == nil {
			by[lang] = &Totals{Language: lang}
			names = append(names, lang)
		}
		by[lang].add(r)
	}
	sort.Strings(names)
	f.Languages = f.Languages[:0]
	for _, n := range names {
		f.Languages = append(f.Languages, *by[n])
	}
}

// Load reads an eval's results file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %s (not a lemmings eval results file?)", path, jsonErr(data, err))
	}
	if f.Version != FileVersion {
		return nil, fmt.Errorf("%s: results file version %d, this lemmings reads version %d", path, f.Version, FileVersion)
	}
	f.summarize()
	return &f, nil
}

// save writes the results file, the report and the chart.
func (f *File) save(dir string) error {
	f.summarize()
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ResultsFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ReportFile), []byte(f.Markdown()), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ChartFile), []byte(f.SVG()), 0o644); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}

// Files an eval writes in its output folder.
const (
	ResultsFile = "results.json"
	ReportFile  = "report.md"
	ChartFile   = "chart.svg"
	WorkDir     = "work"
)
