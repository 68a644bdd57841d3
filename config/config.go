package config

import (
	"fmt"
	"github.com/lemmings-dev/lemmings/codingcli"
	"time"
)

// Role names, in the order they are printed and documented.
const (
	RolePrimary = "primary"
	// RolePlanner plans scope and tasks; with no model of its own it is the
	// primary, so a cloud model can plan while the local model implements.
	RolePlanner    = "planner"
	RoleSummarizer = "summarizer"
	RoleSupervisor = "supervisor"
	RoleEmbedding  = "embedding"
)

// Providers a role may use.
const (
	ProviderOllama     = "ollama"
	ProviderOpenRouter = "openrouter"
	ProviderOpenAI     = "openai" // any OpenAI-compatible server: vLLM, LM Studio, llama.cpp server
)

// DefaultGateTimeout applies to a gate written without a timeout.
const DefaultGateTimeout = 10 * time.Minute

// RoleNames returns the accepted role names in canonical order.
func RoleNames() []string {
	return []string{RolePrimary, RolePlanner, RoleSummarizer, RoleSupervisor, RoleEmbedding}
}

// Config is the effective configuration of lemmings. YAML keys are the
// snake_case names in the yaml tags; durations are Go duration strings.
type Config struct {
	Ollama      Ollama          `yaml:"ollama"`
	OpenRouter  OpenRouter      `yaml:"openrouter"`
	Roles       map[string]Role `yaml:"roles" keys:"primary,planner,summarizer,supervisor,embedding"`
	Concurrency Concurrency     `yaml:"concurrency"`
	Retry       Retry           `yaml:"retry"`
	Gates       []Gate          `yaml:"gates" merge:"replace"`
	Supervisors Supervisors     `yaml:"supervisors"`
	Limits      Limits          `yaml:"limits"`
	Tasks       Tasks           `yaml:"tasks"`
	Pipeline    Pipeline        `yaml:"pipeline"`
	QA          QA              `yaml:"qa"`
	Escalation  Escalation      `yaml:"escalation"`
	Knowledge   Knowledge       `yaml:"knowledge"`
	RAG         RAG             `yaml:"rag"`
	Prompts     Prompts         `yaml:"prompts"`
	Log         Log             `yaml:"log"`
	Implementor Implementor     `yaml:"implementor"`
	Tracing     Tracing         `yaml:"tracing"`
	Sandbox     Sandbox         `yaml:"sandbox"`
	// Offline forces supervisors off, and the offline RAG embedder unless the
	// embedding role is on Ollama: nothing but the Ollama server is asked.
	Offline bool `yaml:"offline"`
	// Store is where runs are kept: empty for the repository's .lemmings/
	// folder, or a postgres:// URL shared by lemmings workers.
	Store   string  `yaml:"store" secret:"url"`
	Cluster Cluster `yaml:"cluster"`
}

// Cluster configures runs shared through a PostgreSQL store (docs/distributed.md).
type Cluster struct {
	// Remote is the git repository the workers share (a bare path or URL).
	Remote string `yaml:"remote" secret:"url"`
	// EventsRetention is how long the events of a finished run are kept.
	EventsRetention time.Duration `yaml:"events_retention"`
	// ReapInterval is how often a worker looks for runs nobody holds.
	ReapInterval time.Duration `yaml:"reap_interval"`
}

// Ollama locates the Ollama server.
type Ollama struct {
	// Host is a URL; "host:port" without a scheme is accepted as Ollama does.
	Host string `yaml:"host" secret:"url"`
}

// OpenRouter holds the OpenRouter endpoint, key and attribution headers.
type OpenRouter struct {
	BaseURL string `yaml:"base_url" secret:"url"`
	APIKey  string `yaml:"api_key" secret:"key"`
	AppName string `yaml:"app_name"` // sent as X-Title
	AppURL  string `yaml:"app_url"`  // sent as HTTP-Referer
}

