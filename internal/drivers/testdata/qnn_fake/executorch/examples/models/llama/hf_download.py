def download_and_convert_hf_checkpoint(repo_id, convert_weights):
    raise RuntimeError("hf_download: went to the Hub for " + repo_id)
