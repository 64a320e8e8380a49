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
import dataclasses
import copy
import gc
import hashlib
import importlib
import importlib.metadata
import inspect
import json
import os
import runpy
import sys
import types

LLAMA = "executorch.examples.qualcomm.oss_scripts.llama"
FILE_FLAGS = {"--checkpoint": "checkpoint", "--params": "params", "--tokenizer_model": "tokenizer",
              "--tokenizer_bin": "tokenizer"}


def log(msg):
    print("qnn_launch: " + msg, file=sys.stderr, flush=True)


TORCHTUNE = {"torchtune.models.convert_weights": "get_mapped_key", "torchtune.training": "FullModelHFCheckpointer"}


def get_mapped_key(key, mapping_dict):
    """ExecuTorch's own copy of torchtune's key mapping (examples/models/checkpoint.py)."""
    return importlib.import_module("executorch.examples.models.checkpoint").get_mapped_key(key, mapping_dict)


class FullModelHFCheckpointer:
    """Stops a conversion that needs torchtune's checkpointer, naming what is missing."""

    def __init__(self, checkpoint_dir=None, *args, **kwargs):
        et = executorch_version()
        raise SystemExit(
            "qnn_launch: ExecuTorch %s converts the Hub checkpoint in %s with torchtune's "
            "FullModelHFCheckpointer (smollm2 and phi_4_mini do), and the locked environment has no "
            "torchtune (PyPI's 0.6.1 does not import with torchao 0.18; ExecuTorch pins an unreleased "
            "commit), so this model cannot be exported to QNN with ExecuTorch %s here" % (et, checkpoint_dir, et))


def executorch_version():
    """The installed ExecuTorch release, as messages name it."""
    try:
        return importlib.metadata.version("executorch")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def provide_torchtune():
    """Makes the two torchtune names the script imports available; says which it uses."""
    try:
        for mod, name in TORCHTUNE.items():
            getattr(importlib.import_module(mod), name)
        return "torchtune " + getattr(importlib.import_module("torchtune"), "__version__", "(no version)")
    except Exception as e:  # noqa: BLE001 - any failure to import means the fallback
        why = "%s: %s" % (type(e).__name__, e)
        for n in [n for n in sys.modules if n == "torchtune" or n.startswith("torchtune.")]:
            del sys.modules[n]

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__path__ = []
        m.__dict__.update(attrs)
        return m

    convert = module("torchtune.models.convert_weights", get_mapped_key=get_mapped_key)
    models = module("torchtune.models", convert_weights=convert)
    training = module("torchtune.training", FullModelHFCheckpointer=FullModelHFCheckpointer)
    top = module("torchtune", models=models, training=training)
    sys.modules.update({"torchtune": top, "torchtune.models": models,
                        "torchtune.models.convert_weights": convert, "torchtune.training": training})
    return "no torchtune (%s): get_mapped_key from ExecuTorch's examples/models/checkpoint.py" % why


def serve_snapshot(record, repo, snapshot, checkpoint):
    """Points the script's two Hub loads at snapshot."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    tok = importlib.import_module(LLAMA + ".tokenizer")
    converted = []

    def local(asked, what):
        if asked != repo:
            raise SystemExit("qnn_launch: the script asked for the %s of %s, and this export holds %s" % (what, asked, repo))
        record["read"].append({"what": what, "path": snapshot})
        return snapshot

    def convert_once(repo_id, convert_weights):
        src = local(repo_id, "checkpoint")
        if not converted:
            log("converting %s into %s with ExecuTorch's converter" % (src, checkpoint))
            convert_weights(src, checkpoint)
            converted.append(checkpoint)
        return checkpoint

    auto = tok.AutoTokenizer

    class LocalAutoTokenizer:
        @staticmethod
        def from_pretrained(name, *args, **kwargs):
            return auto.from_pretrained(local(name, "tokenizer"), *args, **kwargs)

    wrappers.download_and_convert_hf_checkpoint = convert_once
    tok.AutoTokenizer = LocalAutoTokenizer
    log("%s is served from %s" % (repo, snapshot))


def digest(rows):
    h = hashlib.sha256()
    for r in rows:
        h.update(json.dumps([int(t) for t in r]).encode())
        h.update(b"\n")
    return h.hexdigest()


def record_calibration(record):
    """Wraps the collection of lm_eval's token rows so the record says what they were."""
    builders = importlib.import_module(LLAMA + ".dataset.builders")
    collect = builders.collect_lm_eval_tokens
    sig = inspect.signature(collect)

    def collecting(*args, **kwargs):
        rows = collect(*args, **kwargs)
        a = sig.bind(*args, **kwargs)
        a.apply_defaults()
        tasks = a.arguments.get("tasks")
        record["calibration"] = {
            "tasks": [tasks] if isinstance(tasks, str) else list(tasks or []),
            "limit": a.arguments.get("tasks_limit"), "num_fewshot": a.arguments.get("num_fewshot"),
            "sequences": len(rows), "tokens": sum(len(r) for r in rows), "tokens_sha256": digest(rows),
            "datasets": record["datasets"]}
        return rows

    builders.collect_lm_eval_tokens = collecting


