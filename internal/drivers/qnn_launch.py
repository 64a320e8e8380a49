"""Run ExecuTorch's Qualcomm LLM script on the files the plan resolved, and record what it read.

exe-expo driver: command line in (the recipe decides every flag), the script's own output.
  qnn_launch.py --record inputs.json [--repo ID --snapshot DIR --checkpoint FILE]
                [--calib-window N] [--save-calibration FILE [--calibrate-only] | --load-calibration FILE] -- ARGS
ARGS are llama.py's (examples/qualcomm/oss_scripts/llama/llama.py), run in this process.

--repo, --snapshot, --checkpoint: ExecuTorch's script (1.4.0 and 1.5.1 alike) loads a
  registry model by its Hub id and has no flag for local files: the tokenizer with
  AutoTokenizer.from_pretrained (tokenizer.py), the weights with
  download_and_convert_hf_checkpoint (wrappers/llm_wrappers.py), which downloads whatever
  revision is current and reuses a conversion cached by repo id alone
  (examples/models/llama/hf_download.py; 1.5 moved that cache from
  ~/.cache/meta_checkpoints to $HF_HOME/.cache/meta_checkpoints, which the launcher never
  reads). Both requests are served from --snapshot,
  the folder exe-expo downloaded at the plan's commit; the script's own converter writes
  --checkpoint, once per run. A request for any other repo stops the run.
torchtune: the script's package imports the weight converters of every decoder it knows
  (oss_scripts/llama/__init__.py:25), and four of them import torchtune at module level:
  get_mapped_key (qwen2_5, granite_speech) and FullModelHFCheckpointer (smollm2,
  phi_4_mini). The locked environment has no torchtune: PyPI's 0.6.1 does not import with
  torchao 0.18 (torchtune/modules/common_utils.py:19, torchao.dtypes.nf4tensor) and
  ExecuTorch pins an unreleased git commit. Where torchtune does not import, the launcher
  serves get_mapped_key from ExecuTorch's own copy (examples/models/checkpoint.py, the
  same mapping), and FullModelHFCheckpointer stops the run with a sentence that names the
  model: no conversion of ours stands in for torchtune's.
--calib-window N: calibrate at N tokens and build the deployed window from that calibration.
  llama.py calibrates a graph as long as --max_context_len, every calibration row padded to
  it, so its forward passes grow faster than the window and SeqMSE's search (recipes with
  seq_mse_candidates) linearly with it (docs/research/qnn-calibration.md). The encodings
  depend on the weights and on the activations of the rows, not on the cache length, so the
  launcher builds a second calibration decoder at N (its rows cut at N), calibrates that one,
  and gives the deployed window's own calibration graph its encodings with llama.py's
  HybridTextDecoder._encoding_override, the same node-by-node copy the script uses from its
  calibration graph to the decode and prefill graphs. That copy also replaces the graph's
  constants (the RoPE tables, max_context_len rows, quantized like weights), which would give
  the long window the short window's table: the deployed graph keeps every constant whose
  shape differs from the calibrated graph's, with its own encoding. The deployed graph then sees one forward pass (convert_pt2e needs
  its observers fed) instead of the calibration, and everything after (decode and prefill
  encodings, the QDQ program, the lowering) runs as without the option. N must be below the
  window; QAT is refused (it trains the calibration graph itself).
--save-calibration FILE: after the calibration graph is calibrated (the --calib-window
  graph, or the script's own at --max_context_len), write what _encoding_override would copy
  from it to FILE (torch.save, atomically): for each non-quantize node, by name in graph
  order, the arguments after the first of its chain of quantize/dequantize users; for each
  get_attr node its target, tensor and chain; the same for the token embedding where the
  script applies one. A header names the format, repo, decoder, soc, calibration window,
  the calibration record (tokens_sha256), the ExecuTorch release and a digest of the weight
  files (the snapshot's safetensors, the --checkpoint file).
--calibrate-only: stop once FILE is written (no decode or prefill graph, no QDQ program, no
  lowering), exit 0: the workflow's calibrate job, once per model and chip.
--load-calibration FILE: calibrate nothing: no calibration rows are built, the deployed
  window's graph sees the one forward pass convert_pt2e needs, then gets FILE's encodings
  node by node (names in order, constants by target; a constant whose shape differs, the
  RoPE tables, stays the window's own, as with --calib-window). A file of another format,
  repo, decoder, soc, ExecuTorch release or weights, one that cannot be read, or one whose node list
  differs from this graph's is refused with a sentence. The encodings do not depend on the
  window, so every window of a model and chip is built from one calibration
  (e2e/realtool TestQNNSharedCalibration: bit-identical to --calib-window's).
--record: written after the script succeeds, as JSON:
  {"repo": ID or null,
   "read": [{"what": "checkpoint" | "tokenizer" | "params", "path": file or folder}],
   "calibration": {"tasks", "limit", "num_fewshot", "sequences", "tokens", "tokens_sha256",
                   "datasets": [{"path", "name", "revision", "splits": {split: {"rows",
                                 "fingerprint"}}}]} or null,
   "calib_window": {"window": N, "kept_constants": ["target RxC (was given rxc)"]}, only with --calib-window,
   "calibration_file": {"path", "sha256", "window", "executorch", "kept_constants"}, only with
                       --load-calibration, where "calibration" is the file's header's}
  "read" holds what the script was served and the model files its flags name; tokens_sha256
  hashes the token rows calibration ran on (one JSON list of ids per line), so two exports
  whose digests agree calibrated on the same tokens; "datasets" are lm_eval's
  datasets.load_dataset calls, "revision" what it asked for (null: the default branch at the
  time of the run).
"""

