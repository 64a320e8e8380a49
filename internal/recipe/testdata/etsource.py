"""ExecuTorch 1.5.1's own source, kept unmodified in executorch-v1.5.1/, made runnable here.

The files that define what export_llm, the Qualcomm script and the MediaTek scripts accept
import torch, QAIRT, NeuroPilot and each other at module level, none of which a test
machine needs to have. So the modules whose imports are only the standard library (llm_config.py,
model_args.py, qc_schema.py, decoder_constants.py) are imported as they are, under their
real package names; from the others, the few functions and statements that decide what is
accepted (an argument parser, a registry, a shape check) are taken out of the file with ast
and run unchanged in a namespace that holds what they refer to. Nothing is retyped: a check
here is upstream's code, or fails to find it.

Used by check_executorch.py (this folder) and internal/drivers/testdata/solve_config_check.py.
"""

import ast
import contextlib
import importlib.util
import io
import json
import os
import sys
import types

TREE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "executorch-v1.5.1")


def install(tree=TREE):
    """Makes `import executorch.<path>` find the kept files: a namespace package over the
    tree. model_args.py imports torch.nn.functional only to name activation functions,
    which no check calls, so a bare module stands in for it (Debian's torch would cost
    seconds to import and is not what ExecuTorch 1.5.1 pins anyway)."""
    pkg = types.ModuleType("executorch")
    pkg.__path__ = [tree]
    sys.modules["executorch"] = pkg
    if "torch" not in sys.modules:
        torch = types.ModuleType("torch")
        torch.nn = types.ModuleType("torch.nn")
        torch.nn.functional = types.ModuleType("torch.nn.functional")
        sys.modules.update({"torch": torch, "torch.nn": torch.nn, "torch.nn.functional": torch.nn.functional})


def path(rel):
    """A kept file by its upstream path (an absolute path stays as it is)."""
    return os.path.join(TREE, rel)


def load_file(rel):
    """Imports one kept file as a module of its own, without its package's __init__.py
    (the Qualcomm package's imports every model definition)."""
    name = "et_" + rel.replace("/", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path(rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def parse(rel):
    with open(path(rel)) as f:
        return ast.parse(f.read(), filename=path(rel))


def top_function(module, name):
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise LookupError("no function %s" % name)


def run_nodes(nodes, rel, namespace):
    """Runs statements taken from a kept file, unchanged, in namespace; returns namespace."""
    code = compile(ast.Module(body=list(nodes), type_ignores=[]), path(rel), "exec")
    exec(code, namespace)
    return namespace


def functions(rel, names, namespace):
    """Defines the named top-level functions of a kept file in namespace."""
    module = parse(rel)
    return run_nodes([top_function(module, n) for n in names], rel, namespace)


def names_in(node, ctx):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def statements_for(fn, names, given):
    """The statements of a function's body that compute names, with the earlier ones they
    read (a backward slice over straight-line code), leaving out what binds only given
    names, which the caller supplies."""
    want, picked = set(names), []
    for st in reversed(fn.body):
        bound = names_in(st, ast.Store)
        if not bound & want:
            continue
        picked.append(st)
        want = (want - bound) | (names_in(st, ast.Load) - bound - set(given))
    missing = set(names) - set().union(*(names_in(st, ast.Store) for st in picked))
    if missing:
        raise LookupError("%s assigns no %s" % (fn.name, ", ".join(sorted(missing))))
    return picked[::-1]


def literal_constants(module):
    """A module's top-level constants written as literals (a dict of chip names, say)."""
    out = []
    for st in module.body:
        if isinstance(st, ast.Assign):
            try:
                ast.literal_eval(st.value)
            except (ValueError, TypeError, SyntaxError):
                continue
            out.append(st)
    return out


# --- export_llm ----------------------------------------------------------------------------

def llm_config_module():
    from executorch.extension.llm.export.config import llm_config

    return llm_config


def load_llm_config(data):
    """What export_llm.py's hydra_main does with the YAML it is given: a structured merge
    into LlmConfig, then to_object, which runs every dataclass's __post_init__."""
    from omegaconf import OmegaConf

    LlmConfig = llm_config_module().LlmConfig
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(LlmConfig), data))


def _is_if_on(st, test):
    return isinstance(st, ast.If) and ast.unparse(st.test) == test


def eager_model_args(cfg):
    """Runs Llama2Model.__init__ (examples/models/llama/model.py) from its first statement
    through the use_scaled_rope block: the config read, the params file opened, ModelArgs
    built exactly as the eager model builds it, and the class-dependent RoPE scale set. Only
    `if checkpoint_path:`, which torch.loads the weights, is left out. Returns the
    ModelArgs."""
    from executorch.examples.models.llama.model_args import ModelArgs

    rel = "examples/models/llama/model.py"
    module = parse(rel)
    cls = next(n for n in module.body if isinstance(n, ast.ClassDef) and n.name == "Llama2Model")
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    body = []
    for st in init.body:
        if _is_if_on(st, "checkpoint_path"):
            continue
        body.append(st)
        if _is_if_on(st, "model_args.use_scaled_rope"):
            break
    else:
        raise LookupError("model.py's Llama2Model.__init__ has no use_scaled_rope block")
    ns = {"self": types.SimpleNamespace(), "llm_config": cfg, "LlmConfig": llm_config_module().LlmConfig,
          "ModelArgs": ModelArgs, "json": json}
    return run_nodes(body, rel, ns)["model_args"]


