"""Sequential GPTQ over a whole model: the once-per-model solve job's driver.

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout).
Go decides which linears are solved, in which order, which share an input (q, k, v; w1, w3)
and the grid; this script carries it out with gptq.py's arithmetic. Each group's Hessian
comes from the calibration rows run through the model whose upstream linears already hold
their solved codes, so every layer is solved on the inputs it will really see. A block
(a decoder layer, "layers.<i>") is run on its own: its inputs are captured once, and its
outputs become the next block's inputs, so the solve costs one pass per layer, not one
whole-model pass per linear. A block with no module ("output") runs the whole model.
Every row is a sequence of its own: what a module carries from one call to the next
(LFM2's short-convolution state) is reset before each row is run. A row may say from which
position on it counts (keep_from): the whole row is run, so every position sees its
context, but only positions from keep_from on enter the Hessians. The calibration gives
every app row but the first the length of the head they share (system prompt, primer,
tools), so that head is counted once, not once per row.

Plan: {"out": path, "rows": path (JSON list of rows: a token-id list, or
       {"tokens": [ids], "keep_from": k}),
       "blocks": [{"module": "layers.0", "groups": [[name, ...], ...]}, ...,
                  {"module": "", "groups": [["output"]]}],
       "damp", "group_size", "block_size", "clips", "half_range", "qmin", "qmax",
       "fake_quant_activations",
       "model": {"model_class", "params", "checkpoint", "max_seq_length", "lfm2_state_fix"}}
Result: {"out", "seconds", "rows", "positions" (those counted, from keep_from on),
         "linears": [gptq.py's per-linear stats]}
Error: {"error": message, "linear": name or null} on stdout, exit status 1.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)
import gptq  # noqa: E402


class Captured(Exception):
    """Raised by the capture hook: nothing after the group's input is needed."""


def capture(torch, run, feeds, module, transform=None):
    """Runs every feed, catching what module receives: the positional arguments (or, with
    transform, transform(first argument)); the run stops there."""
    out = []

    def hook(_mod, args):
        out.append(transform(args[0]) if transform else tuple(a.detach() if torch.is_tensor(a) else a for a in args))
        raise Captured

    handle = module.register_forward_pre_hook(hook)
    try:
        with torch.no_grad():
            for f in feeds:
                try:
                    run(f)
                except Captured:
                    pass
    finally:
        handle.remove()
    return out


def group_hessian(torch, run, feeds, module, plan, keeps=None):
    """H = sum over every counted position of every feed of x^T x, x what module receives;
    keeps[i] is the first position of feed i that counts (all when keeps is None)."""
    keep = iter(keeps or [])

    def gram(x):
        if x.dim() != 3:
            raise gptq.SolveError("a linear received a %d-dimensional input, not [1, positions, features]: "
                                  "the eager model must return every position" % x.dim(), None)
        x = x.detach()[:, next(keep, 0):]  # [1, positions, features]: the positions that count
        x = x.reshape(-1, x.shape[-1]).to(torch.float64)
        if plan.get("fake_quant_activations"):
            x = gptq.fake_quant_tokens(torch, x)
        return x.T @ x

    parts = capture(torch, run, feeds, module, gram)
    if not parts:
        raise gptq.SolveError("the calibration rows never reached this linear", None)
    h = parts[0]
    for p in parts[1:]:
        h += p
    return h


def solve_group(torch, modules, group, h, plan, codes, stats, start):
    g = plan["group_size"]
    factor = gptq.Factor(torch, h, plan, group[0])
    for i, name in enumerate(group):
        mod = modules[name]
        w = mod.weight.detach().to(torch.float64)
        gptq.check_shapes(w, h, plan, name)
        q, s = gptq.solve(torch, w, factor, plan)
        qr, sr = gptq.rtn(torch, w, plan)
        base, e_gptq, e_rtn = gptq.output_errors(torch, w, h, g, [(q, s), (qr, sr)])
        base = base or 1.0
        s16 = s.to(torch.bfloat16)
        codes[name] = {"qdata": q.to(torch.int8).contiguous(), "scale": s16.contiguous()}
        with torch.no_grad():  # downstream groups see the coded weights
            mod.weight.copy_((q * s16.to(torch.float64).repeat_interleave(g, dim=1)).to(mod.weight.dtype))
        stats.append({"name": name, "rows": w.shape[0], "cols": w.shape[1],
                      "dead_columns": int(factor.dead.sum().item()), "damp": factor.damp,
                      "hessian_reused": i > 0, "error_gptq": e_gptq, "error_rtn": e_rtn,
                      "relative_gptq": e_gptq / base, "relative_rtn": e_rtn / base,
                      "seconds": round(time.time() - start, 3)})


def reset_states(model):
    """Zeroes the state a module keeps from one call to the next (LFM2's short-convolution
    conv_state), through the module's own reset_cache. The solve builds the model without
    the KV cache, so no input_pos reaches the convolution and its reset at position 0 never
    fires: without this, each calibration row would start from the last tokens of the row
    run before it."""
    for m in model.modules():
        reset = getattr(m, "reset_cache", None)
        if callable(reset):
            reset()