def record_datasets(record):
    """Wraps datasets.load_dataset (lm_eval calls it through the module) to note each load."""
    try:
        datasets = importlib.import_module("datasets")
    except ImportError:
        return
    load = datasets.load_dataset

    def loading(*args, **kwargs):
        ds = load(*args, **kwargs)
        splits = {}
        for name, split in (ds.items() if hasattr(ds, "items") else []):
            splits[str(name)] = {"rows": len(split), "fingerprint": getattr(split, "_fingerprint", None)}
        record["datasets"].append({
            "path": kwargs.get("path", args[0] if args else None),
            "name": kwargs.get("name", args[1] if len(args) > 1 else None),
            "revision": kwargs.get("revision"), "splits": splits})
        return ds

    datasets.load_dataset = loading


QDQ_OPS = {"quantize_per_tensor", "dequantize_per_tensor", "quantize_per_channel", "dequantize_per_channel",
           "quantize_affine", "dequantize_affine"}


def is_qdq(node):
    """Whether node is a quantize or dequantize op (torch's quantized_decomposed or torchao's):
    the ops _encoding_override copies (a name test alone would also take quantized_decomposed's
    embedding ops)."""
    parts = str(node.target).split(".")
    return node.op == "call_function" and len(parts) > 1 and parts[1] in QDQ_OPS


def constants(module):
    """Each get_attr node of module's graph with its tensor and the arguments of the quantize
    and dequantize ops that read it (its encoding), as they are now."""
    out = {}
    for n in module.graph.nodes:
        if n.op != "get_attr":
            continue
        chain, todo = {}, [u for u in n.users if is_qdq(u)]
        while todo:
            u = todo.pop()
            chain[u] = u.args
            todo.extend(v for v in u.users if is_qdq(v))
        out[n] = (attr(module, n.target), chain)
    return out


def attr(module, target):
    """The tensor a get_attr target names (dotted, as fx writes it)."""
    for a in target.split("."):
        module = getattr(module, a)
    return module


def set_attr(module, target, value):
    """Replaces the tensor a get_attr target names."""
    *path, last = target.split(".")
    for a in path:
        module = getattr(module, a)
    setattr(module, last, value)


FORMAT = "exe-expo qnn calibration 1"


class Calibrated(BaseException):
    """Raised after --save-calibration under --calibrate-only: stops llama.py before it
    compiles anything; main catches it. A BaseException, as SystemExit is: llama.py's main
    turns every Exception into a bare Exception(e)."""


def portable(a):
    """An argument of a quantize or dequantize op as torch.load(weights_only=True) reads it
    back: a graph node by its name."""
    if isinstance(a, (list, tuple)):
        return type(a)(portable(x) for x in a) if isinstance(a, tuple) else [portable(x) for x in a]
    if hasattr(a, "op") and hasattr(a, "graph"):
        return ("node", a.name)
    return a


