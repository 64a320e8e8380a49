"""torchtune's two names the Qualcomm script imports, served from ExecuTorch's own copy where
torchtune does not import (qnn_launch.py's docstring, torchtune)."""

import importlib
import sys
import types

from qnn_script import executorch_version


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
