"""Write Meta's original/tokenizer.model (tiktoken BPE ranks) for a byte-level BPE
tokenizer.json, as Meta's Llama 3 files relate to the Hub's: one line per ordinary token,
"<base64 of its bytes> <rank>", ranks in the tokenizer.json's id order, special (added)
tokens left out (pytorch_tokenizers' TiktokenTokenizer appends Llama 3's 256 special tokens
after the ranks).

exe-expo test support (e2e/realtool, vendor_test.go). The Hub's meta-llama repos carry
original/ beside the safetensors, and the pinned ExecuTorch's Qualcomm script takes Llama 3.2
from there (--checkpoint, --params, --tokenizer_model); the tiny test model is a Hub-layout
folder only, so the test makes the tokenizer file from its tokenizer.json with this script.

Usage: meta_tokenizer.py TOKENIZER_JSON OUT
Prints one JSON line: {"ranks": n, "specials": n}.
"""

import base64
import json
import sys


def bytes_to_unicode():
    """GPT-2's byte-level alphabet: the printable character standing for each byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def main():
    src, out = sys.argv[1], sys.argv[2]
    tok = json.load(open(src, encoding="utf-8"))
    model = tok["model"]
    if model.get("type") != "BPE":
        raise SystemExit("meta_tokenizer: %s holds a %s model, not a byte-level BPE" % (src, model.get("type")))
    special = {a["id"] for a in tok.get("added_tokens", [])}
    byte_of = bytes_to_unicode()
    ordinary = sorted((i, s) for s, i in model["vocab"].items() if i not in special)
    seen = set()
    with open(out, "w") as f:
        for rank, (_, s) in enumerate(ordinary):
            b = bytes(byte_of[c] for c in s)
            if b in seen:
                raise SystemExit("meta_tokenizer: %r occurs twice" % b)
            seen.add(b)
            f.write("%s %d\n" % (base64.b64encode(b).decode(), rank))
    missing = [b for b in range(256) if bytes([b]) not in seen]
    if missing:
        raise SystemExit("meta_tokenizer: bytes %s have no token; tiktoken needs all 256" % missing[:8])
    print(json.dumps({"ranks": len(ordinary), "specials": len(special)}))


if __name__ == "__main__":
    main()
