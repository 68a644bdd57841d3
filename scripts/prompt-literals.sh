#!/usr/bin/env bash
# Counts how the scripted teams (demo, eval, internal/suptest, llm/llmtest and
# the tests) find lemmings' prompt sections and roles: by literal text or by
# a named constant (issue 27). Usage: scripts/prompt-literals.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
where=(':(glob)demo/**/*.go' ':(glob)eval/**/*.go' ':(glob)internal/suptest/*.go' ':(glob)llm/llmtest/*.go' ':(glob)**/*_test.go' ':!llm/compose_test.go' ':!llm/llmtest/prompt_test.go')
count() { git grep -hoE "$1" -- "${where[@]}" | wc -l; }
echo "section lookups by literal title:  $(count 'Section\([^,()]+(\([^()]*\))?[^,()]*, *"[A-Z][^"]*"\)')"
echo "section lookups by constant:       $(count 'Section\([^,()]+(\([^()]*\))?[^,()]*, *[a-z]*\.?Sec[A-Z][A-Za-z]*\)')"
echo "\"## TITLE\" literals of prompts:    $(git grep -hoE '"## [A-Z][A-Z -]{2,}' -- "${where[@]}" | grep -cvE '## (TITLE|Rules|Failed|Tokens|Time|Graph|Escalations|Open|Team|Toolchain|Totals|Exercises|Two)' || true)"
echo "role markers as literal text:      $(count '"(You are the [A-Z][A-Za-z ]+|You summarise a finished coding task|BOOTSTRAP MODE|BOOTSTRAP)"')"
echo "roles compared by literal name:    $(count '(Role\(\)|RoleOf\([^)]*\)) *[!=]= *"[a-z_]+"')"
echo "roles compared by constant:        $(count '(Role\(\)|RoleOf\([^)]*\)) *[!=]= *[a-z]+\.[A-Z][A-Za-z]+')"
roles='"(scope_agent|task_planner|implementor|implementor_cli|qa|assessor|summarizer|code_style|design|internaliser|architect|doctor)"'
echo "roles switched on by literal name: $(git grep -hoE "case $roles(, *$roles)*:" -- "${where[@]}" | grep -oE "$roles" | wc -l)"
