package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A repository's project file (lemmings.yaml, .lemmings/config.yaml) is
// written by whoever wrote the repository, and a user may run lemmings on a
// repository they did not write: the file is as untrusted as the model. It
// may describe the project (gates, models, limits, prompts); it may make
// lemmings stricter; it never chooses a command, an endpoint, an environment
// variable to pass or where a credential goes. Those come from the user's
// file, the environment and flags only (docs/security.md, "Trust
// boundaries"). Every key has a class in trustTable; a test fails for a key
// without one.

// Trust says how far a project file may go with one key.
type Trust int

const (
	// ProjectMay: the project file may set the key.
	ProjectMay Trust = iota + 1
	// ProjectTightens: the project file may make the key stricter than the
	// user's value (or repeat it), never looser.
	ProjectTightens
	// UserOnly: only the user's file, the environment and flags set it; a
	// project file may repeat the value it inherits, nothing else.
	UserOnly
)

func (t Trust) String() string {
	switch t {
	case ProjectMay:
		return "project may set"
	case ProjectTightens:
		return "project may tighten"
	case UserOnly:
		return "user only"
	}
	return "unclassified"
}

// trustRule classifies one key pattern.
type trustRule struct {
	trust Trust
	// notice: a project file that changes the key is named by lemmings
	// doctor and on a run's first lines.
	notice bool
	// looser reports whether the project's value loosens the one it
	// replaced (ProjectTightens).
	looser func(tc *trustCheck, key string, before, after any) bool
	// what the key would let a repository choose (UserOnly), or why it is
	// bounded (ProjectTightens), for the refusal and docs/security.md.
	why string
}

func may() trustRule            { return trustRule{trust: ProjectMay} }
func mayNotice() trustRule      { return trustRule{trust: ProjectMay, notice: true} }
func user(why string) trustRule { return trustRule{trust: UserOnly, notice: true, why: why} }
func tightens(why string, looser func(tc *trustCheck, key string, before, after any) bool) trustRule {
	return trustRule{trust: ProjectTightens, notice: true, looser: looser, why: why}
}

const (
	whyEndpoint = "an endpoint that receives your requests and the key sent with them"
	whyKey      = "a credential (a key of the repository's would also see every request you make with it)"
	whyCommand  = "a command that runs with the network and the coding CLI's keys"
	whyEnv      = "which of your environment variables a command of its choosing receives"
	whySandbox  = "what the code written in the repository may do"
)

