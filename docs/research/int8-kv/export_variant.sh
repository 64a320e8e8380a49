#!/usr/bin/env bash
# export_variant.sh NAME WINDOW SEQ BACKEND [hydra overrides...]
# Runs ExecuTorch 1.5.1's export_llm on exe-expo's own export_llm.yaml (the one written by
# internal/backend/exportllm/recipe.go, kept with --keep-work and copied to $BASE), with the
# window, prefill length, backend and any extra overrides, into $OUT/NAME/NAME.pte.
# BASE holds export_llm.yaml, params.json, consolidated.pth; PY is the locked venv python.
set -euo pipefail
name=$1 window=$2 seq=$3 backend=$4; shift 4
: "${BASE:=/tmp/k35/base}" "${OUT:=/tmp/k35/runs}"
: "${PY:=/opt/exe-expo/python/8bc1c77716936acf/bin/python}"
dir=$OUT/$name; mkdir -p "$dir"; cd "$dir"
sed -e "s#^  params: .*#  params: $BASE/params.json#" \
    -e "s#^  checkpoint: .*#  checkpoint: $BASE/consolidated.pth#" \
    -e "s#^  output_name: .*#  output_name: $dir/$name.pte#" "$BASE/export_llm.yaml" > export_llm.yaml
case $backend in
  xnnpack) be=(backend.xnnpack.enabled=true backend.xnnpack.extended_ops=true backend.vulkan.enabled=false) ;;
  vulkan)  be=(backend.xnnpack.enabled=false backend.xnnpack.extended_ops=false backend.vulkan.enabled=true) ;;
esac
start=$(date +%s)
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} PYTHONUNBUFFERED=1 "$PY" -m executorch.extension.llm.export.export_llm \
  --config "$dir/export_llm.yaml" export.max_context_length="$window" export.max_seq_length="$seq" "${be[@]}" "$@" \
  > export.log 2>&1 && rc=0 || rc=$?
echo "$name rc=$rc seconds=$(( $(date +%s) - start )) overrides: window=$window seq=$seq $backend $*" | tee -a "$OUT/runs.txt"
exit $rc
