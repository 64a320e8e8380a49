#!/usr/bin/env bash
# Installs the locked export environment (python/export.lock) into a virtualenv in a folder
# keyed by the lock's hash, with the transformers overlay (python/overlay.lock) in its
# overlay/transformers, and prints that environment's python on stdout. A machine that
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
# overlay installs python/overlay.lock into $venv/overlay/transformers, replaced whenever
# that lock changes (the hash it was made from is kept beside it).
overlay() {
  local lock=$here/overlay.lock dir=$venv/overlay/transformers
  local want
  want=$(sha256sum "$lock" | cut -c1-16)
  if [ "$(cat "$dir/.complete" 2>/dev/null)" = "$want" ]; then
    return
  fi
  echo "python/install.sh: installing overlay.lock $want into $dir" >&2
  rm -rf "$dir"
  "$venv/bin/python" -m pip install --no-deps --require-hashes --progress-bar off --disable-pip-version-check \
    --target "$dir" -r "$lock" >&2
  PYTHONPATH=$dir "$venv/bin/python" -c "import transformers; print('python/install.sh: overlay transformers', transformers.__version__)" >&2
  echo "$want" >"$dir/.complete"
}
if [ -f "$venv/.complete" ]; then
  echo "python/install.sh: $venv holds export.lock $hash already" >&2
  overlay
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
overlay
echo "$venv/bin/python"
