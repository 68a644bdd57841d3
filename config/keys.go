package config

import (
	"fmt"
	"math"
	"strings"
	"sync"
)

// spec documents and checks the values of one key pattern ("*" stands for a
// role, a label or a list index). The table is the single source of the key
// reference in docs/configuration.md and of the "accepted" part of problems.
type spec struct {
	key      string
	doc      string
	accepted string             // "" = described from the Go type
	check    func(v any) string // the problem with a value, "" if fine
	each     func(s string) string
	norm     func(s string) (string, error)
}

// specTable is built once; it is never modified.
var specTable = sync.OnceValue(specs)

func specs() []spec {
	return []spec{
		{key: "ollama.host", doc: "URL of the Ollama server. `OLLAMA_HOST` sets it from the environment. Written without a scheme (`host:port`), it is read as Ollama reads it: `http://`, port 11434 when absent.",
			accepted: "http(s)://host[:port], host:port or host", norm: normalizeOllamaHost, check: checkString(func(s string) string {
				_, err := normalizeOllamaHost(s)
				return errString(err)
			})},
		{key: "openrouter.base_url", doc: "OpenRouter's API base URL (any OpenAI-compatible API that reports usage the same way works).",
			accepted: "an http:// or https:// URL", check: checkString(checkURL(false))},
		{key: "openrouter.api_key", doc: "OpenRouter API key. Prefer `OPENROUTER_API_KEY` in the environment: a key written in a committed file is a leak (lemmings warns).",
			accepted: "a string"},
		{key: "openrouter.app_name", doc: "Sent as `X-Title` for OpenRouter's app attribution."},
		{key: "openrouter.app_url", doc: "Sent as `HTTP-Referer` for OpenRouter's app attribution.",
			accepted: "an http:// or https:// URL, or empty", check: checkString(checkURL(true))},

		{key: "roles", doc: "Which provider and model serve each role. Set only the keys you change: the rest of a role keeps its default.",
			accepted: "a mapping with keys " + joinAccepted(RoleNames())},
		{key: "roles.*.provider", doc: "`ollama` (local), `openrouter` (cloud), or `openai`: any OpenAI-compatible server (vLLM, LM Studio, llama.cpp server) at `base_url`. The `planner` role (ScopeAgent and TaskPlanner) leaves provider and model empty to be the primary; set them to plan on another model, e.g. the cloud one: a cloud planner is used only with supervisors on and not offline, and its cost counts against `supervisors.budget_usd` (the primary plans once the budget is spent).",
			accepted: "ollama, openrouter, openai (planner: also empty)", check: checkString(func(s string) string {
				if s == "" {
					return "" // only the planner may leave it empty (validate says so for the others)
				}
				return oneOf(ProviderOllama, ProviderOpenRouter, ProviderOpenAI)(s)
			})},
		{key: "roles.*.model", doc: "Model name as the provider knows it (`ollama list`; OpenRouter model ids).",
			accepted: "a non-empty string (planner: empty for the primary)"},
		{key: "roles.*.base_url", doc: "Server URL for this role. Empty: `ollama.host` for ollama, `openrouter.base_url` for openrouter; required for openai.",
			accepted: "an http:// or https:// URL, or empty", check: checkString(checkURL(true))},
		{key: "roles.*.api_key", doc: "API key for this role. Empty: `openrouter.api_key` for openrouter; none for ollama.",
			accepted: "a string"},
		{key: "roles.*.num_ctx", doc: "Ollama context window in tokens. 0: sized for each call from the prompt plus the reply budget (Ollama silently cuts the start of a prompt longer than its window).",
			accepted: "an integer >= 0 (0 = sized per call)", check: checkInt(atLeast(0))},
		{key: "roles.*.max_num_ctx", doc: "Upper bound for the context window. 0: the model's maximum, read from the server.",
			accepted: "an integer >= 0 (0 = the model's maximum)", check: checkInt(atLeast(0))},
		{key: "roles.*.max_tokens", doc: "Reply budget in tokens. 0: the provider's default.",
			accepted: "an integer >= 0", check: checkInt(atLeast(0))},
		{key: "roles.*.temperature", doc: "Sampling temperature. null: the provider's default.",
			accepted: "a number from 0 to 2, or null", check: checkTemperature},
		{key: "roles.*.timeout", doc: "Longest the server may stay silent in one call: before the first token (loading the model, evaluating the prompt) or between two tokens of a streamed reply (a whole reply when not streamed). A reply that keeps streaming is not cut (its length is bounded by the reply budget, the run by `limits.max_wall_time`). A timeout is not retried. `lemmings doctor` measures the model's speed.",
			accepted: "a duration > 0 such as 90s, 5m or 1h30m", check: checkDuration(true)},
		{key: "roles.*.keep_alive", doc: "Ollama `keep_alive`: how long the model stays loaded after a call. A duration, or seconds; negative keeps it loaded; empty: the server's default.",
			accepted: "a duration such as 30m, an integer number of seconds, or empty", check: checkString(checkKeepAlive)},
		{key: "roles.*.edit_protocol", doc: "How the Implementor's model writes code when this role serves it: `text` asks for the action in JSON and then for the code as plain text (a whole small file in one fenced block; in a larger Go or Python file the function, method or type that changes, whole, spliced by the syntax tree; SEARCH/REPLACE blocks otherwise); `json` takes the code inside the JSON action (some hosted models do better with it). Empty: `text`.",
			accepted: "text, json, or empty", check: checkString(oneOf("", "text", "json"))},
		{key: "roles.*.options", doc: "Extra provider options passed as they are (for Ollama: `top_p`, `num_gpu`, `seed`…). Merged by key across sources; an option set to null is removed.",
			accepted: "a mapping of option name to value"},

		{key: "concurrency.local", doc: "Local model calls at once (one GPU: 1).", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "concurrency.cloud", doc: "Cloud model calls at once.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},

		{key: "retry.max_attempts", doc: "Attempts per model call on transient errors (connection refused, 429, 5xx), the first included. A timeout is not retried, nor a fault after a minute of work: the same request would keep the run waiting as long again.",
			accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "retry.initial_backoff", doc: "Wait before the first retry; doubles each time, with jitter; a server's `Retry-After` wins.",
			accepted: "a duration > 0", check: checkDuration(true)},
		{key: "retry.max_backoff", doc: "Longest wait between two attempts.", accepted: "a duration > 0, not below initial_backoff", check: checkDuration(true)},

		{key: "gates", doc: "Commands that check the work after each task (build, test, lint), run by the orchestrator in the work tree. Empty: detected from the project (go.mod, package.json, pyproject.toml, Cargo.toml…). A higher source's list replaces a lower one's."},
		{key: "gates.*.name", doc: "Short name shown in reports; unique.", accepted: "a non-empty string", check: checkString(nonEmpty)},
		{key: "gates.*.command", doc: "Shell command line.", accepted: "a non-empty string", check: checkString(nonEmpty)},
		{key: "gates.*.timeout", doc: "Longest the gate may run; its process group is killed after. 0 or absent: 10m.",
			accepted: "a duration >= 0 (0 = 10m)", check: checkDuration(false)},
		{key: "gates.*.network", doc: "Let this gate reach the network from the sandbox (a test that downloads, `npm ci`). The report names every gate that had it."},

		{key: "supervisors.enabled", doc: "Run the cloud supervisors. `offline: true` turns them off whatever this says."},
		{key: "supervisors.mode", doc: "`background`: the local loop goes on while supervisors think; `blocking`: it waits for them at every trigger, so the next task is planned with their directives.",
			accepted: "background, blocking", check: checkString(oneOf("background", "blocking"))},
		{key: "supervisors.budget_usd", doc: "Most a run may spend on cloud calls, in US dollars, as OpenRouter reports cost. 0: no cloud spend (supervisors skip).",
			accepted: "a number >= 0", check: checkFloat(0, math.Inf(1), false)},
		{key: "supervisors.input_tokens", doc: "Size of the summarised state a supervisor receives.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "supervisors.urgency_threshold", doc: "Supervisors run early when accumulated urgency reaches this; it then resets.",
			accepted: "a number > 0", check: checkFloat(0, math.Inf(1), true)},
		{key: "supervisors.urgency_weights.qa_failure", doc: "Urgency added by a QA failure.", accepted: "a number >= 0", check: checkFloat(0, math.Inf(1), false)},
		{key: "supervisors.urgency_weights.task_abort", doc: "Urgency added by an aborted task.", accepted: "a number >= 0", check: checkFloat(0, math.Inf(1), false)},
		{key: "supervisors.urgency_weights.churn", doc: "Urgency added by carry-forward churn.", accepted: "a number >= 0", check: checkFloat(0, math.Inf(1), false)},
		{key: "supervisors.urgency_weights.minor_drift", doc: "Urgency added when the Assessor reports minor drift.", accepted: "a number >= 0", check: checkFloat(0, math.Inf(1), false)},
		{key: "supervisors.code_style.enabled", doc: "Run the Code Style supervisor (writes conventions/)."},
		{key: "supervisors.code_style.interval", doc: "Completed tasks between Code Style runs (it also runs at milestone end).",
			accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "supervisors.design.enabled", doc: "Run the Design supervisor (writes design/) at milestone end, re-plan and task abort."},
		{key: "supervisors.internaliser.enabled", doc: "Run the Internaliser (writes lessons/ and domain/)."},
		{key: "supervisors.internaliser.interval", doc: "Completed tasks between Internaliser runs (it also runs at milestone end).",
			accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "supervisors.convergence.threshold", doc: "Fraction of new findings under which a supervisor is converging: its interval then doubles.",
			accepted: "a number > 0 and <= 1", check: checkFloat(0, 1, true)},
		{key: "supervisors.convergence.max_interval", doc: "Ceiling for a doubled interval, in tasks.",
			accepted: "an integer >= 1, not below the supervisors' intervals", check: checkInt(atLeast(1))},
		{key: "supervisors.deny", doc: "Globs of paths never sent to a cloud model (the dialect of .gitignore: without `/` a pattern matches any path element, with `/` from the root; `**` spans directories). Lists from every source are appended: a project can add patterns, never remove one.",
			accepted: "a list of glob patterns", each: checkGlob},

		{key: "limits.max_tasks", doc: "Most tasks in one run.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "limits.max_retries", doc: "Retries of one task after a failed QA before it is marked failed.", accepted: "an integer >= 0", check: checkInt(atLeast(0))},
		{key: "limits.max_actions", doc: "Most tool calls in one Implementor loop.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "limits.max_wall_time", doc: "Longest one stretch of a run may take, counted from its start or from each `lemmings resume`. When it is reached the run stops at once, the model call, gate or coding CLI in flight cut off, and is stored as stopped: `lemmings resume <run-id>` continues it from the last checkpoint (the cut-off step runs again) with a new max_wall_time.", accepted: "a duration > 0", check: checkDuration(true)},
		{key: "limits.review_interval", doc: "Completed tasks between Assessor reviews (it also reviews at milestone end).", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "limits.polish_tasks", doc: "Most tasks of the polish phase (cleanup directives only). 0: no polish phase.", accepted: "an integer >= 0", check: checkInt(atLeast(0))},
		{key: "limits.directive_max_age", doc: "Completed tasks after which an unhandled cleanup directive is dropped.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "limits.max_cleanup_directives", doc: "Most pending cleanup directives; the oldest is dropped beyond it.", accepted: "an integer >= 0", check: checkInt(atLeast(0))},
		{key: "limits.token_budgets", doc: "Prompt budget in tokens per caller label. Merged by key across sources.",
			accepted: "a mapping with keys scope_agent, task_planner, implementor, qa, assessor, summarizer, supervisor, shared"},
		{key: "limits.token_budgets.*", doc: "Budget for one label. `shared` is the start every local role's prompt shares (project context and knowledge, docs/costs.md); each role's budget counts it too.", accepted: "an integer >= 256", check: checkInt(atLeast(256))},
		{key: "limits.gate_output_bytes", doc: "Bytes of a gate's output kept (the tail) for QA and the report.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "limits.write_bytes", doc: "Largest file the agents may write: a write_file or an edit whose result is larger is refused, and the model is told why.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "limits.remit_bytes", doc: "Largest remit a run takes (lemmings run \"…\" or --remit-file): it goes into every planning prompt. A larger one is refused before the run is created.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "limits.fix_rounds", doc: "Times failing gates on the Implementor's finish go back to it inside the attempt, summarised, before QA. 0: finish ends the attempt at once.", accepted: "an integer >= 0", check: checkInt(atLeast(0))},
		{key: "limits.max_consecutive_failures", doc: "Tasks failing in a row that stop the run (a circuit breaker: the model cannot do the work).", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "tasks.max_target_files", doc: "Most files one planned task may name; a plan over it goes back to the planner once with the reasons.",
			accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "tasks.max_instruction_chars", doc: "Longest instructions of one planned task, in characters (a small model finishes short, precise tasks).",
			accepted: "an integer >= 100", check: checkInt(atLeast(100))},
		{key: "tasks.split_after", doc: "Failed attempts after which the planner may split a task into 2-3 smaller ones (the failed task's work is rolled back). 0: never split.",
			accepted: "an integer >= 0", check: checkInt(atLeast(0))},

		{key: "pipeline.mode", doc: "The shape of a run (docs/costs.md). `auto`: a remit that reads as one change (one action, at most two files named, at most 80 words) takes the quick path — straight to the Implementor, no milestone and task planning, no Assessor, the gates and lemmings' own checks as QA's verdict where they cover the criteria — and so does a remit the ScopeAgent plans as one task; anything else the full pipeline. `quick` (`lemmings run --quick`): always the quick path. `full` (`--full`): always the full pipeline. A quick run of `auto` whose attempts fail `pipeline.quick_attempts` times, or whose Implementor says it is blocked, escalates into the full pipeline; with `quick` the task fails instead (the quick path was asked for: no plan is made).",
			accepted: "auto, quick, full", check: checkString(oneOf("auto", "quick", "full"))},
		{key: "pipeline.quick_attempts", doc: "Attempts a quick task gets (each with the gates' fix rounds inside it) before the run escalates into the full pipeline (`pipeline.mode: auto`; with `quick` the task fails): the work tree goes back to the start and the ScopeAgent plans the remit with what the attempts learned. 0: never escalate.",
			accepted: "an integer >= 0", check: checkInt(atLeast(0))},
		{key: "pipeline.summaries", doc: "Who writes a completed task's line in the done list: `model` (the summarizer role), `diff` (the Implementor's own summary and the files the commit changed; no model call), or `auto`: `model` in the full pipeline, `diff` in a quick run.",
			accepted: "auto, model, diff", check: checkString(oneOf("auto", "model", "diff"))},

		{key: "qa.require_quotes", doc: "A criterion is met only when the reviewer quotes the change (or a gate that passed checks it)."},
		{key: "qa.disputed", doc: "When the gates pass and the review fails the same diff a second time: `escalate` asks the cloud reviewer (within the budget; otherwise commits), `commit` commits it flagged \"review disputed\" in the report, `retry` counts it as a loop (the work is rolled back if the task fails).",
			accepted: "escalate, commit, retry", check: checkString(oneOf("escalate", "commit", "retry"))},

		{key: "escalation.architect_after", doc: "Failed attempts of one task after which one cloud \"architect\" call writes precise edit instructions that the local model applies as the next attempt. Only with supervisors on and not offline, within `supervisors.budget_usd`. 0: never.",
			accepted: "an integer >= 0", check: checkInt(atLeast(0))},

		{key: "knowledge.dir", doc: "Knowledge store, relative to the repository root.", accepted: "a relative path inside the repository, not under .lemmings/ or .git/", check: checkString(checkKnowledgeDir)},
		{key: "knowledge.budget_tokens", doc: "Tokens of knowledge injected into a prompt. 0: none.", accepted: "an integer >= 0", check: checkInt(atLeast(0))},
		{key: "knowledge.promote_after", doc: "Tasks a provisional supervisor document must be used without trouble before it becomes established.",
			accepted: "an integer >= 1", check: checkInt(atLeast(1))},

		{key: "rag.enabled", doc: "Keep a retrieval index of knowledge and code under `.lemmings/index/`."},
		{key: "rag.embedder", doc: "`ollama`: the embedding role; `offline`: a model-free embedder (forced by `offline: true` when the embedding role is not on Ollama).",
			accepted: "ollama, offline", check: checkString(oneOf("ollama", "offline"))},
		{key: "rag.max_file_bytes", doc: "Files larger than this are not indexed.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},
		{key: "rag.top_k", doc: "Chunks returned by one search.", accepted: "an integer >= 1", check: checkInt(atLeast(1))},

		{key: "prompts.global", doc: "Preamble placed first in every prompt (a user-wide voice; put it in the user file)."},
		{key: "prompts.project", doc: "Preamble placed after the global one (this project's context; put it in the project file)."},
		{key: "prompts.dir", doc: "Directory of per-project role template overrides (`<role>.tmpl`), relative to the repository root.",
			accepted: "a relative path inside the repository", check: checkString(checkLocalPath)},

		{key: "log.prompts", doc: "Append every prompt and response (secrets redacted) to `.lemmings/runs/<run-id>/prompts.jsonl`."},
		{key: "log.level", doc: "Least severity of the log lines lemmings prints.", accepted: "debug, info, warn, error", check: checkString(oneOf("debug", "info", "warn", "error"))},

		{key: "implementor.backend", doc: "Who writes the code of an attempt: `lemmings` (its own tool loop on the primary role) or `cli` (a coding CLI, see `implementor.cli` and docs/backends.md). Either way lemmings plans, runs the gates, reviews, commits once per task, rolls back and keeps the budget.",
			accepted: "lemmings, cli", check: checkString(oneOf(BackendLemmings, BackendCLI))},
		{key: "implementor.samples", doc: "Candidates one code call of lemmings' own Implementor may draw (best-of-n): the later ones at a raised temperature over the same cached prompt, each only when the one before failed to parse, broke the parse, added a check problem or, in a fix round, failed the gates. The first that passes is kept; the others are recorded in events.jsonl (`implementor_sample`). 1: one candidate, as before. See docs/implementor.md.",
			accepted: "an integer from 1 to 5", check: checkInt(between(1, 5))},
		{key: "implementor.draws", doc: "Candidates the direct attempt's code request may draw (verified best-of-n): when the gates fail on the first, it is repaired once with what failed, then fresh candidates are asked with that lesson (and without the failed code), the later ones for a short plan before the code, at the role's temperature and then 0.6, 0.8, …; each is run against the gates in the sandbox; the first that passes is kept, else the first that landed. A good first reply costs nothing more. 1: one candidate. See docs/implementor.md.",
			accepted: "an integer from 1 to 8", check: checkInt(between(1, 8))},
		{key: "implementor.direct", doc: "How a quick task's first attempt starts (docs/costs.md). `auto`: when the task has one file to change (test files named beside it are shown, not changed), the first call asks for that file's code at once, as Aider does — no action round, no finish call; lemmings runs the gates, and their failure goes back as a fix round. Later attempts use the action loop (read, grep, run a gate). `off`: every attempt starts with an action.",
			accepted: "auto, off", check: checkString(oneOf(DirectAuto, DirectOff))},
		{key: "implementor.cli.preset", doc: "The coding CLI to run when `implementor.backend` is `cli`: its command line, stream format and install advice (docs/backends.md). Empty: `command` must be set.",
			accepted: "empty or " + joinAccepted(CLIPresets), check: checkString(func(s string) string {
				if s == "" {
					return ""
				}
				return oneOf(CLIPresets...)(s)
			})},
		{key: "implementor.cli.command", doc: "A custom command line as a list (no shell): `{prompt_file}` is replaced by the path of a file (readable by you only, removed after the run) holding the attempt's prompt; the prompt also goes to standard input. `{model}` is replaced by `model` (an option followed by `{model}` is dropped when `model` is empty). The prompt itself is never put in the command line, where other users of the machine can read it: `{prompt}` is refused. Set: it replaces the preset's command line.",
			accepted: "a list of strings, the first the program; no {prompt}", each: checkCommandArg},
		{key: "implementor.cli.format", doc: "How the command reports its work on stdout: `text` (the whole output is its summary) or one of the presets' event streams. Empty: the preset's, or `text`.",
			accepted: "empty or " + joinAccepted(CLIFormats), check: checkString(func(s string) string {
				if s == "" {
					return ""
				}
				return oneOf(CLIFormats...)(s)
			})},
		{key: "implementor.cli.model", doc: "Model passed to the CLI as `{model}`. Empty: the CLI's own default.",
			accepted: "a model name (not starting with -, no spaces), or empty", check: checkString(func(s string) string {
				// It lands in the CLI's argv: a value that reads as an option would be one.
				if strings.HasPrefix(s, "-") || strings.ContainsAny(s, " \t\n") {
					return fmt.Sprintf("%q would read as an option or several arguments of the CLI", s)
				}
				return ""
			})},
		{key: "implementor.cli.timeout", doc: "Longest one CLI run may take; its process group is then killed and the attempt ends timed out.",
			accepted: "a duration > 0", check: checkDuration(true)},
		{key: "implementor.cli.env", doc: "Variables set in the CLI's environment. The CLI gets none of lemmings' variables (keys included) except PATH, HOME, locale, TMPDIR, the preset's own and `pass_env`; a value may name `${VAR}` of lemmings' environment to pass a key on purpose. Merged by name across sources.",
			accepted: "a mapping of variable name to string"},
		{key: "implementor.cli.env.*", doc: "One variable; `${VAR}` is replaced by lemmings' `VAR` (unset: the run does not start).",
			accepted: "a string"},
		{key: "implementor.cli.pass_env", doc: "Names of variables passed from lemmings' environment to the CLI as they are.",
			accepted: "a list of variable names", each: checkEnvName},
		{key: "implementor.cli.budget_usd", doc: "Most the CLI may spend in a run, in US dollars, as it reports cost; no new task starts after the one that reached it (its work still goes to QA), and the run ends with a report, as at the other limits. 0: no limit. The CLI's cost is shown in the report and the progress line either way.",
			accepted: "a number >= 0", check: checkFloat(0, math.Inf(1), false)},

		{key: "tracing.enabled", doc: "Send each run to an OpenTelemetry backend as a trace (docs/observability.md): a span per run, node step, model call (GenAI conventions), gate and commit. Off: nothing is collected."},
		{key: "tracing.prompts", doc: "Record each model call's messages and reply on its span (`gen_ai.input.messages`, `gen_ai.output.messages`), redacted as in `prompts.jsonl`, when `log.prompts` is on too. Off by default: prompts carry your code, and a trace backend is often another machine."},
		{key: "tracing.endpoint", doc: "OTLP over HTTP endpoint: a base URL such as `http://localhost:4318` (`/v1/traces` is added). Empty: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, then `OTEL_EXPORTER_OTLP_ENDPOINT`, then `http://localhost:4318`. Headers, timeout and TLS come from the standard `OTEL_EXPORTER_OTLP_*` variables. With `offline: true` spans go only to an endpoint on the loopback interface.",
			accepted: "an http:// or https:// URL, or empty", check: checkString(checkURL(true))},
		{key: "sandbox.mode", doc: "How gates, syntax checks, the eval's tests and coding CLIs are confined (docs/security.md): `auto` uses the strongest sandbox the machine offers (Landlock with user namespaces on Linux) and warns when it is weaker or missing; `required` refuses to run without Landlock; `off` runs them unconfined (every report says so). Read from the user file, the environment and flags only: a project file may set `required`, nothing looser.",
			accepted: "auto, required, off", check: checkString(oneOf("auto", "required", "off"))},
		{key: "sandbox.writable", doc: "Paths sandboxed commands may write beyond the work tree, a private temp dir and the sandbox caches (a cargo home, say); `~/` is your home. User file, environment and flags only.",
			accepted: "a list of absolute paths or ~/paths", each: checkSandboxPath},
		{key: "sandbox.env", doc: "Names of variables passed to sandboxed commands beyond the built-in allow-list (PATH, locale, the toolchains' own settings). lemmings' keys pass only if named here. User file, environment and flags only.",
			accepted: "a list of variable names", each: checkEnvName},
		{key: "sandbox.network", doc: "Let every sandboxed command reach the network (one gate: `gates[].network`). User file, environment and flags only."},
		{key: "sandbox.cache_dir", doc: "Where the sandbox keeps the language caches of gates (Go build and module caches, npm, pip), one folder per repository: lemmings' own, never yours, which your own builds trust (where the sandbox has mounts, a repository's Go caches are laid over yours, read-only below). Empty: `lemmings/sandbox` in your user cache dir. User file, environment and flags only.",
			accepted: "an absolute path or ~/path, or empty", check: checkString(func(s string) string {
				if s == "" {
					return ""
				}
				return checkSandboxPath(s)
			})},

		{key: "offline", doc: "Work with no network but the Ollama server: supervisors off, no cloud planner or architect; the roles on Ollama (primary, summarizer, embedding) are still asked, so an index built with an Ollama embedding model is kept. An embedding role on another provider gives way to the offline embedder."},
		{key: "store", doc: "Where runs are kept: empty for the repository's `.lemmings/` folder, or a PostgreSQL URL (`postgres://user@host:5432/db?search_path=lemmings`) that `lemmings worker` processes on several machines share (docs/distributed.md). `LEMMINGS_STORE` sets it from the environment.",
			accepted: "empty or a postgres:// URL", check: checkString(func(s string) string {
				if s != "" && !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
					return "not a postgres:// URL"
				}
				return ""
			})},
		{key: "cluster.remote", doc: "The git repository every worker pushes a run's step commits to and fetches them from (a bare repository's path or a URL): with a PostgreSQL `store` the work travels through it."},
		{key: "cluster.events_retention", doc: "How long the events of a finished run are kept in the PostgreSQL store; the reaper deletes older ones, and a finished run's checkpoints are pruned to its last state. 0: kept for ever.",
			accepted: "a duration >= 0", check: checkDuration(false)},
		{key: "cluster.reap_interval", doc: "How often each worker re-enqueues runs that are not done and that no worker holds (a worker that died, a run handed back).",
			accepted: "a duration > 0", check: checkDuration(true)},
	}
}

// specFor returns the spec of a dotted key (matching "*" patterns), or of the
// nearest parent that has one (an option inside roles.*.options).
func specFor(key string) (spec, bool) {
	all := specTable()
	for k := key; ; {
		for _, s := range all {
			if matchPattern(s.key, k) {
				return s, true
			}
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			return spec{}, false
		}
		k = k[:i]
	}
}

// specForExact returns the spec whose pattern matches the key itself.
func specForExact(key string) (spec, bool) {
	for _, s := range specTable() {
		if matchPattern(s.key, key) {
			return s, true
		}
	}
	return spec{}, false
}
