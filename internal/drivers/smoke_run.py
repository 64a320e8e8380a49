"""Run an exported .pte through ExecuTorch's text LLM runner, the runner the app uses, and
report what it generated (internal/smoke decides whether that is an answer).

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout).
The prompt is the model's chat template applied to the question (from the source folder's
tokenizer config, with transformers); when that fails the completion prompt is used and
the failure recorded. Greedy, echo off, no BOS or EOS added (the template has them).

The binding hands each generated piece to Python as str, and a piece that is part of a
UTF-8 sequence (a byte-level BPE token of a multi-byte character) raises UnicodeDecodeError
there, which the app never sees: its JNI layer buffers the bytes until a character is whole.
Then the runner runs again without a token callback (its stats, and proof it runs to the
end), and the reply is the same greedy generation through the program, its token ids
decoded by the tokenizer with incomplete characters held back as the app holds them
("reply_from": "program"; otherwise "runner").

Plan: {"pte": path, "tokenizer": path, "source": folder or null, "question": text,
       "completion": text with {question}, "max_new_tokens": n}
Result: {"prompt", "template_error", "tokens": [piece], "reply", "reply_from", "runner_error",
         "stats"}
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


def generate(plan, prompt, with_tokens):
    """One TextLLMRunner run: the pieces (when with_tokens) and the stats JSON."""
    TextLLMRunner, GenerationConfig = load_runner()
    runner = TextLLMRunner(plan["pte"], plan["tokenizer"])
    config = GenerationConfig(echo=False, max_new_tokens=int(plan["max_new_tokens"]),
                              temperature=0.0, num_bos=0, num_eos=0)
    tokens, holder = [], {}
    runner.generate(prompt, config, token_callback=tokens.append if with_tokens else None,
                    stats_callback=lambda s: holder.update(stats=json.loads(s.to_json_string())))
    return tokens, holder.get("stats")


def token_bound(m):
    """How many tokens forward takes a call: its token input's largest shape ([1, n]; a
    static-shape program's is [1, 1])."""
    try:
        return max(1, int(list(m.method_meta("forward").input_tensor_meta(0).sizes())[1]))
    except Exception:  # a program without method meta
        return 1


def program_ids(plan, prompt):
    """The runner's greedy generation through the program itself: the prompt in calls of
    the program's token bound, then a token a call until an EOS or max_new_tokens."""
    import torch
    from tokenizers import Tokenizer
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    import gate_probe  # written beside this script: the positions convention

    load_runner()  # the custom ops and quantized kernels the program calls
    ids = Tokenizer.from_file(plan["tokenizer"]).encode(prompt, add_special_tokens=False).ids
    m = _load_for_executorch(plan["pte"])
    try:
        eos = {int(i) for i in m.run_method("get_eos_ids", ())}
    except Exception:  # a program without the getter stops at max_new_tokens
        eos = set()
    per_token, chunk = gate_probe.positions_per_token(m), token_bound(m)

    def call(part, pos):
        where = torch.arange(pos, pos + len(part), dtype=torch.long) if per_token else torch.tensor([pos], dtype=torch.long)
        out = m.forward((torch.tensor([part], dtype=torch.long), where))[0]
        return out.reshape(-1, out.shape[-1])[-1]

    with torch.no_grad():
        pos, last = 0, None
        while pos < len(ids):
            last = call(ids[pos:pos + chunk], pos)
            pos += len(ids[pos:pos + chunk])
        out = []
        for _ in range(int(plan["max_new_tokens"])):
            out.append(int(torch.argmax(last)))
            if out[-1] in eos:
                break
            last, pos = call(out[-1:], pos), pos + 1
    return out


def pieces(tokenizer_path, ids):
    """Each token's text as the app shows it: bytes of a character not yet whole are held
    back (an empty piece) until the token that completes it."""
    from tokenizers import Tokenizer
    tok, out, shown = Tokenizer.from_file(tokenizer_path), [], ""
    for i in range(len(ids)):
        text = tok.decode(ids[:i + 1], skip_special_tokens=False)
        if text.endswith("\ufffd"):
            out.append("")
            continue
        out.append(text[len(shown):])
        shown = text
    return out


def run(plan):
    for key in ("pte", "tokenizer"):
        if not os.path.isfile(plan[key]):
            raise PlanError("%s %s does not exist" % (key, plan[key]), plan[key])
    prompt, template_error = render(plan)
    tokens, stats, runner_error, source = [], None, "", "runner"
    try:
        try:
            tokens, stats = generate(plan, prompt, True)
        except UnicodeDecodeError:  # the binding's str, not the runner's: see the docstring
            _, stats = generate(plan, prompt, False)
            tokens, source = pieces(plan["tokenizer"], program_ids(plan, prompt)), "program"
    except Exception as e:  # the runner's failure is a finding, not a driver error
        runner_error = "%s: %s" % (type(e).__name__, e)
    return {"prompt": prompt, "template_error": template_error, "tokens": tokens,
            "reply": "".join(tokens), "reply_from": source, "runner_error": runner_error, "stats": stats}


if __name__ == "__main__":
    sys.exit(driver_io.serve(run, PlanError, "file"))
