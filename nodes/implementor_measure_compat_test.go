package nodes_test

import "github.com/lemmings-dev/lemmings/nodes"

func fixRounds(r *nodes.ImplResult) int { return r.FixRounds }

func setProtocol(s *nodes.Settings, p string) { s.EditProtocol = p }
