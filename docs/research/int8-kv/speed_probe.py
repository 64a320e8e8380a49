"""Decode speed through TextLLMRunner (the app's runner): a long prompt, then new tokens, temperature 0."""
import json, sys, time
import executorch.extension.pybindings.portable_lib  # noqa
import executorch.extension.llm.custom_ops.custom_ops  # noqa
import executorch.kernels.quantized  # noqa
from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner
tok, text_path, prompt_chars, new, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
text = "".join(l for l in open(text_path) if not l.startswith("#"))[:prompt_chars]
for rep in range(reps):
    for pte in sys.argv[6:]:
        r = TextLLMRunner(pte, tok)
        cfg = GenerationConfig(echo=False, max_new_tokens=new, temperature=0.0, num_bos=0, num_eos=0)
        h = {}
        out = []
        r.generate(text, cfg, token_callback=out.append, stats_callback=lambda s: h.update(s=json.loads(s.to_json_string())))
        s = h["s"]
        gen_ms = s["inference_end_ms"] - s["prompt_eval_end_ms"]
        pre_ms = s["prompt_eval_end_ms"] - s["inference_start_ms"]
        print("%s rep %d: prompt %d tokens in %d ms; %d new tokens in %d ms = %.1f tok/s" % (
            pte.split("/")[-1], rep, s["num_prompt_tokens"], pre_ms, s["num_generated_tokens"], gen_ms,
            1000.0 * s["num_generated_tokens"] / max(gen_ms, 1)), flush=True)