// trustTable classifies every key pattern of the schema (schemaKeys).
var trustTable = map[string]trustRule{
	"ollama.host":           user(whyEndpoint),
	"openrouter.base_url":   user(whyEndpoint),
	"openrouter.api_key":    user(whyKey),
	"openrouter.app_name":   may(),
	"openrouter.app_url":    may(),
	"roles":                 may(),
	"roles.*.provider":      tightens("a role may move to Ollama (local), not to a cloud provider: that sends your code out with your key", looserProvider),
	"roles.*.model":         mayNotice(),
	"roles.*.base_url":      user(whyEndpoint),
	"roles.*.api_key":       user(whyKey),
	"roles.*.num_ctx":       may(),
	"roles.*.max_num_ctx":   may(),
	"roles.*.max_tokens":    may(),
	"roles.*.temperature":   may(),
	"roles.*.timeout":       may(),
	"roles.*.keep_alive":    may(),
	"roles.*.options":       may(),
	"roles.*.edit_protocol": may(),

	"concurrency.local":     may(),
	"concurrency.cloud":     may(),
	"retry.max_attempts":    may(),
	"retry.initial_backoff": may(),
	"retry.max_backoff":     may(),

	// A gate runs the repository's own code (its tests) in the sandbox with
	// the network off: naming the command gives the repository nothing its
	// test files do not already have. The network is another matter.
	"gates":           mayNotice(),
	"gates.*.name":    may(),
	"gates.*.command": mayNotice(),
	"gates.*.timeout": may(),
	"gates.*.network": tightens("a gate with the network could send out whatever the sandbox can read", looserGateNetwork),

	"supervisors.enabled":                     tightens("supervisors send your code to a cloud model", looserBool(false)),
	"supervisors.mode":                        may(),
	"supervisors.budget_usd":                  tightens("it is your money", looserMore),
	"supervisors.input_tokens":                may(),
	"supervisors.urgency_threshold":           may(),
	"supervisors.urgency_weights.qa_failure":  may(),
	"supervisors.urgency_weights.task_abort":  may(),
	"supervisors.urgency_weights.churn":       may(),
	"supervisors.urgency_weights.minor_drift": may(),
	"supervisors.code_style.enabled":          may(),
	"supervisors.code_style.interval":         may(),
	"supervisors.design.enabled":              may(),
	"supervisors.internaliser.enabled":        may(),
	"supervisors.internaliser.interval":       may(),
	"supervisors.convergence.threshold":       may(),
	"supervisors.convergence.max_interval":    may(),
	"supervisors.deny":                        tightens("a project adds patterns, never removes one", looserDropsItems),

	"limits.max_tasks":                mayNotice(),
	"limits.max_retries":              may(),
	"limits.max_actions":              may(),
	"limits.max_wall_time":            mayNotice(),
	"limits.review_interval":          may(),
	"limits.polish_tasks":             may(),
	"limits.directive_max_age":        may(),
	"limits.max_cleanup_directives":   may(),
	"limits.token_budgets":            may(),
	"limits.token_budgets.*":          may(),
	"limits.gate_output_bytes":        may(),
	"limits.write_bytes":              mayNotice(),
	"limits.remit_bytes":              may(),
	"limits.max_consecutive_failures": may(),
	"limits.fix_rounds":               may(),
	"tasks.max_target_files":          may(),
	"tasks.max_instruction_chars":     may(),
	"tasks.split_after":               may(),
	"pipeline.mode":                   may(),
	"pipeline.quick_attempts":         may(),
	"pipeline.summaries":              may(),
	"qa.require_quotes":               may(),
	"qa.disputed":                     may(),
	"escalation.architect_after":      may(),
	"knowledge.dir":                   may(),
	"knowledge.budget_tokens":         may(),
	"knowledge.promote_after":         may(),
	"rag.enabled":                     may(),
	"rag.embedder":                    may(),
	"rag.max_file_bytes":              may(),
	"rag.top_k":                       may(),
	"prompts.global":                  may(),
	"prompts.project":                 may(),
	"prompts.dir":                     mayNotice(),
	"log.prompts":                     mayNotice(),
	"log.level":                       may(),

	"implementor.backend":        tightens("a coding CLI receives your keys and runs with the network", looserBackend),
	"implementor.samples":        may(),
	"implementor.draws":          tightens("every draw is a model call on your machine or your account", looserMore),
	"implementor.direct":         may(),
	"implementor.cli.preset":     user("which coding CLI runs, and so which of your keys it receives"),
	"implementor.cli.command":    user(whyCommand),
	"implementor.cli.format":     user("how the command's output is read (it belongs with the command)"),
	"implementor.cli.model":      mayNotice(),
	"implementor.cli.timeout":    may(),
	"implementor.cli.env":        user(whyEnv),
	"implementor.cli.env.*":      user(whyEnv),
	"implementor.cli.pass_env":   user(whyEnv),
	"implementor.cli.budget_usd": tightens("it is your money", looserBudget),

	"tracing.enabled":  tightens("traces go to your collector with your OTEL_EXPORTER_OTLP_HEADERS", looserBool(false)),
	"tracing.prompts":  tightens("prompts carry your code", looserBool(false)),
	"tracing.endpoint": user(whyEndpoint),

	"sandbox.mode":      tightens(whySandbox, looserSandboxMode),
	"sandbox.writable":  user(whySandbox),
	"sandbox.env":       user(whyEnv),
	"sandbox.network":   user(whySandbox),
	"sandbox.cache_dir": user(whySandbox),

	"offline":                  tightens("offline keeps every request on this machine", looserBool(true)),
	"store":                    user("the database your runs go to, and the PGPASSWORD sent to it"),
	"cluster.remote":           user("where your code is pushed, with your git credentials"),
	"cluster.events_retention": may(),
	"cluster.reap_interval":    may(),
}

