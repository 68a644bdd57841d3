package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
)

// Validate checks every value and the rules between values. It returns an
// *Error listing every problem, or nil.
func (c *Config) Validate() error {
	ps := &problems{}
	for _, p := range validate(c, nil) {
		ps.add(p)
	}
	return ps.err()
}

// validate returns the problems of c, placed at the file and line each value
// came from when s knows it.
func validate(c *Config, s *Sources) []Problem {
	var out []Problem
	at := func(key, msg, acc string) {
		o := s.lookup(key)
		out = append(out, Problem{File: o.problemFile(), Line: o.line, Key: key, Message: msg, Accepted: acc})
	}
	// The first key of a rule between values that a user set is where the
	// problem is reported: that is the line they will edit.
	atFirstSet := func(keys []string, msg, acc string) {
		key := keys[0]
		for _, k := range keys {
			if s.lookup(k).layer != layerDefault {
				key = k
				break
			}
		}
		at(key, msg, acc)
	}

	walkLeaves(reflect.ValueOf(c).Elem(), "", field{}, func(key string, v reflect.Value, f field) {
		sp, ok := specForExact(key)
		if !ok {
			return
		}
		if sp.check != nil {
			if msg := sp.check(v.Interface()); msg != "" {
				at(key, msg, sp.accepted)
			}
		}
		if sp.each != nil {
			for i := range v.Len() {
				if msg := sp.each(v.Index(i).String()); msg != "" {
					at(join(key, strconv.Itoa(i)), msg, sp.accepted)
				}
			}
		}
	})

	for _, name := range RoleNames() {
		r, ok := c.Roles[name]
		key := "roles." + name
		if !ok {
			at("roles", "role "+name+" is missing", joinAccepted(RoleNames()))
			continue
		}
		if name == RolePlanner {
			if (r.Provider == "") != (r.Model == "") {
				atFirstSet([]string{key + ".provider", key + ".model"}, "the planner needs both provider and model, or neither (then it is the primary)", "provider and model set together, or both empty")
				continue
			}
		} else {
			if r.Provider == "" {
				at(key+".provider", "must not be empty", "ollama, openrouter, openai")
			}
			if r.Model == "" {
				at(key+".model", "must not be empty", "a non-empty string")
			}
		}
		if r.Provider == ProviderOpenAI && r.BaseURL == "" {
			atFirstSet([]string{key + ".provider", key + ".base_url"}, "provider openai needs base_url (the server's /v1 URL)", "an http:// or https:// URL")
		}
		if r.NumCtx > 0 && r.MaxNumCtx > 0 && r.NumCtx > r.MaxNumCtx {
			atFirstSet([]string{key + ".num_ctx", key + ".max_num_ctx"},
				fmt.Sprintf("num_ctx %d is above max_num_ctx %d", r.NumCtx, r.MaxNumCtx), "num_ctx <= max_num_ctx")
		}
	}
	for name := range c.Roles {
		if !slices.Contains(RoleNames(), name) {
			at("roles."+name, "unknown role", joinAccepted(RoleNames()))
		}
	}
	labels, _ := fieldByName(reflect.TypeFor[Limits](), "token_budgets")
	for _, l := range labels.keys {
		if _, ok := c.Limits.TokenBudgets[l]; !ok {
			at("limits.token_budgets", "label "+l+" is missing", joinAccepted(labels.keys))
		}
	}
	for l := range c.Limits.TokenBudgets {
		if !slices.Contains(labels.keys, l) {
			at("limits.token_budgets."+l, "unknown label", joinAccepted(labels.keys))
		}
	}

	if c.Retry.MaxBackoff < c.Retry.InitialBackoff {
		atFirstSet([]string{"retry.max_backoff", "retry.initial_backoff"},
			fmt.Sprintf("max_backoff %s is below initial_backoff %s", formatDuration(c.Retry.MaxBackoff), formatDuration(c.Retry.InitialBackoff)),
			"max_backoff >= initial_backoff")
	}
	sup := c.Supervisors
	for _, p := range []struct {
		name     string
		interval int
	}{{"code_style", sup.CodeStyle.Interval}, {"internaliser", sup.Internaliser.Interval}} {
		if sup.Convergence.MaxInterval < p.interval && p.interval >= 1 && sup.Convergence.MaxInterval >= 1 {
			atFirstSet([]string{"supervisors.convergence.max_interval", "supervisors." + p.name + ".interval"},
				fmt.Sprintf("max_interval %d is below %s.interval %d", sup.Convergence.MaxInterval, p.name, p.interval),
				"max_interval >= every supervisor's interval")
		}
	}

	validateCLI(c, at, atFirstSet)

	seen := map[string]int{}
	for i, g := range c.Gates {
		if g.Name == "" {
			continue // reported by the name's own check
		}
		if j, dup := seen[g.Name]; dup {
			at(fmt.Sprintf("gates.%d.name", i), fmt.Sprintf("gate %q is already gates.%d", g.Name, j), "a name no other gate has")
			continue
		}
		seen[g.Name] = i
	}
	return out
}

// walkLeaves calls fn for every leaf of v with its dotted key: scalars, string
// lists, options maps, and the fields of each list element and map value.
func walkLeaves(v reflect.Value, key string, f field, fn func(key string, v reflect.Value, f field)) {
	t := v.Type()
	switch {
	case t.Kind() == reflect.Struct:
		for _, sf := range fieldsOf(t) {
			walkLeaves(v.Field(sf.index), join(key, sf.name), sf, fn)
		}
	case t.Kind() == reflect.Map && !isFreeMap(t):
		for _, k := range mapKeysInOrder(v, f) {
			walkLeaves(v.MapIndex(reflect.ValueOf(k)), join(key, k), field{}, fn)
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		for i := range v.Len() {
			walkLeaves(v.Index(i), join(key, strconv.Itoa(i)), field{}, fn)
		}
	default:
		fn(key, v, f)
	}
}
