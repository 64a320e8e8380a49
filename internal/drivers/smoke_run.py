"""Run an exported .pte through ExecuTorch's text LLM runner, the runner the app uses, and
report what it generated (internal/smoke decides whether that is an answer).

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout).
The prompt is the model's chat template applied to the question (from the source folder's
tokenizer config, with transformers); when that fails the completion prompt is used and
the failure recorded. Greedy, echo off, no BOS or EOS added (the template has them).

Plan: {"pte": path, "tokenizer": path, "source": folder or null, "question": text,
       "completion": text with {question}, "max_new_tokens": n}
Result: {"prompt", "template_error", "tokens": [piece], "reply", "runner_error", "stats"}
Error: {"error": message, "file": path or null} on stdout, exit status 1.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)


class PlanError(Exception):
    def __init__(self, message, file=None):
        super().__init__(message)
        self.file = file


def render(plan):
    """The chat template's prompt, or the completion prompt and why the template failed."""
    question = plan["question"]
    try:
        if not plan.get("source"):
            raise ValueError("no source folder to read a chat template from")
        driver_io.transformers_for(plan["source"])
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(plan["source"])
        messages = [{"role": "user", "content": question}]
        return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True), ""
    except Exception as e:  # any failure falls back, recorded
        return plan["completion"].replace("{question}", question), "%s: %s" % (type(e).__name__, e)


def load_runner():
    """The runner with the custom ops (llama::custom_sdpa, update_cache) and quantized kernels
    (quantized_decomposed::embedding_byte) registered first, as the app's build links them."""
    import executorch.extension.pybindings.portable_lib  # noqa: F401
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401
    import executorch.kernels.quantized  # noqa: F401
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner
    return TextLLMRunner, GenerationConfig


def run(plan):
    for key in ("pte", "tokenizer"):
        if not os.path.isfile(plan[key]):
            raise PlanError("%s %s does not exist" % (key, plan[key]), plan[key])
    TextLLMRunner, GenerationConfig = load_runner()
    prompt, template_error = render(plan)
    tokens, stats, runner_error = [], None, ""
    try:
        runner = TextLLMRunner(plan["pte"], plan["tokenizer"])
        config = GenerationConfig(echo=False, max_new_tokens=int(plan["max_new_tokens"]),
                                  temperature=0.0, num_bos=0, num_eos=0)
        holder = {}
        runner.generate(prompt, config, token_callback=tokens.append,
                        stats_callback=lambda s: holder.update(stats=json.loads(s.to_json_string())))
        stats = holder.get("stats")
    except Exception as e:  # the runner's failure is a finding, not a driver error
        runner_error = "%s: %s" % (type(e).__name__, e)
    return {"prompt": prompt, "template_error": template_error, "tokens": tokens,
            "reply": "".join(tokens), "runner_error": runner_error, "stats": stats}


if __name__ == "__main__":
    sys.exit(driver_io.serve(run, PlanError, "file"))
