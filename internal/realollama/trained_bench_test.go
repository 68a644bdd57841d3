package realollama_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/lemmings-dev/lemmings/internal/realollama"
)

// BenchmarkTrainedModels measures each trained chat model's prompt and generation speed on
// this machine (docs/testing-real-models.md): a ~500-token prompt, 64 generated tokens, the
// cache emptied between iterations by varying the prompt's first word.
//
//	LEMMINGS_REAL_OLLAMA=1 go test -run '^$' -bench TrainedModels -benchtime 3x ./internal/realollama/
func BenchmarkTrainedModels(b *testing.B) {
	s := realollama.Start(b, realollama.WithTrainedModels())
	c := s.Client()
	noStream := false
	body := strings.Repeat("The planner reads the remit, the milestones and the files, then decides the next task. ", 28)
	for _, model := range []string{s.Trained.Chat, s.Trained.Gemma} {
		b.Run(model, func(b *testing.B) {
			var promptTok, promptDur, genTok, genDur float64
			for i := 0; b.Loop(); i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				var r api.ChatResponse
				err := c.Chat(ctx, &api.ChatRequest{Model: model, Stream: &noStream,
					Messages: []api.Message{{Role: "user", Content: string(rune('A'+i%26)) + " " + body + "\nSummarize this in one long paragraph."}},
					Options:  map[string]any{"seed": i, "num_predict": 64, "temperature": 0.7}},
					func(x api.ChatResponse) error { r = x; return nil })
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				promptTok += float64(r.PromptEvalCount)
				promptDur += r.PromptEvalDuration.Seconds()
				genTok += float64(r.EvalCount)
				genDur += r.EvalDuration.Seconds()
			}
			b.ReportMetric(promptTok/promptDur, "prompt-tok/s")
			b.ReportMetric(genTok/genDur, "gen-tok/s")
		})
	}
}
