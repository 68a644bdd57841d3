// Package suptest holds what the supervisor tests of nodes (one node at a
// time) and of run (whole runs through Start and Resume) share: a small
// committed repository, scripted replies and what a scripted supervisor call
// costs. It may not import nodes: the internal tests of nodes import it.
package suptest

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/gitfixture"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
)

// What one scripted supervisor call costs, as OpenRouter would report it.
const (
	CallCost       = 0.0183
	PromptTokens   = 4200
	CompletionToks = 380
)

// Secrets some tests plant in the work tree; they must never reach the cloud.
const (
	SecretKey   = "sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab"
	SecretToken = "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
)

// ConventionPath is the knowledge document the scripted Code Style
// supervisor writes.
const ConventionPath = "conventions/file-names.md"

// JSON marshals v; a test value that cannot be marshalled is a bug in the test.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// EmptySupervisorReply is a valid reply of supervisor role (prompts.CodeStyle,
// prompts.Design or prompts.Internaliser) that finds nothing.
func EmptySupervisorReply(role string) map[string]any {
	switch role {
	case prompts.CodeStyle:
		return map[string]any{"conventions_updated": []string{}, "docs": []any{}, "directives": []any{}, "findings": []string{}, "summary": "No findings."}
	case prompts.Design:
		return map[string]any{"design_updates": []string{}, "docs": []any{}, "directives": []any{}, "findings": []string{}, "summary": "No findings."}
	default:
		return map[string]any{"knowledge_items": []any{}, "summary": "Nothing new."}
	}
}

// MakeRepo makes a small committed repository.
func MakeRepo(t testing.TB) string {
	t.Helper()
	return gitfixture.RepoIn(t, filepath.Join(t.TempDir(), "repo"), map[string]string{
		"README.md": "# sample\n\nA sample project for the supervisor tests.\n",
		"lib.go":    "package sample\n\n// Greet says hello to name.\nfunc Greet(name string) string { return \"hello \" + name }\n",
	})
}

// Git runs git in dir and returns its output; a failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gitfixture.Git(t, dir, args...)
}
