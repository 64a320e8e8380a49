"""Convert Hugging Face safetensors shards into an ExecuTorch llama checkpoint.

exe-expo driver: JSON plan in (file path argument, or stdin), JSON result out (stdout).
The plan (built in Go) names every source tensor and what to do with it; this script only
carries it out. Safetensors are parsed with the standard library and mapped, never read
whole: each tensor is a torch view over an mmap of its shard.

Plan: {"shards": [path], "output": path,
       "tensors": {hf_name: {"to": name} | {"to": name, "unpermute": heads}
                            | {"split": [name, ...]} | {"split": [name, ...], "rows": [n, ...]}
                            | {"ignore": true}},
       "tie": {"from": name, "to": name} | null, "expect_tensors": n}
Result: {"tensors": n, "tied_embeddings": bool, "dtypes": {dtype: count}}
Error: {"error": message, "tensor": name or null} on stdout, exit status 1.
"""

import json
import mmap
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_io  # noqa: E402  (written beside this script)

MAX_HEADER = 100 << 20  # the safetensors format's own limit
DTYPES = {"F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2)}


class PlanError(Exception):
    def __init__(self, message, tensor=None):
        super().__init__(message)
        self.tensor = tensor


def read_header(f, path):
    raw = f.read(8)
    if len(raw) != 8:
        raise PlanError("%s: shorter than a safetensors header" % path)
    (size,) = struct.unpack("<Q", raw)
    if size > MAX_HEADER:
        raise PlanError("%s: header of %d bytes, more than safetensors allows" % (path, size))
    header = json.loads(f.read(size).decode("utf-8"))
    header.pop("__metadata__", None)
    return 8 + size, header


def check_span(name, info, path, data_size=None):
    dtype = info.get("dtype")
    if dtype not in DTYPES:
        raise PlanError("%s: tensor %s has dtype %s (want F32, F16 or BF16)" % (path, name, dtype), name)
    start, end = info["data_offsets"]
    count = 1
    for d in info["shape"]:
        count *= d
    if end - start != count * DTYPES[dtype][1]:
        raise PlanError("%s: tensor %s spans %d bytes, shape %s needs %d"
                        % (path, name, end - start, info["shape"], count * DTYPES[dtype][1]), name)
    if data_size is not None and not 0 <= start <= end <= data_size:
        raise PlanError("%s: tensor %s lies outside the file's %d data bytes" % (path, name, data_size), name)
    return count


def tensor_view(torch, mm, base, name, info, path):
    torch_name = DTYPES[info["dtype"]][0]
    count = check_span(name, info, path)
    if count == 0:
        return torch.empty(info["shape"], dtype=getattr(torch, torch_name))
    flat = torch.frombuffer(mm, dtype=getattr(torch, torch_name), count=count, offset=base + info["data_offsets"][0])
    return flat.view(info["shape"])


def unpermute(t, heads, name):
    """Undo the rotate_half row order of HF's Llama conversion (per head: halves -> pairs)."""
    rows = t.shape[0]
    if rows % (2 * heads):
        raise PlanError("tensor %s: %d rows do not split into %d heads of pairs" % (name, rows, heads), name)
    rest = tuple(t.shape[1:])
    return t.reshape((heads, 2, rows // heads // 2) + rest).transpose(1, 2).reshape((rows,) + rest).contiguous()


def apply(torch, plan, name, t, out):
    rule = plan["tensors"][name]
    if "split" in rule:
        parts, rows = rule["split"], rule.get("rows")
        if rows:
            if len(rows) != len(parts) or sum(rows) != t.shape[0]:
                raise PlanError("tensor %s: %d rows do not split into parts of %s rows"
                                % (name, t.shape[0], rows), name)
            chunks = torch.split(t, rows, dim=0)
        else:
            if t.shape[0] % len(parts):
                raise PlanError("tensor %s: %d rows do not split into %d" % (name, t.shape[0], len(parts)), name)
            chunks = torch.chunk(t, len(parts), dim=0)
        for target, chunk in zip(parts, chunks):
            put(out, target, chunk.clone(), name)
        return
    if rule.get("unpermute"):
        t = unpermute(t, int(rule["unpermute"]), name)
    put(out, rule["to"], t, name)


def put(out, target, t, source):
    if target in out:
        raise PlanError("tensor %s maps to %s, which is already written" % (source, target), source)
    out[target] = t


def rule_outputs(rule):
    if rule.get("ignore"):
        return 0
    return len(rule["split"]) if "split" in rule else 1


def preflight(plan):
    """Check every shard header against the plan before torch is imported: a wrong plan or
    an unexpected tensor fails in a fraction of a second, and nothing is written."""
    headers, seen = [], set()
    for path in plan["shards"]:
        with open(path, "rb") as f:
            base, header = read_header(f, path)
            data_size = os.fstat(f.fileno()).st_size - base
        for name, info in header.items():
            if name in seen:
                raise PlanError("tensor %s appears in more than one shard" % name, name)
            seen.add(name)
            if name not in plan["tensors"]:
                raise PlanError("tensor %s is not in the conversion plan" % name, name)
            rule = plan["tensors"][name]
            if not rule.get("ignore"):  # buffers may be bool or int
                check_span(name, info, path, data_size)
            rows = rule.get("rows")
            if rows and (len(rows) != len(rule["split"]) or not info["shape"] or sum(rows) != info["shape"][0]):
                raise PlanError("tensor %s: shape %s does not split into parts of %s rows"
                                % (name, info["shape"], rows), name)
        headers.append((path, base, header))
    missing = sorted(set(plan["tensors"]) - seen)
    if missing:
        raise PlanError("planned tensor %s is in no shard" % missing[0], missing[0])
    total = sum(rule_outputs(r) for r in plan["tensors"].values()) + (1 if plan.get("tie") else 0)
    if total != plan["expect_tensors"]:
        raise PlanError("the plan makes %d tensors, it expects %d" % (total, plan["expect_tensors"]))
    return headers


def convert(plan):
    headers = preflight(plan)
    import torch

    out, maps = {}, []
    for path, base, header in headers:
        f = open(path, "rb")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        maps.append((f, mm))
        for name in sorted(header, key=lambda n: header[n]["data_offsets"][0]):
            if not plan["tensors"][name].get("ignore"):
                apply(torch, plan, name, tensor_view(torch, mm, base, name, header[name], path), out)
    tie = plan.get("tie")
    if tie:
        if tie["to"] in out:
            raise PlanError("tied output %s is already in the checkpoint" % tie["to"], tie["to"])
        out[tie["to"]] = out[tie["from"]]
    if len(out) != plan["expect_tensors"]:
        raise PlanError("converted %d tensors, the plan expects %d" % (len(out), plan["expect_tensors"]))
    driver_io.save_atomically(torch, out, plan["output"])
    dtypes = {}
    for t in out.values():
        key = str(t.dtype).replace("torch.", "")
        dtypes[key] = dtypes.get(key, 0) + 1
    result = {"tensors": len(out), "tied_embeddings": bool(tie), "dtypes": dtypes}
    out.clear()
    for f, mm in maps:
        try:
            mm.close()
        except BufferError:
            pass  # a tensor still views the map; the process exits next
        f.close()
    return result


def main():
    return driver_io.serve(convert, PlanError, "tensor")


if __name__ == "__main__":
    sys.exit(main())
