package doctor

import (
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
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