def restored(a, nodes):
    """An argument portable() wrote, its node markers resolved in the graph being given it."""
    if isinstance(a, tuple) and len(a) == 2 and a[0] == "node" and isinstance(a[1], str):
        return nodes[a[1]]
    if isinstance(a, (list, tuple)):
        return type(a)(restored(x, nodes) for x in a) if isinstance(a, tuple) else [restored(x, nodes) for x in a]
    return a


def chain(node):
    """node's users as _encoding_override walks them: for each, its name and target and, for
    a quantize or dequantize op, its arguments after the first (the encoding) and its own users."""
    return [(u.name, str(u.target), portable(tuple(u.args[1:])) if is_qdq(u) else None, chain(u) if is_qdq(u) else [])
            for u in node.users]


def activations(module):
    """The nodes whose users carry an activation encoding, in graph order (_encoding_override's list)."""
    return [n for n in module.graph.nodes if n.op in ("call_function", "placeholder") and not is_qdq(n)]


def encodings(module):
    """What _encoding_override copies from a calibrated graph, by node name and get_attr target."""
    return {"activations": [(n.name, chain(n)) for n in activations(module)],
            "constants": [(n.target, attr(module, n.target).detach().clone(), chain(n))
                          for n in module.graph.nodes if n.op == "get_attr"]}


def give(node, saved, nodes, where):
    """Gives node's quantize and dequantize users the saved chain's encodings."""
    users = list(node.users)
    if len(users) != len(saved):
        raise ValueError("%s has %d users here and %d in the file" % (where, len(users), len(saved)))
    for (name, target, args, sub), u in zip(saved, users):
        if name == "output":
            continue
        if target != str(u.target):
            raise ValueError("%s's user %s is %s here and %s in the file" % (where, u.name, u.target, target))
        if args is not None:
            u.args = (u.args[0], *restored(args, nodes))
            give(u, sub, nodes, where + " > " + u.name)


def apply_encodings(saved, module, file):
    """Gives module's graph the saved encodings as _encoding_override would (nodes matched by
    name in order, constants by target), keeping each constant whose shape differs (a table
    with a row per position: the deployed window's own) with its own encoding; returns those kept."""
    acts = activations(module)
    consts = [n for n in module.graph.nodes if n.op == "get_attr"]
    names = [n.name for n in acts], [name for name, _ in saved["activations"]]
    targets = [n.target for n in consts], [t for t, _, _ in saved["constants"]]
    for what, (here, there) in (("nodes", names), ("constants", targets)):
        if here != there:
            first = next((i for i, (a, b) in enumerate(zip(here, there)) if a != b), min(len(here), len(there)))
            raise SystemExit("qnn_launch: the calibration file %s was calibrated on another graph: its %s differ from this "
                             "run's at position %d (%s here, %s in the file; %d here, %d in the file)"
                             % (file, what, first, here[first] if first < len(here) else "none",
                                there[first] if first < len(there) else "none", len(here), len(there)))
    nodes = {n.name: n for n in module.graph.nodes}
    kept = []
    try:
        for n, (_, sub) in zip(acts, saved["activations"]):
            give(n, sub, nodes, n.name)
        for n, (target, value, sub) in zip(consts, saved["constants"]):
            own = attr(module, target)
            if own.shape != value.shape:
                kept.append("%s %s (the file's %s)" % (target, "x".join(map(str, own.shape)), "x".join(map(str, value.shape))))
                continue
            set_attr(module, target, value)
            users = list(n.users)
            if users and str(users[0].target).split(".")[1:2] in (["quantize_per_tensor"], ["dequantize_per_tensor"]):
                give(n, sub, nodes, target)  # parameter_override's rule: per-tensor encodings are op arguments
    except ValueError as e:
        raise SystemExit("qnn_launch: the calibration file %s does not fit this run's graph: %s" % (file, e))
    module.recompile()
    return kept


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_calibration(path, header, hybrid, decoder):
    """Writes decoder's encodings (and the token embedding's, where the script applies one) to path, atomically."""
    import torch
    data = dict(header, graph=encodings(decoder.decoder),
                tok_embedding=encodings(decoder.tok_embedding) if hybrid.apply_embedding else None)
    tmp = path + ".partial"
    torch.save(data, tmp)
    os.replace(tmp, path)
    log("calibration at %d tokens saved to %s (%d activation nodes, %d constants)"
        % (header["window"], path, len(data["graph"]["activations"]), len(data["graph"]["constants"])))


