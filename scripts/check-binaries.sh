#!/usr/bin/env bash
# Fails when a tracked file outside testdata/ is a binary larger than the
# limit (default 1 MiB): built programs belong in .gitignore, not in history.
# Binary means what git itself calls binary (a NUL byte, or .gitattributes),
# read from the index, so a file staged for commit counts.
# Usage: scripts/check-binaries.sh [limit-bytes]   (run inside the repository)
set -euo pipefail
limit=${1:-1048576}
cd "$(git rev-parse --show-toplevel)"
empty=$(git hash-object -t tree /dev/null)
bad=0
# --numstat prints "-<TAB>-" as the line counts of a binary file.
while IFS= read -r -d '' rec; do
  added=${rec%%$'\t'*}
  rest=${rec#*$'\t'}
  deleted=${rest%%$'\t'*}
  path=${rest#*$'\t'}
  [ "$added" = - ] && [ "$deleted" = - ] || continue
  case "/$path" in */testdata/*) continue ;; esac
  size=$(git cat-file -s ":$path")
  if [ "$size" -gt "$limit" ]; then
    echo "check-binaries: $path is a tracked binary of $size bytes (limit $limit outside testdata/): git rm --cached it and add it to .gitignore" >&2
    bad=1
  fi
done < <(git diff --cached --numstat -z --no-renames "$empty")
exit $bad
