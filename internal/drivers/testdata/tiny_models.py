"""Tiny random Hugging Face-layout models, and a numerical check of their conversion.

Written for exe-expo's driver tests (no third-party source copied). Two commands:

  tiny_models.py make FAMILY DIR [--extra NAME]
      writes DIR/model.safetensors (or two shards and model.safetensors.index.json) in the
      real safetensors format, built here with struct and json, and DIR/facts.json
      {layers, heads, kv_heads, tied}.
  tiny_models.py make-all DIR
      every family into DIR/<family>, and gptq_layer.py's layer into DIR/gptq: one torch
      start-up instead of five.
  tiny_models.py check-all JOBS.json
      JOBS is {name: ["model", FAMILY, DIR, CHECKPOINT] | ["gptq", DIR, CODES]}; prints
      {name: report} with the reports below.
  tiny_models.py check FAMILY DIR CHECKPOINT
      runs the whole tiny model twice: from the HF tensors with HF's conventions
      (rotate_half RoPE, fused LFM2 in_proj), and from the converted checkpoint with
      ExecuTorch's (interleaved complex RoPE when use_hf_rope is false, split B/C/x
      projections), and prints {"max_abs_diff", "max_abs", "allclose", "per_layer"}.
"""

import json
import math
import struct
import sys

import torch

DIM, HEADS, KV_HEADS, HEAD_DIM, HIDDEN, VOCAB, LAYERS = 64, 4, 2, 16, 96, 50, 2
THETA, EPS, TOKENS = 10000.0, 1e-6, 7

SAFE_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
TORCH_DTYPES = {v: k for k, v in SAFE_DTYPES.items()}

FAMILIES = {
    # dtype, tied, sharded, HF uses rotate_half RoPE but ExecuTorch runs interleaved
    "llama": dict(dtype=torch.float16, tied=True, sharded=False, interleaved=True),
    "qwen2_5": dict(dtype=torch.bfloat16, tied=False, sharded=False, interleaved=False),
    "qwen3": dict(dtype=torch.bfloat16, tied=False, sharded=True, interleaved=False),
    "lfm2": dict(dtype=torch.float32, tied=True, sharded=False, interleaved=False),
}
LFM2_LAYER_TYPES = ["conv", "full_attention"]


# ---- safetensors, by hand -------------------------------------------------------------

def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.float32:
        return t.numpy().tobytes()
    return t.view(torch.int16).numpy().tobytes()


def write_safetensors(path, tensors):
    header, offset = {}, 0
    for name, t in tensors.items():
        n = t.numel() * t.element_size()
        header[name] = {"dtype": SAFE_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + n]}
        offset += n
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for t in tensors.values():
            f.write(tensor_bytes(t))


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        dtype = TORCH_DTYPES[info["dtype"]]
        out[name] = torch.frombuffer(bytearray(data[start:end]), dtype=dtype).view(info["shape"])
    return out


# ---- tiny models ------------------------------------------------------------------------

def rnd(*shape, scale=0.2):
    return torch.randn(*shape) * scale


def attention_tensors(p, family):
    t = {p + "self_attn.q_proj.weight": rnd(HEADS * HEAD_DIM, DIM),
         p + "self_attn.k_proj.weight": rnd(KV_HEADS * HEAD_DIM, DIM),
         p + "self_attn.v_proj.weight": rnd(KV_HEADS * HEAD_DIM, DIM)}
    if family == "lfm2":
        t[p + "self_attn.out_proj.weight"] = rnd(DIM, HEADS * HEAD_DIM)
        t[p + "self_attn.q_layernorm.weight"] = 1 + rnd(HEAD_DIM)
        t[p + "self_attn.k_layernorm.weight"] = 1 + rnd(HEAD_DIM)
        return t
    t[p + "self_attn.o_proj.weight"] = rnd(DIM, HEADS * HEAD_DIM)
    if family == "qwen2_5":
        t[p + "self_attn.q_proj.bias"] = rnd(HEADS * HEAD_DIM)
        t[p + "self_attn.k_proj.bias"] = rnd(KV_HEADS * HEAD_DIM)
        t[p + "self_attn.v_proj.bias"] = rnd(KV_HEADS * HEAD_DIM)
    if family == "qwen3":
        t[p + "self_attn.q_norm.weight"] = 1 + rnd(HEAD_DIM)
        t[p + "self_attn.k_norm.weight"] = 1 + rnd(HEAD_DIM)
    return t


