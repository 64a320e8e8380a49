# Copyright (c) MediaTek Inc.
# All rights reserved
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.
#
# LFM2 for the MediaTek LLM scripts: written for exe-expo after the layout of
# configuration_qwen.py in ExecuTorch 1.4.0's examples/mediatek (internal/mtkoverlay).

from contextlib import nullcontext

from models.llm_models.configuration_base import BaseConfig

# The short convolution's kernel this model definition builds: every LFM2 release uses 3,
# and the runner keeps kernel - 1 = 2 inputs of state per convolution layer.
CONV_KERNEL = 3
LAYER_KINDS = ("conv", "full_attention")


def _auto_ff_dim(ff_dim, multiplier, multiple_of):
    """LFM2's block_auto_adjust_ff_dim: two thirds of the configured width, scaled by
    block_ffn_dim_multiplier, rounded up to block_multiple_of (12288 -> 8192)."""
    width = int(2 * ff_dim / 3)
    if multiplier is not None:
        width = int(multiplier * width)
    return multiple_of * ((width + multiple_of - 1) // multiple_of)


def _layer_types(layer_types, full_attn_idxs, num_layers):
    if layer_types is None and full_attn_idxs is not None:
        full = set(full_attn_idxs)
        layer_types = [
            "full_attention" if i in full else "conv" for i in range(num_layers)
        ]
    if layer_types is None:
        raise KeyError(
            "layer_types (or full_attn_idxs) is required for lfm2 but missing from config.json"
        )
    layer_types = list(layer_types)
    if len(layer_types) != num_layers:
        raise ValueError(
            f"layer_types lists {len(layer_types)} layers, and num_hidden_layers is {num_layers}"
        )
    for i, kind in enumerate(layer_types):
        if kind not in LAYER_KINDS:
            raise ValueError(
                f"layer {i} is of type {kind!r}; the lfm2 model knows {', '.join(LAYER_KINDS)}"
            )
    return layer_types


class Lfm2Config(BaseConfig):
    def __init__(
        self,
        vocab_size=None,
        hidden_size=None,
        num_hidden_layers=None,
        num_attention_heads=None,
        max_position_embeddings=None,
        norm_eps=1e-5,
        rope_theta=1000000.0,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=7,
        conv_L_cache=CONV_KERNEL,
        conv_bias=False,
        layer_types=None,
        full_attn_idxs=None,
        response_handler=None,
        model_type=None,
        **kwargs,
    ):
        super().__init__()
        self.model_type = model_type
        if self.model_type != "lfm2":
            raise ValueError(f"Lfm2Config reads lfm2 configs, not {model_type!r}")
        for key, value in (
            ("vocab_size", vocab_size),
            ("hidden_size", hidden_size),
            ("num_hidden_layers", num_hidden_layers),
            ("num_attention_heads", num_attention_heads),
            ("max_position_embeddings", max_position_embeddings),
        ):
            if value is None:
                raise KeyError(f"{key} is required but missing from config.json")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.max_position_embeddings = max_position_embeddings
        self.num_key_value_heads = kwargs.pop(
            "num_key_value_heads", self.num_attention_heads
        )
        if self.num_attention_heads % self.num_key_value_heads != 0:
            raise RuntimeError(
                f"num_attention_heads ({self.num_attention_heads}) must be exactly "
                f"divisible by num_key_value_heads ({self.num_key_value_heads})"
            )
        if self.hidden_size % self.num_attention_heads != 0:
            raise RuntimeError(
                f"hidden_size ({self.hidden_size}) must be exactly divisible by "
                f"num_attention_heads ({self.num_attention_heads})"
            )
        self.head_dim = self.hidden_size // self.num_attention_heads

        ff_dim = kwargs.pop("block_ff_dim", None)
        if ff_dim is None:
            ff_dim = kwargs.pop("intermediate_size", None)
        if ff_dim is None:
            raise KeyError(
                "block_ff_dim (or intermediate_size) is required but missing from config.json"
            )
        self.configured_ff_dim = ff_dim
        if kwargs.pop("block_auto_adjust_ff_dim", False):
            ff_dim = _auto_ff_dim(
                ff_dim,
                kwargs.pop("block_ffn_dim_multiplier", None),
                kwargs.pop("block_multiple_of", 256),
            )
        # the width the feed-forward is built with, which MLP reads
        self.intermediate_size = ff_dim

        if conv_L_cache != CONV_KERNEL:
            raise ValueError(
                f"conv_L_cache is {conv_L_cache}, and this LFM2 model builds its short "
                f"convolution with a kernel of {CONV_KERNEL}"
            )
        if conv_bias:
            raise ValueError(
                "conv_bias is set, and this LFM2 model's short convolution has no bias"
            )
        self.conv_L_cache = conv_L_cache
        self.layer_types = _layer_types(layer_types, full_attn_idxs, num_hidden_layers)

        rope_scaling = kwargs.pop("rope_scaling", None)
        if rope_scaling is not None and rope_scaling.get(
            "rope_type", rope_scaling.get("type", "default")
        ) not in (None, "default"):
            raise ValueError(f"RoPE scaling {rope_scaling} is not implemented for lfm2")
        self.rope_theta = float(rope_theta)
        self.position_embedding = "rope"
        self.ntk_scaling_factor = 1.0
        self.norm = "RMSNorm"
        self.norm_eps = kwargs.pop("rms_norm_eps", norm_eps)

        self.bos_token_id = bos_token_id
        self.eos_token_id = eos_token_id
        self.pad_token_id = pad_token_id
        self.unk_token_id = kwargs.pop("unk_token_id", None)

        # LFM2 calls it tie_embedding; transformers accepts either name
        self.tie_word_embeddings = kwargs.pop(
            "tie_word_embeddings", kwargs.pop("tie_embedding", True)
        )
        self.use_stable_embedding = False
        self.combine_qkv = False
        self.use_qk_norm = True
        # the tokenizer.json of every LFM2 release loads as a fast tokenizer
        self.tokenizer = kwargs.pop("tokenizer", "pretrained_fast")

        if response_handler is None:
            response_handler = nullcontext()
        if kwargs.pop("verbose", True):
            self.print_config(response_handler)

    def print_config(self, response_handler):
        with response_handler:
            print(f"{self.model_type} config:")
            print(f"Hidden size:          {self.hidden_size}")
            print(f"Feed-forward width:   {self.intermediate_size} (configured {self.configured_ff_dim})")
            print(f"Num layers:           {self.num_hidden_layers}")
            print(f"Layer types:          {', '.join(self.layer_types)}")
            print(f"Num attention heads:  {self.num_attention_heads}")
            print(f"Num KV heads:         {self.num_key_value_heads}")
            print(f"Head Dim:             {self.head_dim}")
            print(f"Conv kernel:          {self.conv_L_cache}")
            print(f"Max pos emb:          {self.max_position_embeddings}")
            print(f"RoPE theta:           {self.rope_theta}")
            print(f"Norm epsilon:         {self.norm_eps}")
            print(f"BOS token id:         {self.bos_token_id}")
            print(f"EOS token id:         {self.eos_token_id}")
            print(f"Vocab size:           {self.vocab_size}")
            print(f"Tie word embeddings:  {self.tie_word_embeddings}")
            print(f"Tokenizer:            {self.tokenizer}")
            print()
