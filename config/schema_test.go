package config

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestEveryKeyHasASpecAndEverySpecAKey(t *testing.T) {
	t.Parallel()
	patterns := map[string]bool{}
	for _, sk := range schemaKeys() {
		patterns[sk.pattern] = true
		if _, ok := specForExact(sk.pattern); !ok && !sk.container {
			t.Errorf("key %s has no spec in keys.go: document it", sk.pattern)
		}
	}
	for _, sp := range specs() {
		if !patterns[sp.key] {
			t.Errorf("spec %s names no key of Config", sp.key)
		}
		if sp.doc == "" {
			t.Errorf("spec %s has no doc", sp.key)
		}
	}
}

func TestDefaultIsValid(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate():\n%v", err)
	}
}

func TestListsSayHowTheyMergeAndMapsWhichKeysTheyAccept(t *testing.T) {
	t.Parallel()
	d := reflect.ValueOf(Default()).Elem()
	for _, sk := range schemaKeys() {
		if strings.Contains(sk.pattern, "*") {
			continue
		}
		switch {
		case sk.typ.Kind() == reflect.Slice:
			if sk.field.merge != "append" && sk.field.merge != "replace" {
				t.Errorf("list %s has merge %q, want append or replace", sk.pattern, sk.field.merge)
			}
			if sk.field.merge == "append" && sk.typ.Elem().Kind() != reflect.String {
				t.Errorf("list %s appends but does not hold strings", sk.pattern)
			}
		case sk.typ.Kind() == reflect.Map && !isFreeMap(sk.typ):
			v := valueAt(d.Addr().Interface().(*Config), sk.pattern)
			var got []string
			for _, k := range v.MapKeys() {
				got = append(got, k.String())
			}
			sort.Strings(got)
			want := slices.Clone(sk.field.keys)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("map %s: Default() has keys %v, the keys tag says %v", sk.pattern, got, want)
			}
		}
	}
}

func TestValidateWithoutSources(t *testing.T) {
	t.Parallel()
	c := Default()
	delete(c.Roles, "embedding")
	c.Roles["critic"] = Role{Provider: "ollama", Model: "x", Timeout: 1}
	c.Limits.MaxTasks = 0
	c.Gates = []Gate{{Name: "t"}}
	err := c.Validate()
	ps := problemsOf(t, err)
	var keys []string
	for _, p := range ps {
		if p.File != "" || p.Line != 0 {
			t.Errorf("problem %v names a source the config does not have", p)
		}
		keys = append(keys, p.Key)
	}
	want := []string{"gates.0.command", "limits.max_tasks", "roles", "roles.critic"}
	sort.Strings(keys)
	if !slices.Equal(keys, want) {
		t.Errorf("problem keys = %v, want %v\n%v", keys, want, err)
	}
}

func TestValidateChecksOptionsAndTokenBudgetLabels(t *testing.T) {
	t.Parallel()
	c := Default()
	delete(c.Limits.TokenBudgets, "qa")
	c.Limits.TokenBudgets["critic"] = 1000
	ps := problemsOf(t, c.Validate())
	if len(ps) != 2 || ps[0].Key != "limits.token_budgets" || !strings.Contains(ps[0].Message, "qa is missing") ||
		ps[1].Key != "limits.token_budgets.critic" {
		t.Errorf("problems = %v", ps)
	}
}

func TestClosestSuggestsOnlyLikelyTypos(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"modle", "model"},
		{"primray", "primary"},
		{"olama", "ollama"},
		{"foo", ""},
		{"MAX_TASKS", "max_tasks"},
		{"completely_different", ""},
	} {
		if got := closest(tc.in, []string{"model", "primary", "ollama", "log", "max_tasks"}); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMatchPattern(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, key string
		want         bool
	}{
		{"roles.*.model", "roles.primary.model", true},
		{"roles.*.model", "roles.primary.models", false},
		{"roles.*.model", "roles.primary", false},
		{"roles.*", "roles.primary.model", false},
		{"roles.*", "roles.primary", true},
		{"offline", "offline", true},
		{"offline", "offline.x", false},
		{"*", "anything", true},
		{"gates.*.name", "gates.10.name", true},
		{"a.b", "a.c", false},
	} {
		if got := matchPattern(tc.pattern, tc.key); got != tc.want {
			t.Errorf("matchPattern(%q, %q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
		}
	}
}
