"""A small linear with correlated inputs for exe-expo's GPTQ driver test, and its check.

Written for exe-expo's driver tests (no third-party source copied). Two commands:

  gptq_layer.py make DIR     weight.pt [ROWS, COLS] (bf16), activations.pt [TOKENS, COLS]
                             with strongly correlated columns and column DEAD always zero,
                             hessian.pt = X^T X in fp64, weights.pt = {name: weight},
                             identity.pt = I
  gptq_layer.py check DIR CODES
                             checks every entry of CODES on its own (int8 codes in -8..7,
                             positive bf16 scales of shape [ROWS, COLS/32], dead column
                             coded 0) and prints the output errors ||X W^T - X W'^T||^2 of
                             each solved linear and of round-to-nearest (clip 1.0, same
                             grid) computed here independently.
"""

import json
import sys

import torch

ROWS, COLS, TOKENS, DEAD, GROUP = 48, 256, 1024, 5, 32


def make(out_dir):
    g = torch.Generator().manual_seed(11)
    latent = torch.randn(TOKENS, 16, generator=g)
    mix = torch.randn(16, COLS, generator=g)
    x = latent @ mix + 0.05 * torch.randn(TOKENS, COLS, generator=g)
    x = x * torch.linspace(0.2, 3.0, COLS)  # uneven column scales, like real activations
    x[:, DEAD] = 0
    w = (torch.randn(ROWS, COLS, generator=g) * 0.05).to(torch.bfloat16)
    torch.save(w, out_dir + "/weight.pt")
    torch.save({"layers.0.feed_forward.w2.weight": w}, out_dir + "/weights.pt")
    torch.save(x, out_dir + "/activations.pt")
    torch.save(x.double().T @ x.double(), out_dir + "/hessian.pt")
    torch.save(torch.eye(COLS, dtype=torch.float64), out_dir + "/identity.pt")


def rtn(w):
    groups = w.reshape(ROWS, COLS // GROUP, GROUP)
    s = (groups.abs().amax(dim=2) / 7.5).to(torch.bfloat16).double()
    q = torch.clamp(torch.round(groups / s[:, :, None]), -8, 7)
    return (q * s[:, :, None]).reshape(ROWS, COLS)


def check(out_dir, codes_path):
    print(json.dumps(report(out_dir, codes_path)))


def clip_searched(w, clips):
    """Round to nearest with the best clip per row and group: what GPTQ must reduce to
    when the Hessian is the identity (no error to push onto other columns)."""
    groups = w.reshape(ROWS, COLS // GROUP, GROUP)
    amax = groups.abs().amax(dim=2)
    qs, ss, errs = [], [], []
    for clip in clips:
        s = (amax * clip / 7.5).to(torch.bfloat16).double()
        q = torch.clamp(torch.round(groups / s[:, :, None]), -8, 7)
        qs.append(q)
        ss.append(s)
        errs.append(((groups - q * s[:, :, None]) ** 2).sum(dim=2))
    best = torch.stack(errs).argmin(dim=0)  # first clip wins ties, as in the driver
    q = torch.stack(qs).gather(0, best[None, :, :, None].expand(1, ROWS, COLS // GROUP, GROUP))[0]
    s = torch.stack(ss).gather(0, best[None])[0]
    return q.reshape(ROWS, COLS).to(torch.int8), s.to(torch.bfloat16)


def inverse_cholesky_diff(out_dir):
    """The driver's factor of H^-1 against the textbook route (cholesky, inverse, cholesky)."""
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import gptq
    h = torch.load(out_dir + "/hessian.pt", weights_only=True)
    h[DEAD, DEAD] = 1
    h += 0.01 * torch.diagonal(h).mean() * torch.eye(COLS, dtype=h.dtype)
    want = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)
    got = gptq.inverse_cholesky(torch, h, "test")
    return ((got - want).abs().max() / want.abs().max()).item()


def report(out_dir, codes_path):
    w = torch.load(out_dir + "/weight.pt", weights_only=True).double()
    x = torch.load(out_dir + "/activations.pt", weights_only=True).double()
    codes = torch.load(codes_path, weights_only=True)
    ref = x @ w.T
    rep = {"rtn": ((ref - x @ rtn(w).T) ** 2).sum().item(), "linears": {}}
    for name, c in codes.items():
        q, s = c["qdata"], c["scale"]
        problems = []
        if q.dtype != torch.int8 or tuple(q.shape) != (ROWS, COLS):
            problems.append("qdata %s %s" % (q.dtype, list(q.shape)))
        if s.dtype != torch.bfloat16 or tuple(s.shape) != (ROWS, COLS // GROUP):
            problems.append("scale %s %s" % (s.dtype, list(s.shape)))
        if q.min().item() < -8 or q.max().item() > 7:
            problems.append("codes outside -8..7")
        if not bool((s > 0).all()):
            problems.append("non-positive scale")
        if bool((q[:, DEAD] != 0).any()):
            problems.append("dead column %d not zeroed" % DEAD)
        deq = q.double() * s.double().repeat_interleave(GROUP, dim=1)
        rep["linears"][name] = {"error": ((ref - x @ deq.T) ** 2).sum().item(), "problems": problems,
                                   "distinct_codes": int(q.unique().numel())}
    rep["inverse_cholesky_rel_diff"] = inverse_cholesky_diff(out_dir)
    if "identity" in codes:
        q, s = clip_searched(w, [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6])
        rep["identity_is_clip_search"] = bool(torch.equal(codes["identity"]["qdata"], q)
                                              and torch.equal(codes["identity"]["scale"], s))
    if "from_hessian" in codes and "from_dict" in codes:
        a, b = codes["from_hessian"], codes["from_dict"]
        rep["dict_matches_file"] = bool(torch.equal(a["qdata"], b["qdata"]) and torch.equal(a["scale"], b["scale"]))
    return rep


def main():
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
    else:
        sys.exit("unknown command " + sys.argv[1])


if __name__ == "__main__":
    main()