def layer_tensors(i, family):
    p = "model.layers.%d." % i
    if family == "lfm2":
        t = {p + "operator_norm.weight": 1 + rnd(DIM), p + "ffn_norm.weight": 1 + rnd(DIM),
             p + "feed_forward.w1.weight": rnd(HIDDEN, DIM),
             p + "feed_forward.w2.weight": rnd(DIM, HIDDEN),
             p + "feed_forward.w3.weight": rnd(HIDDEN, DIM)}
        if LFM2_LAYER_TYPES[i] == "conv":
            t[p + "conv.conv.weight"] = rnd(DIM, 1, 3)
            t[p + "conv.in_proj.weight"] = rnd(3 * DIM, DIM)
            t[p + "conv.out_proj.weight"] = rnd(DIM, DIM)
        else:
            t.update(attention_tensors(p, family))
        return t
    t = {p + "input_layernorm.weight": 1 + rnd(DIM),
         p + "post_attention_layernorm.weight": 1 + rnd(DIM),
         p + "mlp.gate_proj.weight": rnd(HIDDEN, DIM),
         p + "mlp.down_proj.weight": rnd(DIM, HIDDEN),
         p + "mlp.up_proj.weight": rnd(HIDDEN, DIM)}
    t.update(attention_tensors(p, family))
    if family == "llama":
        t[p + "self_attn.rotary_emb.inv_freq"] = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
    return t


def make(family, out_dir, extra):
    torch.manual_seed(sorted(FAMILIES).index(family) + 1)
    spec = FAMILIES[family]
    t = {"model.embed_tokens.weight": rnd(VOCAB, DIM, scale=1.0)}
    for i in range(LAYERS):
        t.update(layer_tensors(i, family))
    t["model.embedding_norm.weight" if family == "lfm2" else "model.norm.weight"] = 1 + rnd(DIM)
    if not spec["tied"]:
        t["lm_head.weight"] = rnd(VOCAB, DIM)
    if extra:
        t[extra] = rnd(4)
    t = {k: v.to(spec["dtype"]) if "inv_freq" not in k else v for k, v in t.items()}
    if spec["sharded"]:
        names = list(t)
        halves = [names[: len(names) // 2], names[len(names) // 2:]]
        weight_map = {}
        for j, part in enumerate(halves):
            fname = "model-%05d-of-00002.safetensors" % (j + 1)
            write_safetensors("%s/%s" % (out_dir, fname), {k: t[k] for k in part})
            weight_map.update({k: fname for k in part})
        with open(out_dir + "/model.safetensors.index.json", "w") as f:
            json.dump({"metadata": {}, "weight_map": weight_map}, f)
    else:
        write_safetensors(out_dir + "/model.safetensors", t)
    with open(out_dir + "/facts.json", "w") as f:
        json.dump({"layers": LAYERS, "heads": HEADS, "kv_heads": KV_HEADS, "tied": spec["tied"]}, f)


# ---- forward passes ---------------------------------------------------------------------

def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def freqs():
    inv = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2).double() / HEAD_DIM))
    return torch.outer(torch.arange(TOKENS).double(), inv)  # [T, hd/2]


def rope_hf(x):
    """HF: rotate_half over the two halves of each head."""
    f = torch.cat([freqs(), freqs()], dim=-1)[:, None, :]
    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * f.cos() + rot * f.sin()


