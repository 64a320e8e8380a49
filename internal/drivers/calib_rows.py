"""Calibration rows for the GPTQ solve: each prompt rendered and continued by the fp32 model.

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout). It
decides nothing: internal/calib planned the rows (which are app rows, how long each reply may
be) and checks what comes back (the prompt limit, empty replies, the shared head). Each
row is rendered through the model's chat template, an app row as the app renders a
conversation (the prompt file's system prompt and primer, then the user message, with the
tools given to the template), a general row as the user message alone; then the fp32
Hugging Face model continues it greedily for at most the row's max_new_tokens.

Plan: {"model": folder (weights, tokenizer, chat template),
       "prompt": {"system": s, "primer": [{"role", "content"}], "tools": [...]},
       "rows": [{"name": n, "user": text, "app": bool, "max_new_tokens": k}]}
Result: {"rows": [{"name": n, "prompt": [ids], "reply": [ids], "text": the reply decoded
         without special tokens}]}, in the plan's order.
Error: {"error": message, "row": name or null} on stdout, exit status 1.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)


class PlanError(Exception):
    def __init__(self, message, row=None):
        super().__init__(message)
        self.row = row


def messages(prompt, row):
    """The conversation of one row: an app row under the system prompt and primer, a
    general row as the user message alone."""
    if not row["app"]:
        return [{"role": "user", "content": row["user"]}]
    out = [{"role": "system", "content": prompt["system"]}] + list(prompt["primer"])
    out.append({"role": "user", "content": row["user"]})
    return out


def render(tokenizer, prompt, row):
    tools = (prompt.get("tools") or None) if row["app"] else None
    # return_dict=False: transformers 5 returns a BatchEncoding by default, whose iteration
    # yields its keys ("input_ids", "attention_mask"), not the ids.
    ids = tokenizer.apply_chat_template(messages(prompt, row), tools=tools, add_generation_prompt=True,
                                        tokenize=True, return_dict=False)
    return [int(i) for i in ids]


def reply(torch, model, ids, row):
    """The greedy continuation of ids: at most max_new_tokens, ending early at EOS."""
    n = int(row["max_new_tokens"])
    if n <= 0:
        raise PlanError("row %r asks for %d new tokens" % (row["name"], n), row["name"])
    x = torch.tensor([ids], dtype=torch.long)
    out = model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=n,
                         do_sample=False, num_beams=1)
    return [int(t) for t in out[0][len(ids):]]


def run(plan):
    driver_io.transformers_for(plan["model"])
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    path = plan["model"]
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32)
    model.eval()
    rows = []
    with torch.no_grad():
        for row in plan["rows"]:
            ids = render(tokenizer, plan["prompt"], row)
            got = reply(torch, model, ids, row)
            rows.append({"name": row["name"], "prompt": ids, "reply": got,
                         "text": tokenizer.decode(got, skip_special_tokens=True)})
            print("calibration row %d/%d: %d + %d tokens" % (len(rows), len(plan["rows"]), len(ids), len(got)),
                  file=sys.stderr)
    return {"rows": rows}


if __name__ == "__main__":
    sys.exit(driver_io.serve(run, PlanError, "row"))
