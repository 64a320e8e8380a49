"""Holds exe-expo's recipes to ExecuTorch 1.5.1's own source (etsource.py, executorch-v1.5.1/).

Run by realsource_test.go: python3 check_executorch.py MANIFEST, MANIFEST a JSON file:
  {"goldens": [path, ...],            golden files of internal/recipe (the recipe JSON, then files)
   "executorch": "/opt/executorch",    the ExecuTorch tree the goldens' argv name
   "overlay": dir or null,             a tree holding MediaTek scripts 1.5.1 lacks
   "model_classes": [name, ...],       every export_llm class exe-expo names
   "llm_classes": [{name, params, shape}, ...],
   "qnn_decoders": {repo id: decoder}, "qnn_params": {decoder: params file},
   "qnn_seq_mse": {decoder: SeqMSE candidates}}
For each golden: export_llm.yaml is merged strictly into the real LlmConfig; params.json
builds ModelArgs as Llama2Model.__init__ does, its values of the types ModelArgs declares;
a Qualcomm argv parses with llama.py's parser and names a chip, decoder and params file
that 1.5.1 knows; a MediaTek argv parses with its script's parser, passes the script's
shape and chunk checks, and names the outputs the recipe collects.
Prints {"checked": {part: [golden or name, ...]}, "failures": [{"file", "part", "error"}]};
exit 0 whatever it found (the Go test reads the failures), 2 if it could not run.
"""

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import typing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etsource  # noqa: E402


class Report:
    def __init__(self):
        self.checked, self.failures = {}, []

    def part(self, file, part, check, *args):
        """Runs one check, which passes unless it raises; reports whether it passed."""
        try:
            check(*args)
        except Exception as e:  # every failure is reported, none stops the others
            self.failures.append({"file": file, "part": part, "error": first_line(e)})
            return False
        self.checked.setdefault(part, []).append(file)
        return True


def first_line(e):
    text = str(e).strip() or type(e).__name__
    return "%s: %s" % (type(e).__name__, text.splitlines()[0])


def split_golden(path):
    """A golden file: the recipe's JSON, then each written file after a '--- name' line."""
    with open(path) as f:
        parts = f.read().split("\n--- ")
    files = {}
    for p in parts[1:]:
        name, _, body = p.partition("\n")
        files[name] = body
    return json.loads(parts[0]), files


# --- export_llm ----------------------------------------------------------------------------

def check_yaml(text):
    from omegaconf import OmegaConf

    cfg = etsource.load_llm_config(OmegaConf.create(text))
    if cfg.base.metadata:
        # export_llama_lib.py:1593 only logs a metadata string that is not JSON and exports
        # without it, so it is held to parse here.
        if not isinstance(json.loads(cfg.base.metadata), dict):
            raise ValueError("base.metadata is not a JSON object")
    return cfg


def check_params(yaml_text, params_text):
    """ModelArgs from the params as the eager model builds it, under the YAML's config."""
    from omegaconf import OmegaConf

    params = json.loads(params_text)
    check_types(params)
    cfg = etsource.load_llm_config(OmegaConf.create(yaml_text))
    with tempfile.TemporaryDirectory() as d:
        cfg.base.params = os.path.join(d, "params.json")
        with open(cfg.base.params, "w") as f:
            f.write(params_text)
        args = etsource.eager_model_args(cfg)
    if args.use_scaled_rope and args.rope_scale_factor != 32:
        # family only writes use_scaled_rope for Llama 3 scaling with factor 32
        raise ValueError("use_scaled_rope under model_class %s gives rope_scale_factor %d, not 32"
                         % (cfg.base.model_class.value, args.rope_scale_factor))


def check_types(params):
    """Each value is of the type ModelArgs declares for it: ModelArgs itself checks none,
    and a string where a number belongs fails only deep inside torch."""
    from executorch.examples.models.llama.model_args import ModelArgs

    hints = typing.get_type_hints(ModelArgs)
    for key, value in params.items():
        if key in hints and not fits(value, hints[key]):
            raise TypeError("params key %s is %r, and ModelArgs declares %s" % (key, value, hints[key]))


