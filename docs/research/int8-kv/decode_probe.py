"""Decode speed at depth: prefill P tokens (chunks of get_max_seq_len - 1), then time N one-token
forward calls (the step TextLLMRunner's decode loop makes), for each file, interleaved, R reps."""
import sys, time, torch
import executorch.extension.pybindings.portable_lib  # noqa
import executorch.extension.llm.custom_ops.custom_ops  # noqa
import executorch.kernels.quantized  # noqa
from executorch.extension.pybindings.portable_lib import _load_for_executorch
depths, n, reps, files = [int(x) for x in sys.argv[1].split(",")], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
g = torch.Generator().manual_seed(0)
for depth in depths:
    for rep in range(reps):
        for f in files:
            m = _load_for_executorch(f)
            chunk = int(m.run_method("get_max_seq_len", ())[0]) - 1
            vocab = int(m.run_method("get_vocab_size", ())[0])
            toks = torch.randint(3, vocab, (depth + n,), generator=g)
            pos = 0
            t0 = time.perf_counter()
            while pos < depth:
                c = min(chunk, depth - pos)
                m.forward((toks[pos:pos + c].view(1, c), torch.tensor([pos], dtype=torch.long)))
                pos += c
            t1 = time.perf_counter()
            for i in range(n):
                m.forward((toks[pos:pos + 1].view(1, 1), torch.tensor([pos], dtype=torch.long)))
                pos += 1
            t2 = time.perf_counter()
            print("%s depth %d rep %d: prefill %.0f tok/s, decode %.2f ms/token (%.1f tok/s)" % (
                f.split("/")[-1], depth, rep, depth / max(t1 - t0, 1e-9), 1000 * (t2 - t1) / n, n / (t2 - t1)), flush=True)
