"""Run a MediaTek LLM export script of the pinned ExecuTorch's examples/mediatek (here the LFM2
overlay's lfm2.py) on a machine without the NeuroPilot SDK, to the first call into it.
exe-expo test support (e2e/realtool, vendor_test.go); never shipped.

Usage (in the examples/mediatek copy, as the recipe's step runs):
    mtk_stage.py model_export_scripts/SCRIPT.py ARGS...

Stand-ins, each installed only for what is missing here, and each recorded in the result:

  - NeuroPilot SDK. backends/mediatek/preprocess.py:13-14 imports mtk_converter and
    mtk_neuron, and partitioner.py:19 `from mtk_converter.python.converters.pytorch import
    importer_v2`, when lfm2.py:52 (qwen.py:46) imports executorch.backends.mediatek. Those
    modules are put into sys.modules as empty packages whose every attribute lookup is
    recorded and raises SDKCalled: they get the imports through and nothing else. The run
    therefore ends at the first real use of the SDK, whatever it is, and the result names it.
  - MediaTek's vendored fast tokenizer. For "pretrained_fast" (Lfm2Config's tokenizer),
    aot_utils/llm_utils/utils.py:921 (926 with the overlay) imports PreTrainedTokenizerFast
    from aot_utils/llm_utils/tokenizers_/tokenization_utils_fast.py, MediaTek's copy of
    transformers 4's class. Under transformers 5 that file does not import
    (tokenization_utils_fast.py:37 imports SpecialTokensMixin from
    transformers.tokenization_utils_base, which transformers 5 removed), and the kept files
    exe-expo keeps (internal/recipe/testdata/executorch-v1.5.1) do not include tokenizers_ at all.
    When the vendored module cannot be imported, transformers' own PreTrainedTokenizerFast is
    served under its name; the result says why.

The last line printed is "MTK_STAGE_RESULT " + JSON:
  {"stopped": {"type", "message", "frames": [[file, line, function], ...]} or null,
   "sdk_uses": ["mtk_converter....attr", ...], "tokenizer": {"vendored": "ok" | reason,
   "served": "vendored" | "transformers.PreTrainedTokenizerFast"},
   "transformers": version, "special_tokens_mixin": bool}
"""

import importlib
import importlib.util
import json
import os
import runpy
import sys
import traceback
import types

SDK_MODULES = ["mtk_converter", "mtk_converter.python", "mtk_converter.python.converters",
               "mtk_converter.python.converters.pytorch",
               "mtk_converter.python.converters.pytorch.importer_v2", "mtk_neuron"]
VENDORED_FAST = "aot_utils.llm_utils.tokenizers_.tokenization_utils_fast"

sdk_uses = []


class SDKCalled(Exception):
    """The run asked the NeuroPilot SDK for something: where a real export needs it."""


def sdk_module(name):
    m = types.ModuleType(name)
    m.__doc__ = "exe-expo test stand-in for the NeuroPilot SDK (e2e/realtool/testdata/vendor/mtk_stage.py)"
    m.__path__ = []

    def lookup(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        sdk_uses.append("%s.%s" % (name, attr))
        raise SDKCalled("NeuroPilot SDK needed: %s.%s" % (name, attr))

    m.__getattr__ = lookup
    return m


def install_sdk():
    missing = [n for n in ("mtk_converter", "mtk_neuron") if importlib.util.find_spec(n) is None]
    if len(missing) < 2:
        raise SystemExit("mtk_stage: this python has the NeuroPilot SDK (%s); run the real export instead"
                         % ", ".join(sorted({"mtk_converter", "mtk_neuron"} - set(missing))))
    for n in SDK_MODULES:
        sys.modules[n] = sdk_module(n)
    # partitioner.py:19 takes importer_v2 from its package as an attribute
    setattr(sys.modules["mtk_converter.python.converters.pytorch"], "importer_v2",
            sys.modules["mtk_converter.python.converters.pytorch.importer_v2"])


def install_tokenizer():
    path = os.path.join(*VENDORED_FAST.split(".")) + ".py"
    if not os.path.exists(path):
        vendored = "%s is not in this examples/mediatek copy" % path
    else:
        try:
            importlib.import_module(VENDORED_FAST)
            return {"vendored": "ok", "served": "vendored"}
        except Exception as e:  # noqa: BLE001 - the reason is the finding
            vendored = "%s: %s" % (type(e).__name__, e)
            for n in [n for n in sys.modules if n.startswith("aot_utils.llm_utils.tokenizers_")]:
                del sys.modules[n]
    import transformers
    m = types.ModuleType(VENDORED_FAST)
    m.__doc__ = "exe-expo test stand-in: transformers' PreTrainedTokenizerFast under MediaTek's name"
    m.PreTrainedTokenizerFast = transformers.PreTrainedTokenizerFast
    sys.modules[VENDORED_FAST] = m
    return {"vendored": vendored, "served": "transformers.PreTrainedTokenizerFast"}


def main():
    script = sys.argv[1]
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    install_sdk()
    import transformers
    import transformers.tokenization_utils_base as tub
    result = {"stopped": None, "sdk_uses": sdk_uses, "tokenizer": install_tokenizer(),
              "transformers": transformers.__version__,
              "special_tokens_mixin": hasattr(tub, "SpecialTokensMixin")}
    print("mtk_stage: tokenizer %s" % json.dumps(result["tokenizer"]), flush=True)
    sys.argv = [script] + sys.argv[2:]
    try:
        runpy.run_path(script, run_name="__main__")
    except BaseException as e:  # noqa: BLE001 - where it stopped is the result
        traceback.print_exc()
        frames = [[f.filename, f.lineno, f.name] for f in traceback.extract_tb(e.__traceback__)]
        result["stopped"] = {"type": type(e).__name__, "message": str(e)[:500], "frames": frames}
    sys.stdout.flush()
    sys.stderr.flush()
    print("MTK_STAGE_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