// Role says which provider and model serve a role, and how to call it.
type Role struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// BaseURL and APIKey default to the provider's settings (see ResolvedRole).
	BaseURL string `yaml:"base_url" secret:"url"`
	APIKey  string `yaml:"api_key" secret:"key"`
	// NumCtx fixes Ollama's context window; 0 sizes it from each prompt.
	NumCtx int `yaml:"num_ctx"`
	// MaxNumCtx caps the window; 0 reads the model's maximum from the server.
	MaxNumCtx int `yaml:"max_num_ctx"`
	// MaxTokens is the reply budget; 0 leaves it to the provider.
	MaxTokens int `yaml:"max_tokens"`
	// Temperature nil leaves it to the provider.
	Temperature *float64      `yaml:"temperature"`
	Timeout     time.Duration `yaml:"timeout"`
	// KeepAlive is Ollama's keep_alive: a duration or seconds; negative keeps the model loaded.
	KeepAlive string `yaml:"keep_alive"`
	// Options are passed to the provider as they are (Ollama options, e.g. top_p).
	Options map[string]any `yaml:"options"`
	// EditProtocol is how the Implementor's model writes code when this role
	// serves it: "text" (code as plain text after a JSON action) or "json"
	// (code inside the JSON action). Empty: text.
	EditProtocol string `yaml:"edit_protocol"`
}

// Concurrency bounds parallel model calls.
type Concurrency struct {
	Local int `yaml:"local"` // Ollama and other local servers (one GPU: 1)
	Cloud int `yaml:"cloud"` // OpenRouter
}

// Retry is the backoff policy for transient model errors.
type Retry struct {
	MaxAttempts    int           `yaml:"max_attempts"`
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	MaxBackoff     time.Duration `yaml:"max_backoff"`
}

// Gate is a command the orchestrator runs to check the work (build, test, lint).
type Gate struct {
	Name    string        `yaml:"name"`
	Command string        `yaml:"command"`
	Timeout time.Duration `yaml:"timeout"`
	// Network lets this gate reach the network in the sandbox.
	Network bool `yaml:"network"`
}

// Sandbox confines what model-written code may do (docs/security.md). Its
// keys are read from the user file, the environment and flags only: a
// repository's project file may ask for mode required, never loosen it.
type Sandbox struct {
	// Mode: auto (the strongest available, a warning when weaker),
	// required (refuse to run without one) or off.
	Mode string `yaml:"mode"`
	// Writable paths beyond the work tree, the private temp dir and the
	// sandbox caches; ~ is the user's home.
	Writable []string `yaml:"writable" merge:"replace"`
	// Env names variables passed to sandboxed commands beyond the built-in
	// allow-list.
	Env []string `yaml:"env" merge:"replace"`
	// Network lets every sandboxed command reach the network.
	Network bool `yaml:"network"`
	// CacheDir holds the sandbox's language caches; empty: the user cache
	// dir's lemmings/sandbox.
	CacheDir string `yaml:"cache_dir"`
}

// Supervisors configures the cloud supervisors and what they may see.
type Supervisors struct {
	Enabled          bool               `yaml:"enabled"`
	Mode             string             `yaml:"mode"`
	BudgetUSD        float64            `yaml:"budget_usd"`
	InputTokens      int                `yaml:"input_tokens"`
	UrgencyThreshold float64            `yaml:"urgency_threshold"`
	UrgencyWeights   UrgencyWeights     `yaml:"urgency_weights"`
	CodeStyle        IntervalSupervisor `yaml:"code_style"`
	Design           EventSupervisor    `yaml:"design"`
	Internaliser     IntervalSupervisor `yaml:"internaliser"`
	Convergence      Convergence        `yaml:"convergence"`
	// Deny lists globs of paths never sent to a cloud model.
	Deny []string `yaml:"deny" merge:"append"`
}

// UrgencyWeights are added to the supervisor urgency on each event.
type UrgencyWeights struct {
	QAFailure  float64 `yaml:"qa_failure"`
	TaskAbort  float64 `yaml:"task_abort"`
	Churn      float64 `yaml:"churn"`
	MinorDrift float64 `yaml:"minor_drift"`
}

// IntervalSupervisor runs every Interval completed tasks (and at milestone end).
type IntervalSupervisor struct {
	Enabled  bool `yaml:"enabled"`
	Interval int  `yaml:"interval"`
}

// EventSupervisor runs on workflow events only (milestone end, re-plan, abort).
type EventSupervisor struct {
	Enabled bool `yaml:"enabled"`
}

// Convergence says when a supervisor's interval doubles.
type Convergence struct {
	// Threshold is the fraction of new findings under which a supervisor converges.
	Threshold   float64 `yaml:"threshold"`
	MaxInterval int     `yaml:"max_interval"`
}