def rope_interleaved(x):
    """ExecuTorch with use_hf_rope false: pairs (2i, 2i+1) rotated as complex numbers."""
    f = freqs()[:, None, :]
    xr, xi = x.reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
    out_r = xr * f.cos() - xi * f.sin()
    out_i = xr * f.sin() + xi * f.cos()
    return torch.stack([out_r, out_i], dim=-1).flatten(-2)


def attend(q, k, v):
    k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
    v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
    scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(HEAD_DIM)
    mask = torch.triu(torch.ones(TOKENS, TOKENS, dtype=torch.bool), 1)
    scores = scores.masked_fill(mask, float("-inf")).softmax(-1)
    return torch.einsum("hts,shd->thd", scores, v).reshape(TOKENS, -1)


def linear(x, sd, w, b=None):
    y = x @ sd[w].T
    return y + sd[b] if b and b in sd else y


def qkv(x, sd, names, norms):
    q = linear(x, sd, names[0] + ".weight", names[0] + ".bias").reshape(TOKENS, HEADS, HEAD_DIM)
    k = linear(x, sd, names[1] + ".weight", names[1] + ".bias").reshape(TOKENS, KV_HEADS, HEAD_DIM)
    v = linear(x, sd, names[2] + ".weight", names[2] + ".bias").reshape(TOKENS, KV_HEADS, HEAD_DIM)
    if norms[0] in sd:
        q, k = rms(q, sd[norms[0]]), rms(k, sd[norms[1]])
    return q, k, v


def hf_attention(x, sd, p, family):
    a = p + "self_attn."
    nq, nk = ("q_layernorm", "k_layernorm") if family == "lfm2" else ("q_norm", "k_norm")
    q, k, v = qkv(x, sd, [a + "q_proj", a + "k_proj", a + "v_proj"], [a + nq + ".weight", a + nk + ".weight"])
    o = attend(rope_hf(q), rope_hf(k), v)
    return o @ sd[a + ("out_proj" if family == "lfm2" else "o_proj") + ".weight"].T


def et_attention(x, sd, p, family):
    a = p + "attention."
    q, k, v = qkv(x, sd, [a + "wq", a + "wk", a + "wv"], [a + "q_norm_fn.weight", a + "k_norm_fn.weight"])
    rope = rope_interleaved if FAMILIES[family]["interleaved"] else rope_hf
    return attend(rope(q), rope(k), v) @ sd[a + "wo.weight"].T


def hf_conv(x, sd, p):
    bcx = (x @ sd[p + "conv.in_proj.weight"].T).T  # [3*dim, T]
    b, c, xx = bcx.chunk(3, dim=0)
    w = sd[p + "conv.conv.weight"]
    conv = torch.nn.functional.conv1d((b * xx)[None], w, padding=w.shape[-1] - 1, groups=DIM)[0, :, :TOKENS]
    return (c * conv).T @ sd[p + "conv.out_proj.weight"].T


def et_conv(x, sd, p):
    b = (x @ sd[p + "conv.B_proj.weight"].T).T
    c = (x @ sd[p + "conv.C_proj.weight"].T).T
    xx = (x @ sd[p + "conv.x_proj.weight"].T).T
    w = sd[p + "conv.conv.weight"]
    bx = torch.cat([torch.zeros(DIM, w.shape[-1] - 1, dtype=x.dtype), b * xx], dim=-1)
    conv = torch.nn.functional.conv1d(bx[None], w, groups=DIM)[0, :, :TOKENS]
    return (c * conv).T @ sd[p + "conv.out_proj.weight"].T


def ffn(x, sd, w1, w2, w3):
    return (torch.nn.functional.silu(x @ sd[w1].T) * (x @ sd[w3].T)) @ sd[w2].T


