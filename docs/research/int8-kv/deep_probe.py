"""KL(fp32 HF || file) per position over the first N tokens of the fidelity text; shallow/deep halves."""
import sys, time, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
import executorch.extension.llm.custom_ops.custom_ops  # noqa
import executorch.kernels.quantized  # noqa
from executorch.extension.pybindings.portable_lib import _load_for_executorch
model_dir, text_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = "".join(l for l in open(text_path) if not l.startswith("#"))
tok = AutoTokenizer.from_pretrained(model_dir)
ids = tok.encode(text, add_special_tokens=True)[:n]
assert len(ids) == n, len(ids)
hf = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
with torch.no_grad():
    ref = torch.log_softmax(hf(torch.tensor([ids])).logits[0].double(), -1)
for pte in sys.argv[4:]:
    m = _load_for_executorch(pte)
    t0 = time.time(); rows = []
    for pos, t in enumerate(ids):
        out = m.forward((torch.tensor([[t]], dtype=torch.long), torch.tensor([pos], dtype=torch.long)))[0]
        rows.append(out.reshape(-1, out.shape[-1])[-1])
    got = torch.log_softmax(torch.stack(rows).double(), -1)
    kl = (ref.exp() * (ref - got)).sum(-1)
    agree = (ref.argmax(-1) == got.argmax(-1)).double()
    h = n // 2
    print("%s: %.1fs all KL %.3e agree %.4f | shallow KL %.3e agree %.4f | deep KL %.3e (max %.3e) agree %.4f" % (
        pte.split("/")[-1], time.time() - t0, kl.mean(), agree.mean(), kl[:h].mean(), agree[:h].mean(), kl[h:].mean(), kl[h:].max(), agree[h:].mean()))
    for lo in range(0, n, 256):
        print("   [%4d,%4d) KL %.3e agree %.3f" % (lo, lo + 256, kl[lo:lo+256].mean(), agree[lo:lo+256].mean()))
