package realollama

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// EnvModelsDir overrides where `make models` put the trained weights
// (default <module root>/.tools/models).
const EnvModelsDir = "LEMMINGS_MODELS_DIR"

// modelsRelPath is where scripts/models.sh extracts the weights, relative to the module root.
const modelsRelPath = ".tools/models"

// Trained names the trained models WithTrainedModels creates.
type Trained struct {
	Chat  string // SmolLM2-135M-Instruct (Q4_1), ChatML template from its GGUF
	Gemma string // Gemma 3 270M (Q4_K_M), the pretrained base model with Gemma's turn template
	Embed string // all-MiniLM-L6-v2, converted by the server from safetensors (384 dimensions)
}

// TrainedModels are the names WithTrainedModels gives the trained models.
func TrainedModels() Trained {
	return Trained{Chat: "smollm2", Gemma: "gemma3-270m", Embed: "minilm"}
}

// The extracted weights, relative to the models folder (see scripts/models.sh).
const (
	smolFile  = "smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
	gemmaFile = "gemma3-270m/gemma-3-270m-q4_k_m.gguf"
	minilmDir = "all-minilm-l6-v2"
	// Ollama's own gemma3 turn template: the base model knows the turn tokens, the system
	// message becomes a user turn (Gemma has no system role).
	gemmaModel = `FROM %s
TEMPLATE """{{- range $i, $_ := .Messages }}
{{- $last := eq (len (slice $.Messages $i)) 1 }}
{{- if eq .Role "assistant" }}<start_of_turn>model
{{ .Content }}{{ if not $last }}<end_of_turn>
{{ end }}
{{- else }}<start_of_turn>user
{{ .Content }}<end_of_turn>
{{ if $last }}<start_of_turn>model
{{ end }}
{{- end }}
{{- end }}"""
PARAMETER stop <end_of_turn>
` + singleThread
)

// ErrNoTrainedModels is wrapped by FindTrainedModels' error when `make models` has not run.
var ErrNoTrainedModels = errors.New("trained model weights not found")

// FindTrainedModels returns the folder holding the trained weights: $LEMMINGS_MODELS_DIR when
// set, else <module root>/.tools/models. The error wraps ErrNoTrainedModels when a file is
// missing.
func FindTrainedModels() (string, error) {
	dir, err := modelsDir()
	if err != nil {
		return "", err
	}
	for _, f := range []string{smolFile, gemmaFile, minilmDir + "/model.safetensors", minilmDir + "/1_Pooling/config.json"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return "", fmt.Errorf("%w: %s is missing", ErrNoTrainedModels, filepath.Join(dir, f))
		}
	}
	return dir, nil
}

// modelsDir is $LEMMINGS_MODELS_DIR when set, else <module root>/.tools/models.
func modelsDir() (string, error) {
	if dir := os.Getenv(EnvModelsDir); dir != "" {
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(modelsRelPath)), nil
}

// trainedOrSkip finds the weights or ends the test, as binaryOrSkip does for the binary.
func trainedOrSkip(t testing.TB) string {
	t.Helper()
	SkipUnlessAsked(t)
	dir, err := FindTrainedModels()
	if err == nil {
		return dir
	}
	if modeFrom(os.Getenv) == modeRequired {
		t.Fatalf("%s=1 requires the trained models, but: %v\nfetch them with `make models` (or point %s at the folder)",
			EnvRequire, err, EnvModelsDir)
	}
	t.Skipf("skipping trained-model test: %v; fetch them with `make models`", err)
	return ""
}

// WithTrainedModels also creates the trained models (TrainedModels names them) from the
// weights `make models` extracted. A test using it skips when they are missing, or fails
// under LEMMINGS_REAL_OLLAMA=1.
func WithTrainedModels() Option { return func(o *options) { o.trained = true } }

// singleThread is in every trained model's parameters: the suite's machines run several
// servers at once on few cores, and llama.cpp's spinning worker threads then collapse
// (measured on 2 shared cores: 20 tokens in 227 s with the default threads, 20 s with one).
// A request's own num_thread option still overrides it.
const singleThread = "PARAMETER num_thread 1\n"

// CreateTrainedModels creates the three trained models on this server from the folder dir.
// The GGUF models go through `ollama create`, as a user would. MiniLM goes through the API:
// v0.11.4's CLI uploads a safetensors folder's files under their base names, so the BERT
// converter finds no "1_Pooling/config.json" (the CLI's own TODO says so); the server itself
// converts the folder when each file keeps its relative path.
func (s *Server) CreateTrainedModels(ctx context.Context, dir string) error {
	names := TrainedModels()
	mf := filepath.Join(s.Home, "Modelfile.smollm2")
	if err := os.WriteFile(mf, []byte("FROM "+filepath.Join(dir, smolFile)+"\n"+singleThread), 0o644); err != nil {
		return err
	}
	if err := s.Create(ctx, names.Chat, mf); err != nil {
		return err
	}
	mf = filepath.Join(s.Home, "Modelfile.gemma3")
	if err := os.WriteFile(mf, []byte(fmt.Sprintf(gemmaModel, filepath.Join(dir, gemmaFile))), 0o644); err != nil {
		return err
	}
	if err := s.Create(ctx, names.Gemma, mf); err != nil {
		return err
	}
	return s.CreateFromFolder(ctx, names.Embed, filepath.Join(dir, minilmDir))
}

// CreateFromFolder creates model name from a safetensors folder through the API: every file
// is uploaded as a blob and listed under its path relative to the folder.
func (s *Server) CreateFromFolder(ctx context.Context, name, dir string) error {
	c := s.Client()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") || !(strings.HasSuffix(rel, ".json") || strings.HasSuffix(rel, ".safetensors") || rel == "vocab.txt") {
			return nil // the stamp, README and the like
		}
		digest, err := uploadBlob(ctx, c, path)
		if err != nil {
			return fmt.Errorf("upload %s: %w", path, err)
		}
		files[filepath.ToSlash(rel)] = digest
		return nil
	})
	if err != nil {
		return fmt.Errorf("create %s from %s: %w", name, dir, err)
	}
	stream := false
	err = c.Create(ctx, &api.CreateRequest{Model: name, Files: files, Stream: &stream, Parameters: map[string]any{"num_thread": 1}},
		func(api.ProgressResponse) error { return nil })
	if err != nil {
		return fmt.Errorf("create %s from %s: %w", name, dir, err)
	}
	return nil
}

func uploadBlob(ctx context.Context, c *api.Client, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	digest, err := fileDigest(f)
	if err != nil {
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	return digest, c.CreateBlob(ctx, digest, f)
}

// fileDigest is "sha256:<hex>" of what is left to read of f.
func fileDigest(f io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// createTrained is Start's step for WithTrainedModels.
func (s *Server) createTrained(t testing.TB, dir string) {
	t.Helper()
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := s.CreateTrainedModels(ctx, dir); err != nil {
		t.Fatalf("realollama: %v\n%s", err, s.logTail(40))
	}
	s.Trained = TrainedModels()
	s.Timings.CreateTrained = time.Since(t0)
}
