"""Stand-in for transformers' AutoTokenizer in smoke_run.py's test: the folder's chat
template is the file template.txt with {content} in it; no file, no template."""

import os


class _Tokenizer:
    def __init__(self, template):
        self.template = template

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        assert not tokenize and add_generation_prompt
        return self.template.replace("{content}", messages[-1]["content"])


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path):
        with open(os.path.join(path, "template.txt")) as f:
            return _Tokenizer(f.read())
