"""Imports exe-expo's MediaTek overlay applied to ExecuTorch v1.4.0's examples/mediatek, and
runs its LFM2 model against an independent full-sequence LFM2.

  check_overlay.py EXAMPLES WEIGHTS_CONFIG ARGV_JSON

EXAMPLES is the applied copy, WEIGHTS_CONFIG the config.json the recipe writes for an LFM2
model, ARGV_JSON the recipe's command line. Prints one JSON object; internal/mtkoverlay's test
asserts on it. The modules the NeuroPilot virtualenv has and this machine lacks
(executorch, torchao, safetensors) are stubs that only satisfy imports; torch is real
(Debian's 1.13, whose missing torch.export gets a stand-in Dim). Written for exe-expo.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types

STUBBED = ("executorch", "torchao", "safetensors")


class _Placeholder:
    """Whatever a stubbed module is asked for: importable, never used by these checks."""

    def __init__(self, *args, **kwargs):
        pass


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (_Placeholder,), {})


class _Dim:
    """torch.export.Dim's arithmetic, enough for get_example_inputs' dynamic shapes."""

    STATIC = "static"

    def __init__(self, name, max=None, offset=0):
        self.name, self.max, self.offset = name, max, offset

    def __add__(self, n):
        return _Dim(self.name, self.max, self.offset + n)

    def describe(self):
        return self.name if self.offset == 0 else "%s+%d" % (self.name, self.offset)


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in STUBBED or fullname == "torch.export":
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        if spec.name == "torch.export":
            m.Dim = _Dim
        return m

    def exec_module(self, module):
        pass


def install_stubs():
    sys.meta_path.append(_StubFinder())  # last: real modules win


def load_script(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def error_of(fn):
    try:
        fn()
    except (ValueError, KeyError, RuntimeError) as e:
        return "%s: %s" % (type(e).__name__, e.args[0] if e.args else "")
    return ""


def check_helpers(examples, weights_config):
    """The patched helpers know lfm2, and still know qwen3."""
    from aot_utils.llm_utils import sanity_checks, utils

    out = {}
    config, _, chunk_class = utils.resolve_model_classes(weights_config, bypass_tokenizer=True)
    out["lfm2_classes"] = [type(config).__name__, chunk_class.__name__]
    out["lfm2_normalized"] = type(utils.get_normalized_config(weights_config)).__name__
    sanity_checks.check_supported_model(config)
    sanity_checks.check_supported_tokenizer(config)
    out["lfm2_tokenizer"] = config.tokenizer
    config.model_type = "nosuch"
    out["unknown_model"] = error_of(lambda: sanity_checks.check_supported_model(config))

    qwen = os.path.join(os.path.dirname(weights_config), "..", "qwen3-config.json")
    with open(qwen, "w") as f:
        json.dump({"model_type": "qwen3", "vocab_size": 64, "hidden_size": 32, "intermediate_size": 64,
                   "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                   "max_position_embeddings": 128}, f)
    config, _, chunk_class = utils.resolve_model_classes(qwen, bypass_tokenizer=True)
    out["qwen3_classes"] = [type(config).__name__, chunk_class.__name__]
    return out


def check_config(weights_config):
    """Lfm2Config reads the recipe's config.json and refuses what it cannot build."""
    from models.llm_models.configuration_lfm2 import Lfm2Config

    with open(weights_config) as f:
        raw = json.load(f)
    c = Lfm2Config(**raw, verbose=False)
    out = {"config": {"intermediate_size": c.intermediate_size, "head_dim": c.head_dim,
                      "layer_types": c.layer_types, "rope_theta": c.rope_theta,
                      "tie_word_embeddings": c.tie_word_embeddings, "conv_L_cache": c.conv_L_cache,
                      "norm_eps": c.norm_eps, "bos": c.bos_token_id, "eos": c.eos_token_id}}
    out["refusals"] = {
        "conv_L_cache": error_of(lambda: Lfm2Config(**dict(raw, conv_L_cache=4), verbose=False)),
        "conv_bias": error_of(lambda: Lfm2Config(**dict(raw, conv_bias=True), verbose=False)),
        "layer_types": error_of(lambda: Lfm2Config(**dict(raw, layer_types=["conv"]), verbose=False)),
        "scaling": error_of(lambda: Lfm2Config(**dict(raw, rope_scaling={"rope_type": "yarn"}), verbose=False)),
    }
    return out


