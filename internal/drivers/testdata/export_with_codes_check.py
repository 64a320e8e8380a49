"""Checks export_with_codes.py's pure parts with torch and no ExecuTorch: code injection
into both int4 layouts, its refusals, and the LFM2 state reset. Prints a JSON report."""
import json
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import export_with_codes as ewc  # noqa: E402


class Swapped(nn.Module):
    """The module-swap layout: int8 weight, scales and zeros buffers."""

    def __init__(self, out, inp, group=32):
        super().__init__()
        self.register_buffer("weight", torch.randint(-8, 8, (out, inp), dtype=torch.int8))
        self.register_buffer("scales", torch.rand(out, inp // group) + 0.1)
        self.register_buffer("zeros", torch.ones(out, inp // group, dtype=torch.int64))


class SubclassWeight:
    """The tensor-subclass layout: qdata, scale and zero_point on the weight."""

    def __init__(self, out, inp, group=32):
        self.qdata = torch.randint(-8, 8, (out, inp), dtype=torch.int8)
        self.scale = torch.rand(out, inp // group) + 0.1
        self.zero_point = torch.ones(out, inp // group, dtype=torch.int8)
        self.dtype = torch.float32


class Subclass(nn.Module):
    def __init__(self, out, inp):
        super().__init__()
        self.weight = SubclassWeight(out, inp)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Module()])
        self.layers[0].wq = Swapped(8, 64)
        self.layers[0].w1 = Subclass(16, 64)
        self.output = Swapped(4, 64)


def codes_for(shape_q, shape_s):
    return {"qdata": torch.randint(-8, 8, shape_q, dtype=torch.int8), "scale": (torch.rand(shape_s) + 0.5).to(torch.bfloat16)}


def main():
    report = {}
    m = Model()
    codes = {"layers.0.wq": codes_for((8, 64), (8, 2)), "layers.0.w1": codes_for((16, 64), (16, 2))}
    done, left = ewc.inject(m, codes)
    report["done"] = sorted(done)
    report["left"] = left
    report["wq_equal"] = bool(torch.equal(m.layers[0].wq.weight, codes["layers.0.wq"]["qdata"]))
    report["w1_equal"] = bool(torch.equal(m.layers[0].w1.weight.qdata, codes["layers.0.w1"]["qdata"]))
    report["scale_equal"] = bool(torch.allclose(m.layers[0].w1.weight.scale, codes["layers.0.w1"]["scale"].float()))
    report["zeros_zeroed"] = int(m.layers[0].wq.zeros.abs().sum()) == 0 and int(m.layers[0].w1.weight.zero_point.abs().sum()) == 0
    refusals = {}
    for name, bad in {
        "shape": {"output": codes_for((4, 32), (4, 1))},
        "range": {"output": {"qdata": torch.full((4, 64), 9, dtype=torch.int8), "scale": torch.ones(4, 2)}},
        "scale": {"output": {"qdata": torch.zeros((4, 64), dtype=torch.int8), "scale": torch.zeros(4, 2)}},
        "unknown": {"layers.9.wq": codes_for((8, 64), (8, 2))},
    }.items():
        try:
            ewc.inject(Model(), bad)
            refusals[name] = None
        except SystemExit as e:
            refusals[name] = str(e)
    report["refusals"] = refusals

    # LFM2: the state fix must ignore the carried state at position 0 and use it later.
    class Conv(nn.Module):
        def __init__(self, dim=4, L=3):
            super().__init__()
            self.conv = nn.Conv1d(dim, dim, kernel_size=L, groups=dim, bias=False)
            self.register_buffer("conv_state", torch.zeros(1, dim, L - 1))
            self.B_proj, self.C_proj, self.x_proj, self.out_proj = (nn.Linear(dim, dim, bias=False) for _ in range(4))

    torch.manual_seed(0)
    c = Conv()
    x = torch.randn(1, 5, 4)
    fresh = ewc.conv_forward(c, x, torch.tensor([0]))
    c.conv_state.fill_(3.0)  # what an earlier conversation left behind
    reset = ewc.conv_forward(c, x, torch.tensor([0]))
    c.conv_state.fill_(3.0)
    carried = ewc.conv_forward(c, x, torch.tensor([7]))
    report["reset_at_zero"] = bool(torch.allclose(fresh, reset))
    report["state_used_later"] = not bool(torch.allclose(fresh, carried))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
