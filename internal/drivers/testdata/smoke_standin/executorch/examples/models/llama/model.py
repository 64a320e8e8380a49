"""Stand-in for ExecuTorch's Llama2Model in the solve's tests: it refuses a config the
solve must not build (a KV cache, a dtype other than fp32, a missing checkpoint or params
file) and builds a tiny decoder of ExecuTorch's layout with the params file's n_layers
(layers.<i>.attention.wq/wk/wv/wo, layers.<i>.feed_forward.w1/w2/w3, output; each block
called with (h, freqs_cos, freqs_sin, options)). Its weights are drawn from seed 0, not
read from the checkpoint; the vocabulary is VOCAB tokens, so the stand-in tokenizer's
model must be no larger."""

import json
import os

import torch
from torch import nn

DIM, HIDDEN, HEADS, VOCAB = 64, 96, 4, 64


class _Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(DIM))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class _Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(DIM, DIM, bias=False) for _ in range(4))

    def forward(self, x, cos, sin):
        t, hd = x.shape[1], DIM // HEADS
        q, k, v = (f(x).view(1, t, HEADS, hd).transpose(1, 2) for f in (self.wq, self.wk, self.wv))
        q, k = q * cos + q.flip(-1) * sin, k * cos + k.flip(-1) * sin
        mask = torch.full((t, t), float("-inf")).triu(1)
        a = torch.softmax(q @ k.transpose(-1, -2) / hd ** 0.5 + mask, dim=-1) @ v
        return self.wo(a.transpose(1, 2).reshape(1, t, DIM))


class _FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1, self.w3 = nn.Linear(DIM, HIDDEN, bias=False), nn.Linear(DIM, HIDDEN, bias=False)
        self.w2 = nn.Linear(HIDDEN, DIM, bias=False)

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention, self.feed_forward = _Attention(), _FeedForward()
        self.attention_norm, self.ffn_norm = _Norm(), _Norm()

    def forward(self, h, cos, sin, options):
        h = h + self.attention(self.attention_norm(h), cos, sin)
        return h + self.feed_forward(self.ffn_norm(h)), None


class _Transformer(nn.Module):
    def __init__(self, layers, full_logits):
        super().__init__()
        self.full_logits = full_logits
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(_Block() for _ in range(layers))
        self.norm, self.output = _Norm(), nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        t = tokens.shape[1]
        ang = torch.arange(t)[:, None] * torch.linspace(0.01, 1, DIM // HEADS)[None, :]
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h, _ = layer(h, ang.cos(), ang.sin(), {"input_pos": None})
        if not self.full_logits:  # as ExecuTorch 1.4.0's Transformer: the last position only
            h = h[:, -1, :]
        return self.output(self.norm(h))


class Llama2Model:
    def __init__(self, llm_config):
        c = llm_config
        if c.model.use_kv_cache or c.model.use_sdpa_with_kv_cache or c.model.dtype_override != "fp32":
            raise ValueError("the solve builds the eager model without KV cache, in fp32")
        if not os.path.isfile(c.base.checkpoint):
            raise FileNotFoundError("no checkpoint %s" % c.base.checkpoint)
        with open(c.base.params) as f:
            self.layers = int(json.load(f)["n_layers"])
        self.full_logits = bool(c.debug.generate_full_logits)

    def get_eager_model(self):
        torch.manual_seed(0)
        return _Transformer(self.layers, self.full_logits)
