package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

// A weak model on a small window can write an unusable reply so long that
// quoting it back for the re-ask no longer fits: that is still the model's
// failure (a StructuredError the workflow absorbs), not a fault that stops a
// run. Seen with the real server and a random-weight model
// (docs/testing-real-ollama.md).
func TestStructuredReaskThatCannotFitIsTheModelsFailure(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "tiny", ContextLength: 4096}))
	defer srv.Close()
	// Two words a chunk: the reply stays within its budget as chunks
	// (lemmings cuts a stream past it), however many tokens it quotes as.
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: `{"decision": "` + strings.Repeat("k~ ", 4000), ChunkSize: 6}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "tiny")}})
	_, resp, err := Structured[plan](context.Background(), r, Request{Role: "primary", Messages: userMsg("plan")})
	var se *StructuredError
	if !errors.As(err, &se) || se.Attempts != 1 || !strings.Contains(se.Problem, "no re-ask") || !strings.HasPrefix(se.Raw, `{"decision"`) {
		t.Fatalf("error %v", err)
	}
	if resp.Usage.Calls != 1 || len(srv.ChatCalls()) != 1 {
		t.Errorf("usage %+v, %d calls", resp.Usage, len(srv.ChatCalls()))
	}
}
