"""How the QNN launcher changes llama.py's calibration: save it after the script's own, build
the window from a saved one, or calibrate a shorter graph and give the window its encodings
(qnn_launch.py's --save-calibration, --load-calibration and --calib-window)."""

import copy
import dataclasses
import gc
import importlib

from qnn_calibfile import Calibrated, save_calibration, sha256_file
from qnn_encodings import apply_encodings, attr, constants, set_attr
from qnn_script import LLAMA, log


def save_after(save):
    """Saves the calibrated graph after llama.py's own calibration (--save-calibration without --calib-window)."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    hybrid = wrappers.HybridTextDecoder
    quantize = hybrid.quantize

    def quantizing(self, request):
        quantize(self, request)
        save(self, request, self.calibration_prefill)

    hybrid.quantize = quantizing


def saved(hybrid, request, decoder, path, header, stop, record):
    """Saves decoder's calibration (the --save-calibration step, either path) and stops under --calibrate-only."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    if request.method_data[wrappers.TEXT_DECODER].skip_quantize:
        raise SystemExit("qnn_launch: --save-calibration has nothing to save: this run quantizes no decoder")
    header = dict(header, window=decoder.meta["get_max_context_len"], calibration=record["calibration"])
    save_calibration(path, header, hybrid, decoder)
    if stop:
        raise Calibrated()


def load_from(path, data, record):
    """Builds the deployed window from a saved calibration (--load-calibration): no calibration
    data and no calibration pass; one forward pass over the example input, which convert_pt2e
    needs, then the file's encodings."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    hybrid, mode = wrappers.HybridTextDecoder, wrappers.Mode
    quantize = hybrid.quantize
    builders = importlib.import_module(LLAMA + ".dataset.builders")

    def no_rows(self):
        """build_calib_dataloaders' answer without its rows: every modality's key, no data."""
        return dict.fromkeys(builders._ALL_MODALITY_KEYS)

    def loading(self, request):
        if request.method_data[wrappers.TEXT_DECODER].skip_quantize:
            return quantize(self, request)
        deployed = self.calibration_prefill
        deployed.mode = mode.DECODE  # the script's path for graphs it does not calibrate
        try:
            deployed.quantize(request)
        finally:
            deployed.mode = mode.CALIBRATE
        kept = apply_encodings(data["graph"], deployed.decoder, path)
        if self.apply_embedding:
            if data["tok_embedding"] is None:
                raise SystemExit("qnn_launch: the calibration file %s holds no token embedding's encodings, and this run quantizes one" % path)
            apply_encodings(data["tok_embedding"], deployed.tok_embedding, path)
        record["calibration_file"].update(kept_constants=kept)
        log("encodings calibrated at %d tokens loaded from %s into the %d-token graph; its own constants kept: %s"
            % (data["window"], path, deployed.meta["get_max_context_len"], ", ".join(kept) or "none"))

    wrappers.DatasetBuilder.build_calib_dataloaders = no_rows
    hybrid.quantize = loading
    record["calibration"] = data["calibration"]
    record["calibration_file"] = {"path": path, "sha256": sha256_file(path), "window": data["window"],
                                  "executorch": data["executorch"]}


def calibrate_at(window, record, save=None):
    """Calibrates a window-token decoder and gives its encodings to the deployed one (--calib-window)."""
    wrappers = importlib.import_module(LLAMA + ".wrappers.llm_wrappers")
    hybrid, mode = wrappers.HybridTextDecoder, wrappers.Mode
    init, quantize, data_config = hybrid.__init__, hybrid.quantize, wrappers.DataConfig

    def building(self, control_args, config, *args, **kwargs):
        init(self, control_args, config, *args, **kwargs)
        deployed = control_args.max_context_len
        if control_args.qat:
            raise SystemExit("qnn_launch: --calib-window calibrates by post-training quantization, and this run asks for QAT, which trains the calibration graph itself")
        if not 0 < window < deployed:
            raise SystemExit("qnn_launch: --calib-window %d must be below the window being built (%d tokens)" % (window, deployed))
        short = copy.copy(control_args)
        short.max_context_len, short.max_seq_len = window, min(control_args.max_seq_len, window)
        self.exe_expo_deployed = self.calibration_prefill
        self.calibration_prefill = wrappers.TextDecoder(short, config, mode.CALIBRATE, *args, **kwargs)
        log("calibration graph built at %d tokens for the %d-token window" % (window, deployed))

    class ShortRows:
        """DataConfig whose rows are cut at the calibration window, not the deployed one."""

        @staticmethod
        def from_args(args):
            return dataclasses.replace(data_config.from_args(args), max_context_len=window)

    def quantizing(self, request):
        quantize(self, request)  # calibrates self.calibration_prefill: the short graph
        deployed = self.exe_expo_deployed
        short = self.calibration_prefill
        if save:
            save(self, request, short)
        if request.method_data[wrappers.TEXT_DECODER].skip_quantize:
            self.calibration_prefill = deployed
            return
        # convert the deployed graph after one pass over its example input (the script's own
        # path for graphs it does not calibrate), then replace its encodings by the short one's
        deployed.mode = mode.DECODE
        try:
            deployed.quantize(request)
        finally:
            deployed.mode = mode.CALIBRATE
        own = constants(deployed.decoder)
        self._encoding_override(quantized_model=short.decoder, unquantized_model=deployed.decoder, override_kv_cache=False)
        kept = []
        for n, (v, chain) in own.items():
            copied = attr(deployed.decoder, n.target)
            if copied.shape != v.shape:  # a table with a row per position: the window's own, and its encoding
                set_attr(deployed.decoder, n.target, v)
                for u, args in chain.items():
                    u.args = args
                kept.append("%s %s (was given %s)" % (n.target, "x".join(map(str, v.shape)), "x".join(map(str, copied.shape))))
        deployed.decoder.recompile()
        if self.apply_embedding:
            self._encoding_override(quantized_model=short.tok_embedding, unquantized_model=deployed.tok_embedding, override_kv_cache=False)
        record["calib_window"] = {"window": window, "kept_constants": kept}
        log("encodings calibrated at %d tokens copied to the %d-token graph; its own constants kept: %s"
            % (window, deployed.meta["get_max_context_len"], ", ".join(kept) or "none"))
        self.calibration_prefill = deployed
        del short
        gc.collect()

    hybrid.__init__, hybrid.quantize, wrappers.DataConfig = building, quantizing, ShortRows
