"""solve_model.py's LlmConfig against ExecuTorch 1.4.0's real one (internal/recipe/testdata).

python3 solve_config_check.py DRIVERS CASES: DRIVERS the folder the embedded drivers were
written to; CASES a JSON file, [{"model_class", "params": path}, ...]. For each case,
solve_model.llm_config builds the config, and Llama2Model.__init__'s own statements, up to
the scaled-RoPE block that reads model_class.value, build ModelArgs from it. Prints
{"cases": [{"model_class", "dtype_override", "use_kv_cache", "max_context_len",
"rope_scale_factor"}], "plain_attributes": error, "unknown_class": error}: the errors of a
config set as plain attributes (the driver's old way) and of a class 1.4.0 does not
register.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "recipe", "testdata"))
import etsource  # noqa: E402


def error(fn):
    try:
        fn()
    except Exception as e:  # the error is the result
        return "%s: %s" % (type(e).__name__, str(e).splitlines()[0])
    return None


def plain_attributes(m):
    """The config as solve_model.py built it before: plain attributes on LlmConfig()."""
    cfg = etsource.llm_config_module().LlmConfig()
    cfg.base.model_class = m["model_class"]
    cfg.base.params = m["params"]
    cfg.model.dtype_override = "fp32"
    return cfg


def main():
    drivers, cases = sys.argv[1], json.load(open(sys.argv[2]))
    etsource.install()
    sys.path.insert(0, drivers)
    import solve_model

    out = []
    for c in cases:
        m = {"model_class": c["model_class"], "params": c["params"], "checkpoint": "/absent/consolidated.pth",
             "max_seq_length": 2048}
        cfg = solve_model.llm_config(m)
        args = etsource.eager_model_args(cfg)
        out.append({"model_class": cfg.base.model_class.value, "dtype_override": cfg.model.dtype_override.value,
                    "use_kv_cache": args.use_kv_cache, "max_context_len": args.max_context_len,
                    "rope_scale_factor": args.rope_scale_factor})
    scaled = next(c for c in cases if c["model_class"] == "llama3_2")
    unknown = dict(scaled, checkpoint="/absent/consolidated.pth", max_seq_length=2048, model_class="llama3_3")
    print(json.dumps({
        "cases": out,
        "plain_attributes": error(lambda: etsource.eager_model_args(plain_attributes(scaled))),
        "unknown_class": error(lambda: solve_model.llm_config(unknown)),
    }))


if __name__ == "__main__":
    main()
