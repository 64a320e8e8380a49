"""The frame every exe-expo driver shares: a JSON plan in (a file path argument, or stdin),
one JSON result line out (stdout), and on a refusal one line {"error": message, <subject>:
name or null} with exit status 1. Written beside the drivers, which import it."""

import json
import os
import sys


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
