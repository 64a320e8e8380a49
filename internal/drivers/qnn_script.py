"""The Qualcomm LLM script the QNN launcher runs (qnn_launch.py): its package, its flags, and
the launcher's log and the ExecuTorch release it names in messages."""

import importlib
import importlib.metadata
import sys


LLAMA = "executorch.examples.qualcomm.oss_scripts.llama"


FILE_FLAGS = {"--checkpoint": "checkpoint", "--params": "params", "--tokenizer_model": "tokenizer",
              "--tokenizer_bin": "tokenizer"}


def log(msg):
    print("qnn_launch: " + msg, file=sys.stderr, flush=True)


def executorch_version():
    """The installed ExecuTorch release, as messages name it."""
    try:
        return importlib.metadata.version("executorch")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def script_flag(script_args, flag):
    """The value llama.py's command line gives flag, or None."""
    for i, a in enumerate(script_args[:-1]):
        if a == flag:
            return script_args[i + 1]
    return None


def flagged_files(record, script_args):
    """The model files the script's own flags name."""
    for i, a in enumerate(script_args[:-1]):
        if a in FILE_FLAGS:
            record["read"].append({"what": FILE_FLAGS[a], "path": script_args[i + 1]})
