package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/llm"
)

// summarizerOrPrimary keeps the summarizer role when its model answers; otherwise the primary's
// model writes the summaries, said once. The default summarizer (qwen2.5-coder:1.5b) is often
// not on a server set up for another model (make local-model, --model), and each summary would
// otherwise be a failed call and a warning. The role takes the primary's whole spec, its window
// included: a second window on the same model would reload it.
func summarizerOrPrimary(ctx context.Context, router *llm.Router, rc llm.RouterConfig, opts []llm.Option, warn io.Writer) *llm.Router {
	spec, ok := rc.Roles[config.RoleSummarizer]
	primary, hasPrimary := rc.Roles[config.RolePrimary]
	if !ok || !hasPrimary || (spec.Model == primary.Model && spec.BaseURL == primary.BaseURL) {
		return router
	}
	err := router.Check(ctx, config.RoleSummarizer)
	if err == nil || ctx.Err() != nil {
		return router
	}
	why := err.Error()
	var le *llm.Error
	if errors.As(err, &le) {
		why = string(le.Kind)
		if le.Err != nil {
			why += ": " + le.Err.Error()
		}
	}
	rc.Roles = maps.Clone(rc.Roles)
	rc.Roles[config.RoleSummarizer] = primary
	next, nerr := llm.NewRouter(rc, opts...)
	if nerr != nil {
		return router // each summary then falls back to the Implementor's own words
	}
	fmt.Fprintf(warn, "warning: the summarizer %s is not available (%s): the primary model %s writes the task summaries (roles.summarizer.model names another)\n",
		spec.Model, why, primary.Model)
	_ = router.Close()
	return next
}
