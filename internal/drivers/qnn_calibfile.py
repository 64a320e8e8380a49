"""The QNN launcher's calibration file: written after a calibration, read back and refused
when it was made for another model, chip, ExecuTorch or weights (qnn_launch.py's
--save-calibration and --load-calibration)."""

import hashlib
import os

from qnn_encodings import encodings
from qnn_script import log, script_flag


FORMAT = "exe-expo qnn calibration 1"


class Calibrated(BaseException):
    """Raised after --save-calibration under --calibrate-only: stops llama.py before it
    compiles anything; main catches it. A BaseException, as SystemExit is: llama.py's main
    turns every Exception into a bare Exception(e)."""


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