# --- Qualcomm ------------------------------------------------------------------------------

QNN_INIT = "examples/qualcomm/oss_scripts/llama/__init__.py"


def qnn_registry():
    """SUPPORTED_LLM_MODELS as examples/qualcomm/oss_scripts/llama/__init__.py fills it:
    every class decorated @register_llm_model(name), under name.lower(), with the class's
    repo_id, seq_mse_candidates and params_path (os.path.join(BASE_DIR, ...) resolved against the file's
    folder, as BASE_DIR is)."""
    reg = {}
    for node in parse(QNN_INIT).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for d in node.decorator_list:
            if isinstance(d, ast.Call) and getattr(d.func, "id", "") == "register_llm_model":
                reg[ast.literal_eval(d.args[0]).lower()] = _qnn_entry(node)
    return reg


def _qnn_entry(cls):
    entry = {"class": cls.name, "repo_id": None, "params_path": None, "seq_mse_candidates": None}
    for st in cls.body:
        target = getattr(st, "target", None) or (st.targets[0] if isinstance(st, ast.Assign) else None)
        key = getattr(target, "id", None)
        if key == "seq_mse_candidates" and st.value is not None:
            entry["seq_mse_candidates"] = ast.literal_eval(st.value)
        elif key == "repo_id" and st.value is not None:
            entry["repo_id"] = ast.literal_eval(st.value)
        elif key == "params_path" and isinstance(st.value, ast.Call):
            parts = [ast.literal_eval(a) for a in st.value.args[1:]]
            entry["params_path"] = os.path.normpath(os.path.join(os.path.dirname(QNN_INIT), *parts))
    return entry


def qnn_parser():
    """llama.py's _build_parser, over export_utils.py's setup_common_args_and_variables,
    with the registry's names as --decoder_model's choices."""
    import argparse

    schema = load_file("backends/qualcomm/serialization/qc_schema.py")
    consts = load_file("examples/qualcomm/oss_scripts/llama/decoder_constants.py")
    ns = {"argparse": argparse, "types": types, "QnnExecuTorchHtpPerformanceMode": schema.QnnExecuTorchHtpPerformanceMode}
    functions("backends/qualcomm/export_utils.py", ["setup_common_args_and_variables"], ns)
    ns.update({k: getattr(consts, k) for k in ("EVAL_MODE", "PROMPT_EVAL", "TASKS_EVAL", "SQNR_EVAL")})
    ns["SUPPORTED_LLM_MODELS"] = qnn_registry()
    # 1.5's parser defaults its QAT config paths to files beside llama.py
    llama = "examples/qualcomm/oss_scripts/llama/llama.py"
    ns.update({"os": os, "__file__": path(llama)})
    functions(llama, ["_build_parser"], ns)
    return ns["_build_parser"]()


def qnn_chipsets():
    """utils.py's get_soc_to_chipset_map, which llama.py indexes with --soc_model."""
    schema = load_file("backends/qualcomm/serialization/qc_schema.py")
    ns = functions("backends/qualcomm/utils/utils.py", ["get_soc_to_chipset_map"], {"QcomChipset": schema.QcomChipset})
    return ns["get_soc_to_chipset_map"]()


# --- MediaTek ------------------------------------------------------------------------------

MTK = "examples/mediatek"


def mtk_script(script):
    """A MediaTek export script (its path), as what decides its command line and its outputs: the
    script's argument parser, the sanity checks and helpers it calls on the arguments
    (sanity_checks.py, utils.py), and main(), which runs the statements of the script's
    main() that name the experiment, split the layers into chunks and place the output
    folder, for parsed args and a layer count."""
    import argparse

    module = parse(script)
    ns = run_nodes(literal_constants(module), script, {"argparse": argparse, "os": os})
    functions(script, ["get_argument_parser"], ns)
    # the helpers are the kept tree's, also for an overlay's script: its patches to utils.py
    # and sanity_checks.py add lookups and leave these functions as they are
    functions("%s/aot_utils/llm_utils/utils.py" % MTK, ["get_dirname", "get_exp_name", "get_export_shapes", "get_dest_path"], ns)
    functions("%s/aot_utils/llm_utils/sanity_checks.py" % MTK,
              ["check_shapes", "check_between_inclusive", "check_all_chunks_same_num_layer"], ns)
    picked = statements_for(top_function(module, "main"), ["exp_name", "num_blocks_per_chunk", "output_folder"],
                            given=["args", "config"])

    def main(args, layers):
        local = dict(ns, args=args, config=types.SimpleNamespace(num_hidden_layers=layers))
        return run_nodes(picked, script, local)

    ns["main"] = main
    return types.SimpleNamespace(**{k: v for k, v in ns.items() if not k.startswith("__")})


def quiet(fn, *args):
    """Calls fn with its prints (MediaTek's helpers print as they go) kept off stdout,
    which carries this script's JSON."""
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)
