"""Per-position logits from an export_llm .pte through ExecuTorch's pybindings (1.5.1).

usage: logits_probe.py inspect FILE.pte
       logits_probe.py run FILE.pte --tokens N [--chunk C] [--seed S] [--save OUT.pt]
       logits_probe.py compare A.pt B.pt

inspect prints the method's inputs/outputs (MethodMeta), the metadata getters and, from
ExecuTorch's own serializer (exir._serialize), forward's non_const_buffer_sizes.

run feeds N tokens (random ids, fixed seed, BOS first) through forward in chunks of C
tokens: execute([tokens[1, c], input_pos[1]]) with input_pos the chunk's start. The file's
output is [1, V] (last position of the chunk) unless it was exported with
debug.generate_full_logits=true, then [1, c, V]; the probe keeps whatever comes back for
every position it covers, so --chunk 1 gives per-position logits from any file. The caches
are the method's mutable buffers: a new load starts from a zeroed cache.
"""
import argparse
import sys
import time

import torch


def load(path):
    import executorch.extension.pybindings.portable_lib  # noqa: F401  (registers kernels)
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: ops)
    import executorch.kernels.quantized  # noqa: F401  (quantized_decomposed:: ops)
    from executorch.runtime import Runtime
    prog = Runtime.get().load_program(path)
    return prog


def getter(prog, name):
    if name not in prog.method_names:
        return None
    out = prog.load_method(name).execute([])
    return out[0] if out else None


def inspect(path):
    prog = load(path)
    print("methods:", sorted(prog.method_names))
    for name in sorted(prog.method_names):
        if name.startswith(("get_", "use_", "enable_")):
            print("  %s = %s" % (name, getter(prog, name)))
    meta = prog.metadata("forward")
    print(meta)
    from executorch.exir._serialize._program import deserialize_pte_binary
    with open(path, "rb") as f:
        pte = deserialize_pte_binary(f.read())
    program = getattr(pte, "program", pte)
    for plan in program.execution_plan:
        if plan.name == "forward":
            print("non_const_buffer_sizes (exir._serialize):", plan.non_const_buffer_sizes,
                  "sum:", sum(plan.non_const_buffer_sizes))


def run(path, n, chunk, seed, save):
    prog = load(path)
    fwd = prog.load_method("forward")
    vocab = getter(prog, "get_vocab_size")
    max_seq = getter(prog, "get_max_seq_len")
    max_ctx = getter(prog, "get_max_context_len")
    bos = getter(prog, "get_bos_id") or 0
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(3, vocab, (n,), generator=g)
    tokens[0] = bos
    out = torch.full((n, vocab), float("nan"))
    t0, pos, calls, full = time.time(), 0, 0, None
    while pos < n:
        c = min(chunk, n - pos)
        logits = fwd.execute([tokens[pos:pos + c].view(1, c), torch.tensor([pos], dtype=torch.long)])[0]
        calls += 1
        if logits.dim() == 3:  # [1, c, V]: generate_full_logits
            full = True
            out[pos:pos + c] = logits[0]
        else:  # [1, V]: the chunk's last position only
            full = False if full is None else full
            out[pos + c - 1] = logits[0]
        pos += c
    covered = int((~torch.isnan(out[:, 0])).sum())
    print("file=%s vocab=%s max_seq_len=%s max_context_len=%s tokens=%d chunk=%d calls=%d "
          "output=%s positions_with_logits=%d seconds=%.1f" % (
              path, vocab, max_seq, max_ctx, n, chunk, calls,
              "[1,c,V] (full logits)" if full else "[1,V] (last position)", covered, time.time() - t0))
    if save:
        torch.save({"tokens": tokens, "logits": out}, save)


def compare(a, b):
    A, B = torch.load(a), torch.load(b)
    assert torch.equal(A["tokens"], B["tokens"]), "different token streams"
    la, lb = A["logits"], B["logits"]
    ok = ~torch.isnan(la[:, 0]) & ~torch.isnan(lb[:, 0])
    idx = ok.nonzero().flatten()
    pa, pb = la[idx].log_softmax(-1), lb[idx].log_softmax(-1)
    kl = (pa.exp() * (pa - pb)).sum(-1)  # KL(a || b) per position
    top1 = (la[idx].argmax(-1) == lb[idx].argmax(-1)).float()
    maxabs = (la[idx] - lb[idx]).abs().amax(-1)
    n = len(idx)
    print("positions compared: %d" % n)
    for lo, hi in [(0, 128), (128, 512), (512, 1024), (1024, 2048), (2048, 1 << 30)]:
        m = (idx >= lo) & (idx < hi)
        if m.any():
            print("  pos [%d,%d): n=%d mean KL=%.3e max KL=%.3e top1 agree=%.4f max|dlogit|=%.3e" % (
                lo, min(hi, int(idx.max()) + 1), int(m.sum()), kl[m].mean(), kl[m].max(), top1[m].mean(), maxabs[m].max()))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("inspect"); s.add_argument("pte")
    s = sub.add_parser("run"); s.add_argument("pte"); s.add_argument("--tokens", type=int, required=True)
    s.add_argument("--chunk", type=int, default=1); s.add_argument("--seed", type=int, default=0)
    s.add_argument("--save")
    s = sub.add_parser("compare"); s.add_argument("a"); s.add_argument("b")
    a = p.parse_args()
    if a.cmd == "inspect":
        inspect(a.pte)
    elif a.cmd == "run":
        run(a.pte, a.tokens, a.chunk, a.seed, a.save)
    else:
        compare(a.a, a.b)


if __name__ == "__main__":
    sys.exit(main())
