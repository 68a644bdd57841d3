package main

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/nodes/prompts"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/demo"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// TestUnreachableFixFitsTheCause: the advice for a local server that cannot
// be reached follows why (a name that does not resolve is not fixed by
// starting a server; a configured address is not fixed by setting one).
func TestUnreachableFixFitsTheCause(t *testing.T) {
	load := func(env map[string]string) (*config.Config, *config.Sources) {
		cfg, src, err := config.Load(config.LoadOptions{UserConfigDir: t.TempDir(), Env: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		return cfg, src
	}
	refused := &llm.Error{Kind: llm.KindUnavailable, Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	dns := &llm.Error{Kind: llm.KindUnavailable, Err: fmt.Errorf("post: %w", &net.DNSError{Name: "ollama.lan", Err: "no such host", IsNotFound: true})}

	cfg, src := load(nil)
	if fix := unreachableFix(refused, cfg.Ollama.Host, cfg, src); !strings.Contains(fix, "ollama serve") || !strings.Contains(fix, "OLLAMA_HOST") {
		t.Errorf("refused at the default address: %q", fix)
	}
	cfg, src = load(map[string]string{"OLLAMA_HOST": "http://10.0.0.5:11434"})
	if fix := unreachableFix(refused, cfg.Ollama.Host, cfg, src); !strings.Contains(fix, "nothing listens at http://10.0.0.5:11434") || !strings.Contains(fix, "env OLLAMA_HOST") {
		t.Errorf("refused at a configured address: %q", fix)
	}
	if fix := unreachableFix(dns, cfg.Ollama.Host, cfg, src); !strings.Contains(fix, `"ollama.lan" does not resolve`) || strings.Contains(fix, "ollama serve") {
		t.Errorf("a name that does not resolve: %q", fix)
	}
	if got := fmt.Sprint(innermost(dns)); !strings.Contains(got, "no such host") {
		t.Errorf("innermost(dns) = %q", got)
	}
}

// doctor measures the primary model's speed with one short call and says
// what a run's replies will take; under 5 tokens/s it warns, with a fix.
func TestDoctorMeasuresThePrimaryModelsSpeed(t *testing.T) {
	speed := func(steps ...llmtest.Step) map[string]any {
		t.Helper()
		srv := demo.NewServer(&demo.Script{}, steps...)
		defer srv.Close()
		c := newCLI(t)
		c.config(scriptedConfig(srv.URL(), "blocking"))
		r := c.run(prepared(t), "--json", "doctor", "--no-supervisors")
		for _, l := range jsonLines(t, r.stdout) {
			if l["check"] == "speed" {
				return l
			}
		}
		t.Fatalf("no speed line:\n%s\n%s", r.stdout, r.stderr)
		return nil
	}
	fast := speed()
	if fast["status"] != "ok" || !regexp.MustCompile(`^qwen2\.5-coder:14b: \d+\.\d tokens/s \(\d+ tokens in .*: an action reply \(~300 tokens\) takes ~\d+s, a code reply \(~1500\) ~\d+s$`).MatchString(fmt.Sprint(fast["detail"])) {
		t.Errorf("a fast model: %v", fast)
	}
	slow := speed(llmtest.Step{Name: "slow-doctor", API: llmtest.Ollama, Times: -1,
		Reply: llmtest.Reply{Content: demo.DoctorReply, CompletionTokens: 30, EvalDuration: 15 * time.Second},
		Match: func(c llmtest.Call) bool { return c.Role() == prompts.Doctor }})
	if slow["status"] != "warn" || !strings.Contains(fmt.Sprint(slow["detail"]), "2.0 tokens/s") || !strings.Contains(fmt.Sprint(slow["detail"]), "a run will be slow") ||
		!strings.Contains(fmt.Sprint(slow["fix"]), "smaller model") {
		t.Errorf("a slow model: %v", slow)
	}
}
