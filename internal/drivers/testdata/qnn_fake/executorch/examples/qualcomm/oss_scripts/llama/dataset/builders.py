from executorch.examples.qualcomm.oss_scripts.llama.dataset.loaders import collect_lm_eval_tokens


def from_lm_eval(tokenizer, tasks, limit, num_fewshot=None):
    return collect_lm_eval_tokens(tokenizer=tokenizer, max_context_length=8, vocab_size=64,
                                  tasks=tasks, tasks_limit=limit, num_fewshot=num_fewshot)
