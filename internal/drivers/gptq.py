"""GPTQ solve for linears on exe-expo's 8da4w grid (Frantar et al., arXiv 2210.17323).

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout).
Go decides the grid, damping, block size and which linears to solve; this script only
carries it out. Grid: symmetric int4 codes, contiguous groups along the input dimension,
one positive bf16 scale per row and group, scale = bf16(amax * clip / half_range), the clip
per row and group picked by least squared error when the solver reaches the group.

Plan: {"out": path, "damp": 0.01, "group_size": 32, "block_size": 128,
       "clips": [1.0, ..., 0.6], "half_range": 7.5, "qmin": -8, "qmax": 7,
       "fake_quant_activations": bool,
       "linears": [{"name": n, "weight": path, "weight_key": key or null,
                    "hessian": path} | {..., "activations": path}]}
Result: {"out": path, "seconds": s, "linears": [{"name", "rows", "cols", "dead_columns",
         "damp", "hessian_reused", "error_gptq", "error_rtn", "relative_gptq", "relative_rtn", "seconds"}]}
The error of codes W' is trace((W - W') H (W - W')^T) = ||X W^T - X W'^T||^2 for H = X^T X.
Error: {"error": message, "linear": name or null} on stdout, exit status 1.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)


class SolveError(Exception):
    def __init__(self, message, linear=None):
        super().__init__(message)
        self.linear = linear


def load_tensor(torch, path, key=None):
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except TypeError:  # torch before 2.1 has no mmap
        obj = torch.load(path, map_location="cpu", weights_only=True)
    if key is not None:
        obj = obj[key]
    if isinstance(obj, (list, tuple)):
        obj = torch.cat([o.reshape(-1, o.shape[-1]) for o in obj])
    return obj


def fake_quant_tokens(torch, x):
    """Asymmetric int8 per token, as 8da4w's dynamic activation quantisation sees inputs."""
    lo = x.amin(dim=1, keepdim=True).clamp(max=0)
    hi = x.amax(dim=1, keepdim=True).clamp(min=0)
    scale = ((hi - lo) / 255).clamp(min=torch.finfo(torch.float32).eps)
    zero = -128 - torch.round(lo / scale)
    q = torch.clamp(torch.round(x / scale) + zero, -128, 127)
    return (q - zero) * scale


def hessian(torch, spec, plan):
    if spec.get("hessian"):
        return load_tensor(torch, spec["hessian"]).to(torch.float64)
    x = load_tensor(torch, spec["activations"])
    x = x.reshape(-1, x.shape[-1]).to(torch.float64)
    if plan.get("fake_quant_activations"):
        x = fake_quant_tokens(torch, x)
    return x.T @ x


def group_scale(torch, w, plan):
    """Best bf16 scale per row for one group of columns w [rows, g], over the plan's clips."""
    amax = w.abs().amax(dim=1)
    best, best_err = None, None
    for clip in plan["clips"]:
        s = (amax * clip / plan["half_range"]).to(torch.bfloat16).to(torch.float64)
        s = torch.where(s > 0, s, torch.ones_like(s))  # an all-zero group: any positive scale
        q = torch.clamp(torch.round(w / s[:, None]), plan["qmin"], plan["qmax"])
        err = ((w - q * s[:, None]) ** 2).sum(dim=1)
        if best is None:
            best, best_err = s, err
        else:
            better = err < best_err
            best = torch.where(better, s, best)
            best_err = torch.where(better, err, best_err)
    return best


