"""Measure how fast an exported .pte runs through ExecuTorch's text LLM runner (the runner
the app uses) on prompts cut from a fixed text, and how much memory it holds once loaded
(internal/speed turns the runner's stats into figures and decides what they mean).

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout).
Each prompt is the text's first N tokens as the file's tokenizer counts them (the text
repeated when it is shorter), run greedily with echo off and no BOS or EOS added, after a
one-token warm-up call that loads the program, each from an empty cache (reset).

Plan: {"pte": path, "tokenizer": path, "text": text, "prompts": [{"name", "tokens"}],
       "max_new_tokens": n}
Result: {"load_seconds", "rss_after_load_bytes", "runner_error",
         "runs": [{"name", "runner_error", "stats"}]}
Error: {"error": message, "file": path or null} on stdout, exit status 1.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)
from smoke_run import load_runner  # noqa: E402  (the smoke driver, beside this script)


class PlanError(Exception):
    def __init__(self, message, file=None):
        super().__init__(message)
        self.file = file


def tokenizer(path):
    """encode(text) -> ids and decode(ids) -> text with the file's tokenizer: ExecuTorch's
    own (pytorch_tokenizers, as the runner reads it), else the tokenizers library's."""
    try:
        from pytorch_tokenizers import get_tokenizer
        tok = get_tokenizer(path)
        return (lambda s: list(tok.encode(s, bos=0, eos=0))), (lambda ids: tok.decode(ids))
    except Exception:  # noqa: BLE001  (the next reader is tried)
        pass
    try:
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(path)
        return (lambda s: tok.encode(s, add_special_tokens=False).ids), (lambda ids: tok.decode(ids))
    except Exception as e:  # noqa: BLE001
        raise PlanError("neither pytorch_tokenizers nor tokenizers reads %s: %s: %s" % (path, type(e).__name__, e), path)


def cut(text, n, encode, decode):
    """The text's first n tokens as a string that encodes to n tokens or a few fewer."""
    ids = encode(text)
    if not ids:
        raise PlanError("the text encodes to no token")
    while len(ids) < n:
        ids = ids + ids
    prompt = decode(ids[:n])
    over = len(encode(prompt)) - n
    if over > 0:
        prompt = decode(ids[:n - over])
    return prompt


def rss_bytes():
    """This process's resident memory now (VmRSS), or its peak where /proc is absent."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def loaded(plan, TextLLMRunner, GenerationConfig):
    """A runner with the file loaded, how long that took, and the memory after it. The
    binding has no load(): the runner loads the program, and allocates its KV cache, on its
    first generate, so a one-token warm-up call does it, and reset() empties the cache."""
    start = time.monotonic()
    runner = TextLLMRunner(plan["pte"], plan["tokenizer"])
    warm = GenerationConfig(echo=False, max_new_tokens=1, temperature=0.0, num_bos=0, num_eos=0, warming=True)
    runner.generate(plan["warmup"], warm)
    seconds = time.monotonic() - start
    return runner, seconds, rss_bytes()


def measure(runner, prompt, GenerationConfig, max_new_tokens):
    config = GenerationConfig(echo=False, max_new_tokens=max_new_tokens, temperature=0.0, num_bos=0, num_eos=0)
    holder = {}
    runner.reset()
    runner.generate(prompt, config, token_callback=None,
                    stats_callback=lambda s: holder.update(stats=json.loads(s.to_json_string())))
    return holder.get("stats")


def run(plan):
    for key in ("pte", "tokenizer"):
        if not os.path.isfile(plan[key]):
            raise PlanError("%s %s does not exist" % (key, plan[key]), plan[key])
    encode, decode = tokenizer(plan["tokenizer"])
    prompts = [(p["name"], cut(plan["text"], int(p["tokens"]), encode, decode)) for p in plan["prompts"]]
    plan["warmup"] = cut(plan["text"], 1, encode, decode)
    TextLLMRunner, GenerationConfig = load_runner()
    out = {"load_seconds": 0.0, "rss_after_load_bytes": 0, "runner_error": "", "runs": []}
    try:
        runner, out["load_seconds"], out["rss_after_load_bytes"] = loaded(plan, TextLLMRunner, GenerationConfig)
    except Exception as e:  # the runner's failure is a finding, not a driver error
        out["runner_error"] = "%s: %s" % (type(e).__name__, e)
        return out
    for name, prompt in prompts:
        try:
            stats, error = measure(runner, prompt, GenerationConfig, int(plan["max_new_tokens"])), ""
        except Exception as e:  # noqa: BLE001
            stats, error = None, "%s: %s" % (type(e).__name__, e)
        out["runs"].append({"name": name, "runner_error": error, "stats": stats})
    return out


if __name__ == "__main__":
    sys.exit(driver_io.serve(run, PlanError, "file"))
