#!/usr/bin/env bash
# Regenerates the lock files with uv (pinned below): export.lock from export.in for
# PYTHON_VERSION (3.11), every job that runs ExecuTorch, and CI; mtk-py310.lock from mtk.in
# for MTK_PYTHON_VERSION (3.10), the MediaTek tool venv.
# Resolved for Linux x86-64 as of ExecuTorch 1.4.0's release day, so each distribution is at
# the version 1.4.0 was released and tested with. docs/PLAN.md says how the lock serves both
# PyPI's CUDA torch wheel and PyTorch's CPU index.
set -euo pipefail
cd "$(dirname "$0")"
UV_VERSION=0.9.5
RELEASED=2026-09-23   # the day after ExecuTorch 1.5.1 reached PyPI (2026-09-22T17:41Z)
if ! uv --version 2>/dev/null | grep -q "^uv $UV_VERSION"; then
  python3 -m pip install --quiet "uv==$UV_VERSION"
fi
lock() { # in python-version out
  uv pip compile "$1" --quiet --python-version "$2" --python-platform x86_64-manylinux_2_28 \
    --exclude-newer "$RELEASED" --custom-compile-command "python/lock.sh" -o "$3"
}
lock export.in 3.11 export.lock
lock mtk.in 3.10 mtk-py310.lock
