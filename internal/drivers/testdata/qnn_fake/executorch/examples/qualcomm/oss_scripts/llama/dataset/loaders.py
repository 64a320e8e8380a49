import datasets


def collect_lm_eval_tokens(tokenizer, max_context_length, vocab_size, tasks="wikitext", tasks_limit=1, num_fewshot=None):
    """Loads a dataset as lm_eval does (through the datasets module) and returns rows."""
    datasets.load_dataset(path="EleutherAI/wikitext_document_level", name="wikitext-2-raw-v1")
    return [[1, 2, 3], [40, 50]]
