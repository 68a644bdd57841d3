package config

import "testing"

func TestOllamaHostIsReadAsOllamaReadsIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want, err string }{
		{in: "http://127.0.0.1:11434", want: "http://127.0.0.1:11434"},
		{in: "gpu-box", want: "http://gpu-box:11434"},
		{in: "gpu-box:8080", want: "http://gpu-box:8080"},
		{in: ":11434", want: "http://127.0.0.1:11434"},
		{in: "0.0.0.0", want: "http://0.0.0.0:11434"},
		{in: "[::1]", want: "http://[::1]:11434"},
		{in: "[::1]:9", want: "http://[::1]:9"},
		{in: "http://box", want: "http://box:80"},
		{in: "https://ollama.example", want: "https://ollama.example:443"},
		{in: "https://proxy.example/ollama", want: "https://proxy.example:443/ollama"},
		{in: `"box:1"`, want: "http://box:1"},
		{in: "  box:1 ", want: "http://box:1"},
		{in: "http://user:pw@box:1", want: "http://user:pw@box:1"},
		{in: "", err: "must not be empty"},
		{in: "box:0", err: `port "0"`},
		{in: "box:70000", err: `port "70000"`},
		{in: "unix:///var/run/ollama.sock", err: `scheme "unix"`},
		{in: "my box:1", err: "not a host name"},
		{in: "0#0", err: "not a host name"},
	} {
		got, err := normalizeOllamaHost(tc.in)
		if tc.err != "" {
			if err == nil || !contains(err.Error(), tc.err) {
				t.Errorf("normalizeOllamaHost(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("normalizeOllamaHost(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if again, err := normalizeOllamaHost(got); err != nil || again != got {
			t.Errorf("not idempotent: %q → %q, %v", got, again, err)
		}
	}
}
