"""Prefill one prompt through an export_llm .pte three ways and report what each gave.

exe-expo test support (never shipped): JSON plan as the first argument, JSON result on the
last stdout line.

1. The program through its KV cache in chunks of get_max_seq_len tokens (the stock
   TextLLMRunner's chunk), then `steps` greedy tokens one a call.
2. The same program, the prompt one token a call, then the same greedy steps.
3. ExecuTorch's TextLLMRunner (the app's runner) on the prompt's text, greedy.

Plan: {"pte": path, "tokenizer": tokenizer.json, "prompt": text, "steps": n}
Result: {"max_seq_len", "max_context_len", "dynamic", "token_bound": forward's largest token
         input, "prompt_tokens", "chunked": {"greedy": [ids], "error"}, "single": {...},
         "kl": KL(single || chunked) at the prompt's last position, "max_abs": |logit diff|,
         "runner": {"error", "prompt_tokens", "generated", "reply"}}
"""

import json
import sys


def greedy(torch, m, ids, chunk, steps):
    """The prompt in calls of at most chunk tokens, then steps greedy tokens; the last
    prompt position's logits and the greedy ids."""
    pos, out = 0, None
    while pos < len(ids):
        part = ids[pos:pos + chunk]
        out = m.forward((torch.tensor([part], dtype=torch.long), torch.tensor([pos], dtype=torch.long)))[0]
        pos += len(part)
    last = out.reshape(-1, out.shape[-1])[-1].double()
    tokens, logits = [], last
    for _ in range(steps):
        tok = int(torch.argmax(logits))
        tokens.append(tok)
        out = m.forward((torch.tensor([[tok]], dtype=torch.long), torch.tensor([pos], dtype=torch.long)))[0]
        logits = out.reshape(-1, out.shape[-1])[-1].double()
        pos += 1
    return last, tokens


def run_runner(plan):
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner
    # No token callback: the binding decodes each piece to str before calling it and raises
    # UnicodeDecodeError on a piece inside a UTF-8 character (a random tiny model's reply
    # often is); the runner's own figures are what this check reads.
    holder = {}
    try:
        r = TextLLMRunner(plan["pte"], plan["tokenizer"])
        cfg = GenerationConfig(echo=False, max_new_tokens=int(plan["steps"]), temperature=0.0, num_bos=0, num_eos=0)
        r.generate(plan["prompt"], cfg, token_callback=None,
                   stats_callback=lambda s: holder.update(stats=json.loads(s.to_json_string())))
        err = ""
    except Exception as e:  # the finding the test asserts on
        err = "%s: %s" % (type(e).__name__, e)
    st = holder.get("stats") or {}
    return {"error": err, "prompt_tokens": st.get("prompt_tokens", 0), "generated": st.get("generated_tokens", 0)}


def main():
    plan = json.loads(sys.argv[1])
    import torch
    from tokenizers import Tokenizer
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401
    import executorch.kernels.quantized  # noqa: F401

    ids = Tokenizer.from_file(plan["tokenizer"]).encode(plan["prompt"], add_special_tokens=False).ids
    m = _load_for_executorch(plan["pte"])
    seq = int(m.run_method("get_max_seq_len", ())[0])
    res = {"max_seq_len": seq, "max_context_len": int(m.run_method("get_max_context_len", ())[0]),
           "dynamic": bool(m.run_method("enable_dynamic_shape", ())[0]),
           "token_bound": int(list(m.method_meta("forward").input_tensor_meta(0).sizes())[1]),
           "prompt_tokens": len(ids)}
    lasts = {}
    with torch.no_grad():
        for name, chunk in (("chunked", seq), ("single", 1)):
            try:
                last, toks = greedy(torch, _load_for_executorch(plan["pte"]), ids, chunk, int(plan["steps"]))
                lasts[name] = last
                res[name] = {"greedy": toks, "error": ""}
            except Exception as e:
                res[name] = {"greedy": [], "error": "%s: %s" % (type(e).__name__, e)}
        if len(lasts) == 2:
            p, q = torch.log_softmax(lasts["single"], -1), torch.log_softmax(lasts["chunked"], -1)
            res["kl"] = float((p.exp() * (p - q)).sum())
            res["max_abs"] = float((lasts["single"] - lasts["chunked"]).abs().max())
    res["runner"] = run_runner(plan)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
