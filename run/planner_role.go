package run

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
	"github.com/lemmings-dev/lemmings/nodes"
)

// ownPlanner says whether the planner role gets a model of its own: it names
// one, and one that is not Ollama runs only with supervisors on and not
// offline (it is paid from the supervisor budget).
func ownPlanner(c *config.Config, supervisors bool) bool {
	r := c.Roles[config.RolePlanner]
	if r.Model == "" {
		return false
	}
	return r.Provider == config.ProviderOllama || (supervisors && !c.Offline)
}

// configurePlanner makes the planner role the one that plans when the router
// has it and it answers; otherwise the primary plans, with a warning.
func configurePlanner(ctx context.Context, set *nodes.Settings, router *llm.Router, warn io.Writer) {
	set.PlannerRole, set.CloudPlanner = nodes.RolePrimary, false
	if !slices.Contains(router.Roles(), nodes.RolePlanner) {
		return
	}
	cloud := !router.Local(nodes.RolePlanner)
	if cloud && !set.Supervisors.Enabled {
		fmt.Fprintf(warn, "warning: the cloud planner is off for this run (supervisors are off): the primary plans\n")
		return
	}
	if err := router.Check(ctx, nodes.RolePlanner); err != nil {
		fmt.Fprintf(warn, "warning: the planner role is off for this run, the primary plans: %v\n", err)
		return
	}
	set.PlannerRole, set.CloudPlanner = nodes.RolePlanner, cloud
}
