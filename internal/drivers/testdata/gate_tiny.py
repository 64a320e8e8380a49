"""Writes a tiny random next-token model for gate_probe.py's test: TorchScript (what the
driver runs) and its weights as JSON (what the Go test computes the expected argmax and
probabilities from, on its own). Usage: gate_tiny.py OUT.pt SEED; prints the weights."""

import json
import sys

import torch


class Tiny(torch.nn.Module):
    def __init__(self, vocab=13, dim=6):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.out = torch.nn.Linear(dim, vocab)

    def forward(self, ids):
        h = torch.tanh(self.emb(ids).mean(dim=1))
        return self.out(h).unsqueeze(1)  # [1, 1, vocab]: the last position only, as export_llm's


def main(path, seed):
    torch.manual_seed(int(seed))
    m = Tiny()
    with torch.no_grad():  # spread the logits so the argmax is clear
        m.out.weight.mul_(4)
    torch.jit.script(m).save(path)
    json.dump({"emb": m.emb.weight.tolist(), "w": m.out.weight.tolist(), "b": m.out.bias.tolist()}, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
