"""Check exe-expo's QNN launcher without torchtune against the pinned ExecuTorch's real modules.
exe-expo test support (e2e/realtool, vendor_test.go); never shipped.

Usage: torchtune_check.py QNN_LAUNCH_PY QWEN2_5_DIR SMOLLM2_DIR WORK

With the launcher's provide_torchtune() in place it imports the Qualcomm LLM script's package
(which imports torchtune at module level), converts the tiny Qwen2.5 with ExecuTorch's own
qwen2_5 converter (torchtune's get_mapped_key, served from ExecuTorch's copy) and tries
SmolLM2's converter (torchtune's FullModelHFCheckpointer), which must stop with the
launcher's sentence. Prints one JSON line.
"""

import importlib
import importlib.util
import json
import os
import sys

import torch


def main():
    launch, qwen, smol, work = sys.argv[1:5]
    spec = importlib.util.spec_from_file_location("qnn_launch", launch)
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)
    provided = launcher.provide_torchtune()
    importlib.import_module(launcher.LLAMA + ".wrappers.llm_wrappers")

    qwen_out = os.path.join(work, "qwen2_5.pth")
    importlib.import_module("executorch.examples.models.qwen2_5.convert_weights").convert_weights(qwen, qwen_out)
    keys = sorted(torch.load(qwen_out, weights_only=True, map_location="cpu"))

    smol_stop = None
    try:
        importlib.import_module("executorch.examples.models.smollm2.convert_weights").convert_weights(
            smol, os.path.join(work, "smollm2.pth"))
    except SystemExit as e:
        smol_stop = str(e)
    print(json.dumps({"provided": provided, "qwen_keys": keys, "smollm2_stop": smol_stop}))


if __name__ == "__main__":
    main()
