package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/demo"
)

// Through the binary: the line measures prompt and generation speed apart.
func TestDoctorMeasuresPromptAndGenerationSpeedApart(t *testing.T) {
	srv := demo.NewServer(&demo.Script{})
	defer srv.Close()
	c := newCLI(t)
	c.config(scriptedConfig(srv.URL(), "blocking"))
	r := c.run(prepared(t), "--json", "doctor", "--no-supervisors")
	for _, l := range jsonLines(t, r.stdout) {
		if l["check"] != "ollama server" {
			continue
		}
		// The scripted server is this test's own process: no Ollama build to describe.
		want := regexp.MustCompile(`qwen2\.5-coder:14b reads a prompt at \d+\.\d tokens/s and writes at \d+\.\d tokens/s \(\d{3} prompt tokens, \d+ generated\)$`)
		if l["status"] != "ok" || !want.MatchString(fmt.Sprint(l["detail"])) || !strings.Contains(fmt.Sprint(l["detail"]), "(how it was built is unknown)") {
			t.Errorf("ollama server line: %v", l)
		}
		return
	}
	t.Fatalf("no ollama server line:\n%s\n%s", r.stdout, r.stderr)
}
