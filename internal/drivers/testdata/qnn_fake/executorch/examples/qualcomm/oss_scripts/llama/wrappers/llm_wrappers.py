from executorch.examples.models.llama.hf_download import download_and_convert_hf_checkpoint


def prepare(repo_id, convert_weights):
    """As the decoder wrapper's _prepare_model without --checkpoint."""
    return download_and_convert_hf_checkpoint(repo_id, convert_weights)
