"""Build a tiny real Hugging Face model folder from a family's real configuration.

exe-expo test support (never shipped): JSON plan in (file path argument), JSON result out.
The architecture is the real config.json with its sizes scaled down (every linear's input a
multiple of 32, the int4 group size); the weights are random, made by transformers' own model
class and saved as safetensors; the tokenizer is a byte-level BPE trained here with the
`tokenizers` library, holding the family's special tokens; the chat template is the family's
real one. Special token ids in config.json and generation_config.json are remapped to the
small vocabulary, by content, through the real tokenizer_config.json's added tokens.

A random model answers nothing with confidence, and the checks downstream (the smoke run's
reply, the decision gate's confident rows, the solve's non-empty calibration replies) need
one that does. So the model is then taught one reply: a few hundred steps of AdamW on the
plan's conversations, rendered through the real chat template, with the loss on the reply
and the end-of-turn token alone. Two models taught different replies disagree on every
prompt; one model's quantized export agrees with its own fp32 weights.

Plan: {"out": folder, "seed": n, "config": {...}, "generation_config": {...} or null,
       "tokenizer_config": {...}, "chat_template": text or null, "corpus": [text],
       "teach": {"reply": text, "steps": n, "conversations": [{"messages": [...],
                 "tools": [...] or null}]} or null}
Result: {"out", "vocab_size", "special_tokens": {content: id}, "tensors", "bytes",
         "teach": {"loss_first", "loss_last", "sequences", "tokens"} or null}
"""

import json
import os
import sys

HIDDEN, HEADS, HEAD_DIM, FFN, VOCAB = 64, 4, 16, 128, 384


def fail(message):
    print(json.dumps({"error": message}))
    sys.exit(1)


# Tokens a family's tokenizer names beside bos/eos/pad/unk, which transformers would append
# past the tiny vocabulary if it lacked them: GemmaTokenizer's default mask_token "<mask>"
# (id 4 in the real vocabulary) and Gemma's extra_special_tokens for images.
IMPLIED_TOKENS = {"gemma3_text": {"<mask>", "<start_of_image>", "<end_of_image>", "<image_soft_token>"}}


def special_tokens(tok_cfg, template, config, gen):
    """The added tokens this family's files name, in their original order: those the chat
    template uses, the named bos/eos/pad/unk, and those config ids point at."""
    added = {int(k): v["content"] for k, v in tok_cfg.get("added_tokens_decoder", {}).items()}
    named = {tok_cfg.get(k) for k in ("bos_token", "eos_token", "pad_token", "unk_token")}
    named = {n["content"] if isinstance(n, dict) else n for n in named if n}
    named |= IMPLIED_TOKENS.get(config.get("model_type"), set())
    ids = set()
    for src in (config, config.get("text_config") or {}, gen or {}):
        for k in ("bos_token_id", "eos_token_id", "pad_token_id") + QWEN35_TOKEN_KEYS:
            v = src.get(k)
            ids.update(v if isinstance(v, list) else [v] if v is not None else [])
    keep = [(i, c) for i, c in sorted(added.items())
            if c in named or i in ids or (template and c in template)]
    missing = [i for i in ids if i not in added]
    if missing:
        fail("token ids %s of config.json are not among tokenizer_config.json's added tokens" % missing)
    return keep


