package inspect

import (
	"github.com/lemmings-dev/lemmings/graph"
	"github.com/lemmings-dev/lemmings/run"
)

// OpenOn opens the runs kept in cp — a shared store (PostgreSQL) that
// workers on other machines write — for the repository at root.
func OpenOn(root string, cp graph.Checkpointer) (*Store, error) {
	app, err := run.StoreOn(cp)
	if err != nil {
		return nil, err
	}
	return &Store{root: root, app: app}, nil
}
