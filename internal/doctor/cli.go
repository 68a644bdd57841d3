package doctor

import (
	"errors"
	"os"
	"os/exec"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/nodes/implementor"
	"github.com/lemmings-dev/lemmings/run"
)

// cliChecks are the doctor's lines on the Implementor's backend.
func cliChecks(cfg *config.Config) []Check {
	if cfg.Implementor.Backend != config.BackendCLI {
		return []Check{{Name: "implementor", Status: "ok", Detail: "lemmings' own loop on the primary model (implementor.backend: lemmings)"}}
	}
	err := run.CheckCLI(cfg)
	var ce *implementor.CLIError
	if errors.As(err, &ce) {
		return []Check{{Name: "coding CLI", Status: "fail", Detail: ce.Name + ": " + ce.Cause, Fix: ce.Fix}}
	}
	if err != nil {
		return []Check{{Name: "coding CLI", Status: "fail", Detail: err.Error()}}
	}
	s := run.SettingsFrom(cfg).CLI
	p, _, _ := s.Worker(os.LookupEnv)
	where, _ := exec.LookPath(p.Args[0])
	detail := p.Name + " at " + where + " (" + string(p.Format) + ")"
	if s.Model != "" {
		detail += ", model " + s.Model
	}
	out := []Check{{Name: "coding CLI", Status: "ok", Detail: detail}}
	if w := run.CLILoginWarning(cfg); w != "" {
		out = append(out, Check{Name: "coding CLI login", Status: "warn", Detail: w, Fix: p.Login})
	}
	return out
}
