"""Export a Hugging Face causal LM to an XNNPACK .pte with optimum-executorch (Gemma 3,
SmolLM3: the families export_llm has no model class for; docs/research/new-families.md, C).

exe-expo driver: JSON plan in (file path argument), JSON result out (stdout). It follows
ExecuTorch's own CI for these models (custom SDPA, custom KV cache, the xnnpack recipe) and
adds what optimum-executorch leaves out and the app's runner reads: get_max_context_len (the
window: optimum writes only get_max_seq_len, which the runner then takes for the window too)
and get_eos_ids (optimum writes get_eos_id, which the runner never reads, so the chat turn's
end would not stop generation). get_max_seq_len, the longest chunk one call takes, is set
before the export, since optimum bounds the token dimension by it (and, for a model with
sliding-window layers, by the window of those layers).

Plan: {"model": folder, "out": .pte path, "window": n (the KV cache's length),
       "max_seq_len": n (the chunk), "qlinear": "8da4w" (in groups of 32, optimum's only
       group size for this task) or null, "qembedding": "8w" or null,
       "metadata": {"get_bos_id": n, "get_eos_ids": [n]}}
Result: {"out": path, "bytes": n, "metadata": {name: value}}
Error: {"error": message, "step": name or null} on stdout, exit status 1.
"""

import logging
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)


class PlanError(Exception):
    def __init__(self, message, step=None):
        super().__init__(message)
        self.step = step


def load(plan):
    """optimum-executorch's text-generation task: the eager model with a static cache of the
    window's length, its linears and embedding quantized as the plan says."""
    from optimum.exporters.executorch.task_registry import discover_tasks, task_registry
    discover_tasks()
    kwargs = {"use_custom_sdpa": True, "use_custom_kv_cache": True, "max_seq_len": int(plan["window"]),
              "dtype": "float32"}
    for key in ("qlinear", "qembedding"):
        if plan.get(key) is not None:
            kwargs[key] = plan[key]
    return task_registry.get("text-generation")(plan["model"], **kwargs)


def set_metadata(module, plan):
    """The getters the runner reads, over optimum's own: the window, the chunk (bounded by a
    sliding window, as optimum bounds the token dimension), BOS and the EOS set."""
    meta = module.metadata
    window, chunk = int(plan["window"]), int(plan["max_seq_len"])
    sliding = meta.get("sliding_window")
    if sliding:
        chunk = min(chunk, int(sliding))
    meta["get_max_seq_len"] = min(chunk, window)
    meta["get_max_context_len"] = window
    for key, value in (plan.get("metadata") or {}).items():
        meta[key] = value
    return meta


def step(name, plan, fn):
    """Runs one of optimum-executorch's steps; whatever it raises (its own assertions and
    torch.export's errors among them) becomes a sentence naming the step and the model."""
    try:
        return fn()
    except PlanError:
        raise
    except Exception as e:  # a third-party exporter: any failure is reported, never a traceback
        raise PlanError("optimum-executorch could not %s %s: %s: %s" % (name, plan["model"], type(e).__name__, e), name)


def run(plan):
    for key in ("model", "out", "window", "max_seq_len"):
        if key not in plan:
            raise PlanError("the plan has no %r" % key)
    if not os.path.isfile(os.path.join(plan["model"], "config.json")):
        raise PlanError("%s holds no config.json" % plan["model"], "load")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    try:
        from optimum.exporters.executorch.convert import export_to_executorch
    except ImportError as e:
        raise PlanError("optimum-executorch does not import (%s): install the locked environment "
                        "(python/export.lock pins optimum-executorch)" % e, "load")
    print("optimum_export: loading %s, window %d" % (plan["model"], plan["window"]), file=sys.stderr)
    module = step("load", plan, lambda: load(plan))
    meta = set_metadata(module, plan)
    print("optimum_export: metadata %s" % sorted(meta.items()), file=sys.stderr)
    out_dir = os.path.dirname(os.path.abspath(plan["out"]))
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".optimum-") as tmp:
        print("optimum_export: exporting and lowering to XNNPACK", file=sys.stderr)
        step("export", plan, lambda: export_to_executorch(module, "text-generation", "xnnpack", tmp))
        made = os.path.join(tmp, "model.pte")
        if not os.path.isfile(made):
            raise PlanError("optimum-executorch wrote no model.pte", "export")
        os.replace(made, plan["out"])
    size = os.path.getsize(plan["out"])
    print("optimum_export: wrote %s (%d bytes)" % (plan["out"], size), file=sys.stderr)
    return {"out": plan["out"], "bytes": size,
            "metadata": {k: v for k, v in meta.items() if isinstance(v, (int, float, str, list, bool))}}


if __name__ == "__main__":
    sys.exit(driver_io.serve(run, PlanError, "step"))
