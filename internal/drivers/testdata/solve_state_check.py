"""Checks that solve_model.py runs every calibration row as a sequence of its own on a tiny
decoder shaped like ExecuTorch's LFM2 (layer 0 a short-convolution block whose conv_state
buffer carries the last tokens of one call into the next, layer 1 an attention block), with
the KV cache off as in the solve, so no input_pos ever resets the state.
Argument: {"grid": the plan's grid, "blocks": Go's PlanBlocks(2, ["conv", "full_attention"])}.
Rows are A, B, A. Prints {"fixed": report, "unfixed": report}, "unfixed" with
solve_model.reset_states disabled (the code before the per-row reset), each report saying
whether the two A rows reached out_proj and layer 1 with identical inputs.
Written for exe-expo's driver tests; the convolution follows ExecuTorch's ShortConv
semantics (examples/models/lfm2/short_conv.py), not its text."""
import json
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import solve_model  # noqa: E402
import solve_model_check as tiny  # noqa: E402

DIM, L_CACHE = tiny.DIM, 3


class ShortConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.B_proj, self.C_proj, self.x_proj, self.out_proj = (nn.Linear(DIM, DIM, bias=False) for _ in range(4))
        self.conv = nn.Conv1d(DIM, DIM, kernel_size=L_CACHE, groups=DIM, bias=False)
        self.register_buffer("conv_state", torch.zeros(1, DIM, L_CACHE - 1))

    def forward(self, x):
        b, c, v = (f(x).transpose(-1, -2) for f in (self.B_proj, self.C_proj, self.x_proj))
        bx = torch.cat([self.conv_state, b * v], dim=-1)
        with torch.no_grad():
            self.conv_state.copy_(bx[..., -(L_CACHE - 1):])
        y = c * self.conv(bx)[..., : v.size(-1)]
        return self.out_proj(y.transpose(-1, -2).contiguous())

    def reset_cache(self):
        self.conv_state.zero_()


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.feed_forward = ShortConv(), tiny.FeedForward()
        self.attention_norm, self.ffn_norm = tiny.Norm(), tiny.Norm()

    def forward(self, h, cos, sin, options):
        h = h + self.conv(self.attention_norm(h))
        return h + self.feed_forward(self.ffn_norm(h)), None


class Model(tiny.Model):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([ConvBlock(), tiny.Block()])


def check(plan, rows, state):
    torch.manual_seed(0)
    m = Model().eval()
    m.load_state_dict(state)
    seen = {"out_proj": [], "layer1": []}
    m.layers[0].conv.out_proj.register_forward_pre_hook(lambda _m, a: seen["out_proj"].append(a[0].detach().clone()))
    m.layers[1].register_forward_pre_hook(lambda _m, a: seen["layer1"].append(a[0].detach().clone()))
    solve_model.solve_model(torch, m, rows, plan)
    report = {}
    for where, calls in seen.items():
        a1, b, a2 = calls[:3]  # the first pass: one call per row
        report[where + "_calls"] = len(calls)
        report[where + "_same"] = bool(torch.equal(a1, a2))
        report[where + "_b_differs"] = not torch.equal(a1, b)
    return report


def main():
    arg = json.loads(sys.argv[1])
    plan = dict(arg["grid"], blocks=arg["blocks"])
    torch.manual_seed(0)
    state = Model().state_dict()
    probs = torch.linspace(1, 0.05, tiny.VOCAB)
    a = torch.multinomial(probs, 16, replacement=True).tolist()
    b = torch.multinomial(probs, 16, replacement=True).tolist()
    rows = [a, b, a]
    out = {"fixed": check(plan, rows, state)}
    keep = solve_model.reset_states
    solve_model.reset_states = lambda model: None
    try:
        out["unfixed"] = check(plan, rows, state)
    finally:
        solve_model.reset_states = keep
    print(json.dumps(out))


if __name__ == "__main__":
    main()
