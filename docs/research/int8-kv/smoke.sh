#!/usr/bin/env bash
# smoke.sh FILE.pte: exe-expo's own smoke driver (internal/drivers/smoke_run.py, copied from an
# export's --keep-work folder to $DRIVERS) on FILE.pte with the tiny model's tokenizer and chat
# template, the plan exe-expo smoke writes (greedy, 32 new tokens).
set -euo pipefail
: "${DRIVERS:=/tmp/k35/drivers}" "${MODEL:=/tmp/k35/model}" "${TOKENIZER:=/tmp/k35/tokenizer.json}"
: "${PY:=/opt/exe-expo/python/8bc1c77716936acf/bin/python}"
plan=$(mktemp)
printf '{"pte": "%s", "tokenizer": "%s", "source": "%s", "question": "What is the capital of France?", "completion": "Question: {question}\\nAnswer:", "max_new_tokens": 32}\n' \
  "$1" "$TOKENIZER" "$MODEL" > "$plan"
OMP_NUM_THREADS=1 "$PY" "$DRIVERS/smoke_run.py" "$plan" 2>/dev/null | tail -1
rm -f "$plan"
