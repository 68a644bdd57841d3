package llm

import (
	"context"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

func TestPromptLimitIsTheWindowLessTheReply(t *testing.T) {
	srv := llmtest.NewServer(llmtest.WithModels(llmtest.ModelInfo{Name: "small", ContextLength: 4096}))
	defer srv.Close()
	r, err := NewRouter(RouterConfig{Roles: map[string]RoleSpec{
		"primary":    {Provider: ProviderOllama, Model: "small", BaseURL: srv.URL(), MaxTokens: 1024}, // reply may shrink to 256
		"capped":     {Provider: ProviderOllama, Model: "small", BaseURL: srv.URL(), MaxTokens: 512, MaxNumCtx: 2048},
		"supervisor": {Provider: ProviderOpenRouter, Model: "x/y", BaseURL: srv.URL() + "/v1", APIKey: "k"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for role, want := range map[string]int{"primary": 4096 - 256 - 512, "capped": 2048 - 256 - 512, "supervisor": 0} {
		got, err := r.PromptLimit(ctx, role)
		if err != nil || got != want {
			t.Errorf("%s: PromptLimit = %d, %v; want %d", role, got, err, want)
		}
	}
	if _, err := r.PromptLimit(ctx, "nope"); err == nil {
		t.Error("an unknown role must be an error")
	}
}
