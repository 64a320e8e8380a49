"""Compare ExecuTorch's own eager model, built from exe-expo's converted checkpoint as the
export builds it, with the transformers model it came from, on the same tokens.

Usage: conversion_check.py EXPORT_LLM_YAML HF_FOLDER TOKEN_IDS_JSON
The yaml is the one the export ran (the work folder's export_llm.yaml); it is read as
export_llm reads it (OmegaConf's strict merge into LlmConfig) and changed only so the model
returns every position's logits without a KV cache and unquantized. Prints one JSON line:
{"positions", "vocab", "max_abs_diff", "max_abs_logit", "argmax_agree"}.
"""

import json
import os
import sys

# Qwen3.5's transformers class is in the overlay python/install.sh adds (python/overlay.lock);
# it must come first on the path before anything imports transformers.
with open(os.path.join(sys.argv[2], "config.json")) as _f:
    if json.load(_f).get("model_type") == "qwen3_5":
        sys.path.insert(0, os.path.join(sys.prefix, "overlay", "transformers"))

import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from executorch.examples.models.llama.model import Llama2Model  # noqa: E402
from executorch.extension.llm.export.config.llm_config import LlmConfig  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402


def main():
    yaml, hf, tokens = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    cfg = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(LlmConfig), OmegaConf.load(yaml)))
    cfg.model.use_kv_cache = False
    cfg.model.use_sdpa_with_kv_cache = False
    cfg.model.enable_dynamic_shape = False
    cfg.debug.generate_full_logits = True
    cfg.quantization.qmode = None
    cfg.quantization.embedding_quantize = None
    cfg.export.max_seq_length = max(len(tokens), 8)
    cfg.export.max_context_length = max(len(tokens), 8)
    et = Llama2Model(llm_config=cfg).get_eager_model().to(torch.float32).eval()
    ref = AutoModelForCausalLM.from_pretrained(hf, dtype=torch.float32).eval()
    ids = torch.tensor([tokens], dtype=torch.long)
    with torch.no_grad():
        got = et(ids)
        got = got[0] if isinstance(got, tuple) else got
        want = ref(ids).logits
    got, want = got.reshape(want.shape).double(), want.double()
    print(json.dumps({
        "positions": int(want.shape[1]), "vocab": int(want.shape[2]),
        "max_abs_diff": float((got - want).abs().max()),
        "max_abs_logit": float(want.abs().max()),
        "argmax_agree": float((got.argmax(-1) == want.argmax(-1)).double().mean()),
    }))


if __name__ == "__main__":
    main()