def check_argv(examples, argv):
    """The recipe's command line parses with lfm2.py's own parser, and names real files."""
    script = load_script(os.path.join(examples, argv[1]), "lfm2_export")
    parser = script.get_argument_parser()
    args = vars(parser.parse_args(argv[2:]))
    out = {"args": args, "files_exist": {k: os.path.exists(os.path.join(examples, args[k]))
                                         for k in ("dataset", "preformatter")}}
    try:
        parser.parse_args(argv[2:] + ["--no_such_flag"])
        out["unknown_flag"] = "accepted"
    except SystemExit as e:
        out["unknown_flag"] = "exit %s" % e.code
    return out, script


# --- the tiny LFM2 and the independent reference ---------------------------------------

DIM, HEADS, KV_HEADS, VOCAB, KERNEL, CACHE = 32, 4, 2, 48, 3, 32
TYPES = ["conv", "full_attention", "conv", "full_attention"]
THETA, EPS = 1000000.0, 1e-5


def tiny_config():
    from models.llm_models.configuration_lfm2 import Lfm2Config

    return Lfm2Config(model_type="lfm2", vocab_size=VOCAB, hidden_size=DIM, num_hidden_layers=len(TYPES),
                      num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=256,
                      block_ff_dim=96, block_auto_adjust_ff_dim=True, block_ffn_dim_multiplier=1.0,
                      block_multiple_of=16, norm_eps=EPS, rope_theta=THETA, conv_L_cache=KERNEL,
                      layer_types=TYPES, tie_embedding=True, verbose=False)


def tiny_weights(torch, ffn):
    """Hugging Face LFM2 tensor names, tied embeddings (no lm_head.weight)."""
    g = torch.Generator().manual_seed(7)

    def rnd(*shape, scale=0.2):
        return torch.randn(*shape, generator=g) * scale

    hd = DIM // HEADS
    sd = {"model.embed_tokens.weight": rnd(VOCAB, DIM, scale=1.0), "model.embedding_norm.weight": 1 + rnd(DIM, scale=0.1)}
    for i, kind in enumerate(TYPES):
        p = "model.layers.%d." % i
        sd.update({p + "operator_norm.weight": 1 + rnd(DIM, scale=0.1), p + "ffn_norm.weight": 1 + rnd(DIM, scale=0.1),
                   p + "feed_forward.w1.weight": rnd(ffn, DIM), p + "feed_forward.w3.weight": rnd(ffn, DIM),
                   p + "feed_forward.w2.weight": rnd(DIM, ffn)})
        if kind == "conv":
            sd.update({p + "conv.in_proj.weight": rnd(3 * DIM, DIM), p + "conv.conv.weight": rnd(DIM, 1, KERNEL, scale=0.5),
                       p + "conv.out_proj.weight": rnd(DIM, DIM)})
        else:
            sd.update({p + "self_attn.q_proj.weight": rnd(HEADS * hd, DIM), p + "self_attn.k_proj.weight": rnd(KV_HEADS * hd, DIM),
                       p + "self_attn.v_proj.weight": rnd(KV_HEADS * hd, DIM), p + "self_attn.out_proj.weight": rnd(DIM, HEADS * hd),
                       p + "self_attn.q_layernorm.weight": 1 + rnd(hd, scale=0.1), p + "self_attn.k_layernorm.weight": 1 + rnd(hd, scale=0.1)})
    return sd


