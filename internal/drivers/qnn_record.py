"""What the Qualcomm script read, for qnn_launch.py's --record: the snapshot it is served
from, the calibration rows and the datasets lm_eval loaded."""

import hashlib
import importlib
import inspect
import json

from qnn_script import LLAMA, log


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
