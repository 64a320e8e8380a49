"""Checks solve_model.py's sequential solve on a tiny decoder shaped like ExecuTorch's
(layers.<i>.attention.wq/wk/wv/wo, layers.<i>.feed_forward.w1/w2/w3, output; blocks called
with positional (h, freqs_cos, freqs_sin, options) and returning (h, None)).
Argument: {"grid": the plan's grid, "blocks": Go's PlanBlocks for LAYERS layers}, as JSON.
Prints a JSON report."""
import json
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import solve_model  # noqa: E402

DIM, HIDDEN, VOCAB, LAYERS, HEADS = 64, 128, 97, 3, 4


class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(DIM))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(DIM, DIM, bias=False) for _ in range(4))

    def forward(self, x, cos, sin):
        t, hd = x.shape[1], DIM // HEADS
        q, k, v = (f(x).view(1, t, HEADS, hd).transpose(1, 2) for f in (self.wq, self.wk, self.wv))
        q = q * cos + q.flip(-1) * sin
        k = k * cos + k.flip(-1) * sin
        mask = torch.full((t, t), float("-inf")).triu(1)
        a = torch.softmax(q @ k.transpose(-1, -2) / hd ** 0.5 + mask, dim=-1) @ v
        return self.wo(a.transpose(1, 2).reshape(1, t, DIM))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w3 = nn.Linear(DIM, HIDDEN, bias=False), nn.Linear(DIM, HIDDEN, bias=False)
        self.w2 = nn.Linear(HIDDEN, DIM, bias=False)

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention, self.feed_forward = Attention(), FeedForward()
        self.attention_norm, self.ffn_norm = Norm(), Norm()

    def forward(self, h, cos, sin, options):
        h = h + self.attention(self.attention_norm(h), cos, sin)
        return h + self.feed_forward(self.ffn_norm(h)), None


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm, self.output = Norm(), nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        t = tokens.shape[1]
        ang = torch.arange(t)[:, None] * torch.linspace(0.01, 1, DIM // HEADS)[None, :]
        cos, sin = ang.cos(), ang.sin()
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h, _ = layer(h, cos, sin, {"input_pos": None})
        return self.output(self.norm(h))


def groups(i):
    p = "layers.%d." % i
    return [[p + "attention.wq", p + "attention.wk", p + "attention.wv"], [p + "attention.wo"],
            [p + "feed_forward.w1", p + "feed_forward.w3"], [p + "feed_forward.w2"]]


def blocked():
    out = [{"module": "layers.%d" % i, "groups": groups(i)} for i in range(LAYERS)]
    for i in range(LAYERS - 1):
        out[i]["next"] = "layers.%d" % (i + 1)
    return out + [{"module": "", "groups": [["output"]]}]


def flat():
    return [{"module": "", "groups": groups(i)} for i in range(LAYERS)] + [{"module": "", "groups": [["output"]]}]


def rtn_model(model, plan):
    g = plan["group_size"]
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Linear):
            import gptq

            q, s = gptq.rtn(torch, mod.weight.detach().to(torch.float64), plan)
            s = s.to(torch.bfloat16).to(torch.float64)
            with torch.no_grad():
                mod.weight.copy_((q * s.repeat_interleave(g, dim=1)).float())
    return model


def main():
    arg = json.loads(sys.argv[1])
    grid, go_blocks = arg["grid"], arg["blocks"]
    torch.manual_seed(0)
    base = Model().eval()
    # correlated inputs: tokens drawn from a skewed distribution
    probs = torch.linspace(1, 0.05, VOCAB)
    rows = [torch.multinomial(probs, 24 + (i % 3) * 8, replacement=True).tolist() for i in range(24)]
    held = [torch.multinomial(probs, 32, replacement=True).tolist() for _ in range(6)]
    report = {}
    codes = {}
    report["go_blocks_match"] = go_blocks == blocked()
    for name, blocks in (("blocked", go_blocks), ("flat", flat())):
        m = Model()
        m.load_state_dict(base.state_dict())
        plan = dict(grid, blocks=blocks)
        codes[name], stats = solve_model.solve_model(torch, m.eval(), rows, plan)
        report[name + "_linears"] = len(stats)
        if name == "blocked":
            gmodel = m
            report["codes_in_range"] = all(int(c["qdata"].min()) >= -8 and int(c["qdata"].max()) <= 7 for c in codes[name].values())
            report["scales_positive"] = all(bool((c["scale"].float() > 0).all()) for c in codes[name].values())
    same = sum(int((codes["blocked"][k]["qdata"] == codes["flat"][k]["qdata"]).sum()) for k in codes["flat"])
    total = sum(codes["flat"][k]["qdata"].numel() for k in codes["flat"])
    report["blocked_equals_flat"] = same / total
    r = Model()
    r.load_state_dict(base.state_dict())
    rtn = rtn_model(r.eval(), grid)
    with torch.no_grad():
        err = lambda m: sum(float(((m(torch.tensor([x])) - base(torch.tensor([x]))) ** 2).mean()) for x in held)  # noqa: E731
        report["error_gptq"], report["error_rtn"] = err(gmodel), err(rtn)
    try:
        solve_model.solve_model(torch, Model(), rows, dict(grid, blocks=[{"module": "", "groups": [["layers.0.attention.wz"]]}]))
        report["missing"] = None
    except Exception as e:  # noqa: BLE001
        report["missing"] = str(e)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