def weights_digest(snapshot, script_args):
    """sha256 over the weight files the script loads or converts (the snapshot's safetensors,
    the checkpoint its flags name), by name and digest: the file's constants are quantized
    weights, so a file made from other weights (another revision of the same repo, or another
    checkpoint of a Meta decoder, which has no repo) must not be applied."""
    files = sorted(f for f in os.listdir(snapshot) if f.endswith(".safetensors")) if snapshot else []
    files = [os.path.join(snapshot, f) for f in files]
    if script_flag(script_args, "--checkpoint"):
        files.append(script_flag(script_args, "--checkpoint"))
    h = hashlib.sha256()
    for f in files:
        h.update(("%s %s\n" % (os.path.basename(f), sha256_file(f))).encode())
    return h.hexdigest()


MATCHED = {"repo": "repo", "decoder": "decoder", "soc": "soc", "executorch": "ExecuTorch",
           "weights_sha256": "weights of sha256"}


def read_calibration(path, expect):
    """The calibration file at path, refused with a sentence when it is not one or was made
    for another model, chip or ExecuTorch."""
    import torch
    try:
        data = torch.load(path, weights_only=True)
    except Exception as e:  # noqa: BLE001 - any failure to read is the same refusal
        raise SystemExit("qnn_launch: the calibration file %s cannot be read (%s: %s): give the file a calibrate-only export wrote"
                         % (path, type(e).__name__, str(e).split(". ")[0].splitlines()[0] if str(e) else ""))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SystemExit("qnn_launch: %s is not a calibration file of this launcher (format %r, this launcher reads %r)"
                         % (path, data.get("format") if isinstance(data, dict) else type(data).__name__, FORMAT))
    for key, want in expect.items():
        if data.get(key) != want:
            raise SystemExit("qnn_launch: the calibration file %s was made for %s %s, and this run is for %s %s"
                             % (path, MATCHED[key], data.get(key), MATCHED[key], want))
    return data


def save_after(save):
    """Saves the calibrated graph after llama.py's own calibration (--save-calibration without --calib-window)."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    hybrid = wrappers.HybridTextDecoder
    quantize = hybrid.quantize

    def quantizing(self, request):
        quantize(self, request)
        save(self, request, self.calibration_prefill)

    hybrid.quantize = quantizing


def saved(hybrid, request, decoder, path, header, stop, record):
    """Saves decoder's calibration (the --save-calibration step, either path) and stops under --calibrate-only."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    if request.method_data[wrappers.TEXT_DECODER].skip_quantize:
        raise SystemExit("qnn_launch: --save-calibration has nothing to save: this run quantizes no decoder")
    header = dict(header, window=decoder.meta["get_max_context_len"], calibration=record["calibration"])
    save_calibration(path, header, hybrid, decoder)
    if stop:
        raise Calibrated()