def per_row(model, run):
    """run(feed) with every state reset first: each feed is one whole row, a sequence of
    its own."""

    def call(feed):
        reset_states(model)
        return run(feed)

    return call


def solve_model(torch, model, rows, plan, log=lambda msg: None, keeps=None):
    """Solves every group in order; keeps[i] is row i's keep_from. Returns (codes, stats)."""
    modules = dict(model.named_modules())
    codes, stats = {}, []
    tokens = [torch.tensor([r], dtype=torch.long) for r in rows]
    whole = per_row(model, lambda t: model(t))
    inputs, inputs_of = None, None
    for block in plan["blocks"]:
        name = block.get("module") or ""
        for group in block["groups"]:
            for lin in group:
                w = getattr(modules.get(lin), "weight", None)
                if w is None or w.dim() != 2:
                    raise gptq.SolveError("the model has no linear %s" % lin, lin)
                if lin in codes:
                    raise gptq.SolveError("linear %s is listed twice" % lin, lin)
        if name:
            if name not in modules:
                raise gptq.SolveError("the model has no block %s" % name, None)
            blk = modules[name]
            if inputs_of != name:
                inputs = capture(torch, whole, tokens, blk)
            run, feeds = per_row(model, lambda args, blk=blk: blk(*args)), inputs
        else:
            run, feeds = whole, tokens
        for group in block["groups"]:
            start = time.time()
            h = group_hessian(torch, run, feeds, modules[group[0]], plan, keeps)
            solve_group(torch, modules, group, h, plan, codes, stats, start)
            log("solved %s in %.1fs" % (", ".join(group), time.time() - start))
        if name:  # this block's outputs feed the next block
            nxt = block.get("next")
            with torch.no_grad():
                outs = [run(args) for args in inputs]
            inputs = [((o[0] if isinstance(o, tuple) else o),) + tuple(args[1:]) for o, args in zip(outs, inputs)]
            inputs_of = nxt
    return codes, stats


def build_executorch(torch, m):
    """The eager ExecuTorch model export_llm would build, without KV cache, in fp32."""
    if m.get("lfm2_state_fix"):
        import export_with_codes

        export_with_codes.apply_lfm2_state_fix()
    from executorch.examples.models.llama.model import Llama2Model

    model = Llama2Model(llm_config=llm_config(m)).get_eager_model()
    return model.to(torch.float32).eval()


def llm_config(m):
    """The LlmConfig for the eager model, made as export_llm makes its own: these keys
    merged into the structured LlmConfig by OmegaConf, then turned into the dataclasses.
    Set as plain attributes, model_class and dtype_override stayed strings, and
    Llama2Model reads model_class.value for a params file with use_scaled_rope (Llama 3.2);
    merged, they are ExecuTorch's enums, and a class or key the pinned release does not know fails here,
    before the solve."""
    from executorch.extension.llm.export.config.llm_config import LlmConfig
    from omegaconf import OmegaConf

    keys = {
        "base": {"model_class": m["model_class"], "params": m["params"], "checkpoint": m["checkpoint"]},
        "model": {"use_kv_cache": False, "use_sdpa_with_kv_cache": False, "dtype_override": "fp32"},
        "export": {"max_seq_length": m["max_seq_length"], "max_context_length": m["max_seq_length"]},
        # Without full logits ExecuTorch's Transformer keeps only the last position before
        # the norm, so the output head would see [1, dim]: one position per row, and rows
        # whose head is skipped (keep_from > 0) would lose feature columns instead.
        "debug": {"generate_full_logits": True},
    }
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(LlmConfig), keys))


def read_rows(path):
    """The rows file: (token-id lists, keep_from per row)."""
    rows, keeps = [], []
    for i, r in enumerate(json.load(open(path))):
        tokens, keep = (r["tokens"], int(r.get("keep_from", 0))) if isinstance(r, dict) else (r, 0)
        if not 0 <= keep < len(tokens):
            raise gptq.SolveError("calibration row %d keeps from position %d of its %d" % (i, keep, len(tokens)), None)
        rows.append(tokens)
        keeps.append(keep)
    return rows, keeps


def run(plan):
    import torch

    start = time.time()
    rows, keeps = read_rows(plan["rows"])
    model = build_executorch(torch, plan["model"])
    codes, stats = solve_model(torch, model, rows, plan, lambda msg: print(msg, file=sys.stderr, flush=True), keeps)
    driver_io.save_atomically(torch, codes, plan["out"])
    return {"out": plan["out"], "seconds": round(time.time() - start, 3), "rows": len(rows),
            "positions": sum(len(r) - k for r, k in zip(rows, keeps)), "linears": stats}


def main():
    return driver_io.serve(run, gptq.SolveError, "linear")


if __name__ == "__main__":
    sys.exit(main())
