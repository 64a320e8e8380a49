"""Time the pinned ExecuTorch's Qualcomm calibration (llama.py, through exe-expo's launcher)
on the CPU, split into forward passes and SeqMSE's search. Research probe for
docs/research/qnn-calibration.md; never shipped, never run by the tests.

  calib_times.py model --out DIR --params JSON
      writes DIR/params.json (the given Llama params), DIR/consolidated.00.pth (random
      weights of exactly the shapes ExecuTorch's static Llama loads, strict) and
      DIR/tokenizer.model (byte-level tiktoken ranks: one token per byte)
  calib_times.py run --model DIR --window N [--calib-window M] [--seq-mse K]
      runs drivers/qnn_launch.py (through e2e/realtool's vendor/qnn_stage.py, which stands in
      for the QNN SDK and serves the calibration text) with the Llama 3.2 recipe's flags,
      stops after the quantize stage and prints one JSON line:
      {"window", "calib_window", "seq_mse", "forward_s": [each plain forward pass],
       "seq_mse_s": [each pass under SeqMSE: search plus its forward], "quantize_s"}
      --seq-mse overrides the recipe's seq_mse_candidates (0: none).

Run it with the locked python; it sets QNN_SDK_ROOT and the stand-in's variables itself.
"""

import argparse
import base64
import contextlib
import importlib
import importlib.util
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
LAUNCH = os.path.join(REPO, "internal", "drivers", "qnn_launch.py")
STAGE = os.path.join(REPO, "e2e", "realtool", "testdata", "vendor", "qnn_stage.py")
LLAMA = "executorch.examples.qualcomm.oss_scripts.llama"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def make_model(out, params):
    import torch

    load(LAUNCH, "qnn_launch").provide_torchtune()
    static = importlib.import_module(LLAMA + ".model.static_llama")
    margs = importlib.import_module("executorch.examples.models.llama.model_args")
    os.makedirs(out, exist_ok=True)
    p = json.load(open(params))
    json.dump(p, open(os.path.join(out, "params.json"), "w"), indent=1)
    args = margs.ModelArgs(**p)
    args.max_seq_len = args.max_context_len = 128
    args.use_kv_cache, args.ar_len, args.max_batch_size = True, 1, 1
    torch.manual_seed(0)
    model = static.LlamaModel(args, ar_len=1, output_new_cache_only=True, output_cache=True)
    state = {k: torch.randn(v.shape) * 0.02 if v.dim() > 1 else torch.ones(v.shape) for k, v in model.state_dict().items()}
    torch.save(state, os.path.join(out, "consolidated.00.pth"))
    with open(os.path.join(out, "tokenizer.model"), "w") as f:
        for b in range(256):
            f.write("%s %d\n" % (base64.b64encode(bytes([b])).decode(), b))
    print(json.dumps({"parameters": sum(v.numel() for v in state.values()), "tensors": len(state)}))


class Done(BaseException):  # llama.py re-raises every Exception as a bare Exception
    pass


def run(a):
    root = tempfile.mkdtemp(prefix="calib-times-")
    sdk = os.path.join(root, "qnn-sdk-empty")
    os.makedirs(sdk)
    os.environ.update({"QNN_SDK_ROOT": sdk, "HOME": root, "QNN_STAGE_SDK_BUILD_ID": "v2.37.0.250724",
                       "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    launcher = load(LAUNCH, "qnn_launch")
    launcher.provide_torchtune()
    stage = load(STAGE, "qnn_stage")
    ptq = importlib.import_module(LLAMA + ".quantize.ptq")
    decoder = importlib.import_module(LLAMA + ".inference.decoder")
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    times = {"window": a.window, "calib_window": a.calib_window, "seq_mse": None, "forward_s": [], "seq_mse_s": []}
    state = {"in_seq_mse": False}
    step, seq_mse, init = decoder.DecoderInference.predict_step, ptq.SeqMSE, ptq.PTQStrategy.__init__

    def timed_step(self, *args, **kwargs):
        t = time.perf_counter()
        out = step(self, *args, **kwargs)
        times["seq_mse_s" if state["in_seq_mse"] else "forward_s"].append(round(time.perf_counter() - t, 3))
        return out

    @contextlib.contextmanager
    def flagged(*args, **kwargs):
        with seq_mse(*args, **kwargs):
            state["in_seq_mse"] = True
            try:
                yield
            finally:
                state["in_seq_mse"] = False

    def strategy(self, *args, **kwargs):
        if a.seq_mse is not None:
            kwargs["seq_mse_candidates"] = a.seq_mse
        init(self, *args, **kwargs)
        times["seq_mse"] = self._seq_mse_candidates

    quantize = wrappers.MultiModalManager.quantize

    def quantize_then_stop(self, *args, **kwargs):
        t = time.perf_counter()
        quantize(self, *args, **kwargs)
        times["quantize_s"] = round(time.perf_counter() - t, 3)
        raise Done()

    decoder.DecoderInference.predict_step = timed_step
    ptq.SeqMSE = flagged
    ptq.PTQStrategy.__init__ = strategy
    wrappers.MultiModalManager.quantize = quantize_then_stop
    m = a.model
    w = str(a.window)
    argv = [STAGE, LAUNCH, "--record", os.path.join(root, "inputs.json")]
    if a.calib_window:
        argv += ["--calib-window", str(a.calib_window)]
    argv += ["--", "--decoder_model", "llama3_2-1b_instruct", "--soc_model", "SM8650", "--compile_only", "--model_mode", "hybrid",
             "--max_seq_len", w, "--max_context_len", w, "--prefill_ar_len", "128", "--calib_limit", "1",
             "--artifact", os.path.join(root, "artifact"), "--build_folder", os.path.join(root, "build"),
             "--prompt", "What is the capital of France?", "--temperature", "0", "--calib_tasks", "wikitext",
             "--checkpoint", os.path.join(m, "consolidated.00.pth"), "--params", os.path.join(m, "params.json"),
             "--tokenizer_model", os.path.join(m, "tokenizer.model")]
    sys.argv = argv
    stage.launch = None
    try:
        stage.main()
    except Done:
        pass
    print(json.dumps(times), flush=True)
    os._exit(0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("model")
    mk.add_argument("--out", required=True)
    mk.add_argument("--params", required=True)
    r = sub.add_parser("run")
    r.add_argument("--model", required=True)
    r.add_argument("--window", type=int, required=True)
    r.add_argument("--calib-window", type=int)
    r.add_argument("--seq-mse", type=int)
    a = p.parse_args()
    if a.cmd == "model":
        make_model(a.out, a.params)
    else:
        run(a)


if __name__ == "__main__":
    main()