def load_from(path, data, record):
    """Builds the deployed window from a saved calibration (--load-calibration): no calibration
    data and no calibration pass; one forward pass over the example input, which convert_pt2e
    needs, then the file's encodings."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    hybrid, mode = wrappers.HybridTextDecoder, wrappers.Mode
    quantize = hybrid.quantize
    builders = importlib.import_module(LLAMA + ".dataset.builders")

    def no_rows(self):
        """build_calib_dataloaders' answer without its rows: every modality's key, no data."""
        return dict.fromkeys(builders._ALL_MODALITY_KEYS)

    def loading(self, request):
        if request.method_data[wrappers.TEXT_DECODER].skip_quantize:
            return quantize(self, request)
        deployed = self.calibration_prefill
        deployed.mode = mode.DECODE  # the script's path for graphs it does not calibrate
        try:
            deployed.quantize(request)
        finally:
            deployed.mode = mode.CALIBRATE
        kept = apply_encodings(data["graph"], deployed.decoder, path)
        if self.apply_embedding:
            if data["tok_embedding"] is None:
                raise SystemExit("qnn_launch: the calibration file %s holds no token embedding's encodings, and this run quantizes one" % path)
            apply_encodings(data["tok_embedding"], deployed.tok_embedding, path)
        record["calibration_file"].update(kept_constants=kept)
        log("encodings calibrated at %d tokens loaded from %s into the %d-token graph; its own constants kept: %s"
            % (data["window"], path, deployed.meta["get_max_context_len"], ", ".join(kept) or "none"))

    wrappers.DatasetBuilder.build_calib_dataloaders = no_rows
    hybrid.quantize = loading
    record["calibration"] = data["calibration"]
    record["calibration_file"] = {"path": path, "sha256": sha256_file(path), "window": data["window"],
                                  "executorch": data["executorch"]}


def calibrate_at(window, record, save=None):
    """Calibrates a window-token decoder and gives its encodings to the deployed one (--calib-window)."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    hybrid, mode = wrappers.HybridTextDecoder, wrappers.Mode
    init, quantize, data_config = hybrid.__init__, hybrid.quantize, wrappers.DataConfig

    def building(self, control_args, config, *args, **kwargs):
        init(self, control_args, config, *args, **kwargs)
        deployed = control_args.max_context_len
        if control_args.qat:
            raise SystemExit("qnn_launch: --calib-window calibrates by post-training quantization, and this run asks for QAT, which trains the calibration graph itself")
        if not 0 < window < deployed:
            raise SystemExit("qnn_launch: --calib-window %d must be below the window being built (%d tokens)" % (window, deployed))
        short = copy.copy(control_args)
        short.max_context_len, short.max_seq_len = window, min(control_args.max_seq_len, window)
        self.exe_expo_deployed = self.calibration_prefill
        self.calibration_prefill = wrappers.TextDecoder(short, config, mode.CALIBRATE, *args, **kwargs)
        log("calibration graph built at %d tokens for the %d-token window" % (window, deployed))

    class ShortRows:
        """DataConfig whose rows are cut at the calibration window, not the deployed one."""

        @staticmethod
        def from_args(args):
            return dataclasses.replace(data_config.from_args(args), max_context_len=window)

    def quantizing(self, request):
        quantize(self, request)  # calibrates self.calibration_prefill: the short graph
        deployed = self.exe_expo_deployed
        short = self.calibration_prefill
        if save:
            save(self, request, short)
        if request.method_data[wrappers.TEXT_DECODER].skip_quantize:
            self.calibration_prefill = deployed
            return
        # convert the deployed graph after one pass over its example input (the script's own
        # path for graphs it does not calibrate), then replace its encodings by the short one's
        deployed.mode = mode.DECODE
        try:
            deployed.quantize(request)
        finally:
            deployed.mode = mode.CALIBRATE
        own = constants(deployed.decoder)
        self._encoding_override(quantized_model=short.decoder, unquantized_model=deployed.decoder, override_kv_cache=False)
        kept = []
        for n, (v, chain) in own.items():
            copied = attr(deployed.decoder, n.target)
            if copied.shape != v.shape:  # a table with a row per position: the window's own, and its encoding
                set_attr(deployed.decoder, n.target, v)
                for u, args in chain.items():
                    u.args = args
                kept.append("%s %s (was given %s)" % (n.target, "x".join(map(str, v.shape)), "x".join(map(str, copied.shape))))
        deployed.decoder.recompile()
        if self.apply_embedding:
            self._encoding_override(quantized_model=short.tok_embedding, unquantized_model=deployed.tok_embedding, override_kv_cache=False)
        record["calib_window"] = {"window": window, "kept_constants": kept}
        log("encodings calibrated at %d tokens copied to the %d-token graph; its own constants kept: %s"
            % (window, deployed.meta["get_max_context_len"], ", ".join(kept) or "none"))
        self.calibration_prefill = deployed
        del short
        gc.collect()

    hybrid.__init__, hybrid.quantize, wrappers.DataConfig = building, quantizing, ShortRows


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
