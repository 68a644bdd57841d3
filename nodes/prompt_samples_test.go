package nodes

import (
	"testing"

	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// Every built-in template renders with its samples, and every template has
// samples: PromptSamples stays in step with the templates the workflow uses.
func TestPromptSamplesRenderEveryBuiltInTemplate(t *testing.T) {
	t.Parallel()
	c, err := llm.NewComposer(prompts.FS, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	samples := PromptSamples()
	for _, role := range c.Roles() {
		if len(samples[role]) == 0 {
			t.Errorf("template %s has no sample data in PromptSamples", role)
		}
		for _, data := range samples[role] {
			for _, part := range []string{"", llm.InstructionsTemplate} {
				if _, err := c.Render(role, part, data); err != nil {
					t.Errorf("%s %q with %+v: %v", role, part, data, err)
				}
			}
		}
	}
}
