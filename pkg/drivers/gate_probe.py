"""Measure next-token distributions for the decision gate (pkg/gate).

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout). It
only measures; pkg/gate grades. Each row is rendered as the app renders a conversation (the
prompt file's system prompt, primer and tools, then the row's user message, through the
model's chat template) unless the plan gives its token ids already, and the model is run on
it once: the last position's softmax is all the gate reads.

Plan: {"mode": "reference" | "measure",
       "model": {"kind": "hf" | "pte" | "torchscript", "path": p, "tokenizer": p or null},
       "prompt": {"system": s, "primer": [{"role", "content"}], "tools": [...]},
       "rows": [{"question": q, "user": text, "token_ids": [int] (optional)}],
       "fp32": {question: token} (measure only)}
Result reference: {"rows": {question: {"token": argmax, "p": its probability, "text": piece}}}
Result measure: {"rows": {question: {"p": probability of fp32's token, "token": argmax,
                 "text": piece}}}
Error: {"error": message, "row": question or null} on stdout, exit status 1.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)


class PlanError(Exception):
    def __init__(self, message, row=None):
        super().__init__(message)
        self.row = row


def load_tokenizer(model):
    path = model.get("tokenizer")
    if not path:
        return None
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(path)


def render(tokenizer, prompt, row):
    """Token ids of the row as the app renders it: system, primer, the user message, and the
    generation prompt, with the tools given to the chat template."""
    if row.get("token_ids") is not None:
        return list(row["token_ids"])
    if tokenizer is None:
        raise PlanError("row %r has no token ids and the plan names no tokenizer" % row["question"], row["question"])
    messages = [{"role": "system", "content": prompt["system"]}] + list(prompt["primer"])
    messages.append({"role": "user", "content": row["user"]})
    # return_dict=False: transformers 5 returns a BatchEncoding by default, whose iteration
    # yields its keys ("input_ids", "attention_mask"), not the ids.
    return [int(i) for i in tokenizer.apply_chat_template(messages, tools=prompt.get("tools") or None,
                                                          add_generation_prompt=True, tokenize=True,
                                                          return_dict=False)]


def hf_model(torch, path):
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32)
    m.eval()
    return lambda ids: m(torch.tensor([ids])).logits


def pte_model(torch, path):
    """The exported program, reloaded per prompt so no KV cache carries over; the custom ops
    and quantized kernels export_llm's programs call are registered first."""
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401
    import executorch.kernels.quantized  # noqa: F401

    def run(ids):
        m = _load_for_executorch(path)
        # export_llm's programs take at most max_seq_len - 1 tokens a call (the token
        # dimension is exported as Dim(max=max_seq_len - 1)), though get_max_seq_len says
        # max_seq_len.
        chunk = max(1, int(m.run_method("get_max_seq_len", ())[0]) - 1)
        out, pos = None, 0
        while pos < len(ids):
            part = ids[pos:pos + chunk]
            out = m.forward((torch.tensor([part], dtype=torch.long), torch.tensor([pos], dtype=torch.long)))[0]
            pos += len(part)
        return out
    return run


def torchscript_model(torch, path):
    m = torch.jit.load(path)
    m.eval()
    return lambda ids: m(torch.tensor([ids]))


def last_probs(torch, logits):
    """Softmax over the vocabulary at the last position; export_llm's programs return only
    the last position ([1, V]), Hugging Face's every position ([1, T, V])."""
    if logits.dim() == 3:
        logits = logits[0, -1]
    elif logits.dim() == 2:
        logits = logits[-1]
    return torch.softmax(logits.double(), dim=-1)


def piece(tokenizer, token):
    return tokenizer.decode([token]) if tokenizer is not None else ""


def run(plan):
    import torch
    torch.manual_seed(0)
    mode = plan.get("mode")
    if mode not in ("reference", "measure"):
        raise PlanError("mode %r is neither reference nor measure" % mode)
    model = plan["model"]
    loaders = {"hf": hf_model, "pte": pte_model, "torchscript": torchscript_model}
    if model.get("kind") not in loaders:
        raise PlanError("model kind %r is not hf, pte or torchscript" % model.get("kind"))
    forward = loaders[model["kind"]](torch, model["path"])
    tokenizer = load_tokenizer(model)
    fp32 = plan.get("fp32") or {}
    rows = {}
    with torch.no_grad():
        for row in plan["rows"]:
            q = row["question"]
            if mode == "measure" and q not in fp32:
                raise PlanError("row %r has no fp32 token to measure" % q, q)
            probs = last_probs(torch, forward(render(tokenizer, plan["prompt"], row)))
            top = int(torch.argmax(probs))
            if mode == "reference":
                rows[q] = {"token": top, "p": float(probs[top]), "text": piece(tokenizer, top)}
            else:
                want = int(fp32[q])
                if not 0 <= want < probs.shape[0]:
                    raise PlanError("row %r: fp32 token %d is outside the export's vocabulary of %d" % (q, want, probs.shape[0]), q)
                rows[q] = {"p": float(probs[want]), "token": top, "text": piece(tokenizer, top)}
            print("gate %s: %s" % (mode, q), file=sys.stderr)
    return {"rows": rows}


if __name__ == "__main__":
    sys.exit(driver_io.serve(run, PlanError, "row"))