def reference_logits(torch, sd, ids):
    """LFM2 over the whole sequence at once, as transformers computes it: the fused in_proj,
    a causal convolution padded with zeros, rotate-half RoPE, per-head q/k norms, GQA by
    repeating key/value heads, a causal softmax, SwiGLU, the final embedding_norm."""
    F = torch.nn.functional
    hd, T = DIM // HEADS, len(ids)

    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w

    inv = 1.0 / (THETA ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    ang = torch.outer(torch.arange(T, dtype=torch.float64), inv)
    cos, sin = torch.cat([ang, ang], -1).cos().float(), torch.cat([ang, ang], -1).sin().float()

    def rope(x):  # (heads, T, hd)
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    x = sd["model.embed_tokens.weight"][ids]
    for i, kind in enumerate(TYPES):
        p = "model.layers.%d." % i
        h = rms(x, sd[p + "operator_norm.weight"])
        if kind == "conv":
            b, c, v = (h @ sd[p + "conv.in_proj.weight"].T).T.chunk(3, dim=0)
            conv = F.conv1d((b * v)[None], sd[p + "conv.conv.weight"], padding=KERNEL - 1, groups=DIM)[0, :, :T]
            y = (c * conv).T @ sd[p + "conv.out_proj.weight"].T
        else:
            a = p + "self_attn."
            q = rms((h @ sd[a + "q_proj.weight"].T).view(T, HEADS, hd), sd[a + "q_layernorm.weight"]).transpose(0, 1)
            k = rms((h @ sd[a + "k_proj.weight"].T).view(T, KV_HEADS, hd), sd[a + "k_layernorm.weight"]).transpose(0, 1)
            v = (h @ sd[a + "v_proj.weight"].T).view(T, KV_HEADS, hd).transpose(0, 1)
            q, k = rope(q), rope(k)
            k = k.repeat_interleave(HEADS // KV_HEADS, dim=0)
            v = v.repeat_interleave(HEADS // KV_HEADS, dim=0)
            s = q @ k.transpose(1, 2) / hd ** 0.5
            s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
            y = (s.softmax(-1) @ v).transpose(0, 1).reshape(T, DIM) @ sd[a + "out_proj.weight"].T
        x = x + y
        f = rms(x, sd[p + "ffn_norm.weight"])
        w1, w2, w3 = (sd[p + "feed_forward.%s.weight" % n] for n in ("w1", "w2", "w3"))
        x = x + (F.silu(f @ w1.T) * (f @ w3.T)) @ w2.T
    return rms(x, sd["model.embedding_norm.weight"]) @ sd["model.embed_tokens.weight"].T


def tiny_chunks(torch, config, sd):
    from models.llm_models.modeling_lfm2 import Lfm2ModelChunk

    half = len(TYPES) // 2
    return [Lfm2ModelChunk(config, half, i, include_tail=(i == 1)).load_weights(dict(sd), i * half) for i in range(2)]


def check_numerics(script):
    """Streaming through the chunks gives the reference's logits: prompt blocks, single
    tokens, a right-padded block with the runner's cache rollback, and left pads."""
    import torch
    from aot_utils.llm_utils.utils import generate_mask
    from models.llm_models.modeling_lfm2 import Lfm2ShortConv, rotary_table, short_conv_inputs, state_shapes

    torch.manual_seed(0)
    config = tiny_config()
    sd = tiny_weights(torch, config.intermediate_size)
    chunks = tiny_chunks(torch, config, sd)
    embed = torch.nn.Embedding(VOCAB, DIM)
    embed.weight.data.copy_(sd["model.embed_tokens.weight"])
    rot = rotary_table(config, CACHE)
    ids = [1, 5, 9, 2, 33, 17, 4, 40, 8, 12, 3, 21, 30, 7]
    ref = reference_logits(torch, sd, ids)
    out = {"ffn": config.intermediate_size}

    def fresh():
        return script.initial_states(config, chunks, CACHE)

    def feed(states, pos, tokens, valid=None):
        n = len(tokens)
        valid = n if valid is None else valid
        mask = generate_mask(CACHE, pos, n, valid)
        cv, cs = short_conv_inputs(n, valid, KERNEL)
        hidden = embed(torch.tensor([tokens]))
        return script.run_chunks(chunks, hidden, mask, rot[:, :, pos:pos + n, :], cv, cs, states)[0]

    # prompt blocks of 7 and 4, then three single tokens
    states, diffs, pos = fresh(), [], 0
    for block in (ids[0:7], ids[7:11], [ids[11]], [ids[12]], [ids[13]]):
        logits = feed(states, pos, block)
        diffs.append(float((logits - ref[pos:pos + len(block)]).abs().max()))
        pos += len(block)
    out["streamed"] = max(diffs)

    # a block of 8 holding 5 real tokens: the runner rolls the 3 padded cache rows back
    states = fresh()
    logits = feed(states, 0, ids[:5] + [0, 0, 0], valid=5)
    padded = [float((logits[:5] - ref[:5]).abs().max())]
    for chunk_states, chunk in zip(states, chunks):
        i = 0
        for kind in chunk.layer_types:
            if kind == "conv":
                i += 1
                continue
            for j in (i, i + 1):
                s = chunk_states[j]
                chunk_states[j] = torch.cat([torch.zeros_like(s[:, :, :3]), s[:, :, :-3]], dim=2)
            i += 2
    for pos in range(5, 8):
        padded.append(float((feed(states, pos, [ids[pos]]) - ref[pos]).abs().max()))
    out["right_padded"] = max(padded)

    # left pads read like the zero state of a new sequence
    conv = Lfm2ShortConv(config)
    x = torch.randn(1, 5, DIM)
    zero = torch.zeros(1, DIM, KERNEL - 1)
    y, s = conv(x, *short_conv_inputs(5, 5, KERNEL), zero)
    yp, sp = conv(torch.cat([torch.randn(1, 3, DIM) * 5, x], dim=1), *short_conv_inputs(8, 5, KERNEL, left_padding=True), zero)
    out["left_padded"] = max(float((yp[:, 3:] - y).abs().max()), float((sp - s).abs().max()))

    # the script's own loop: greedy replies equal the reference's
    reply_ids = list(ids[:6])
    for _ in range(4):
        reply_ids.append(int(reference_logits(torch, sd, reply_ids)[-1].argmax()))
    fed, replies = script.stream_prompt(chunks, chunks, config, ids[:6], embed, rot, 4, CACHE, -1, 3)
    out["stream_prompt"] = {"fed": fed, "replies": replies, "reference": reply_ids[6:]}

    # example inputs: states in, states of the same shapes out
    ex = chunks[0].get_example_inputs(4, CACHE)
    res = chunks[0](*ex)
    out["example_states"] = [list(t.shape) == list(s) for t, s in zip(res[1:], state_shapes(config, chunks[0].layer_types, CACHE))]
    _, dyn = chunks[0].get_example_inputs(4, CACHE, True)
    out["dynamic"] = [len(dyn), len(dyn[5]), dyn[4][1].describe(), dyn[1][3].describe()]

    broken = dict(sd)
    del broken["model.layers.2.conv.in_proj.weight"]
    out["missing_tensor"] = error_of(lambda: tiny_chunks(torch, config, broken))
    return out


def main():
    examples, weights_config, argv = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    stdout, sys.stdout = sys.stdout, sys.stderr  # the scripts print; the report alone goes out
    install_stubs()
    os.chdir(examples)  # the scripts import from their working folder
    sys.path.insert(0, examples)
    report = check_helpers(examples, weights_config)
    report.update(check_config(weights_config))
    argv_report, script = check_argv(examples, argv)
    report.update(argv_report)
    report.update(check_numerics(script))
    json.dump(report, stdout, sort_keys=True)


if __name__ == "__main__":
    main()
