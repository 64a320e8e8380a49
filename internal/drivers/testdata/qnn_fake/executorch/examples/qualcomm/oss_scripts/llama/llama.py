import argparse
import json
import os
import sys

from executorch.examples.qualcomm.oss_scripts.llama import tokenizer
from executorch.examples.qualcomm.oss_scripts.llama.dataset import builders
from executorch.examples.qualcomm.oss_scripts.llama.wrappers import llm_wrappers

REGISTRY = {"qwen3-0_6b": "Qwen/Qwen3-0.6B", "llama3_2-1b_instruct": None}


def convert_weights(input_dir, output_path):
    with open(output_path, "a") as f:
        f.write("converted %s: %s\n" % (input_dir, ",".join(sorted(os.listdir(input_dir)))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--decoder_model", required=True)
    p.add_argument("--artifact", required=True)
    p.add_argument("--checkpoint")
    p.add_argument("--params")
    p.add_argument("--tokenizer_model")
    p.add_argument("--calib_tasks", nargs="+")
    p.add_argument("--calib_limit", type=int, default=1)
    args, _ = p.parse_known_args()
    repo = REGISTRY[args.decoder_model]
    tok = None
    if repo:
        tok = tokenizer.load(repo)
        for _ in ("prefill", "kv"):  # hybrid mode prepares two decoders
            llm_wrappers.prepare(repo, convert_weights)
    builders.from_lm_eval(tok, args.calib_tasks, args.calib_limit)
    os.makedirs(args.artifact, exist_ok=True)
    with open(os.path.join(args.artifact, "argv.json"), "w") as f:
        json.dump({"argv": sys.argv[1:], "tokenizer": tok}, f)


if __name__ == "__main__":
    main()
