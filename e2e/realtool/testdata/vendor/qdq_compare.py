"""Compare two saved QDQ programs (the artifact/decode_qdq.pt2 the pinned ExecuTorch's
Qualcomm script saves before lowering) node for node: the graph, every quantization
encoding and every frozen constant. exe-expo test support (e2e/realtool, vendor_test.go
TestQNNSharedCalibration); never shipped.

Usage: qdq_compare.py OWN.pt2 SHARED.pt2
Prints one JSON line:
  {"nodes": [n_own, n_shared], "same_graph": bool, "first_difference": str or null,
   "activation": {"count", "identical", "max_rel_scale", "max_zero_point", "max_range_error"},
   "weight": {"count", "identical", "max_rel_scale", "max_zero_point", "values_identical"},
   "constants": [{"name", "shape", "shared_shape", "equal", "read_by_qdq"}],
   "differences": [{"node", "input", "scale": [own, shared], "zero_point": [own, shared], "rel_scale"}]}
"activation": per-tensor quantize/dequantize ops, whose scale and zero point are literal
arguments; "weight": per-channel ones, whose scales, zero points and quantized values are
program constants; "constants": every tensor the program holds (weights, the RoPE tables), and whether a
quantize or dequantize op reads it; "differences": the encodings that differ, largest first. max_rel_scale is the largest |a - b| / |a| over all scales;
max_zero_point the largest |a - b| over all zero points; max_range_error the largest shift
of either end of the interval an activation encoding represents, over that interval's width.
"""

import json
import sys

import torch
import torchao.quantization.pt2e  # noqa: F401 - registers the quantized_decomposed ops the program uses


def tensors(ep):
    """Placeholder name -> tensor, for the program's parameters, buffers and constants."""
    sig = ep.graph_signature
    state = dict(ep.state_dict)
    state.update(ep.constants)
    out = {}
    for spec in sig.input_specs:
        if spec.target is not None and spec.target in state:
            out[spec.arg.name] = state[spec.target]
    return out


def is_qdq(node):
    return node.op == "call_function" and "quantize" in str(node.target)


def rel(a, b):
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return float(((a - b).abs() / a.abs().clamp_min(1e-30)).max()) if a.numel() else 0.0


def absdiff(a, b):
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return float((a - b).abs().max()) if a.numel() else 0.0


def span(scale, zero_point, qmin, qmax):
    """The real interval an encoding represents."""
    return (qmin - float(zero_point)) * float(scale), (qmax - float(zero_point)) * float(scale)


def main():
    own, shared = (torch.export.load(p) for p in sys.argv[1:3])
    na, nb = list(own.graph.nodes), list(shared.graph.nodes)
    ta, tb = tensors(own), tensors(shared)
    first = None
    for a, b in zip(na, nb):
        if (a.name, a.op, str(a.target)) != (b.name, b.op, str(b.target)):
            first = "%s %s %s vs %s %s %s" % (a.name, a.op, a.target, b.name, b.op, b.target)
            break
    if first is None and len(na) != len(nb):
        first = "%d nodes vs %d" % (len(na), len(nb))
    act = {"count": 0, "identical": 0, "max_rel_scale": 0.0, "max_zero_point": 0.0, "max_range_error": 0.0}
    wt = {"count": 0, "identical": 0, "max_rel_scale": 0.0, "max_zero_point": 0.0, "values_identical": 0}
    qdq_read = set()
    diffs = []
    if first is None:
        for a, b in zip(na, nb):
            if not is_qdq(a):
                continue
            qdq_read.update(x.name for x in a.args if isinstance(x, torch.fx.Node))
            arg = lambda node, i, t: t[node.args[i].name] if isinstance(node.args[i], torch.fx.Node) else node.args[i]
            at = 2 if "affine" in str(a.target) else 1  # torchao's affine ops: (input, block_size, scale, zero_point, ...)
            sa, sb = arg(a, at, ta), arg(b, at, tb)
            za, zb = arg(a, at + 1, ta), arg(b, at + 1, tb)
            kind = wt if isinstance(a.args[at], torch.fx.Node) else act
            kind["count"] += 1
            r, z = rel(sa, sb), absdiff(za, zb)
            kind["max_rel_scale"] = max(kind["max_rel_scale"], r)
            kind["max_zero_point"] = max(kind["max_zero_point"], z)
            kind["identical"] += r == 0 and z == 0
            if r or z:
                diffs.append({"node": a.name, "input": str(a.args[0]), "scale": [float(torch.as_tensor(sa).flatten()[0]), float(torch.as_tensor(sb).flatten()[0])],
                              "zero_point": [float(torch.as_tensor(za).flatten()[0]), float(torch.as_tensor(zb).flatten()[0])], "rel_scale": r})
            if kind is act:
                qmin, qmax = a.args[at + 2], a.args[at + 3]
                (lo_a, hi_a), (lo_b, hi_b) = span(sa, za, qmin, qmax), span(sb, zb, qmin, qmax)
                act["max_range_error"] = max(act["max_range_error"], max(abs(lo_a - lo_b), abs(hi_a - hi_b)) / (hi_a - lo_a))
            if kind is wt and isinstance(a.args[0], torch.fx.Node) and a.args[0].name in ta:
                wt["values_identical"] += bool(torch.equal(ta[a.args[0].name], tb[a.args[0].name]))
    constants = []
    for name, t in ta.items():
        if first is not None:
            continue
        u = tb.get(name)
        constants.append({"name": name, "shape": list(t.shape), "shared_shape": list(u.shape) if u is not None else None,
                          "equal": u is not None and t.shape == u.shape and bool(torch.equal(t, u)), "read_by_qdq": name in qdq_read})
    print(json.dumps({"nodes": [len(na), len(nb)], "same_graph": first is None, "first_difference": first,
                      "activation": act, "weight": wt, "constants": constants,
                      "differences": sorted(diffs, key=lambda d: -d["rel_scale"])}))


if __name__ == "__main__":
    main()