def hf_forward(sd, family, tokens):
    h, per_layer = sd["model.embed_tokens.weight"][tokens], []
    for i in range(LAYERS):
        p = "model.layers.%d." % i
        if family == "lfm2":
            n1, n2, mlp = p + "operator_norm.weight", p + "ffn_norm.weight", p + "feed_forward."
            w = (mlp + "w1.weight", mlp + "w2.weight", mlp + "w3.weight")
            mix = hf_conv if LFM2_LAYER_TYPES[i] == "conv" else (lambda x, sd, p: hf_attention(x, sd, p, family))
        else:
            n1, n2, mlp = p + "input_layernorm.weight", p + "post_attention_layernorm.weight", p + "mlp."
            w = (mlp + "gate_proj.weight", mlp + "down_proj.weight", mlp + "up_proj.weight")
            mix = lambda x, sd, p: hf_attention(x, sd, p, family)
        h = h + mix(rms(h, sd[n1]), sd, p)
        h = h + ffn(rms(h, sd[n2]), sd, *w)
        per_layer.append(h)
    final = "model.embedding_norm.weight" if family == "lfm2" else "model.norm.weight"
    head = sd.get("lm_head.weight", sd["model.embed_tokens.weight"])
    return rms(h, sd[final]) @ head.T, per_layer


def et_forward(sd, family, tokens):
    h, per_layer = sd["tok_embeddings.weight"][tokens], []
    for i in range(LAYERS):
        p = "layers.%d." % i
        conv = family == "lfm2" and LFM2_LAYER_TYPES[i] == "conv"
        mix = et_conv if conv else (lambda x, sd, p: et_attention(x, sd, p, family))
        h = h + mix(rms(h, sd[p + "attention_norm.weight"]), sd, p)
        f = p + "feed_forward."
        h = h + ffn(rms(h, sd[p + "ffn_norm.weight"]), sd, f + "w1.weight", f + "w2.weight", f + "w3.weight")
        per_layer.append(h)
    return rms(h, sd["norm.weight"]) @ sd["output.weight"].T, per_layer


def load_hf(out_dir):
    import glob
    sd = {}
    for path in sorted(glob.glob(out_dir + "/*.safetensors")):
        sd.update(read_safetensors(path))
    return sd


def check(family, out_dir, checkpoint):
    print(json.dumps(compare(family, out_dir, checkpoint)))


def compare(family, out_dir, checkpoint):
    hf = {k: v.double() for k, v in load_hf(out_dir).items()}
    et = torch.load(checkpoint, map_location="cpu", weights_only=True)
    et = {k: v.double() for k, v in et.items()}
    tokens = torch.randint(0, VOCAB, (TOKENS,), generator=torch.Generator().manual_seed(7))
    want, want_layers = hf_forward(hf, family, tokens)
    got, got_layers = et_forward(et, family, tokens)
    diff = (want - got).abs().max().item()
    return {
        "max_abs_diff": diff, "max_abs": want.abs().max().item(),
        "allclose": bool(torch.allclose(want, got, rtol=1e-9, atol=1e-9)),
        "per_layer": [(a - b).abs().max().item() for a, b in zip(want_layers, got_layers)],
        "checkpoint_tensors": len(et)}


def make_all(root):
    import os
    import gptq_layer
    for family in FAMILIES:
        os.makedirs(os.path.join(root, family))
        make(family, os.path.join(root, family), None)
    os.makedirs(os.path.join(root, "gptq"))
    gptq_layer.make(os.path.join(root, "gptq"))


def check_all(jobs_path):
    import gptq_layer
    with open(jobs_path) as f:
        jobs = json.load(f)
    out = {}
    for name, job in sorted(jobs.items()):
        if job[0] == "model":
            out[name] = compare(*job[1:])
        else:
            out[name] = gptq_layer.report(*job[1:])
    print(json.dumps(out))


def main():
    cmd, family = sys.argv[1], sys.argv[2]
    out_dir = sys.argv[3] if len(sys.argv) > 3 else None
    if cmd == "make":
        extra = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--extra" else None
        make(family, out_dir, extra)
    elif cmd == "make-all":
        make_all(family)
    elif cmd == "check-all":
        check_all(family)
    elif cmd == "check":
        check(family, out_dir, sys.argv[4])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