def rtn(torch, w, plan):
    """Round to nearest on the same grid with clip 1.0: what export does without codes."""
    g = plan["group_size"]
    rows, cols = w.shape
    groups = w.reshape(rows, cols // g, g)
    s = (groups.abs().amax(dim=2) / plan["half_range"]).to(torch.bfloat16).to(torch.float64)
    s = torch.where(s > 0, s, torch.ones_like(s))
    q = torch.clamp(torch.round(groups / s[:, :, None]), plan["qmin"], plan["qmax"])
    return q.reshape(rows, cols), s


def inverse_cholesky(torch, h, name):
    """Upper Cholesky factor U of H^-1 (H^-1 = U^T U), from one factorisation of H with its
    rows and columns reversed: if J H J = L L^T then U = J L^-1 J. Same factor as
    cholesky(cholesky_inverse(cholesky(H)), upper=True), for one triangular inverse instead
    of an inverse and a second factorisation."""
    rev = torch.arange(h.shape[0] - 1, -1, -1)
    try:
        lower = torch.linalg.cholesky(h[rev][:, rev])
    except RuntimeError as e:
        raise SolveError("linear %s: Hessian is not positive definite after damping: %s" % (name, e), name)
    eye = torch.eye(h.shape[0], dtype=h.dtype)
    return torch.linalg.solve_triangular(lower, eye, upper=False)[rev][:, rev]


class Factor:
    """What the solve needs from one Hessian: the dead columns, the damping and the upper
    factor of the damped inverse. Linears fed by the same input (q, k and v; w1 and w3)
    share one, so it is computed once per Hessian."""

    def __init__(self, torch, h, plan, name):
        h = h.clone()
        self.dead = torch.diagonal(h) == 0
        h[self.dead, self.dead] = 1
        self.damp = plan["damp"] * torch.mean(torch.diagonal(h)).item()
        h += self.damp * torch.eye(h.shape[0], dtype=h.dtype)
        self.u = inverse_cholesky(torch, h, name)


def solve(torch, w, factor, plan):
    """GPTQ without act-order: columns in order, error pushed onto the columns not yet coded."""
    g, block, u = plan["group_size"], plan["block_size"], factor.u
    rows, cols = w.shape
    w = w.clone()
    w[:, factor.dead] = 0
    q = torch.zeros(rows, cols, dtype=torch.float64)
    scale = torch.zeros(rows, cols // g, dtype=torch.float64)
    for i1 in range(0, cols, block):
        i2 = min(i1 + block, cols)
        w1, u1 = w[:, i1:i2].clone(), u[i1:i2, i1:i2]
        err1 = torch.zeros(rows, i2 - i1, dtype=torch.float64)
        for i in range(i2 - i1):
            col = i1 + i
            if col % g == 0:
                scale[:, col // g] = group_scale(torch, w1[:, i:i + g], plan)
            s = scale[:, col // g]
            qc = torch.clamp(torch.round(w1[:, i] / s), plan["qmin"], plan["qmax"])
            q[:, col] = qc
            e = (w1[:, i] - qc * s) / u1[i, i]
            w1[:, i:] -= e[:, None] * u1[i, i:][None, :]
            err1[:, i] = e
        w[:, i2:] -= err1 @ u[i1:i2, i2:]
    return q, scale


def output_errors(torch, w, h, g, codes):
    """trace(D H D^T) for D = W (the scale) and W - W' for each (q, s) in codes, in one
    fp32 product: these are statistics, and this is the costliest step after the solve."""
    blocks = [w] + [w - q * s.repeat_interleave(g, dim=1) for q, s in codes]
    m = torch.cat(blocks).to(torch.float32)
    per_row = ((m @ h.to(torch.float32)) * m).sum(dim=1).to(torch.float64)
    return [float(part.sum().item()) for part in per_row.split(w.shape[0])]


def check_shapes(w, h, plan, name):
    g, block = plan["group_size"], plan["block_size"]
    if w.dim() != 2:
        raise SolveError("linear %s: weight has %d dimensions, want 2" % (name, w.dim()), name)
    rows, cols = w.shape
    if cols % g or block % g:
        raise SolveError("linear %s: %d input columns and block %d must be multiples of group %d"
                         % (name, cols, block, g), name)
    if tuple(h.shape) != (cols, cols):
        raise SolveError("linear %s: Hessian %s does not match %d input columns"
                         % (name, list(h.shape), cols), name)


def solve_linear(torch, spec, plan, cache):
    """Solve one linear; cache holds the last Hessian's factor, keyed by its source file."""
    name = spec["name"]
    start = time.time()
    w = load_tensor(torch, spec["weight"], spec.get("weight_key")).to(torch.float64)
    key = ("hessian", spec["hessian"]) if spec.get("hessian") else ("activations", spec["activations"])
    reused = cache.get("key") == key
    if not reused:
        cache.clear()
        h = hessian(torch, spec, plan)
        check_shapes(w, h, plan, name)
        cache.update(key=key, h=h, factor=Factor(torch, h, plan, name))
    h, factor = cache["h"], cache["factor"]
    check_shapes(w, h, plan, name)
    q, s = solve(torch, w, factor, plan)
    qr, sr = rtn(torch, w, plan)
    g = plan["group_size"]
    base, e_gptq, e_rtn = output_errors(torch, w, h, g, [(q, s), (qr, sr)])
    base = base or 1.0
    codes = {"qdata": q.to(torch.int8).contiguous(), "scale": s.to(torch.bfloat16).contiguous()}
    stats = {"name": name, "rows": w.shape[0], "cols": w.shape[1],
             "dead_columns": int(factor.dead.sum().item()), "damp": factor.damp,
             "hessian_reused": reused, "error_gptq": e_gptq, "error_rtn": e_rtn,
             "relative_gptq": e_gptq / base, "relative_rtn": e_rtn / base,
             "seconds": round(time.time() - start, 3)}
    return codes, stats


def run(plan):
    import torch

    start = time.time()
    codes, stats, cache = {}, [], {}
    for spec in plan["linears"]:
        if spec["name"] in codes:
            raise SolveError("linear %s is listed twice" % spec["name"], spec["name"])
        codes[spec["name"]], st = solve_linear(torch, spec, plan, cache)
        stats.append(st)
        print("solved %s in %.2fs" % (spec["name"], st["seconds"]), file=sys.stderr, flush=True)
    driver_io.save_atomically(torch, codes, plan["out"])
    return {"out": plan["out"], "seconds": round(time.time() - start, 3), "linears": stats}


def main():
    return driver_io.serve(run, SolveError, "linear")


if __name__ == "__main__":
    sys.exit(main())