def train_gemma_tokenizer(specials, corpus, special_flag):
    """Gemma's kind of tokenizer: BPE over "▁"-for-space text with byte fallback (the 256
    <0xNN> tokens after the special tokens, as Gemma's vocabulary has them), the pipeline
    transformers 5's GemmaTokenizer rebuilds whatever tokenizer.json says (a byte-level
    tokenizer.json would read every space as <unk> there), so transformers and the runner,
    which reads tokenizer.json, split text alike."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    added = [AddedToken(c, special=special_flag.get(c, True), normalized=False) for _, c in specials]
    pipeline = dict(normalizer=normalizers.Replace(" ", "▁"),
                    pre_tokenizer=pre_tokenizers.Split(" ", "merged_with_previous"))
    byte_tokens = ["<0x%02X>" % b for b in range(256)]
    probe = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    probe.normalizer, probe.pre_tokenizer = pipeline["normalizer"], pipeline["pre_tokenizer"]
    trainer = trainers.BpeTrainer(vocab_size=VOCAB - len(byte_tokens), show_progress=False,
                                  special_tokens=added)
    probe.train_from_iterator(corpus, trainer=trainer)
    trained = json.loads(probe.to_str())["model"]
    n = len(specials)
    vocab = {t: i if i < n else i + len(byte_tokens) for t, i in trained["vocab"].items()}
    vocab.update({t: n + i for i, t in enumerate(byte_tokens)})
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in trained["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True,
                               byte_fallback=True))
    tok.normalizer, tok.pre_tokenizer = pipeline["normalizer"], pipeline["pre_tokenizer"]
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_tokens(added)
    # add_tokens marks every token special whatever AddedToken says; set the real flags
    # (Gemma's "\n" and "\n\n" are plain added tokens, decoded as text).
    spec = json.loads(tok.to_str())
    for t in spec["added_tokens"]:
        t["special"] = special_flag.get(t["content"], True)
    return Tokenizer.from_str(json.dumps(spec))


def train_tokenizer(specials, corpus, kind=None, special_flag=None):
    if kind == "gemma3_text":
        return train_gemma_tokenizer(specials, corpus, special_flag or {})
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    # The split Qwen's and Llama 3's tokenizer.json use, then byte-level mapping.
    pattern = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=[c for _, c in specials],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer=trainer)
    return tok


# Qwen3.5's checkpoint ids that name special tokens beside bos/eos/pad.
QWEN35_TOKEN_KEYS = ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id")


def scale_qwen35(config, remap):
    """Qwen3.5 (Qwen3_5ForConditionalGeneration): the text model in text_config, tiny; a vision
    tower of one 32-wide block, so the checkpoint keeps the real layout (model.language_model,
    model.visual). Two layers, one gated DeltaNet then one full attention; heads of 32, so
    the real partial_rotary_factor (0.25) turns 8 dimensions, in mrope sections [2, 1, 1];
    the DeltaNet with 2 key and 4 value heads of 16 (Qwen3.5-4B's ratio)."""
    c = dict(config)
    t = dict(c["text_config"])
    t.update(hidden_size=HIDDEN, num_attention_heads=HEADS, num_key_value_heads=2, head_dim=32,
             intermediate_size=FFN, vocab_size=VOCAB, num_hidden_layers=2, full_attention_interval=2,
             layer_types=["linear_attention", "full_attention"], linear_key_head_dim=16,
             linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4)
    t["rope_parameters"] = dict(t["rope_parameters"], mrope_section=[2, 1, 1])
    for k in ("bos_token_id", "eos_token_id", "pad_token_id"):
        if t.get(k) is not None:
            t[k] = remap(t[k])
    v = dict(c["vision_config"])
    v.update(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=HIDDEN,
             num_position_embeddings=64)
    c.update(text_config=t, vision_config=v)
    for k in QWEN35_TOKEN_KEYS:
        if c.get(k) is not None:
            c[k] = remap(c[k])
    return c


def scale(config, remap):
    """The real config with tiny sizes: 64 wide, 4 heads of 16 (2 kv heads where the family
    groups queries), 128-wide MLP, the trained vocabulary; two layers, layer lists cut."""
    c = dict(config)
    kind = c["model_type"]
    if kind == "qwen3_5":
        return scale_qwen35(c, remap)
    grouped = c.get("num_key_value_heads", c["num_attention_heads"]) < c["num_attention_heads"]
    c.update(hidden_size=HIDDEN, num_attention_heads=HEADS, vocab_size=VOCAB,
             num_key_value_heads=2 if grouped else HEADS, intermediate_size=FFN)
    if "head_dim" in c:
        c["head_dim"] = HEAD_DIM
    layers = 2
    c["num_hidden_layers"] = layers
    for key in ("layer_types", "no_rope_layers"):
        if isinstance(c.get(key), list):
            c[key] = c[key][:layers]
    if "max_window_layers" in c:
        c["max_window_layers"] = layers
    if kind == "gemma3_text":
        # One sliding-window layer, then one global layer (the real model has five, then one),
        # so both kinds and both RoPE thetas are met; the pattern says the same. The real
        # sliding_window (512) stays. Gemma scales queries by query_pre_attn_scalar**-0.5,
        # which the real config sets to its head_dim (256); it follows the tiny head_dim, so
        # the scale stays the real 1/sqrt(head_dim) (256 with heads of 16 would flatten the
        # attention fourfold, a model the real one is not).
        c.update(layer_types=["sliding_attention", "full_attention"], _sliding_window_pattern=2,
                 query_pre_attn_scalar=HEAD_DIM)
    if kind == "smollm3":
        # no_rope_layers holds 1 for a layer that uses RoPE, 0 for one that does not (NoPE;
        # the real model: every 4th); one of each, and the interval that derives the same list.
        c.update(no_rope_layers=[1, 0], no_rope_layer_interval=2)
    if kind == "lfm2":
        # One conv layer, then one attention layer; the FFN width as LFM2 derives it
        # (2/3 of block_ff_dim, rounded up to block_multiple_of) comes out at 128.
        for key, value in (("block_dim", HIDDEN), ("conv_dim", HIDDEN), ("conv_dim_out", HIDDEN),
                           ("num_heads", HEADS), ("block_ff_dim", 192), ("full_attn_idxs", [1])):
            if key in c:
                c[key] = value
        c.update(intermediate_size=192, block_multiple_of=32)
        if isinstance(c.get("layer_types"), list):
            c["layer_types"] = ["conv", "full_attention"]
    scaling = c.get("rope_scaling")
    if isinstance(scaling, dict) and "short_factor" in scaling:
        # LongRoPE (Phi-4-mini): one factor per rotated pair of the tiny head, evenly spaced
        # over the real lists, so the long factors still span their real range.
        pairs = int(HEAD_DIM * c.get("partial_rotary_factor", 1.0)) // 2
        scaling = dict(scaling)
        for key in ("short_factor", "long_factor"):
            real = scaling[key]
            scaling[key] = [real[i * (len(real) - 1) // max(pairs - 1, 1)] for i in range(pairs)]
        c["rope_scaling"] = scaling
    for k in ("bos_token_id", "eos_token_id", "pad_token_id"):
        if k in c and c[k] is not None:
            c[k] = remap(c[k])
    return c


# The token that ends an assistant turn where it is not the tokenizer's eos_token: Gemma's
# eos_token is <eos>, its chat template closes every turn with <end_of_turn> (the real
# generation_config stops at both).
END_OF_TURN = {"gemma3_text": "<end_of_turn>"}


def teach(torch, model, folder, plan, kind):
    """Teach the model plan["reply"] after every conversation's generation prompt: one
    right-padded batch, the loss on the reply and end-of-turn tokens alone."""
    if not plan:
        return None
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(folder)
    end = tok.convert_tokens_to_ids(END_OF_TURN[kind]) if kind in END_OF_TURN else tok.eos_token_id
    reply = tok.encode(plan["reply"], add_special_tokens=False) + [end]
    seqs, starts = [], []
    for c in plan["conversations"]:
        ids = tok.apply_chat_template(c["messages"], tools=c.get("tools") or None,
                                      add_generation_prompt=True, tokenize=True, return_dict=False)
        seqs.append(list(ids) + reply)
        starts.append(len(ids))
    width = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), width), dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    labels = torch.full((len(seqs), width), -100, dtype=torch.long)
    for i, (s, start) in enumerate(zip(seqs, starts)):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
        labels[i, start:len(s)] = torch.tensor(s[start:])
    opt = torch.optim.AdamW(model.parameters(), lr=float(plan.get("lr", 3e-3)))
    model.train()
    losses = []
    for _ in range(int(plan["steps"])):
        opt.zero_grad()
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 labels[:, 1:].reshape(-1), ignore_index=-100)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    return {"loss_first": losses[0], "loss_last": losses[-1], "sequences": len(seqs),
            "tokens": sum(len(s) for s in seqs)}


