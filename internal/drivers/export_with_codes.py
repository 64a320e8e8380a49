"""Run ExecuTorch's export_llm with exe-expo's two additions to the stock recipe.

exe-expo driver: command line in (the recipe decides every flag), ExecuTorch's own output.
  export_with_codes.py --config export_llm.yaml [--codes codes.pt] [--lfm2-state-fix]
                       [--full-chunk]

--codes: after export_llm's 8da4w quantizer has built its int4 tensors, every linear named
  in codes.pt ({"layers.<i>.<module>" | "output": {"qdata": int8 [out,in],
  "scale": [out, in/group]}}) gets the solved codes and scales instead of round-to-nearest;
  zero points are zeroed (the grid is symmetric). A code outside -8..7, a scale that is not
  positive, a shape that differs, or a name no linear has, stops the export.
--lfm2-state-fix: LFM2's short convolution reads its state as zeros when a sequence starts
  (input_pos 0), so a prefill after another conversation does not mix the two. The state is
  multiplied by clamp(input_pos[0], max=1): Vulkan has no kernel for aten.gt, so no compare.
--full-chunk: the token dimension of a dynamic-shape program is exported up to
  max_seq_length, the get_max_seq_len its metadata says. Stock export_llm bounds it at
  max_seq_length - 1 (extension/llm/export/builder.py), so ExecuTorch's own runner, which
  prefills chunks of get_max_seq_len, failed on every prompt longer than one chunk
  ("Attempted to resize a bounded tensor with a maximum capacity of 2047 elements").
"""

import argparse
import importlib
import runpy
import sys


def log(msg):
    print("export_with_codes: " + msg, file=sys.stderr, flush=True)


def int4_tensors(module):
    """The int4 tensors of one quantized linear, in either layout torchao produces: a weight
    tensor subclass with qdata/scale/zero_point, or a swapped module with weight/scales/zeros
    buffers. Returns (codes, scales, zeros) or None."""
    w = getattr(module, "weight", None)
    if w is not None and hasattr(w, "qdata") and hasattr(w, "scale"):
        return w.qdata, w.scale, getattr(w, "zero_point", None)
    scales = getattr(module, "scales", None)
    # The int8 embedding (embedding_quantize "8,0") has an int8 weight and scales too.
    if "Embedding" in type(module).__name__:
        return None
    if w is not None and scales is not None and str(w.dtype) == "torch.int8":
        return w, scales, getattr(module, "zeros", None)
    return None


def inject(model, codes):
    """Copies codes into model in place; returns (injected names, int4 linears left alone)."""
    import torch

    done, left = [], []
    for name, module in model.named_modules():
        t = int4_tensors(module)
        if t is None:
            continue
        if name not in codes:
            left.append(name)
            continue
        qdata, scale, zeros = t
        new_q, new_s = codes[name]["qdata"], codes[name]["scale"]
        if tuple(new_q.shape) != tuple(qdata.shape) or tuple(new_s.shape) != tuple(scale.shape):
            raise SystemExit("%s: codes %s and scales %s do not fit the linear's %s and %s"
                             % (name, tuple(new_q.shape), tuple(new_s.shape), tuple(qdata.shape), tuple(scale.shape)))
        if int(new_q.min()) < -8 or int(new_q.max()) > 7:
            raise SystemExit("%s: codes outside -8..7" % name)
        if not bool((new_s.float() > 0).all()):
            raise SystemExit("%s: a scale is not positive" % name)
        with torch.no_grad():
            qdata.copy_(new_q.to(qdata.dtype))
            scale.copy_(new_s.to(scale.dtype))
            if zeros is not None:
                zeros.zero_()
        done.append(name)
    unused = sorted(set(codes) - set(done))
    if unused:
        raise SystemExit("codes name %d linears the model has no int4 tensors for: %s" % (len(unused), ", ".join(unused[:8])))
    return done, left


def patch_quantize(codes):
    """Wraps export_llm's quantize() so the codes land right after it returns."""
    q = importlib.import_module("executorch.examples.models.llama.source_transformation.quantize")
    importlib.import_module("executorch.examples.models.llama.export_llama_lib")
    original = q.quantize

    def quantize(model, qmode, *args, **kwargs):
        model = original(model, qmode, *args, **kwargs)
        if qmode == "8da4w":
            done, left = inject(model, codes)
            log("injected calibrated codes into %d linears" % len(done))
            if left:
                log("left to round-to-nearest: %s" % ", ".join(left))
        return model

    for mod in list(sys.modules.values()):
        if getattr(mod, "quantize", None) is original:
            mod.quantize = quantize


def conv_forward(self, x, input_pos=None):
    """ShortConv.forward with the state reset at the start of a sequence."""
    import torch

    b = self.B_proj(x).transpose(-1, -2)
    c = self.C_proj(x).transpose(-1, -2)
    v = self.x_proj(x).transpose(-1, -2)
    state = self.conv_state
    if input_pos is not None:
        state = state * torch.clamp(input_pos[:1], max=1).to(state.dtype)
    bx = torch.cat([state, b * v], dim=-1)
    with torch.no_grad():
        self.conv_state.copy_(bx[..., -(self.conv.weight.size(-1) - 1):])
    y = c * self.conv(bx)[..., : v.size(-1)]
    return self.out_proj(y.transpose(-1, -2).contiguous())


def block_forward(self, x, freqs_cos=None, freqs_sin=None, options=None):
    """ShortConvBlock.forward passing input_pos on to the convolution."""
    pos = options.get("input_pos") if options else None
    h = x + self.conv.forward(self.attention_norm(x), pos)
    return h + self.feed_forward(self.ffn_norm(h)), None


def apply_lfm2_state_fix():
    sc = importlib.import_module("executorch.examples.models.lfm2.short_conv")
    sc.ShortConv.forward = conv_forward
    sc.ShortConvBlock.forward = block_forward
    log("LFM2 short-convolution state resets at input_pos 0")


def apply_full_chunk():
    """Bounds the token dimension at max_seq_len where the builder would pick its own
    dynamic shapes (a KV-cache program: tokens [1, n] and input_pos [1])."""
    import torch

    b = importlib.import_module("executorch.extension.llm.export.builder")
    original = b.LLMEdgeManager.__init__

    def init(self, *args, **kwargs):
        chosen = kwargs.get("dynamic_shapes")
        original(self, *args, **kwargs)
        if not chosen and self.enable_dynamic_shape and self.use_kv_cache:
            self.dynamic_shapes = ({1: torch.export.Dim("token_dim", max=self.max_seq_len)}, {"input_pos": {0: 1}})
            log("token dimension bounded at %d, the get_max_seq_len the metadata says" % self.max_seq_len)

    b.LLMEdgeManager.__init__ = init


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True)
    p.add_argument("--codes")
    p.add_argument("--lfm2-state-fix", action="store_true")
    p.add_argument("--full-chunk", action="store_true")
    args = p.parse_args(argv)
    if args.full_chunk:
        apply_full_chunk()
    if args.lfm2_state_fix:
        apply_lfm2_state_fix()
    if args.codes:
        import torch

        patch_quantize(torch.load(args.codes, weights_only=True))
    sys.argv = ["export_llm", "--config", args.config]
    runpy.run_module("executorch.extension.llm.export.export_llm", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
