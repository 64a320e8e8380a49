"""Stand-in for transformers in the drivers' tests (smoke_run.py, calib_rows.py,
gate_probe.py's "hf" model) and the CLI's solve test.

AutoTokenizer: the folder's chat template is the file template.txt with {content} in it,
else chat_template.jinja in the same form (no file, no template). Untokenized, the template is applied to the last message; tokenized,
every message becomes a line "<role>: <content>" (the tools, by name, on a line after the
system message), "assistant:" ends a generation prompt, and each whitespace-separated word
is one token: 1 + (the sum of its UTF-8 bytes) mod (vocab - 1); 0 is EOS. encode tokenizes a
plain text the same way, word by word. decode writes token i as "w<i>" (EOS as "</s>",
dropped with skip_special_tokens).

AutoModelForCausalLM: the folder's standin_model.json {"emb", "w", "b"} is a next-token
model whose logits at position t are W tanh(mean of E[ids[..t]]) + b, computed in float64;
generate continues greedily, stopping after EOS (token 0)."""

import json
import os

EOS = 0


class _Tokenizer:
    def __init__(self, template, vocab):
        self.template, self.vocab = template, vocab

    def apply_chat_template(self, messages, tools=None, tokenize=True, add_generation_prompt=False, return_dict=True):
        """As transformers 5's: tokenize and return_dict default to True, and then the ids come
        back in a dict (a BatchEncoding) whose iteration yields its keys."""
        assert add_generation_prompt
        if tokenize and return_dict:
            ids = self.apply_chat_template(messages, tools, True, True, return_dict=False)
            return {"input_ids": ids, "attention_mask": [1] * len(ids)}
        if not tokenize:
            return self.template.replace("{content}", messages[-1]["content"])
        lines = []
        names = " ".join(t["function"]["name"] for t in tools or [])
        if tools and messages[0]["role"] != "system":
            lines.append("tools: " + names)
        for m in messages:
            lines.append("%s: %s" % (m["role"], m["content"]))
            if tools and m["role"] == "system":
                lines.append("tools: " + names)
        lines.append("assistant:")
        return [1 + sum(w.encode()) % (self.vocab - 1) for w in "\n".join(lines).split()]

    def encode(self, text, add_special_tokens=True):
        """A plain text (gate_probe.py's fidelity text): one token per word, as above."""
        return [1 + sum(w.encode()) % (self.vocab - 1) for w in text.split()]

    def decode(self, ids, skip_special_tokens=False):
        return " ".join("</s>" if int(i) == EOS else "w%d" % int(i)
                        for i in ids if not (skip_special_tokens and int(i) == EOS))


def _weights(path):
    with open(os.path.join(path, "standin_model.json")) as f:
        return json.load(f)


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path):
        name = "template.txt"
        if not os.path.exists(os.path.join(path, name)) and os.path.exists(os.path.join(path, "chat_template.jinja")):
            name = "chat_template.jinja"  # a Hub folder's template file, downloaded with the tokenizer
        with open(os.path.join(path, name)) as f:
            template = f.read()
        vocab = 13
        if os.path.exists(os.path.join(path, "standin_model.json")):
            vocab = len(_weights(path)["b"])
        return _Tokenizer(template, vocab)


class _Output:
    def __init__(self, logits):
        self.logits = logits


class _Model:
    def __init__(self, torch, w):
        self.torch = torch
        self.emb = torch.tensor(w["emb"], dtype=torch.float64)
        self.w = torch.tensor(w["w"], dtype=torch.float64)
        self.b = torch.tensor(w["b"], dtype=torch.float64)

    def eval(self):
        return self

    def __call__(self, ids, attention_mask=None):
        e = self.emb[ids[0]]
        n = self.torch.arange(1, e.shape[0] + 1, dtype=self.torch.float64)[:, None]
        h = self.torch.tanh(e.cumsum(0) / n)
        return _Output((h @ self.w.T + self.b).unsqueeze(0))

    def generate(self, input_ids, attention_mask=None, max_new_tokens=1, do_sample=True, num_beams=1):
        assert do_sample is False and num_beams == 1, "the stand-in only decodes greedily"
        ids = input_ids[0].tolist()
        for _ in range(max_new_tokens):
            nxt = int(self(self.torch.tensor([ids])).logits[0, -1].argmax())
            ids.append(nxt)
            if nxt == EOS:
                break
        return self.torch.tensor([ids])


class AutoModelForCausalLM:
    @staticmethod
    def from_pretrained(path, torch_dtype=None):
        import torch

        assert torch_dtype == torch.float32, "the fp32 model is loaded in fp32"
        return _Model(torch, _weights(path))
