from transformers import AutoTokenizer


def load(repo_id):
    """As TokenizerWrapper._from_hf: the tokenizer by the registry's Hub id."""
    return AutoTokenizer.from_pretrained(repo_id)
