"""The frame every exe-expo driver shares: a JSON plan in (a file path argument, or stdin),
one JSON result line out (stdout), and on a refusal one line {"error": message, <subject>:
name or null} with exit status 1. Written beside the drivers, which import it."""

import json
import os
import sys


# model_type values whose transformers class the locked 5.0.0rc1 lacks, and so come from the
# overlay python/install.sh puts in the environment (python/overlay.lock: Qwen3.5 is in
# transformers 5.2.0 first).
OVERLAY_MODEL_TYPES = {"qwen3_5", "qwen3_5_text"}


def transformers_for(folder):
    """Puts the transformers overlay first on the path when folder's config.json is of a
    family only it has. Call before anything imports transformers; once it is imported the
    choice is made for the process."""
    if not folder:
        return
    try:
        with open(os.path.join(folder, "config.json")) as f:
            kind = json.load(f).get("model_type")
    except (OSError, ValueError):
        return  # no config to read: the locked transformers, and its own error if any
    if kind not in OVERLAY_MODEL_TYPES:
        return
    # setup-export names the folder it installed the overlay into (a runner's python is
    # setup-python's, not a venv); python/install.sh puts it in the venv's prefix.
    overlay = os.environ.get("EXE_EXPO_TRANSFORMERS_OVERLAY") or os.path.join(sys.prefix, "overlay", "transformers")
    if not os.path.isfile(os.path.join(overlay, ".complete")):
        raise ValueError("%s is a %s model, whose transformers class is in the overlay python/install.sh and "
                         "setup-export install (python/overlay.lock), and %s has none: run python/install.sh, "
                         "or setup-export with python-env true" % (folder, kind, overlay))
    if "transformers" in sys.modules and not sys.modules["transformers"].__file__.startswith(overlay):
        raise ValueError("%s needs the transformers overlay, and the locked transformers is already loaded" % folder)
    sys.path.insert(0, overlay)


def save_atomically(torch, obj, path):
    """torch.save to a temporary name, then rename: a killed run leaves no half file."""
    tmp = path + ".partial"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def fail(message, subject, name):
    json.dump({"error": message, subject: name}, sys.stdout)
    sys.stdout.write("\n")
    return 1


def serve(run, refusal, subject):
    """Runs run(plan) and prints its result. refusal is the driver's own error type, whose
    attribute subject (tensor, linear) names what was refused."""
    src = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    try:
        plan = json.load(open(src) if src else sys.stdin)
        result = run(plan)
    except refusal as e:
        return fail(str(e), subject, getattr(e, subject, None))
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:  # torch and ExecuTorch raise RuntimeError
        return fail("%s: %s" % (type(e).__name__, e), subject, None)
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0
