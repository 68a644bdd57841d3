package knowledge

import (
	"fmt"
	"strings"
)

// Writer identifies who writes to the store; ownership follows from it.
type Writer string

// Writers of the knowledge store; each may write only its own categories
// (docs/knowledge.md, "Who may write where").
const (
	CodeStyle    Writer = "code_style"
	Design       Writer = "design"
	Internaliser Writer = "internaliser"
	User         Writer = "user"
)

// System is the writer recorded when lemmings itself changes a doc's status
// (promotion after clean uses); it owns nothing.
const System Writer = "lemmings"

// Owns reports whether w may write documents of category.
func (w Writer) Owns(category string) bool {
	switch w {
	case User:
		return knownCategory(category)
	case CodeStyle:
		return category == CatConventions
	case Design:
		return category == CatDesign
	case Internaliser:
		return category == CatLessons || category == CatDomain
	}
	return false
}

// supervisor reports whether w is one of the supervisors, whose new docs start
// provisional.
func (w Writer) supervisor() bool { return w == CodeStyle || w == Design || w == Internaliser }

// OwnershipError is returned when a writer tries to write outside its
// directories. A supervisor that gets it should drop the write, not retry.
type OwnershipError struct {
	Writer   Writer
	Path     string
	Category string
}

func (e *OwnershipError) Error() string {
	var may []string
	for _, c := range Categories() {
		if e.Writer.Owns(c) {
			may = append(may, c+"/")
		}
	}
	owns := "nothing"
	if len(may) > 0 {
		owns = strings.Join(may, " and ")
	}
	return fmt.Sprintf("knowledge: %s may not write %s (category %q); it owns %s", e.Writer, e.Path, e.Category, owns)
}

// InvalidDocError is returned when a write is refused because the document
// breaks the format (docs/knowledge.md, "Document format"): a supervisor's
// output is checked before it reaches the store.
type InvalidDocError struct {
	Path     string
	Problems []string
}

func (e *InvalidDocError) Error() string {
	return fmt.Sprintf("knowledge: refusing to write %s: %s", e.Path, strings.Join(e.Problems, "; "))
}
