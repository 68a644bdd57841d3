package nodes_test

import (
	"github.com/lemmings-dev/lemmings/nodes"
	"github.com/lemmings-dev/lemmings/runstate"
)

func fixRounds(r *runstate.ImplResult) int { return r.FixRounds }

func setProtocol(s *nodes.Settings, p string) { s.EditProtocol = p }
