// Package prompts holds the workflow's role templates. A project overrides
// one by placing <role>.tmpl in its prompts directory (.lemmings/prompts/).
package prompts

import "embed"

// FS holds the default templates, one per role, each with an "instructions" block.
//
//go:embed *.tmpl
var FS embed.FS