// Limits bound a run.
type Limits struct {
	MaxTasks             int            `yaml:"max_tasks"`
	MaxRetries           int            `yaml:"max_retries"`
	MaxActions           int            `yaml:"max_actions"`
	MaxWallTime          time.Duration  `yaml:"max_wall_time"`
	ReviewInterval       int            `yaml:"review_interval"`
	PolishTasks          int            `yaml:"polish_tasks"`
	DirectiveMaxAge      int            `yaml:"directive_max_age"`
	MaxCleanupDirectives int            `yaml:"max_cleanup_directives"`
	TokenBudgets         map[string]int `yaml:"token_budgets" keys:"scope_agent,task_planner,implementor,qa,assessor,summarizer,supervisor,shared"`
	GateOutputBytes      int            `yaml:"gate_output_bytes"`
	// WriteBytes is the largest file an agent may write (write_file, an
	// edit's result); RemitBytes the largest remit a run takes.
	WriteBytes int `yaml:"write_bytes"`
	RemitBytes int `yaml:"remit_bytes"`
	// MaxConsecutiveFailures stops the run when that many tasks fail in a row.
	MaxConsecutiveFailures int `yaml:"max_consecutive_failures"`
	// FixRounds: failing gates on the Implementor's finish go back to it this
	// many times inside the attempt; 0 leaves them to QA.
	FixRounds int `yaml:"fix_rounds"`
}

// Pipeline sizes a run to its remit (docs/costs.md): a remit that is one
// task goes straight to the Implementor (the quick path).
type Pipeline struct {
	// Mode is auto (lemmings reads the remit), quick or full.
	Mode string `yaml:"mode"`
	// QuickAttempts a quick task gets before the run escalates into the full
	// pipeline; 0: it never escalates.
	QuickAttempts int `yaml:"quick_attempts"`
	// Summaries of the done list: auto (the summarizer model in the full
	// pipeline, the diff in a quick run), model, or diff.
	Summaries string `yaml:"summaries"`
}

// Tasks bound the size of a planned task so a small local model can finish it.
type Tasks struct {
	MaxTargetFiles      int `yaml:"max_target_files"`
	MaxInstructionChars int `yaml:"max_instruction_chars"`
	// SplitAfter failed attempts, the planner may split a task into 2-3 smaller ones.
	SplitAfter int `yaml:"split_after"`
}

// QA configures the review of an attempt whose gates passed.
type QA struct {
	// RequireQuotes: a criterion is met only when the reviewer quotes the change.
	RequireQuotes bool `yaml:"require_quotes"`
	// Disputed is what happens when the gates pass and the review fails the
	// same diff again: escalate (cloud review, else commit), commit, or retry.
	Disputed string `yaml:"disputed"`
}

// Escalation configures the cloud help a failing task gets.
type Escalation struct {
	// ArchitectAfter failed attempts, one cloud call writes edit instructions.
	ArchitectAfter int `yaml:"architect_after"`
}

// Knowledge configures the docs/knowledge store.
type Knowledge struct {
	Dir          string `yaml:"dir"`
	BudgetTokens int    `yaml:"budget_tokens"`
	PromoteAfter int    `yaml:"promote_after"`
}

// RAG configures the retrieval index.
type RAG struct {
	Enabled      bool   `yaml:"enabled"`
	Embedder     string `yaml:"embedder"`
	MaxFileBytes int    `yaml:"max_file_bytes"`
	TopK         int    `yaml:"top_k"`
}

// Prompts holds the preambles placed before every role template.
type Prompts struct {
	Global  string `yaml:"global"`
	Project string `yaml:"project"`
	// Dir holds per-project template overrides (<role>.tmpl), relative to the repository.
	Dir string `yaml:"dir"`
}

// Log configures what a run records.
type Log struct {
	Prompts bool   `yaml:"prompts"` // append every prompt and response to .lemmings/runs/<id>/prompts.jsonl
	Level   string `yaml:"level"`
}

// Tracing sends each run to an OpenTelemetry backend as a trace (OTLP over
// HTTP); the standard OTEL_EXPORTER_OTLP_* variables configure the exporter.
type Tracing struct {
	Enabled bool `yaml:"enabled"`
	// Prompts records prompts and replies on model-call spans (redacted),
	// and only when log.prompts is on too.
	Prompts bool `yaml:"prompts"`
	// Endpoint is an OTLP/HTTP base URL (/v1/traces is added); empty: the
	// OTEL_EXPORTER_OTLP_* variables, else http://localhost:4318.
	Endpoint string `yaml:"endpoint" secret:"url"`
}

