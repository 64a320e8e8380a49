"""Checks solve_model.py's keep_from: a row's positions before keep_from are run (they are
the later positions' context) but left out of the Hessian. Compares group_hessian with
keeps against x^T x summed by hand over the kept positions of what the linear receives,
and reads a rows file of both row forms. Argument: a scratch folder. Prints a JSON report."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gptq  # noqa: E402
import solve_model  # noqa: E402
from solve_model_check import Model  # noqa: E402


def main(scratch):
    torch.manual_seed(0)
    model = Model().eval()
    rows, keeps = [list(range(3, 23)), list(range(30, 46))], [0, 6]
    tokens = [torch.tensor([r]) for r in rows]
    linear = dict(model.named_modules())["layers.1.feed_forward.w2"]
    whole = lambda t: model(t)  # noqa: E731
    plan = {"fake_quant_activations": False}
    with torch.no_grad():
        kept = solve_model.group_hessian(torch, whole, tokens, linear, plan, keeps)
        every = solve_model.group_hessian(torch, whole, tokens, linear, plan)
        seen = []
        handle = linear.register_forward_pre_hook(lambda _m, args: seen.append(args[0].detach()))
        for t in tokens:
            model(t)
        handle.remove()
    want = torch.zeros_like(kept)
    for x, k in zip(seen, keeps):
        x = x[0, k:].to(torch.float64)
        want += x.T @ x
    path = os.path.join(scratch, "rows.json")
    with open(path, "w") as f:
        json.dump([[1, 2, 3], {"tokens": [4, 5, 6, 7], "keep_from": 2}, {"tokens": [8, 9]}], f)
    read = solve_model.read_rows(path)
    with open(path, "w") as f:
        json.dump([{"tokens": [1, 2], "keep_from": 2}], f)
    try:
        solve_model.read_rows(path)
        refused = ""
    except gptq.SolveError as e:
        refused = str(e)
    json.dump({"kept_matches": float((kept - want).abs().max()), "kept_scale": float(want.abs().max()),
               "every_differs": float((every - kept).abs().max()), "read": read, "refused": refused}, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
