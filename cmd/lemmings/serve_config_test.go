package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lemmings-dev/lemmings/run"
)

// A run resumed from the browser goes on with the model and offline mode it was
// started with, and serve's own flags still override them.
func TestServeConfigKeepsTheRunsChoices(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, run.DataDir, run.RunsDir, "r1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	choices := `{"roles.primary.model":"tiny","offline":"true","supervisors.enabled":"false"}`
	if err := os.WriteFile(filepath.Join(dir, run.ChoicesFile), []byte(choices), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &app{}
	cfg, err := a.serveConfig(root)("r1")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Roles["primary"].Model; got != "tiny" || !cfg.Offline || cfg.Supervisors.Enabled {
		t.Fatalf("resume config: model %q offline %v supervisors %v; want the run's choices", got, cfg.Offline, cfg.Supervisors.Enabled)
	}
	if cfg, err = a.serveConfig(root)(""); err != nil || cfg.Roles["primary"].Model == "tiny" || cfg.Offline {
		t.Fatalf("without a run the repository's configuration applies: %v %+v", err, cfg.Roles["primary"])
	}
	a.model = "other"
	if cfg, err = a.serveConfig(root)("r1"); err != nil || cfg.Roles["primary"].Model != "other" {
		t.Fatalf("serve's --model overrides the run's choice: %v", err)
	}
}
