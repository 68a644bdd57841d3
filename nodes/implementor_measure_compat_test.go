package nodes_test

import "github.com/lemmings-dev/lemmings/nodes"

// Before the new loop: no fix rounds and one protocol.
func fixRounds(*nodes.ImplResult) int       { return 0 }
func setProtocol(*nodes.Settings, string) {}
