// Package knowledge reads and writes the knowledge store of a repository
// (docs/knowledge/): short Markdown documents of rules that supervisors write,
// users seed by hand, and planning prompts carry (docs/knowledge.md).
//
// Where things are: document.go is the Doc type and its lifecycle states;
// parse.go and render.go turn Markdown into a Doc and back, keeping what they
// do not know; store.go holds the documents of one directory, write.go changes
// them on behalf of a Writer, whose categories owner.go lists; lint.go checks
// a store, index.go writes its _index.md, init.go scaffolds a new one; and
// select.go chooses what goes into a prompt within a token budget.
package knowledge
