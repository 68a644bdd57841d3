package llm

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lemmings-dev/lemmings/llm/llmtest"
)

type recordingObserver struct {
	mu    sync.Mutex
	calls []CallRecord
}

func (o *recordingObserver) ObserveCall(_ context.Context, c CallRecord) {
	o.mu.Lock()
	o.calls = append(o.calls, c)
	o.mu.Unlock()
}

func TestTheContextsObserverSeesEveryCallAsSent(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: "fine", PromptTokens: 11, CompletionTokens: 2}},
		llmtest.Step{Reply: llmtest.Reply{Status: 401, Body: `{"error":{"code":401,"message":"no key"}}`}})
	temp := 0.3
	r, _ := newRouter(t, RouterConfig{PromptLog: filepath.Join(t.TempDir(), "p.jsonl"), Roles: map[string]RoleSpec{
		"primary":    {Provider: ProviderOllama, Model: "local:1b", BaseURL: srv.URL(), Temperature: &temp},
		"supervisor": openrouterRole(srv, "cloud/m"),
	}})
	obs := &recordingObserver{}
	ctx := WithCallObserver(context.Background(), obs)
	if _, err := r.Chat(ctx, Request{Role: "primary", Label: "qa", Messages: userMsg("key " + fakeOpenRouter)}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Chat(ctx, Request{Role: "supervisor", Label: "code_style", MaxTokens: 99, Messages: userMsg("key " + fakeOpenRouter)}); err == nil {
		t.Fatal("the 401 was not an error")
	}
	_, _ = r.Chat(context.Background(), Request{Role: "primary", Messages: userMsg("unobserved")}) // answered or not, unseen
	if len(obs.calls) != 2 {
		t.Fatalf("observed %d calls, want 2 (a context without the observer is not observed)", len(obs.calls))
	}
	local, cloud := obs.calls[0], obs.calls[1]
	if local.Role != "primary" || local.Label != "qa" || local.Provider != ProviderOllama || local.Model != "local:1b" || !local.Local ||
		local.MaxTokens != defaultReplyTokens || local.Temperature == nil || *local.Temperature != 0.3 || !local.Stream ||
		local.Response.Content != "fine" || local.Response.Usage.PromptTokens != 11 || local.Err != nil || local.End.Before(local.Start) {
		t.Errorf("local call: %+v", local)
	}
	// The local model saw the prompt as it was; the redacted copy (made once,
	// for the prompt log too) has no secret.
	if !strings.Contains(local.Request.Messages[0].Content, fakeOpenRouter) || local.Redacted == nil ||
		strings.Contains(local.Redacted.Messages[0].Content, fakeOpenRouter) || local.Redacted.Reply != "fine" {
		t.Errorf("local call's texts: sent %q, redacted %+v", local.Request.Messages[0].Content, local.Redacted)
	}
	var le *Error
	if cloud.Local || cloud.MaxTokens != 99 || !errors.As(cloud.Err, &le) || le.Kind != KindAuth ||
		strings.Contains(cloud.Request.Messages[0].Content, fakeOpenRouter) {
		t.Errorf("cloud call: %+v", cloud)
	}
}

func TestNoPromptLogNoRedactedCopy(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script(llmtest.Step{Reply: llmtest.Reply{Content: "fine"}})
	r, _ := newRouter(t, RouterConfig{Roles: map[string]RoleSpec{"primary": ollamaRole(srv, "m")}})
	obs := &recordingObserver{}
	if _, err := r.Chat(WithCallObserver(context.Background(), obs), Request{Role: "primary", Messages: userMsg("x")}); err != nil {
		t.Fatal(err)
	}
	if len(obs.calls) != 1 || obs.calls[0].Redacted != nil {
		t.Errorf("calls %+v", obs.calls)
	}
}
