"""Run exe-expo's QNN launcher (drivers/qnn_launch.py, and through it ExecuTorch 1.4.0's
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
