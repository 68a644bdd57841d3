package nodes

import (
	"reflect"
	"testing"

	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// Every knob the Implementor reads reaches it from the workflow's settings:
// they are one struct (implementor.Knobs, embedded in Settings), handed
// over whole; a field left zero would be a knob a user sets in vain.
func TestEveryImplementorSettingComesFromTheWorkflows(t *testing.T) {
	t.Parallel()
	st := DefaultSettings()
	st.ReplyTokens, st.Direct, st.CLI = 512, true, &implementor.CLISettings{Preset: "codex"}
	d := &Deps{Settings: st, Gates: []workspace.Gate{{Name: "test", Command: "python3 -m pytest"}}}
	got := d.implementorDeps()
	if !reflect.DeepEqual(got.Settings.Knobs, st.Knobs) {
		t.Errorf("the implementor's knobs %+v, the workflow's %+v", got.Settings.Knobs, st.Knobs)
	}
	v := reflect.ValueOf(got.Settings.Knobs)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("implementor.Knobs.%s is not set from the configuration", v.Type().Field(i).Name)
		}
	}
	if got.Settings.Budget != st.Budget(runstate.NodeImplementor) {
		t.Errorf("the implementor's budget %d, want limits.token_budgets.implementor %d", got.Settings.Budget, st.Budget(runstate.NodeImplementor))
	}
	if got.Clock == nil || got.Prompts == nil {
		t.Errorf("deps not wired: clock %v, prompts %v", got.Clock, got.Prompts)
	}
	// The parser runs outside the sandbox: lemmings' own python3, never the
	// interpreter a gate names (issue 43).
	if got.Parser.Python != "" {
		t.Errorf("the parser takes the gate's interpreter %q", got.Parser.Python)
	}
}