// trustOf returns the rule of a dotted key ("roles.primary.base_url").
func trustOf(key string) (string, trustRule, bool) {
	for _, sk := range schemaKeys() {
		if matchPattern(sk.pattern, key) {
			r, ok := trustTable[sk.pattern]
			return sk.pattern, r, ok
		}
	}
	return "", trustRule{}, false
}

// TrustOf says how far a project file may go with a key; 0 for a key the
// configuration does not have.
func TrustOf(key string) Trust {
	_, r, _ := trustOf(key)
	return r.trust
}

func looserBool(tight bool) func(*trustCheck, string, any, any) bool {
	return func(_ *trustCheck, _ string, before, after any) bool {
		return before == tight && after != tight
	}
}

func looserMore(_ *trustCheck, _ string, before, after any) bool {
	return number(after) > number(before)
}

// number is a YAML scalar's value as a float (an integer key decodes to an
// int, a money key to a float64).
func number(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case uint64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// looserBudget: 0 is no limit, the loosest.
func looserBudget(_ *trustCheck, _ string, before, after any) bool {
	b, _ := before.(float64)
	a, _ := after.(float64)
	return b > 0 && (a == 0 || a > b)
}

var sandboxStrictness = map[string]int{"off": 0, "auto": 1, "required": 2}

func looserSandboxMode(_ *trustCheck, _ string, before, after any) bool {
	b, _ := before.(string)
	a, _ := after.(string)
	return sandboxStrictness[a] < sandboxStrictness[b]
}

func looserProvider(_ *trustCheck, _ string, before, after any) bool {
	a, _ := after.(string)
	return a != "" && a != ProviderOllama && a != before
}

func looserBackend(_ *trustCheck, _ string, before, after any) bool {
	return after == BackendCLI && before != BackendCLI
}

func looserDropsItems(_ *trustCheck, _ string, before, after any) bool {
	b, _ := before.([]string)
	a, _ := after.([]string)
	for _, s := range b {
		if !slices.Contains(a, s) {
			return true
		}
	}
	return false
}

// looserGateNetwork: a project's gate may have the network when the user's
// own configuration gives it (sandbox.network, or a gate of theirs with the
// same name and command and network: true).
func looserGateNetwork(tc *trustCheck, key string, _, after any) bool {
	if after != true {
		return false
	}
	if tc.final.Sandbox.Network && tc.src.lookup("sandbox.network").layer != layerProject {
		return false
	}
	prefix := strings.TrimSuffix(key, ".network")
	name, command := tc.after[prefix+".name"], tc.after[prefix+".command"]
	for i := 0; ; i++ {
		p := "gates." + strconv.Itoa(i)
		n, ok := tc.before[p+".name"]
		if !ok {
			return true
		}
		if n == name && tc.before[p+".command"] == command && tc.before[p+".network"] == true {
			return false
		}
	}
}

// flatten lists every leaf of c by dotted key, values copied.
func flatten(c *Config) map[string]any {
	out := map[string]any{}
	walkLeaves(reflect.ValueOf(c).Elem(), "", field{}, func(key string, v reflect.Value, _ field) {
		switch {
		case v.Kind() == reflect.Slice:
			out[key] = slices.Clone(v.Interface().([]string))
		case isFreeMap(v.Type()):
			m := map[string]any{}
			for _, k := range v.MapKeys() {
				m[k.String()] = v.MapIndex(k).Interface()
			}
			out[key] = m
		case v.Kind() == reflect.Pointer:
			if v.IsNil() {
				out[key] = nil
			} else {
				out[key] = v.Elem().Interface()
			}
		default:
			out[key] = v.Interface()
		}
	})
	return out
}

// trustCheck compares the configuration before the project file with what
// the project file made of it.
type trustCheck struct {
	before, after map[string]any // leaves before and after the project file
	final         *Config
	src           *Sources
	userFile      string // the user file's path, for the advice
}

// ProjectChange is one value a repository's project file changed that a
// user should know about (lemmings doctor and a run's first lines name it).
type ProjectChange struct {
	Key    string
	File   string
	Line   int
	Before string // the value from defaults, the user file
	After  string
	Trust  Trust
}

func (p ProjectChange) String() string {
	at := p.File
	if p.Line > 0 {
		at += ":" + strconv.Itoa(p.Line)
	}
	return fmt.Sprintf("%s sets %s: %s (was %s)", at, p.Key, p.After, p.Before)
}

// check returns the refusals and the changes worth naming. Only values the
// project file still holds in the end count: one overridden by the
// environment or a flag is the user's.
func (tc *trustCheck) check() (refused []Problem, changes []ProjectChange) {
	keys := make([]string, 0, len(tc.after))
	for k := range tc.after {
		keys = append(keys, k)
	}
	for k := range tc.before {
		if _, ok := tc.after[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		b, bok := tc.before[k]
		a, aok := tc.after[k]
		if bok && aok && reflect.DeepEqual(b, a) {
			continue
		}
		o := tc.src.lookup(k)
		if o.layer != layerProject {
			continue
		}
		_, rule, ok := trustOf(k)
		if !ok {
			rule = user("a key without a trust class") // never reached: a test walks the table
		}
		switch {
		case rule.trust == UserOnly || rule.trust == ProjectTightens && rule.looser(tc, k, b, a):
			refused = append(refused, tc.refusal(k, o, rule))
		case rule.notice && aok && (bok || rule.trust == ProjectMay):
			changes = append(changes, ProjectChange{Key: k, File: o.file, Line: o.line,
				Before: showValue(b, bok), After: showValue(a, aok), Trust: rule.trust})
		}
	}
	return refused, changes
}

func (tc *trustCheck) refusal(key string, o origin, r trustRule) Problem {
	where := "your user file (" + tc.userFile + ")"
	if tc.userFile == "" {
		where = "your user file (~/.config/lemmings/config.yaml)"
	}
	verb := "cannot set " + key
	if r.trust == ProjectTightens {
		verb = "may make " + key + " stricter, not looser"
	}
	instead := where + ", or set " + EnvName(key)
	if strings.HasPrefix(key, "implementor.cli.env.") {
		instead = where // a variable's name keeps its case only in a file
	}
	return Problem{File: o.problemFile(), Line: o.line, Key: key,
		Message: fmt.Sprintf("refused: a repository's project file %s (%s). If you want it, put it in %s; or remove it from the project file",
			verb, r.why, instead)}
}

// showValue writes a value as the notices show it.
func showValue(v any, ok bool) string {
	if !ok {
		return "unset"
	}
	switch t := v.(type) {
	case string:
		if t == "" {
			return "empty"
		}
		return formatString(t)
	case []string:
		return "[" + strings.Join(t, ", ") + "]"
	case time.Duration:
		return formatDuration(t)
	case float64:
		return fmtFloat(t)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// ProjectChanges lists what the repository's project file changed that a
// user should know: models, gates, widened limits, and what it tightened.
func (s *Sources) ProjectChanges() []ProjectChange {
	if s == nil {
		return nil
	}
	return slices.Clone(s.changes)
}

// trustText is the key reference's "in a project file" cell.
func trustText(pattern string) string {
	r, ok := trustTable[pattern]
	switch {
	case !ok:
		return "?"
	case r.trust == ProjectMay && r.notice:
		return "yes (named by doctor and the run)"
	case r.trust == ProjectMay:
		return "yes"
	case r.trust == ProjectTightens:
		return "stricter only"
	}
	return "**no**: user file, environment, flags"
}