// Implementor backends (implementor.backend).
const (
	BackendLemmings = "lemmings" // lemmings' own tool loop on the primary role
	BackendCLI      = "cli"      // a coding CLI (Claude Code, Codex, Gemini CLI, Qwen Code, a custom command)
)

// How a quick task's first attempt starts (implementor.direct).
const (
	DirectAuto = "auto" // one file to change: its code is asked for at once
	DirectOff  = "off"  // every attempt starts with an action
)

// CLIPresets and CLIFormats are what package codingcli (a leaf: it
// imports nothing of lemmings) knows: the accepted values of
// implementor.cli.preset and implementor.cli.format.
var (
	CLIPresets = codingcli.Names()
	CLIFormats = codingcli.Formats()
)

// Implementor chooses who writes the code of an attempt; the gates, review,
// commits and budget stay lemmings' either way.
type Implementor struct {
	Backend string `yaml:"backend"`
	// Samples is how many candidates one code call of lemmings' own
	// Implementor may draw; the first that parses and adds no check
	// problem is kept.
	Samples int `yaml:"samples"`
	// Draws is how many candidates a direct attempt's code request may
	// draw, each run against the gates; the first that passes is kept.
	Draws int `yaml:"draws"`
	// Direct: "auto" asks for a quick task's code in the first call when
	// the task has one file to change; "off" starts every attempt with an
	// action.
	Direct string `yaml:"direct"`
	CLI    CLI    `yaml:"cli"`
}

// CLI configures the coding CLI of implementor.backend: cli.
type CLI struct {
	// Preset names a known CLI; Command replaces its command line.
	Preset string `yaml:"preset"`
	// Command is an argv list with {prompt} and {model} placeholders.
	Command []string `yaml:"command" merge:"replace"`
	// Format is how Command reports its work on stdout (empty: the
	// preset's, or text).
	Format  string        `yaml:"format"`
	Model   string        `yaml:"model"`
	Timeout time.Duration `yaml:"timeout"`
	// Env is set in the CLI's environment; values may name ${VAR} of
	// lemmings' own environment (the way to pass a key on purpose).
	Env map[string]string `yaml:"env"`
	// PassEnv names variables passed through from lemmings' environment as
	// they are.
	PassEnv []string `yaml:"pass_env" merge:"replace"`
	// BudgetUSD stops the run once the CLI has reported spending this much;
	// 0: no limit.
	BudgetUSD float64 `yaml:"budget_usd"`
}

func ptr[T any](v T) *T { return &v }

