"""Full-size random checkpoints for exe-expo's driver benchmarks (written for this package).

  bench_model.py model FAMILY DIR   Qwen3-0.6B's shapes (28 layers, dim 1024, 16/8 heads of
                                    128, MLP 3072, vocab 151936, tied) in bf16, as one
                                    model.safetensors of about 1.2 GB, written tensor by
                                    tensor; FAMILY llama drops the q/k norms so that
                                    convert.py un-permutes q and k.
  bench_model.py linear DIR ROWS COLS TOKENS
                                    weight.pt [ROWS, COLS] and activations.pt [TOKENS, COLS].
"""

import json
import struct
import sys

import torch

DIM, LAYERS, HEADS, KV, HEAD_DIM, HIDDEN, VOCAB = 1024, 28, 16, 8, 128, 3072, 151936


def shapes(family):
    out = [("model.embed_tokens.weight", [VOCAB, DIM])]
    for i in range(LAYERS):
        p = "model.layers.%d." % i
        out += [(p + "self_attn.q_proj.weight", [HEADS * HEAD_DIM, DIM]),
                (p + "self_attn.k_proj.weight", [KV * HEAD_DIM, DIM]),
                (p + "self_attn.v_proj.weight", [KV * HEAD_DIM, DIM]),
                (p + "self_attn.o_proj.weight", [DIM, HEADS * HEAD_DIM]),
                (p + "input_layernorm.weight", [DIM]),
                (p + "post_attention_layernorm.weight", [DIM]),
                (p + "mlp.gate_proj.weight", [HIDDEN, DIM]),
                (p + "mlp.down_proj.weight", [DIM, HIDDEN]),
                (p + "mlp.up_proj.weight", [HIDDEN, DIM])]
        if family == "qwen3":
            out += [(p + "self_attn.q_norm.weight", [HEAD_DIM]), (p + "self_attn.k_norm.weight", [HEAD_DIM])]
    return out + [("model.norm.weight", [DIM])]


def model(family, out_dir):
    header, off = {}, 0
    for name, shape in shapes(family):
        n = 2
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + n]}
        off += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    g = torch.Generator().manual_seed(0)
    with open(out_dir + "/model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for name, shape in shapes(family):
            t = (torch.randn(shape, generator=g) * 0.02).to(torch.bfloat16)
            f.write(t.view(torch.int16).numpy().tobytes())
    with open(out_dir + "/facts.json", "w") as f:
        json.dump({"layers": LAYERS, "heads": HEADS, "kv_heads": KV, "tied": True}, f)


def linear(out_dir, rows, cols, tokens):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(tokens, 64, generator=g) @ torch.randn(64, cols, generator=g)
    x += 0.1 * torch.randn(tokens, cols, generator=g)
    torch.save((torch.randn(rows, cols, generator=g) * 0.02).to(torch.bfloat16), out_dir + "/weight.pt")
    torch.save(x, out_dir + "/activations.pt")


if __name__ == "__main__":
    if sys.argv[1] == "model":
        model(sys.argv[2], sys.argv[3])
    else:
        linear(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
