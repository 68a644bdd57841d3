package nodes

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
)

// The workflow's defaults are config's (one table): every key of config's
// sections the workflow reads reaches Settings, so a default changed in
// config is the workflow's default, and a hard-coded copy in nodes that
// ignores the key fails here.
func TestEveryConfigDefaultReachesTheSettings(t *testing.T) {
	t.Parallel()
	// Keys read elsewhere: the runner (write and remit bytes), the router.
	elsewhere := map[string]bool{"Limits.WriteBytes": true, "Limits.RemitBytes": true}
	base := DefaultSettings()
	if !reflect.DeepEqual(base, SettingsFrom(config.Default())) {
		t.Fatal("DefaultSettings is not the settings of config.Default()")
	}
	sections := []string{"Limits", "Tasks", "QA", "Escalation", "Knowledge", "Pipeline", "Supervisors"}
	checked := 0
	for _, sec := range sections {
		for _, path := range leaves(reflect.ValueOf(config.Default()).Elem().FieldByName(sec).Type(), sec) {
			if elsewhere[path] {
				continue
			}
			c := config.Default()
			if !perturb(fieldAt(reflect.ValueOf(c).Elem(), path)) {
				t.Fatalf("no way to change config key %s in this test", path)
			}
			checked++
			if reflect.DeepEqual(SettingsFrom(c), base) {
				t.Errorf("config key %s changed, nodes.Settings did not: the workflow keeps a default of its own", path)
			}
		}
	}
	for _, c := range []func(*config.Config){
		func(c *config.Config) { c.Implementor.Samples = 5 },
		func(c *config.Config) {
			c.Roles[config.RolePrimary] = withProtocol(c.Roles[config.RolePrimary], implementor.EditJSON)
		},
	} {
		cfg := config.Default()
		c(cfg)
		if reflect.DeepEqual(SettingsFrom(cfg), base) {
			t.Error("implementor.samples or roles.primary.edit_protocol does not reach nodes.Settings")
		}
	}
	if checked < 30 {
		t.Errorf("only %d config keys checked: the walk of config's sections lost some", checked)
	}
}

// A few defaults spelled out, as a reader of docs/configuration.md sees them.
func TestDefaultSettingsAreConfigsDefaults(t *testing.T) {
	t.Parallel()
	c, s := config.Default(), DefaultSettings()
	for _, p := range []struct {
		key       string
		cfg, node any
	}{
		{"limits.max_consecutive_failures", c.Limits.MaxConsecutiveFailures, s.MaxConsecutiveFailures},
		{"limits.max_tasks", c.Limits.MaxTasks, s.MaxTasks},
		{"limits.fix_rounds", c.Limits.FixRounds, s.FixRounds},
		{"tasks.split_after", c.Tasks.SplitAfter, s.Tasks.SplitAfter},
		{"supervisors.budget_usd", c.Supervisors.BudgetUSD, s.Supervisors.BudgetUSD},
		{"knowledge.dir", c.Knowledge.Dir, s.KnowledgeDir},
		{"implementor.samples", c.Implementor.Samples, s.Samples},
		{"limits.token_budgets.shared", c.Limits.TokenBudgets[LabelShared], s.Budget(LabelShared)},
	} {
		if p.cfg != p.node {
			t.Errorf("%s: config's default %v, the workflow's %v", p.key, p.cfg, p.node)
		}
	}
}

func withProtocol(r config.Role, p string) config.Role { r.EditProtocol = p; return r }

// leaves are the dotted paths of a struct type's settable leaf fields.
func leaves(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		path := prefix + "." + f.Name
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)) {
			out = append(out, leaves(f.Type, path)...)
			continue
		}
		out = append(out, path)
	}
	return out
}

func fieldAt(v reflect.Value, path string) reflect.Value {
	for _, name := range strings.Split(path, ".") {
		v = v.FieldByName(name)
	}
	return v
}

// perturb changes a field to a value its default is not.
func perturb(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Float64:
		v.SetFloat(v.Float() + 0.125)
	case reflect.String:
		if v.String() == "blocking" {
			v.SetString("background")
		} else {
			v.SetString("blocking") // supervisors.mode reads only this value
		}
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.ValueOf("extra")))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("extra"), reflect.ValueOf(1))
		v.Set(m)
	default:
		return false
	}
	return true
}