// Default returns the built-in configuration: it works out of the box with a
// local Ollama and, for the supervisors, an OpenRouter key in the environment.
func Default() *Config {
	return &Config{
		Ollama: Ollama{Host: "http://127.0.0.1:11434"},
		OpenRouter: OpenRouter{
			BaseURL: "https://openrouter.ai/api/v1",
			AppName: "lemmings",
			AppURL:  "https://github.com/lemmings-dev/lemmings",
		},
		Roles: map[string]Role{
			RolePrimary: {
				Provider: ProviderOllama, Model: "qwen2.5-coder:14b",
				MaxTokens: 4096, Temperature: ptr(0.2),
				Timeout: 5 * time.Minute, KeepAlive: "30m", Options: map[string]any{},
				EditProtocol: "text",
			},
			// Empty provider and model: the planner is the primary.
			RolePlanner: {MaxTokens: 4096, Temperature: ptr(0.2), Timeout: 5 * time.Minute, Options: map[string]any{}},
			RoleSummarizer: {
				Provider: ProviderOllama, Model: "qwen2.5-coder:1.5b",
				MaxTokens: 1024, Temperature: ptr(0.1),
				Timeout: 5 * time.Minute, KeepAlive: "30m", Options: map[string]any{},
			},
			RoleSupervisor: {
				Provider: ProviderOpenRouter, Model: "anthropic/claude-sonnet-4.5",
				MaxTokens: 4096, Temperature: ptr(0.2),
				Timeout: 3 * time.Minute, Options: map[string]any{},
			},
			RoleEmbedding: {
				Provider: ProviderOllama, Model: "nomic-embed-text",
				Timeout: 2 * time.Minute, KeepAlive: "30m", Options: map[string]any{},
			},
		},
		Concurrency: Concurrency{Local: 1, Cloud: 4},
		Retry:       Retry{MaxAttempts: 4, InitialBackoff: time.Second, MaxBackoff: 30 * time.Second},
		Gates:       []Gate{},
		Supervisors: Supervisors{
			Enabled: true, Mode: "background", BudgetUSD: 2.00, InputTokens: 5000,
			UrgencyThreshold: 1.0,
			UrgencyWeights:   UrgencyWeights{QAFailure: 0.3, TaskAbort: 1.0, Churn: 0.2, MinorDrift: 0.5},
			CodeStyle:        IntervalSupervisor{Enabled: true, Interval: 5},
			Design:           EventSupervisor{Enabled: true},
			Internaliser:     IntervalSupervisor{Enabled: true, Interval: 3},
			Convergence:      Convergence{Threshold: 0.2, MaxInterval: 40},
			Deny: []string{
				".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*",
				"*.p12", "*.pfx", "secrets/**", "credentials*",
			},
		},
		Limits: Limits{
			MaxTasks: 50, MaxRetries: 3, MaxActions: 25, MaxWallTime: 4 * time.Hour,
			ReviewInterval: 5, PolishTasks: 10, DirectiveMaxAge: 15, MaxCleanupDirectives: 10,
			TokenBudgets: map[string]int{
				"scope_agent": 12000, "task_planner": 12000, "implementor": 16000,
				"qa": 12000, "assessor": 8000, "summarizer": 4000, "supervisor": 5000,
				"shared": 5000,
			},
			GateOutputBytes: 16384, MaxConsecutiveFailures: 3, FixRounds: 3,
			WriteBytes: 1 << 20, RemitBytes: 64 << 10,
		},
		Tasks:      Tasks{MaxTargetFiles: 2, MaxInstructionChars: 600, SplitAfter: 2},
		Pipeline:   Pipeline{Mode: "auto", QuickAttempts: 2, Summaries: "auto"},
		QA:         QA{RequireQuotes: true, Disputed: "escalate"},
		Escalation: Escalation{ArchitectAfter: 2},
		Knowledge:  Knowledge{Dir: "docs/knowledge", BudgetTokens: 2000, PromoteAfter: 3},
		RAG:        RAG{Enabled: true, Embedder: "ollama", MaxFileBytes: 1 << 20, TopK: 8},
		Prompts:    Prompts{Dir: ".lemmings/prompts"},
		Log:        Log{Prompts: true, Level: "info"},
		Implementor: Implementor{Backend: BackendLemmings, Samples: 2, Draws: 5, Direct: DirectAuto, CLI: CLI{
			Command: []string{}, Timeout: 20 * time.Minute, Env: map[string]string{}, PassEnv: []string{},
		}},
		Sandbox: Sandbox{Mode: "auto", Writable: []string{}, Env: []string{}},
		Cluster: Cluster{EventsRetention: 30 * 24 * time.Hour, ReapInterval: 2 * time.Second},
	}
}

// ResolvedRole returns the named role with its base URL and API key filled
// from the provider settings when the role leaves them empty.
func (c *Config) ResolvedRole(name string) (Role, error) {
	r, ok := c.Roles[name]
	if !ok {
		return Role{}, fmt.Errorf("config: unknown role %q (accepted: %s)", name, joinAccepted(RoleNames()))
	}
	if name == RolePlanner && r.Model == "" {
		return c.ResolvedRole(RolePrimary)
	}
	switch r.Provider {
	case ProviderOllama:
		if r.BaseURL == "" {
			r.BaseURL = c.Ollama.Host
		}
	case ProviderOpenRouter:
		if r.BaseURL == "" {
			r.BaseURL = c.OpenRouter.BaseURL
		}
		if r.APIKey == "" {
			r.APIKey = c.OpenRouter.APIKey
		}
	}
	if r.Options != nil {
		opts := make(map[string]any, len(r.Options))
		for k, v := range r.Options {
			opts[k] = v
		}
		r.Options = opts
	}
	if r.Temperature != nil {
		r.Temperature = ptr(*r.Temperature)
	}
	return r, nil
}
