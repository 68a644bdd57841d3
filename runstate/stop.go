package runstate

import "strings"

// StopKind says what stopped a run before its work was done.
type StopKind string

// The stop kinds.
const (
	// StopLimit: a limit the user set ran out (the run was not wrong, it
	// ran out of room); Stop.Key names its configuration key.
	StopLimit StopKind = "limit"
	// StopFailure: the run could not go on (a planner with no usable answer,
	// tasks failing in a row, a milestone declared done without evidence).
	StopFailure StopKind = "failure"
)

// Stop is why a run stops before its work is done.
type Stop struct {
	Kind StopKind
	// Key is the configuration key of the limit (StopLimit), such as
	// limits.max_tasks.
	Key    string
	Reason string
}

// LimitStop is a stop at the limit set by the configuration key key.
func LimitStop(key, reason string) Stop { return Stop{Kind: StopLimit, Key: key, Reason: reason} }

// FailureStop is a stop because the run could not go on.
func FailureStop(reason string) Stop { return Stop{Kind: StopFailure, Reason: reason} }

// IsZero reports whether there is no stop.
func (st Stop) IsZero() bool { return st.Reason == "" && st.Kind == "" }

// SetStop records why the run stops.
func (s *State) SetStop(st Stop) {
	s.StopReason, s.StopKind, s.StopKey = st.Reason, st.Kind, st.Key
}

// Stop is why the run stops (the zero Stop while it goes on).
func (s *State) Stop() Stop {
	st := Stop{Kind: s.StopKind, Key: s.StopKey, Reason: s.StopReason}
	if st.Kind == "" && st.Reason != "" {
		st.Kind, st.Key = legacyStop(st.Reason)
	}
	return st
}

// legacyStop classifies a stop recorded before stops had a kind (a
// checkpoint of an earlier lemmings): its reason named the limit's key.
func legacyStop(reason string) (StopKind, string) {
	for _, key := range []string{KeyMaxTasks, KeyMaxWallTime, KeyCLIBudget} {
		if strings.Contains(reason, key) {
			return StopLimit, key
		}
	}
	if strings.Contains(reason, "budget_usd") {
		return StopLimit, "budget_usd"
	}
	return StopFailure, ""
}

// The configuration keys of the limits that stop a run.
const (
	KeyMaxTasks    = "limits.max_tasks"
	KeyMaxWallTime = "limits.max_wall_time"
	KeyCLIBudget   = "implementor.cli.budget_usd"
)
