package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/internal/atomicfile"
	"github.com/lemmings-dev/lemmings/internal/gitsafe"
)

// ChoicesFile, in a run's folder, holds the choices the run was started with
// (as configuration keys), so a resumed run goes on as it was started.
const ChoicesFile = "choices.json"

// Choices are the settings a run keeps across resumes, as configuration keys
// ("roles.primary.model", "offline", "supervisors.enabled"): the model of
// each role, offline, supervisors on or off. Its approval mode is kept in the
// run's state.
type Choices map[string]string

// ChoicesOf reads the choices a run keeps from the effective configuration.
func ChoicesOf(c *config.Config) Choices {
	out := Choices{
		"offline":             strconv.FormatBool(c.Offline),
		"supervisors.enabled": strconv.FormatBool(c.Supervisors.Enabled),
	}
	for _, name := range config.RoleNames() {
		if r, ok := c.Roles[name]; ok && r.Model != "" {
			out["roles."+name+".model"] = r.Model
		}
	}
	return out
}

// LoadChoices reads the choices recorded for a run; none (nil) for a run
// started before they were recorded.
func LoadChoices(root, runID string) (Choices, error) {
	path := filepath.Join(root, DataDir, RunsDir, runID, ChoicesFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ch Choices
	if err := json.Unmarshal(data, &ch); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it to resume with the current configuration)", path, err)
	}
	// The choices go on as flags, the user's own word: only the keys a run
	// records are taken, and never from a file the repository commits (a
	// hostile one could name implementor.cli.command for a bare resume).
	for k := range ch {
		if !choiceKey(k) {
			return nil, fmt.Errorf("%s: %s is not a choice a run records (delete the file to resume with the current configuration)", path, k)
		}
	}
	if tracked(root, path) {
		return nil, fmt.Errorf("%s is committed in the repository, not lemmings' record of the run: git rm --cached it (and the run's folder), or delete it to resume with the current configuration", path)
	}
	return ch, nil
}

// choiceKey reports whether key is one ChoicesOf records.
func choiceKey(key string) bool {
	if key == "offline" || key == "supervisors.enabled" {
		return true
	}
	for _, name := range config.RoleNames() {
		if key == "roles."+name+".model" {
			return true
		}
	}
	return false
}

// tracked reports whether git tracks the file (errors: no).
func tracked(root, path string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	out, err := gitsafe.Command(ctx, root, "ls-files", "--", filepath.ToSlash(rel)).Output()
	return err == nil && len(out) > 0
}

// saveChoices records ch in runDir and returns the keys whose values differ
// from what was recorded before.
func saveChoices(runDir string, ch Choices) ([]string, error) {
	if ch == nil {
		return nil, nil
	}
	path := filepath.Join(runDir, ChoicesFile)
	var before Choices
	if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &before) != nil {
		before = nil // an unreadable record is replaced; nothing to compare with
	}
	var changed []string
	if before != nil {
		for _, k := range slices.Sorted(maps.Keys(ch)) {
			if before[k] != ch[k] {
				changed = append(changed, k)
			}
		}
	}
	data, err := json.MarshalIndent(ch, "", "  ")
	if err != nil {
		return nil, err
	}
	return changed, atomicfile.WriteFile(path, append(data, '\n'), 0o600)
}
