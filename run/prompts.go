package run

import (
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// PromptError: a prompt template (an override under .lemmings/prompts, or a
// preamble) cannot be parsed or executed; a run does not start with it.
type PromptError struct{ Err error }

func (e *PromptError) Error() string {
	return fmt.Sprintf("prompt templates: %v (fix the template, or remove the override to use the built-in one)", e.Err)
}

func (e *PromptError) Unwrap() error { return e.Err }

// reTemplateLine finds the line of a template error ("template: role:12:3: …").
var reTemplateLine = regexp.MustCompile(`template: [^:]+:(\d+)(?::\d+)?: `)

// CheckPrompts parses the prompt templates the run would use and executes
// each with samples of the data the workflow gives it (nodes.PromptSamples),
// so a broken override fails here, naming its file and line, instead of in
// the middle of a run.
func CheckPrompts(root string, cfg *config.Config) (*llm.Composer, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	c, err := llm.NewComposer(prompts.FS, filepath.Join(root, cfg.Prompts.Dir), cfg.Prompts.Global, cfg.Prompts.Project)
	if err != nil {
		return nil, &PromptError{Err: err}
	}
	samples := nodes.PromptSamples()
	for _, role := range c.Roles() {
		for _, data := range samples[role] {
			for _, part := range []string{"", llm.InstructionsTemplate} {
				if _, err := c.Render(role, part, data); err != nil {
					where := c.Origin(role)
					if m := reTemplateLine.FindStringSubmatch(err.Error()); m != nil {
						where += ":" + m[1]
					}
					return nil, &PromptError{Err: fmt.Errorf("%s: %w", where, err)}
				}
			}
		}
	}
	return c, nil
}