import argparse
import json
import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The launcher's parts, written beside it (drivers.Names). The names below are the
# launcher's own as well: tools that load it by path (e2e/realtool's vendor/qnn_stage.py,
# docs/research/qnn-calibration/calib_times.py) call provide_torchtune and main, read LLAMA
# and replace record_calibration, which main looks up here.
from qnn_calibfile import FORMAT, MATCHED, Calibrated, read_calibration, weights_digest  # noqa: E402
from qnn_calibrate import calibrate_at, load_from, save_after, saved  # noqa: E402
from qnn_record import record_calibration, record_datasets, serve_snapshot  # noqa: E402
from qnn_script import LLAMA, executorch_version, flagged_files, log, script_flag  # noqa: E402,F401
from qnn_torchtune import provide_torchtune  # noqa: E402


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        raise SystemExit("qnn_launch: llama.py's arguments follow --")
    cut = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--record", required=True)
    p.add_argument("--repo")
    p.add_argument("--snapshot")
    p.add_argument("--checkpoint")
    p.add_argument("--calib-window", type=int)
    p.add_argument("--save-calibration")
    p.add_argument("--calibrate-only", action="store_true")
    p.add_argument("--load-calibration")
    args = p.parse_args(argv[:cut])
    script_args = argv[cut + 1:]
    served = [args.repo, args.snapshot, args.checkpoint]
    if any(served) and not all(served):
        raise SystemExit("qnn_launch: --repo, --snapshot and --checkpoint go together")
    if args.calibrate_only and not args.save_calibration:
        raise SystemExit("qnn_launch: --calibrate-only needs --save-calibration FILE: a calibration nobody keeps is wasted")
    if args.calibrate_only and args.calib_window is not None:
        raise SystemExit("qnn_launch: --calibrate-only calibrates at the script's --max_context_len; give the calibration window there, not as --calib-window")
    if args.load_calibration and (args.save_calibration or args.calib_window is not None):
        raise SystemExit("qnn_launch: --load-calibration calibrates nothing, so it takes neither --save-calibration nor --calib-window")
    header = {"format": FORMAT, "repo": args.repo, "decoder": script_flag(script_args, "--decoder_model"),
              "soc": script_flag(script_args, "--soc_model"), "executorch": executorch_version()}
    if args.save_calibration or args.load_calibration:
        header["weights_sha256"] = weights_digest(args.snapshot, script_args)
    if args.calib_window is not None:
        window = script_flag(script_args, "--max_context_len")
        if window is None:
            raise SystemExit("qnn_launch: --calib-window %d needs the window it calibrates for, and llama.py's arguments give no --max_context_len" % args.calib_window)
        if not 0 < args.calib_window < int(window):
            raise SystemExit("qnn_launch: --calib-window %d must be below the script's --max_context_len (%s): "
                             "a calibration window is only worth building a window longer than it" % (args.calib_window, window))
    record = {"repo": args.repo, "read": [], "calibration": None, "datasets": []}
    log("torchtune: " + provide_torchtune())
    if args.repo:
        serve_snapshot(record, args.repo, args.snapshot, args.checkpoint)
    flagged_files(record, script_args)
    record_datasets(record)
    record_calibration(record)
    save = None
    if args.save_calibration:
        def save(hybrid, request, decoder):
            saved(hybrid, request, decoder, args.save_calibration, header, args.calibrate_only, record)
    if args.load_calibration:
        data = read_calibration(args.load_calibration, {k: header[k] for k in MATCHED})
        load_from(args.load_calibration, data, record)
    elif args.calib_window is not None:
        calibrate_at(args.calib_window, record, save)
    elif save:
        save_after(save)
    sys.argv = ["llama.py"] + script_args
    try:
        runpy.run_module(LLAMA + ".llama", run_name="__main__", alter_sys=True)
    except Calibrated:
        log("--calibrate-only: calibration saved to %s; no window built" % args.save_calibration)
    del record["datasets"]
    tmp = args.record + ".partial"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    os.replace(tmp, args.record)


if __name__ == "__main__":
    main()
