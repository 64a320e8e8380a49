"""Measure next-token distributions for the decision gate (internal/gate).

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout). It
only measures; internal/gate grades. Each row is rendered as the app renders a conversation (the
prompt file's system prompt, primer and tools, then the row's user message, through the
model's chat template) unless the plan gives its token ids already, and the model is run on
it once: the last position's softmax is all the gate reads.

With "fidelity", the model also reads a fixed text and its next-token distribution is read
at every position: an export_llm program is fed the tokens one at a time through its KV
cache (one load, forward((token, pos)) per position, since it returns only the last
position's logits), a Hugging Face model all at once, and Qualcomm's saved QDQ program
("qdq", measure only, no rows: a QNN file's simulated figure) all at once too, since it is
the calibration graph that takes the whole window in one call. The reference keeps fp32's top_k
tokens per position with their log-probabilities and the rest's probability; the measure
gives the export's log-probabilities of those tokens, the rest's probability and its argmax.
Log-probabilities below -1000 are written as -1000 (JSON has no -Infinity; the probability
is 0 either way).

Plan: {"mode": "reference" | "measure",
       "model": {"kind": "hf" | "pte" | "torchscript" | "qdq", "path": p, "tokenizer": p or null},
       "prompt": {"system": s, "primer": [{"role", "content"}], "tools": [...]},
       "rows": [{"question": q, "user": text, "token_ids": [int] (optional)}],
       "fp32": {question: token} (measure only),
       "fidelity": (optional) reference: {"text": s, "tokens": n, "top_k": k,
                   "token_ids": [int] (optional, instead of the text)};
                   measure: {"token_ids": [int], "buckets": [[int] per position]}}
Result reference: {"rows": {question: {"token": argmax, "p": its probability, "text": piece}},
                   "fidelity": {"top_k": k, "tokens": [int], "positions": [{"ids": [k ints],
                   "logp": [k floats], "rest": probability}]}}
Result measure: {"rows": {question: {"p": probability of fp32's token, "token": argmax,
                 "text": piece}},
                 "fidelity": {"positions": [{"token": argmax, "logp": [floats], "rest": p}]}}
Error: {"error": message, "row": question or null} on stdout, exit status 1.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)


class PlanError(Exception):
    def __init__(self, message, row=None):
        super().__init__(message)
        self.row = row


def load_tokenizer(model):
    path = model.get("tokenizer")
    if not path:
        return None
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(path)


def render(tokenizer, prompt, row):
    """Token ids of the row as the app renders it: system, primer, the user message, and the
    generation prompt, with the tools given to the chat template."""
    if row.get("token_ids") is not None:
        return list(row["token_ids"])
    if tokenizer is None:
        raise PlanError("row %r has no token ids and the plan names no tokenizer" % row["question"], row["question"])
    messages = [{"role": "system", "content": prompt["system"]}] + list(prompt["primer"])
    messages.append({"role": "user", "content": row["user"]})
    # return_dict=False: transformers 5 returns a BatchEncoding by default, whose iteration
    # yields its keys ("input_ids", "attention_mask"), not the ids.
    return [int(i) for i in tokenizer.apply_chat_template(messages, tools=prompt.get("tools") or None,
                                                          add_generation_prompt=True, tokenize=True,
                                                          return_dict=False)]


class Model:
    """A loaded model: last(ids) is the logits after ids (a fresh run, no state kept);
    positions(ids) gives the logits after each prefix of ids in turn, one [V] row each."""

    def __init__(self, last, positions):
        self.last, self.positions = last, positions


def hf_model(torch, path):
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32)
    m.eval()

    def last(ids):
        return m(torch.tensor([ids])).logits

    def positions(ids):
        return m(torch.tensor([ids])).logits[0]
    return Model(last, positions)


def dynamic_shape(m):
    """Whether the program takes more than one token a call: export_llm writes
    enable_dynamic_shape into the metadata, and a static-shape program (Qwen3.5's, as
    ExecuTorch's recipe exports it) takes exactly [1, 1]. A program without the method is
    taken as dynamic, as export_llm's default is."""
    try:
        return bool(m.run_method("enable_dynamic_shape", ())[0])
    except Exception:  # an older program that does not name it
        return True


def positions_per_token(m):
    """Whether forward's second input gives a position per token (optimum-executorch's
    cache_position, [tokens]: Gemma 3, SmolLM3) rather than the chunk's first position
    (export_llm's input_pos, [1]). A dynamic input's meta holds its largest shape."""
    try:
        sizes = list(m.method_meta("forward").input_tensor_meta(1).sizes())
    except Exception:  # a program without method meta: export_llm's layout
        return False
    return len(sizes) == 1 and sizes[0] > 1


def pte_model(torch, path):
    """The exported program, reloaded per prompt so no KV cache carries over; the custom ops
    and quantized kernels export_llm's programs call are registered first."""
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401
    import executorch.kernels.quantized  # noqa: F401

    def last(ids):
        m = _load_for_executorch(path)
        # The app's chunk, get_max_seq_len - 1 tokens a call: the bound of a file exported
        # by stock export_llm (Dim(max=max_seq_len - 1)); exe-expo's files take the full
        # get_max_seq_len since issue 48 (docs/research/chunked-prefill.md).
        chunk = max(1, int(m.run_method("get_max_seq_len", ())[0]) - 1)
        if not dynamic_shape(m):
            chunk = 1
        per_token = positions_per_token(m)
        out, pos = None, 0
        while pos < len(ids):
            part = ids[pos:pos + chunk]
            where = torch.arange(pos, pos + len(part), dtype=torch.long) if per_token else torch.tensor([pos], dtype=torch.long)
            out = m.forward((torch.tensor([part], dtype=torch.long), where))[0]
            pos += len(part)
        return out

    def positions(ids):
        """One load, one token a call through the KV cache: each position's logits in turn,
        so a long text never holds every position's logits at once."""
        m = _load_for_executorch(path)
        try:
            room = int(m.run_method("get_max_context_len", ())[0])
        except Exception:  # a program that names only get_max_seq_len
            room = int(m.run_method("get_max_seq_len", ())[0])
        if len(ids) > room:
            raise PlanError("the fidelity text's %d tokens do not fit the program's %d-token window" % (len(ids), room))
        for pos, tok in enumerate(ids):
            out = m.forward((torch.tensor([[tok]], dtype=torch.long), torch.tensor([pos], dtype=torch.long)))[0]
            yield out.reshape(-1, out.shape[-1])[-1]
    return Model(last, positions)


def sliding_window(folder):
    """The source's sliding-window length (config.json's sliding_window, or its text
    config's), for a program whose second mask is a sliding-window one (Gemma 3's)."""
    import json
    try:
        with open(os.path.join(folder or "", "config.json")) as f:
            cfg = json.load(f)
    except (OSError, ValueError):
        cfg = {}
    window = cfg.get("sliding_window") or (cfg.get("text_config") or {}).get("sliding_window")
    if not window:
        raise PlanError("the QDQ program takes a second (sliding-window) attention mask and %s/config.json names no sliding_window" % folder)
    return int(window)


def qdq_model(torch, path, source):
    """Qualcomm's saved QDQ program (artifact/decode_qdq.pt2: torch.export of the static
    decoder after convert_pt2e, quantize/dequantize ops around fp32 arithmetic), run on the
    CPU. It is the calibration graph: every position of the window in one call, with empty
    KV caches, as (tokens [B, L], the attention masks [B, 1, L, L] (causal, then Gemma 3's
    sliding window), positions [B, L], the caches) and the logits [B, L, V] first among its
    outputs. Inputs are told apart by their recorded shapes and dtypes; the masks are built
    as the script's masking_utils builds them (0 where a token may attend, -255 elsewhere)."""
    import torchao.quantization.pt2e  # noqa: F401 - registers the quantized_decomposed ops the program calls

    try:
        ep = torch.export.load(path)
    except Exception as e:  # a zip of another kind, a truncated file: torch raises what it meets
        raise PlanError("%s is not a saved torch.export program (%s: %s)" % (path, type(e).__name__, e))
    vals = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    specs = [vals.get(name) for name in ep.graph_signature.user_inputs]
    if not specs or any(v is None or not hasattr(v, "shape") for v in specs):
        raise PlanError("%s does not record its inputs' shapes: not a saved QDQ program" % path)
    tokens = specs[0]
    if tokens.dtype.is_floating_point or tokens.dim() != 2:
        raise PlanError("%s's first input is %s %s, not token ids [batch, tokens]" % (path, tokens.dtype, list(tokens.shape)))
    batch, length = int(tokens.shape[0]), int(tokens.shape[1])
    masks = [v for v in specs[1:] if v.dtype.is_floating_point and list(v.shape) == [batch, 1, length, length]]
    if not 1 <= len(masks) <= 2:
        raise PlanError("%s takes %d attention masks of [%d, 1, %d, %d]: not the calibration graph this driver runs" % (path, len(masks), batch, length, length))
    module = ep.module()
    PADDING_MASK_VALUE = -255.0  # masking_utils.PADDING_MASK_VALUE
    rows, cols = torch.arange(length).view(length, 1), torch.arange(length).view(1, length)
    allowed = [cols <= rows]
    if len(masks) == 2:
        allowed.append((cols <= rows) & (rows - cols < sliding_window(source)))

    def positions(ids):
        if len(ids) > length:
            raise PlanError("the fidelity text's %d tokens do not fit the QDQ program's %d positions" % (len(ids), length))
        # Positions past the text hold token 0: the masks are causal, so they change nothing before them.
        tok = torch.zeros(batch, length, dtype=tokens.dtype)
        tok[:, :len(ids)] = torch.tensor(ids, dtype=tokens.dtype)
        args, mask_i = [tok], 0
        for v in specs[1:]:
            if v.dtype.is_floating_point and list(v.shape) == [batch, 1, length, length]:
                m = torch.full((length, length), PADDING_MASK_VALUE).masked_fill(allowed[mask_i], 0)
                args.append(m.expand(batch, 1, length, length).to(v.dtype).contiguous())
                mask_i += 1
            elif not v.dtype.is_floating_point and list(v.shape) == [batch, length]:
                args.append(torch.arange(length, dtype=v.dtype).expand(batch, length).contiguous())
            else:  # a KV cache: empty in the calibration graph, zeros whatever its shape
                args.append(torch.zeros(tuple(v.shape), dtype=v.dtype))
        out = module(*args)
        logits = out[0] if isinstance(out, (tuple, list)) else out
        if logits.dim() != 3 or logits.shape[1] != length:
            raise PlanError("%s gave logits of %s, not [batch, %d, vocabulary]" % (path, list(logits.shape), length))
        for i in range(len(ids)):
            yield logits[0, i]
    return Model(None, positions)


def torchscript_model(torch, path):
    m = torch.jit.load(path)
    m.eval()

    def last(ids):
        return m(torch.tensor([ids]))

    def positions(ids):
        """A module without a cache: each prefix run whole, its last position read."""
        rows = []
        for i in range(len(ids)):
            out = m(torch.tensor([ids[:i + 1]]))
            rows.append(out.reshape(-1, out.shape[-1])[-1])
        return torch.stack(rows)
    return Model(last, positions)


def last_probs(torch, logits):
    """Softmax over the vocabulary at the last position; export_llm's programs return only
    the last position ([1, V]), Hugging Face's every position ([1, T, V])."""
    if logits.dim() == 3:
        logits = logits[0, -1]
    elif logits.dim() == 2:
        logits = logits[-1]
    return torch.softmax(logits.double(), dim=-1)


def piece(tokenizer, token):
    return tokenizer.decode([token]) if tokenizer is not None else ""


# Log-probabilities are written no lower than this: JSON has no -Infinity.
LOGP_FLOOR = -1000.0


def logps(values):
    return [max(float(v), LOGP_FLOOR) for v in values]


def rest_mass(torch, logp, kept):
    """Probability of every token outside kept, from the log-probabilities [V] (0 when
    kept is the whole vocabulary)."""
    mask = torch.ones_like(logp, dtype=torch.bool)
    mask[kept] = False
    if not bool(mask.any()):
        return 0.0
    return float(torch.logsumexp(logp[mask], dim=0).exp())


def fidelity_ids(tokenizer, spec):
    """The fidelity text's token ids: the plan's, or the text's as the tokenizer encodes it
    (with the special tokens it adds to a text, a BOS for some), cut to spec["tokens"]."""
    ids = spec.get("token_ids")
    if ids is None:
        if tokenizer is None:
            raise PlanError("the fidelity text has no token ids and the plan names no tokenizer")
        ids = tokenizer.encode(spec["text"], add_special_tokens=True)
    ids = [int(i) for i in ids]
    want = int(spec.get("tokens") or len(ids))
    if len(ids) < want:
        raise PlanError("the fidelity text has %d tokens, fewer than the %d asked" % (len(ids), want))
    return ids[:want]


def fidelity_reference(torch, model, tokenizer, spec):
    ids = fidelity_ids(tokenizer, spec)
    k = int(spec["top_k"])
    positions = []
    for row in model.positions(ids):
        logp = torch.log_softmax(row.double(), dim=-1)
        if k > logp.shape[-1]:
            raise PlanError("fidelity top_k %d is more than the vocabulary of %d" % (k, logp.shape[-1]))
        top = torch.topk(logp, k)
        positions.append({"ids": [int(t) for t in top.indices], "logp": logps(top.values),
                          "rest": rest_mass(torch, logp, top.indices)})
    print("gate reference: fidelity text, %d positions" % len(ids), file=sys.stderr)
    return {"top_k": k, "tokens": ids, "positions": positions}


def fidelity_measure(torch, model, spec):
    """The export's distribution on fp32's buckets at each position, one position at a time
    (a long text's logits over a large vocabulary would not fit at once)."""
    ids, buckets = [int(i) for i in spec["token_ids"]], spec["buckets"]
    if len(buckets) != len(ids):
        raise PlanError("the fidelity plan has %d buckets for %d tokens" % (len(buckets), len(ids)))
    positions = []
    for i, row in enumerate(model.positions(ids)):
        logp = torch.log_softmax(row.double(), dim=-1)
        kept = torch.tensor([int(t) for t in buckets[i]], dtype=torch.long)
        if len(buckets[i]) and not 0 <= int(kept.min()) <= int(kept.max()) < logp.shape[-1]:
            raise PlanError("fidelity position %d: fp32's tokens fall outside the export's vocabulary of %d" % (i, logp.shape[-1]))
        positions.append({"token": int(torch.argmax(logp)), "logp": logps(logp[kept]),
                          "rest": rest_mass(torch, logp, kept)})
        if (i + 1) % 512 == 0:
            print("gate measure: fidelity text, %d of %d positions" % (i + 1, len(ids)), file=sys.stderr)
    if len(positions) != len(ids):
        raise PlanError("the export gave %d positions of the fidelity text's %d" % (len(positions), len(ids)))
    print("gate measure: fidelity text, %d positions" % len(ids), file=sys.stderr)
    return {"positions": positions}


def run(plan):
    model = plan["model"]
    driver_io.transformers_for(model["path"] if model.get("kind") == "hf" else model.get("tokenizer"))
    import torch
    torch.manual_seed(0)
    mode = plan.get("mode")
    if mode not in ("reference", "measure"):
        raise PlanError("mode %r is neither reference nor measure" % mode)
    model = plan["model"]
    loaders = {"hf": hf_model, "pte": pte_model, "torchscript": torchscript_model,
               "qdq": lambda torch, path: qdq_model(torch, path, model.get("tokenizer"))}
    if model.get("kind") not in loaders:
        raise PlanError("model kind %r is not hf, pte, torchscript or qdq" % model.get("kind"))
    if model["kind"] == "qdq" and plan.get("rows"):
        raise PlanError("a QDQ program reads only the fidelity text: its plan has %d gate rows" % len(plan["rows"]))
    loaded = loaders[model["kind"]](torch, model["path"])
    tokenizer = load_tokenizer(model)
    fp32 = plan.get("fp32") or {}
    rows = {}
    with torch.no_grad():
        for row in plan.get("rows") or []:
            q = row["question"]
            if mode == "measure" and q not in fp32:
                raise PlanError("row %r has no fp32 token to measure" % q, q)
            probs = last_probs(torch, loaded.last(render(tokenizer, plan["prompt"], row)))
            top = int(torch.argmax(probs))
            if mode == "reference":
                rows[q] = {"token": top, "p": float(probs[top]), "text": piece(tokenizer, top)}
            else:
                want = int(fp32[q])
                if not 0 <= want < probs.shape[0]:
                    raise PlanError("row %r: fp32 token %d is outside the export's vocabulary of %d" % (q, want, probs.shape[0]), q)
                rows[q] = {"p": float(probs[want]), "token": top, "text": piece(tokenizer, top)}
            print("gate %s: %s" % (mode, q), file=sys.stderr)
        out = {"rows": rows}
        spec = plan.get("fidelity")
        if spec and mode == "reference":
            out["fidelity"] = fidelity_reference(torch, loaded, tokenizer, spec)
        elif spec:
            out["fidelity"] = fidelity_measure(torch, loaded, spec)
    return out


if __name__ == "__main__":
    sys.exit(driver_io.serve(run, PlanError, "row"))
