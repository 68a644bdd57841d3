#!/usr/bin/env bash
# Regenerates internal/redact/testdata/gitleaks-corpus.jsonl.gz: the true- and
# false-positive test strings of gitleaks' own rules (the tps/fps lists in its
# cmd/generate/config/rules/*.go), one JSON object per rule. It copies the
# gitleaks module that go.mod pins out of the module cache, makes its rule
# validator also print each list, and runs the rule generator. Some strings
# are random (gitleaks draws them from each rule's pattern), so two runs
# differ; the committed file is one run. Path-only rules are left out: their
# strings are secrets only under a file name.
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
out=${1:-internal/redact/testdata/gitleaks-corpus.jsonl.gz}
mod=github.com/zricethezav/gitleaks/v8
ver=$($go list -m -f '{{.Version}}' $mod)
src=$($go list -m -f '{{.Dir}}' $mod)
[ -n "$src" ] || { $go mod download $mod; src=$($go list -m -f '{{.Dir}}' $mod); }
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/gitleaks"
chmod -R u+w "$tmp/gitleaks"
cd "$tmp/gitleaks/cmd/generate/config"
# Record the lists before validating them.
cat > utils/corpus.go <<'GO'
package utils

import (
	"encoding/json"
	"os"
)

func recordCorpus(rule string, tps, fps []string) {
	f, err := os.OpenFile(os.Getenv("CORPUS_OUT"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(map[string]any{"rule": rule, "tps": tps, "fps": fps}); err != nil {
		panic(err)
	}
}
GO
sed -i 's/^func Validate(rule config.Rule, truePositives \[\]string, falsePositives \[\]string) \*config.Rule {$/&\n\trecordCorpus(rule.RuleID, truePositives, falsePositives)/' utils/validate.go
grep -q recordCorpus utils/validate.go || { echo "gitleaks-corpus: could not patch utils/validate.go of $mod $ver" >&2; exit 1; }
CORPUS_OUT="$tmp/corpus.jsonl" GOFLAGS=-mod=mod $go run . "$tmp/gitleaks.toml" >/dev/null
cd - >/dev/null
gzip -9n < "$tmp/corpus.jsonl" > "$out"
echo "gitleaks-corpus: $(wc -l < "$tmp/corpus.jsonl") rules from $mod $ver -> $out"
