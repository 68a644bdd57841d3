package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func chat(t *testing.T, s *Server, model, prompt string) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"stream":false,"messages":[{"role":"user","content":%q}]}`, model, prompt)
	resp, err := http.Post(s.URL()+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Message struct{ Content string } `json:"message"`
		Error   string                   `json:"error"`
	}
	_ = json.Unmarshal(b, &out)
	if out.Error != "" {
		return resp.StatusCode, out.Error
	}
	return resp.StatusCode, out.Message.Content
}

func TestFirstLiveMatchingStepAnswers(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Script(
		Step{Name: "plan", Contains: "plan", Times: 2, Reply: Reply{Content: "P"}},
		Step{Name: "any-small", Model: "small", Reply: Reply{Content: "S"}},
		Step{Name: "computed", Match: func(c Call) bool { return strings.HasPrefix(c.LastUser(), "echo ") },
			Times: -1, Respond: func(c Call) Reply { return Reply{Content: strings.TrimPrefix(c.LastUser(), "echo ")} }},
	)
	for _, c := range []struct{ model, prompt, want string }{
		{"big", "please plan", "P"},
		{"small", "please plan", "P"},
		{"small", "please plan", "S"}, // "plan" is exhausted
		{"big", "echo hi", "hi"},
		{"big", "echo there", "there"},
	} {
		if status, got := chat(t, s, c.model, c.prompt); status != 200 || got != c.want {
			t.Errorf("%s/%q: %d %q, want %q", c.model, c.prompt, status, got, c.want)
		}
	}
	if p := s.Pending(); len(p) != 0 {
		t.Errorf("pending %v", p)
	}
	status, msg := chat(t, s, "small", "please plan")
	if status != 500 || !strings.Contains(msg, "no script step matches call #6") || !strings.Contains(msg, `"please plan"`) {
		t.Errorf("unmatched: %d %q", status, msg)
	}
	if u := s.Unmatched(); len(u) != 1 || u[0].LastUser() != "please plan" {
		t.Errorf("unmatched %+v", u)
	}
	s.SetDefault(func(c Call) Reply { return Reply{Content: "default for " + c.Model} })
	if _, got := chat(t, s, "small", "anything"); got != "default for small" {
		t.Errorf("default %q", got)
	}
	if n := len(s.Calls()); n != 7 {
		t.Errorf("%d calls recorded", n)
	}
}

func TestParallelCallersFindTheirSteps(t *testing.T) {
	s := NewServer()
	defer s.Close()
	for i := 0; i < 8; i++ {
		s.Script(Step{Contains: fmt.Sprintf("task %d.", i), Reply: Reply{Content: fmt.Sprint(i)}})
	}
	var wg sync.WaitGroup
	for i := 7; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, got := chat(t, s, "m", fmt.Sprintf("do task %d.", i)); got != fmt.Sprint(i) {
				t.Errorf("task %d got %q", i, got)
			}
		}()
	}
	wg.Wait()
	if p := s.Pending(); len(p) != 0 {
		t.Errorf("pending %v", p)
	}
}

func TestModelsAndCapabilities(t *testing.T) {
	s := NewServer(WithModels(ModelInfo{Name: "tiny", ContextLength: 4096, Capabilities: []string{"completion"}}, ModelInfo{Name: "emb", Capabilities: []string{"embedding"}}))
	defer s.Close()
	s.SetDefault(func(Call) Reply { return Reply{Content: "ok"} })
	if status, msg := chat(t, s, "other", "x"); status != 404 || msg != "model 'other' not found" {
		t.Errorf("unknown model: %d %q", status, msg)
	}
	if status, msg := chat(t, s, "tiny:latest", "x"); status != 200 || msg != "ok" {
		t.Errorf("tag form: %d %q", status, msg)
	}
	resp, _ := http.Post(s.URL()+"/api/chat", "application/json",
		strings.NewReader(`{"model":"tiny","messages":[],"tools":[{"type":"function","function":{"name":"f"}}]}`))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "does not support tools") {
		t.Errorf("tools on a model without them: %d %s", resp.StatusCode, b)
	}
	resp, _ = http.Post(s.URL()+"/api/show", "application/json", strings.NewReader(`{"model":"tiny"}`))
	var show struct {
		ModelInfo    map[string]any `json:"model_info"`
		Capabilities []string       `json:"capabilities"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&show)
	resp.Body.Close()
	if show.ModelInfo["llama.context_length"] != float64(4096) || strings.Join(show.Capabilities, ",") != "completion" {
		t.Errorf("show %+v", show)
	}
	resp, _ = http.Get(s.URL() + "/api/tags")
	var tags struct {
		Models []struct{ Name string } `json:"models"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tags)
	resp.Body.Close()
	if len(tags.Models) != 2 || tags.Models[0].Name != "tiny:latest" {
		t.Errorf("tags %+v", tags)
	}
}

func TestVectorsAreDeterministicUnitVectors(t *testing.T) {
	a, b, c := Vector("alpha", 32), Vector("alpha", 32), Vector("beta", 32)
	norm := 0.0
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same text, different vectors")
		}
		norm += float64(a[i]) * float64(a[i])
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² %v", norm)
	}
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same > 1 {
		t.Errorf("different texts share %d components", same)
	}
}

func TestScriptedEmbeddings(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Script(Step{Path: "/api/embed", Contains: "special", Reply: Reply{Embeddings: [][]float32{{1, 0}}}})
	for _, c := range []struct {
		in   string
		want float32
	}{{"special", 1}, {"plain", Vector("plain", 64)[0]}} {
		resp, err := http.Post(s.URL()+"/api/embed", "application/json", strings.NewReader(fmt.Sprintf(`{"model":"e","input":%q}`, c.in)))
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Embeddings [][]float32 }
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if len(out.Embeddings) != 1 || out.Embeddings[0][0] != c.want {
			t.Errorf("%s: %v", c.in, out.Embeddings)
		}
	}
	// An embedding call does not consume chat steps, and vice versa.
	if u := s.Unmatched(); len(u) != 0 {
		t.Errorf("unmatched %v", u)
	}
}

func TestChunks(t *testing.T) {
	if got := strings.Join(chunks("one two  three", 0), "|"); got != "one |two | |three" {
		t.Errorf("word chunks %q", got)
	}
	if got := strings.Join(chunks("héllo", 2), "|"); got != "hé|ll|o" {
		t.Errorf("rune chunks %q", got)
	}
}