def main():
    plan = json.load(open(sys.argv[1]))
    out, config, gen = plan["out"], plan["config"], plan.get("generation_config")
    tok_cfg, template = plan["tokenizer_config"], plan.get("chat_template") or plan["tokenizer_config"].get("chat_template")
    if not template:
        fail("no chat template: tokenizer_config.json has none and the plan gives none")
    specials = special_tokens(tok_cfg, template, config, gen)
    special_flag = {v["content"]: v.get("special", True) for v in tok_cfg.get("added_tokens_decoder", {}).values()}
    tok = train_tokenizer(specials, plan["corpus"], config["model_type"], special_flag)
    new_id = {c: tok.token_to_id(c) for _, c in specials}
    old_to_new = {i: new_id[c] for i, c in specials}

    def remap(v):
        return [old_to_new[x] for x in v] if isinstance(v, list) else old_to_new[v]

    os.makedirs(out, exist_ok=True)
    tok.save(os.path.join(out, "tokenizer.json"))
    tiny = scale(config, remap)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(tiny, f, indent=2)
    t = {k: v for k, v in tok_cfg.items() if k not in ("added_tokens_decoder", "chat_template")}
    t["added_tokens_decoder"] = {str(new_id[c]): {**tok_cfg["added_tokens_decoder"][str(i)]}
                                 for i, c in specials}
    t["model_max_length"] = tiny.get("max_position_embeddings", 2048)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(t, f, indent=2)
    with open(os.path.join(out, "chat_template.jinja"), "w") as f:
        f.write(template)

    if config["model_type"] == "qwen3_5":
        # Qwen3.5's class is in the transformers overlay (python/overlay.lock), not the lock.
        sys.path.insert(0, os.path.join(sys.prefix, "overlay", "transformers"))
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText
    torch.manual_seed(int(plan["seed"]))
    # Qwen3.5 is built whole, as it is released (Qwen3_5ForConditionalGeneration).
    cls = AutoModelForImageTextToText if config["model_type"] == "qwen3_5" else AutoModelForCausalLM
    model = cls.from_config(AutoConfig.from_pretrained(out), dtype=torch.float32)
    taught = teach(torch, model, out, plan.get("teach"), config["model_type"])
    model.to(torch.bfloat16).save_pretrained(out, safe_serialization=True)
    # save_pretrained rewrites config.json and generation_config.json with transformers' own
    # keys; keep ours (the real files' keys, tiny values), as a model on the Hub has them.
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(tiny, f, indent=2)
    gen_path = os.path.join(out, "generation_config.json")
    if gen:
        g = dict(gen)
        for k in ("bos_token_id", "eos_token_id", "pad_token_id"):
            if g.get(k) is not None:
                g[k] = remap(g[k])
        with open(gen_path, "w") as f:
            json.dump(g, f, indent=2)
    elif os.path.exists(gen_path):
        os.remove(gen_path)
    st = os.path.join(out, "model.safetensors")
    print(json.dumps({"out": out, "vocab_size": tok.get_vocab_size(), "special_tokens": new_id,
                      "tensors": len(model.state_dict()), "bytes": os.path.getsize(st),
                      "teach": taught}))


if __name__ == "__main__":
    main()
