package doctor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"

	"github.com/ollama/ollama/api"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
)

// fallbacks say what a run does instead when a role's model cannot be
// asked: such a role is no failure, and its line has no fix (an `ollama pull`
// would not work offline anyway).
var fallbacks = map[string]string{
	config.RoleSummarizer: "a run's primary model (%s) writes the task summaries instead (roles.summarizer.model names another)",
	config.RoleEmbedding:  "retrieval uses the offline embedder instead (rag.embedder: offline chooses it without asking)",
}

// modelChecks checks the local roles, one line per cause: roles whose
// server cannot be reached share one line naming the server and them all,
// with the fix that fits why it cannot be reached. A role with a fallback
// says what a run does without it.
func modelChecks(ctx context.Context, r *llm.Router, cfg *config.Config, src *config.Sources, roles []string) []Check {
	type down struct {
		roles    []string
		severity string
		err      error
	}
	var out []Check
	servers := map[string]*down{}
	var order []string
	for _, role := range roles {
		severity := "warn"
		if role == config.RolePrimary {
			severity = "fail"
		}
		rr, _ := cfg.ResolvedRole(role)
		err := r.Check(ctx, role)
		var le *llm.Error
		if fb, ok := fallbacks[role]; err != nil && ok {
			p, _ := cfg.ResolvedRole(config.RolePrimary)
			if errors.As(err, &le) && le.Kind == llm.KindUnavailable && rr.BaseURL == p.BaseURL {
				continue // the primary's server line says it, and the run needs the primary first
			}
			if strings.Contains(fb, "%s") {
				fb = fmt.Sprintf(fb, p.Model)
			}
			out = append(out, Check{"model " + role, "ok", fmt.Sprintf("%s cannot be asked (%s): %s", rr.Model, causeOf(err), fb), ""})
			continue
		}
		if err != nil && errors.As(err, &le) && le.Kind == llm.KindUnavailable {
			d, ok := servers[rr.BaseURL]
			if !ok {
				d = &down{err: err, severity: "warn"}
				servers[rr.BaseURL] = d
				order = append(order, rr.BaseURL)
			}
			d.roles = append(d.roles, role)
			if severity == "fail" {
				d.severity = "fail"
			}
			continue
		}
		name := "model " + role
		if err != nil {
			fix := llmHint(err)
			if errors.As(err, &le) && le.Kind == llm.KindModelNotFound && rr.Provider == config.ProviderOllama {
				fix = missingModelFix(ctx, rr, fix)
			}
			out = append(out, Check{name, severity, causeOf(err), fix})
			continue
		}
		out = append(out, Check{name, "ok", fmt.Sprintf("%s on %s", rr.Model, rr.BaseURL), ""})
	}
	for _, url := range order {
		d := servers[url]
		out = append(out, Check{Name: "model server", Status: d.severity,
			Detail: fmt.Sprintf("%s (for %s) cannot be reached: %v", url, strings.Join(d.roles, ", "), innermost(d.err)),
			Fix:    unreachableFix(d.err, url, cfg, src)})
	}
	return out
}

// causeOf is an error's message without the hint, which the fix line says.
func causeOf(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		if le.Err != nil {
			return fmt.Sprintf("%s: %v", le.Kind, innermost(le.Err))
		}
		return string(le.Kind)
	}
	return err.Error()
}

// innermost is the last error of a chain: "connection refused", not the URL
// and operation around it (the detail names the server already).
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		var dns *net.DNSError
		if errors.As(err, &dns) {
			return dns
		}
		err = next
	}
}

// unreachableFix is the advice for a local server that cannot be reached,
// by cause: a host that does not resolve, nothing listening where the
// configuration points, or no server started at the default address.
func unreachableFix(err error, url string, cfg *config.Config, src *config.Sources) string {
	origin := "ollama.host"
	if src != nil {
		if o := src.Origin("ollama.host"); o != "" && o != "default" {
			origin = o
		}
	}
	hostSet := origin != "ollama.host"
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return fmt.Sprintf("the host %q does not resolve: correct the address (set by %s)", dns.Name, origin)
	case errors.Is(err, syscall.ECONNREFUSED) && hostSet:
		return fmt.Sprintf("nothing listens at %s (set by %s): start `ollama serve` there, or `make local-model` in lemmings' checkout (it starts its own server there), or correct the address", url, origin)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "start a server: `ollama serve` (Ollama, from ollama.com), or `make local-model` in lemmings' checkout (builds one for this CPU, installs a Qwen coder and sets lemmings up for it); or point OLLAMA_HOST at a server"
	}
	return fmt.Sprintf("check that the server at %s is up and reachable (set by %s)", url, origin)
}

// supervisorFix is the advice for supervisors that will be skipped.
func supervisorFix(err error) string {
	const off = "or turn them off: --no-supervisors or supervisors.enabled: false"
	var le *llm.Error
	if errors.As(err, &le) && le.Kind == llm.KindAuth {
		return "export OPENROUTER_API_KEY=…, " + off
	}
	if h := llmHint(err); h != "" {
		return h + "; " + off
	}
	return off
}

// llmHint is the fix a model error suggests, if any.
func llmHint(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		return le.Hint
	}
	return ""
}

// plannerCheck says who will plan when roles.planner names a model of its
// own (nil when it does not: the primary plans). A planner that cannot
// answer only warns: the run then plans on the primary, and says so.
func plannerCheck(ctx context.Context, r *llm.Router, cfg *config.Config) *Check {
	if cfg.Roles[config.RolePlanner].Model == "" {
		return nil
	}
	rr, _ := cfg.ResolvedRole(config.RolePlanner)
	if !slices.Contains(r.Roles(), config.RolePlanner) {
		return &Check{"planner", "ok", fmt.Sprintf("%s via %s is a cloud planner: off while supervisors are off or offline, the primary plans", rr.Model, rr.Provider), ""}
	}
	if err := r.Check(ctx, config.RolePlanner); err != nil {
		return &Check{"planner", "warn", "off for a run, the primary plans: " + causeOf(err), llmHint(err)}
	}
	return &Check{"planner", "ok", fmt.Sprintf("%s via %s plans scope and tasks", rr.Model, rr.Provider), ""}
}

// missingModelFix is the advice for a model the Ollama server lacks: first what works with no
// network, a model the server has (or make local-model's), then the download.
func missingModelFix(ctx context.Context, rr config.Role, pull string) string {
	var have []string
	if u, err := url.Parse(rr.BaseURL); err == nil {
		if list, err := api.NewClient(u, &http.Client{}).List(ctx); err == nil {
			for _, m := range list.Models {
				have = append(have, strings.TrimSuffix(m.Name, ":latest"))
			}
		}
	}
	fix := "the server has no model yet: make local-model in lemmings' checkout installs a Qwen coder and sets lemmings up for it"
	if len(have) > 0 {
		fix = fmt.Sprintf("use a model the server has (%s): --model NAME, or roles.primary.model in your user file", strings.Join(have, ", "))
	}
	return fix + "; or, with the network, " + pull
}
