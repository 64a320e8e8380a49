"""Stand-in for ExecuTorch's TextLLMRunner (extension/llm/runner, v1.4.0's signatures): it
refuses to run unless the custom ops and quantized kernels were imported first and the
generation config is the smoke run's (32 tokens) or the speed run's (64), and replies as
SMOKE_STANDIN says (a warm-up call, warming and one token, loads it and replies nothing);
a second call refuses to run until reset() emptied the cache. Its stats are a clock of 4 ms
per prompt token (50 ms in the "onetoken" mode: a file that prefills one token a call) and
50 ms per generated one."""

import json
import os
import sys

NEEDED = ("executorch.extension.pybindings.portable_lib",
          "executorch.extension.llm.custom_ops.custom_ops",
          "executorch.kernels.quantized")


class GenerationConfig:
    def __init__(self, echo=True, max_new_tokens=-1, warming=False, seq_len=-1, temperature=0.8, num_bos=0, num_eos=0):
        self.warming = warming
        self.echo, self.max_new_tokens, self.temperature = echo, max_new_tokens, temperature
        self.num_bos, self.num_eos = num_bos, num_eos


class Stats:
    def __init__(self, prompt_tokens, generated_tokens, ms_per_prompt_token=4):
        self.prompt_tokens, self.generated_tokens = prompt_tokens, generated_tokens
        self.prefill_ms = prompt_tokens * ms_per_prompt_token

    def to_json_string(self):
        # the shape of stats_to_json_string: rates first, then counts and timestamps
        start, end = 1000, 1000 + self.prefill_ms + 50 * self.generated_tokens
        return json.dumps({"prefill_token_per_sec": 250.0, "decode_token_per_sec": 20.0,
                           "prompt_tokens": self.prompt_tokens, "generated_tokens": self.generated_tokens,
                           "model_load_start_ms": 1, "model_load_end_ms": 2, "inference_start_ms": start,
                           "inference_end_ms": end, "prompt_eval_end_ms": start + self.prefill_ms,
                           "first_token_ms": start + self.prefill_ms, "aggregate_sampling_time_ms": 0,
                           "SCALING_FACTOR_UNITS_PER_SECOND": 1000})


class TextLLMRunner:
    def __init__(self, model_path, tokenizer_path, data_path=None):
        missing = [m for m in NEEDED if m not in sys.modules]
        if missing:
            raise RuntimeError("operators not registered: %s" % missing)
        self.model_path = model_path
        self.loaded, self.pos = False, 0

    def reset(self):
        self.pos = 0

    def generate(self, prompt, config, token_callback=None, stats_callback=None):
        want = (False, 0.0, 0, 0)
        got = (config.echo, config.temperature, config.num_bos, config.num_eos)
        if got != want or config.max_new_tokens not in (32, 64) and not (config.warming and config.max_new_tokens == 1):
            raise RuntimeError("generation config %s with %d new tokens, want %s with 32 or 64" % (got, config.max_new_tokens, want))
        if self.pos:
            raise RuntimeError("the cache holds %d tokens of the last prompt: reset() first" % self.pos)
        self.loaded = True
        mode = os.environ.get("SMOKE_STANDIN", "answer")
        if config.warming:
            return
        if mode == "raise":
            raise RuntimeError("method forward failed")
        pieces = {"answer": [" The", " capital", " is", " Paris", "."], "onetoken": [" The", " capital", " is", " Paris", "."],
                  "repeat": ["!"] * 32}[mode]
        for p in pieces:
            if token_callback is not None:  # the binding takes None: no pieces handed out
                token_callback(p)
        self.pos = len(prompt.split()) + len(pieces)
        stats_callback(Stats(len(prompt.split()), len(pieces), 50 if mode == "onetoken" else 4))
