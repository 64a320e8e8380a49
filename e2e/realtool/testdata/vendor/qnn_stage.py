"""Run exe-expo's QNN launcher (drivers/qnn_launch.py, and through it the pinned ExecuTorch's
Qualcomm llama.py) on a machine without the QNN SDK and without network, changing only what
the machine lacks. exe-expo test support (e2e/realtool, vendor_test.go); never shipped.

Usage: qnn_stage.py QNN_LAUNCH_PY ARGS...   (the recipe's own command line after its python)

vendor_test.go gives exe-expo export a --python that runs this script in place of the
real python for qnn_launch.py, so everything else (the recipe's command line, the launcher,
llama.py and every ExecuTorch module) is what a real export runs. This script:

  - checks that QNN_SDK_ROOT names an empty folder. ExecuTorch's
    backends/qualcomm/__init__.py:22-31 would otherwise try to download the SDK's libc++
    and raise "Failed to set up QNN SDK." at import; with the variable set it only prints
    "[QNN] Using QNN SDK at ...", and the first SDK call fails for real later on.
  - answers the SDK's build-id query as the pinned QAIRT does. From 1.5 the Qualcomm passes
    that run while the decoders are quantized ask the SDK its version
    (backends/qualcomm/utils/check_qnn_version.py, PyQnnManagerAdaptor.GetQnnSdkBuildId on
    $QNN_SDK_ROOT/lib/x86_64-linux-clang/libQnnHtp.so) to gate features on newer SDKs, and
    that native call aborts the process when the library is missing. The answer is
    QNN_STAGE_SDK_BUILD_ID (vendor_test.go sets "v" + versions.env's QAIRT_VERSION, the form
    the SDK's build id takes), so every version gate decides as on a runner with the real
    SDK; the library itself is still missing, and the lowering still fails opening it.
  - serves the calibration rows locally. The recipe calibrates with `--calib_tasks wikitext
    --calib_limit 1`: dataset/loaders.py's collect_lm_eval_tokens runs lm_eval, whose HFLM
    is made with pretrained="gpt2" (examples/models/llama/evaluate/eager_eval.py:35) and so
    loads gpt2's config, tokenizer and weights from the Hub before wikitext itself. Offline
    that is an OSError. builders.collect_lm_eval_tokens is replaced (before the launcher
    wraps it to record the rows) by one that tokenizes a fixed English text with the
    script's own tokenizer into rows of max_context_length tokens, as lm_eval's rolling
    windows would; everything after it (the calibration loop, SeqMSE, convert_pt2e) is real.

It prints "qnn_stage: ..." lines the test reads, then runs the launcher's main.
"""

import functools
import importlib
import importlib.util
import os
import sys

LLAMA = "executorch.examples.qualcomm.oss_scripts.llama"

# The calibration text: plain English of the kind wikitext holds.
TEXT = (
    "Paris is the capital and largest city of France. The city stands on the Seine river, in "
    "the north of the country, at the heart of the Ile-de-France region. Since the seventeenth "
    "century Paris has been one of the major centres of finance, diplomacy, commerce, culture, "
    "fashion and science in Europe. The capital of Germany is Berlin, and the capital of Italy "
    "is Rome. What is the capital of France? Paris is the answer. "
)


def log(msg):
    print("qnn_stage: " + msg, file=sys.stderr, flush=True)


def check_sdk_root():
    root = os.environ.get("QNN_SDK_ROOT", "")
    if not root or not os.path.isdir(root) or os.listdir(root):
        raise SystemExit("qnn_stage: QNN_SDK_ROOT must name an empty folder (it is %r)" % root)
    log("QNN_SDK_ROOT=%s (empty: no QNN SDK)" % root)


def answer_build_id():
    build = os.environ.get("QNN_STAGE_SDK_BUILD_ID", "")
    if not build.startswith("v"):
        raise SystemExit("qnn_stage: QNN_STAGE_SDK_BUILD_ID must give the pinned QAIRT's build id, such as v2.37.0.250724 (it is %r)" % build)
    adaptor = importlib.import_module("executorch.backends.qualcomm.python.PyQnnManagerAdaptor")
    real = adaptor.GetQnnSdkBuildId

    def build_id(htp_library_path):
        if os.path.exists(htp_library_path):
            return real(htp_library_path)
        log("the SDK's build id asked of %s: answered %s" % (htp_library_path, build))
        return build

    adaptor.GetQnnSdkBuildId = build_id


def serve_calibration():
    builders = importlib.import_module(LLAMA + ".dataset.builders")
    lm_eval_rows = builders.collect_lm_eval_tokens

    @functools.wraps(lm_eval_rows)  # the launcher binds calls by this signature
    def local_rows(tokenizer, max_context_length, vocab_size, tasks="wikitext", tasks_limit=1, num_fewshot=None):
        ids = tokenizer.encode(TEXT, bos=True, eos=False)
        bad = [i for i in ids if not 0 <= i < vocab_size]
        if bad:
            raise SystemExit("qnn_stage: token ids %s are outside the model's vocabulary of %d" % (bad[:5], vocab_size))
        rows = [ids[i:i + max_context_length] for i in range(0, len(ids), max_context_length)]
        names = " ".join(tasks) if isinstance(tasks, (list, tuple)) else str(tasks)
        log("calibration rows served locally in place of lm_eval %s (limit %s): %d row(s), %d tokens, max_context_length %d"
            % (names, tasks_limit, len(rows), len(ids), max_context_length))
        return rows

    builders.collect_lm_eval_tokens = local_rows


def main():
    if len(sys.argv) < 2 or os.path.basename(sys.argv[1]) != "qnn_launch.py":
        raise SystemExit("usage: qnn_stage.py .../qnn_launch.py ARGS...")
    launch = sys.argv[1]
    check_sdk_root()
    answer_build_id()
    spec = importlib.util.spec_from_file_location("qnn_launch", launch)
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)
    record_calibration = launcher.record_calibration

    # The launcher imports the script's package only after it has provided torchtune's
    # names; the rows are swapped in just before it wraps their collection.
    def served_then_recorded(record):
        serve_calibration()
        record_calibration(record)

    launcher.record_calibration = served_then_recorded
    sys.argv = [launch] + sys.argv[2:]
    log("running " + launch)
    launcher.main()


if __name__ == "__main__":
    main()
