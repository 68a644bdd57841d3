// Package prompts holds the workflow's role templates. A project overrides
// one by placing <role>.tmpl in its prompts directory (.lemmings/prompts/).
// shared.tmpl is not a role: it closes the system message every local
// role's prompt shares (llm.Composer.Shared).
package prompts

import "embed"

// FS holds the default templates: one per role, each with an "instructions"
// block, and shared.tmpl.
//
//go:embed *.tmpl
var FS embed.FS
