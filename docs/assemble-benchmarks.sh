#!/usr/bin/env bash
# Rebuilds docs/benchmarks.md from docs/benchmarks.d/*.md (one section per area). A line
# "<!-- include: PATH -->" (PATH relative to docs/) is replaced by that file, so generated
# tables (the sizing accuracy table) are never copied by hand.
set -euo pipefail
cd "$(dirname "$0")"
for f in benchmarks.d/*.md; do
  while IFS= read -r line; do
    if [[ $line =~ ^\<!--\ include:\ (.+)\ --\>$ ]]; then
      cat "${BASH_REMATCH[1]}"
    else
      printf '%s\n' "$line"
    fi
  done < "$f"
  echo
done > benchmarks.md
