"""Stand-in for ExecuTorch's pytorch_tokenizers in the speed driver's test: one token per
whitespace-separated word, numbered by first appearance; decode joins the words with spaces.
The file must exist, as the real reader needs it to."""

import os


class _Words:
    def __init__(self):
        self.ids, self.words = {}, []

    def encode(self, s, bos=0, eos=0):
        out = []
        for w in s.split():
            if w not in self.ids:
                self.ids[w] = len(self.words)
                self.words.append(w)
            out.append(self.ids[w])
        return out

    def decode(self, ids):
        return " ".join(self.words[i] for i in ids)


def get_tokenizer(path):
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    return _Words()
