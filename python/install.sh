#!/usr/bin/env bash
# Installs the locked export environment (python/export.lock) into a virtualenv in a folder
# keyed by the lock's hash, and prints that environment's python on stdout. A machine that
# has the folder already (finished: it holds .complete) skips the download.
#
#   EXE_EXPO_PYTHON=$(python/install.sh [ROOT])     ROOT: default /opt/exe-expo/python
#
# The lock pins every distribution exactly, so pip installs it with --no-deps: nothing
# unpinned can come in. PyPI's torch for Linux x86-64 is the CUDA build; the lock pins its
# nvidia-* wheels too, and it runs on the CPU (docs/PLAN.md, "The locked environment").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock=$here/export.lock
root=${1:-/opt/exe-expo/python}
python=${PYTHON311:-python3.11}
hash=$(sha256sum "$lock" | cut -c1-16)
venv=$root/$hash
if [ -f "$venv/.complete" ]; then
  echo "python/install.sh: $venv holds export.lock $hash already" >&2
  echo "$venv/bin/python"
  exit 0
fi
echo "python/install.sh: installing export.lock $hash into $venv" >&2
rm -rf "$venv"
mkdir -p "$root"
"$python" -m venv "$venv" >&2
"$venv/bin/python" -m pip install --no-deps --progress-bar off --disable-pip-version-check -r "$lock" >&2
"$venv/bin/python" -c "from importlib.metadata import version as v; print('python/install.sh: executorch', v('executorch'), 'torch', v('torch'), 'torchao', v('torchao'), 'transformers', v('transformers'))" >&2
touch "$venv/.complete"
echo "$venv/bin/python"
