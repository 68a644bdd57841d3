package realollama

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/tinymodel"
)

// CreateModels creates the three models from the generated Modelfiles, as a user would:
// `ollama create NAME -f FILE` with the same binary, against this server. Start calls it
// unless WithoutModels was given.
func (s *Server) CreateModels(ctx context.Context) error {
	names := map[tinymodel.Kind]string{
		tinymodel.Chat:        s.Models.Chat,
		tinymodel.ChatNoTools: s.Models.ChatNoTools,
		tinymodel.Embed:       s.Models.Embed,
	}
	for _, k := range tinymodel.Kinds() {
		if err := s.Create(ctx, names[k], s.Files.Modelfiles[k]); err != nil {
			return err
		}
	}
	return nil
}

// Create creates model name from a Modelfile with `ollama create`.
func (s *Server) Create(ctx context.Context, name, modelfile string) error {
	cmd := exec.CommandContext(ctx, s.Bin, "create", name, "-f", modelfile)
	cmd.Env, cmd.Dir = s.env, s.Home
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ollama create %s -f %s: %w\n%s", name, modelfile, err, strings.TrimSpace(string(out)))
	}
	return nil
}
