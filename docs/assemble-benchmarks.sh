#!/usr/bin/env bash
# Rebuilds docs/benchmarks.md from docs/benchmarks.d/*.md (one section per area).
set -euo pipefail
cd "$(dirname "$0")"
for f in benchmarks.d/*.md; do cat "$f"; echo; done > benchmarks.md