def fits(value, hint):
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        return any(fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if hint is list or origin is list:
        return isinstance(value, list)
    if hint is dict or origin is dict:
        return isinstance(value, dict)
    return True  # enums, Literal, Any: ModelArgs converts or does not use them from JSON


# --- Qualcomm ------------------------------------------------------------------------------

QNN_MODULE = "executorch.examples.qualcomm.oss_scripts.llama.llama"


def script_args(argv):
    """The arguments llama.py receives: after `-m <module>`, or after a launcher's `--`."""
    if QNN_MODULE in argv:
        return argv[argv.index(QNN_MODULE) + 1:]
    if "--" in argv:
        return argv[argv.index("--") + 1:]
    raise ValueError("the argv neither runs %s nor passes it arguments after --" % QNN_MODULE)


def parse(parser, argv):
    """argparse's verdict as an exception carrying its message, not an exit."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return parser.parse_args(argv)
    except SystemExit:
        raise ValueError(err.getvalue().strip().splitlines()[-1]) from None


def check_qnn(argv, prefix):
    args = parse(etsource.qnn_parser(), script_args(argv))
    if args.soc_model not in etsource.qnn_chipsets():
        raise LookupError("--soc_model %s is not in utils.py's get_soc_to_chipset_map" % args.soc_model)
    if args.params and args.params.startswith(prefix + "/"):
        check_tree_params(args.decoder_model, args.params[len(prefix) + 1:])


def check_tree_params(decoder, rel):
    """A params file from the ExecuTorch tree: 1.5.1 has it, the decoder's registry entry
    names it, and ModelArgs takes it."""
    from executorch.examples.models.llama.model_args import ModelArgs

    if not os.path.exists(etsource.path(rel)):
        raise FileNotFoundError("ExecuTorch 1.5.1 has no %s" % rel)
    want = etsource.qnn_registry()[decoder]["params_path"]
    if want != rel:
        raise ValueError("%s's params file is %s in the registry, not %s" % (decoder, want, rel))
    with open(etsource.path(rel)) as f:
        params = json.load(f)
    check_types(params)
    ModelArgs(**params)


def check_qnn_tables(decoders, params, seq_mse):
    """family.QNNDecoders, QNNParams and QNNSeqMSECandidates against the registry: every
    decoder registered, its repo id the registry's, its SeqMSE candidates the registry's (a
    decoder the table leaves out has none), its params file the registry's and a ModelArgs."""
    reg = etsource.qnn_registry()
    for repo, decoder in sorted(decoders.items()):
        if decoder not in reg:
            raise LookupError("%s's decoder %s is not registered in 1.5.1" % (repo, decoder))
        if reg[decoder]["repo_id"] not in (None, repo):
            raise ValueError("%s is registered for %s, not %s" % (decoder, reg[decoder]["repo_id"], repo))
        want, have = reg[decoder]["seq_mse_candidates"], seq_mse.get(decoder, 0)
        if want != have:
            raise ValueError("%s sets seq_mse_candidates = %s in 1.5.1, and family.QNNSeqMSECandidates gives %s" % (decoder, want, have))
    for decoder, rel in sorted(params.items()):
        check_tree_params(decoder, rel)


# --- MediaTek ------------------------------------------------------------------------------

def check_mediatek(recipe, files, overlay):
    step = next(s for s in recipe["steps"] if s["name"] == "neuropilot_export")
    argv = step["argv"]
    script = os.path.basename(argv[1])
    where = [etsource.path("%s/model_export_scripts/%s" % (etsource.MTK, script))]
    if overlay:  # a script 1.5.1 lacks, shipped by the overlay in upstream's layout
        where.append(os.path.join(os.path.abspath(overlay), "model_export_scripts", script))
    found = [w for w in where if os.path.exists(w)]
    if not found:
        raise FileNotFoundError("ExecuTorch 1.5.1 has no examples/mediatek/model_export_scripts/%s" % script)
    mtk = etsource.mtk_script(found[0])
    args = parse(mtk.get_argument_parser(), argv[2:])
    check_mediatek_args(mtk, args, step, recipe, files)


def check_mediatek_args(mtk, args, step, recipe, files):
    for rel in (args.preformatter, args.dataset):
        if rel and not os.path.exists(etsource.path("%s/%s" % (etsource.MTK, rel))):
            raise FileNotFoundError("ExecuTorch 1.5.1's examples/mediatek has no %s" % rel)
    config = json.loads(next(body for name, body in files.items() if args.config.endswith("/" + name)))
    layers = config["num_hidden_layers"]
    mtk.check_shapes(args.shapes)
    mtk.check_between_inclusive(args.num_chunks, 1, layers, "num_chunks")
    ran = mtk.main(args, layers)
    mtk.check_all_chunks_same_num_layer(ran["num_blocks_per_chunk"])
    _, tokens, cache = etsource.quiet(mtk.get_export_shapes, args.shapes)
    pte = [o for o in recipe["outputs"] if o["kind"] == "pte"]
    if len(pte) != args.num_chunks:
        raise ValueError("the recipe collects %d chunks of %d" % (len(pte), args.num_chunks))
    for i, out in enumerate(pte):
        want = {"exp": ran["exp_name"], "prompt_tokens": tokens, "window": cache, "chunk": i}
        got = {k: out["expect"]["mediatek"][k] for k in want}
        if got != want:
            raise ValueError("chunk %d expects %s, the script gives %s" % (i, got, want))
        with tempfile.TemporaryDirectory() as d, contextlib.chdir(d):
            dest = mtk.get_dest_path(ran["output_folder"], ran["exp_name"], None, i)
        if out["from"] != os.path.join(step["dir"], dest):
            raise ValueError("chunk %d is collected from %s, the script writes %s" % (i, out["from"], dest))


# --- classes -------------------------------------------------------------------------------

def check_class(name, entry):
    """A class exe-expo names is a ModelType member; a sized one has the shape of
    ExecuTorch's params file for it."""
    etsource.llm_config_module().ModelType(name)
    if entry is None:
        return
    with open(etsource.path(entry["params"])) as f:
        params = json.load(f)
    for key, want in entry["shape"].items():
        if params.get(key) != want:
            raise ValueError("%s: %s is %s in %s, exe-expo has %s" % (name, key, params.get(key), entry["params"], want))


def run(manifest):
    etsource.install()
    r = Report()
    for path in manifest.get("goldens") or []:
        name = os.path.basename(path)
        recipe, files = split_golden(path)
        if "export_llm.yaml" in files:
            if r.part(name, "export_llm.yaml", check_yaml, files["export_llm.yaml"]):
                r.part(name, "params.json", check_params, files["export_llm.yaml"], files["params.json"])
        if recipe["backend"] == "qnn":
            step = next(s for s in recipe["steps"] if "--decoder_model" in s["argv"])
            r.part(name, "qnn argv", check_qnn, step["argv"], manifest["executorch"])
        if recipe["backend"] == "mediatek":
            r.part(name, "mediatek argv", check_mediatek, recipe, files, manifest.get("overlay"))
    sized = {c["name"]: c for c in manifest.get("llm_classes") or []}
    for name in manifest.get("model_classes") or []:
        r.part(name, "model_class", check_class, name, sized.get(name))
    r.part("family", "qnn tables", check_qnn_tables, manifest.get("qnn_decoders") or {}, manifest.get("qnn_params") or {},
           manifest.get("qnn_seq_mse") or {})
    return {"checked": r.checked, "failures": r.failures}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("manifest")
    try:
        with open(p.parse_args().manifest) as f:
            manifest = json.load(f)
        print(json.dumps(run(manifest), indent=1))
    except ImportError as e:
        print("cannot check against ExecuTorch's source: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
