import os


class AutoTokenizer:
    @staticmethod
    def from_pretrained(name, *args, **kwargs):
        if not os.path.isdir(name):
            raise RuntimeError("transformers: went to the Hub for " + name)
        return "tokenizer from " + name
