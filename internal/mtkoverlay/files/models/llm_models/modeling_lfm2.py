# Copyright (c) MediaTek Inc.
# All rights reserved
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.
#
# LFM2 for the MediaTek LLM scripts: written for exe-expo after the layout of
# modeling_qwen.py and modeling_common.py in ExecuTorch 1.4.0's examples/mediatek
# (internal/mtkoverlay). The attention layers are the common ones; the short-convolution
# layers are new.
#
# A chunk's inputs are those of the common chunks (hidden state, mask, rotary table)
# followed by conv_valid, conv_select and one state per layer in layer order: a key and
# a value cache (1, kv heads, cache, head dim) for an attention layer, the last
# kernel - 1 convolution inputs (1, hidden, kernel - 1) for a convolution layer. The
# outputs are the hidden state and the next states in the same order. conv_valid
# (1, 1, tokens) is 1 for a real token and 0 for a pad, so left pads read like the zero
# state of a new sequence; conv_select (1, tokens + kernel - 1, kernel - 1) picks the
# next state as the inputs that end at the last real token, so right pads leave it alone
# (short_conv_inputs builds both).

import numpy as np
import torch
from models.llm_models.configuration_lfm2 import Lfm2Config
from models.llm_models.modeling_base import BaseModelChunk
from models.llm_models.modeling_common import Attention, DecoderLayer, MLP, RMSNorm
from torch import nn
from torch.export import Dim

torch.manual_seed(42)
np.random.seed(42)


def short_conv_inputs(num_token, num_valid, kernel, left_padding=False):
    """conv_valid and conv_select for a block of num_token inputs of which num_valid are
    real: the pads follow the real tokens, or precede them with left_padding."""
    if not 0 <= num_valid <= num_token:
        raise ValueError(f"{num_valid} real tokens do not fit a block of {num_token}")
    valid = torch.zeros(1, 1, num_token, dtype=torch.float32)
    end = num_token if left_padding else num_valid
    valid[:, :, end - num_valid : end] = 1
    # row i of the concatenated (state, inputs) sequence is input i - (kernel - 1); the next
    # state is the kernel - 1 rows that end at the last real input, rows end .. end + kernel - 2
    select = torch.zeros(1, num_token + kernel - 1, kernel - 1, dtype=torch.float32)
    for j in range(kernel - 1):
        select[0, end + j, j] = 1
    return valid, select


def rotary_table(config: Lfm2Config, length, dtype=torch.float32):
    """cos and sin, (1, 2, length, head_dim), in Hugging Face's rotate-half layout with
    the model's own rope_theta (the common helper's base is fixed at 10000)."""
    dim = config.head_dim
    inv_freq = 1.0 / (
        config.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    )
    freqs = torch.outer(torch.arange(length, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return torch.stack((emb.cos(), emb.sin()))[None].to(dtype)


def state_shapes(config: Lfm2Config, layer_types, cache_size):
    """The shape of every state a chunk with these layers reads, in input order."""
    shapes = []
    for kind in layer_types:
        if kind == "conv":
            shapes.append((1, config.hidden_size, config.conv_L_cache - 1))
        else:
            kv = (1, config.num_key_value_heads, cache_size, config.head_dim)
            shapes += [kv, kv]
    return shapes


class Lfm2Attention(Attention):
    """The common attention: LFM2's q_layernorm and k_layernorm are its q_norm and
    k_norm, applied per head before the rotation."""

    def __init__(self, config: Lfm2Config, jit_trace=False):
        super().__init__(config, jit_trace)


class Lfm2AttentionLayer(DecoderLayer):
    def __init__(self, config: Lfm2Config, return_attn=False, jit_trace=False):
        super().__init__(
            config, return_attn, jit_trace, attn_class=Lfm2Attention, mlp_class=MLP
        )


class Lfm2ShortConv(nn.Module):
    """LFM2's gated short convolution, its fused in_proj split into B, C and x so each
    output gets its own activation range."""

    def __init__(self, config: Lfm2Config):
        super().__init__()
        dim = config.hidden_size
        self.B_proj = nn.Linear(dim, dim, bias=False)
        self.C_proj = nn.Linear(dim, dim, bias=False)
        self.x_proj = nn.Linear(dim, dim, bias=False)
        self.conv = nn.Conv1d(
            dim, dim, kernel_size=config.conv_L_cache, groups=dim, bias=False
        )
        self.out_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x, conv_valid, conv_select, state):
        b = self.B_proj(x).transpose(1, 2)  # (1, dim, tokens)
        c = self.C_proj(x).transpose(1, 2)
        v = self.x_proj(x).transpose(1, 2)
        seq = torch.cat([state, b * v * conv_valid], dim=-1)
        next_state = torch.matmul(seq, conv_select)  # (1, dim, kernel - 1)
        y = c * self.conv(seq)  # (1, dim, tokens)
        return self.out_proj(y.transpose(1, 2)), next_state


class Lfm2ConvLayer(nn.Module):
    def __init__(self, config: Lfm2Config, jit_trace=False):
        super().__init__()
        self.jit_trace = jit_trace
        self.input_norm = RMSNorm(config.hidden_size, eps=config.norm_eps).float()
        self.conv = Lfm2ShortConv(config)
        self.post_attention_norm = RMSNorm(
            config.hidden_size, eps=config.norm_eps
        ).float()
        self.mlp = MLP(config)

    def forward(self, hidden_states, conv_valid, conv_select, state):
        y, next_state = self.conv(
            self.input_norm(hidden_states), conv_valid, conv_select, state
        )
        hidden_states = hidden_states + y
        hidden_states = hidden_states + self.mlp(self.post_attention_norm(hidden_states))
        return hidden_states, next_state


class Lfm2ModelChunk(BaseModelChunk):
    def __init__(
        self,
        config: Lfm2Config,
        num_blocks,
        chunk_idx,
        dtype=torch.float32,
        include_tail=False,
        return_attn=False,
        jit_trace=False,
        first_layer=None,
    ):
        super().__init__(
            config, num_blocks, chunk_idx, dtype, include_tail, return_attn, jit_trace
        )
        if return_attn:
            raise ValueError("the lfm2 chunks do not return attention maps")
        # the scripts cut the layers into equal chunks
        self.first_layer = chunk_idx * num_blocks if first_layer is None else first_layer
        self.layer_types = config.layer_types[
            self.first_layer : self.first_layer + num_blocks
        ]
        if len(self.layer_types) != num_blocks:
            raise ValueError(
                f"chunk {chunk_idx} asks for layers {self.first_layer}.."
                f"{self.first_layer + num_blocks - 1} of {config.num_hidden_layers}"
            )
        self.head_dim = config.head_dim
        self.layers = nn.ModuleList(
            [
                (
                    Lfm2ConvLayer(config, jit_trace=jit_trace)
                    if kind == "conv"
                    else Lfm2AttentionLayer(config, jit_trace=jit_trace)
                )
                for kind in self.layer_types
            ]
        )
        if include_tail:
            self.norm = RMSNorm(config.hidden_size, eps=config.norm_eps).float()
            self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def num_states(self):
        return sum(1 if kind == "conv" else 2 for kind in self.layer_types)

    def forward(self, inputs_embeds, mask, pos_emb, conv_valid, conv_select, *states):
        if not self.jit_trace and len(states) != self.num_states():
            raise ValueError(f"{len(states)} states given, chunk reads {self.num_states()}")
        hidden_states = inputs_embeds
        next_states = []
        i = 0
        for kind, layer in zip(self.layer_types, self.layers):
            if kind == "conv":
                hidden_states, s = layer(hidden_states, conv_valid, conv_select, states[i])
                next_states.append(s)
                i += 1
            else:
                hidden_states, k, v = layer(
                    hidden_states, mask, pos_emb, states[i], states[i + 1]
                )
                next_states += [k, v]
                i += 2
        if self.include_tail:
            hidden_states = self.lm_head(self.norm(hidden_states))
        return (hidden_states, *next_states)

    def load_weights(self, state_dict, state_dict_start_idx):
        if state_dict is None:
            print(f"No weights for chunk {self.chunk_idx}: it keeps random ones")
            return self.eval()
        prefix = "model." if any(k.startswith("model.layers.") for k in state_dict) else ""
        loaded = {}
        for inner, kind in enumerate(self.layer_types):
            loaded.update(
                _layer_weights(
                    state_dict, prefix, state_dict_start_idx + inner, inner, kind, self.config
                )
            )
        if self.include_tail:
            loaded["norm.weight"] = _take(state_dict, f"{prefix}embedding_norm.weight").float()
            if "lm_head.weight" in state_dict:
                loaded["lm_head.weight"] = _take(state_dict, "lm_head.weight")
            elif self.config.tie_word_embeddings:
                # the embedding stays: the calibration embeds with it
                loaded["lm_head.weight"] = state_dict[f"{prefix}embed_tokens.weight"]
            else:
                raise KeyError("the checkpoint has no lm_head.weight and its embeddings are not tied")
        want = set(self.state_dict().keys())
        if set(loaded) != want:
            raise RuntimeError(
                f"chunk {self.chunk_idx}: the model has {sorted(want - set(loaded))} "
                f"that the checkpoint does not fill, and the mapping made {sorted(set(loaded) - want)}"
            )
        print(f"Loading weights for chunk {self.chunk_idx}")
        self.load_state_dict(loaded)
        return self.eval()

    def get_example_inputs(self, num_token=128, cache_size=512, get_dym_shape=False):
        config = self.config
        kernel = config.conv_L_cache
        conv_valid, conv_select = short_conv_inputs(num_token, num_token, kernel)
        example_inputs = (
            torch.randn(1, num_token, config.hidden_size, dtype=torch.float32),
            torch.randn(1, 1, num_token, cache_size + num_token, dtype=torch.float32),
            torch.randn(1, 2, num_token, self.head_dim, dtype=torch.float32),
            conv_valid,
            conv_select,
            *[
                torch.randn(*shape, dtype=torch.float32)
                for shape in state_shapes(config, self.layer_types, cache_size)
            ],
        )
        if not get_dym_shape:
            return example_inputs
        # the token count varies during calibration; the cache size is fixed
        nt = Dim("num_token", max=num_token)
        dynamic_shapes = (
            {1: nt},
            {2: nt, 3: nt + cache_size},
            {2: nt},
            {2: nt},
            {1: nt + (kernel - 1)},
            tuple({} for _ in range(self.num_states())),
        )
        return example_inputs, dynamic_shapes


def _take(state_dict, key):
    if key not in state_dict:
        raise KeyError(f"the checkpoint has no {key}")
    return state_dict.pop(key)


def _layer_weights(state_dict, prefix, outer, inner, kind, config):
    """One layer's tensors under the chunk's names, taken from Hugging Face's LFM2 names."""
    src, dst = f"{prefix}layers.{outer}.", f"layers.{inner}."
    out = {
        dst + "input_norm.weight": _take(state_dict, src + "operator_norm.weight").float(),
        dst + "post_attention_norm.weight": _take(state_dict, src + "ffn_norm.weight").float(),
        dst + "mlp.gate_proj.weight": _take(state_dict, src + "feed_forward.w1.weight"),
        dst + "mlp.up_proj.weight": _take(state_dict, src + "feed_forward.w3.weight"),
        dst + "mlp.down_proj.weight": _take(state_dict, src + "feed_forward.w2.weight"),
        dst + "mlp.gate_proj.bias": torch.zeros(config.intermediate_size),
        dst + "mlp.up_proj.bias": torch.zeros(config.intermediate_size),
        dst + "mlp.down_proj.bias": torch.zeros(config.hidden_size),
    }
    if kind == "conv":
        b, c, x = torch.chunk(_take(state_dict, src + "conv.in_proj.weight"), 3, dim=0)
        out.update(
            {
                dst + "conv.B_proj.weight": b,
                dst + "conv.C_proj.weight": c,
                dst + "conv.x_proj.weight": x,
                dst + "conv.conv.weight": _take(state_dict, src + "conv.conv.weight"),
                dst + "conv.out_proj.weight": _take(state_dict, src + "conv.out_proj.weight"),
            }
        )
        return out
    q, kv = config.num_attention_heads * config.head_dim, config.num_key_value_heads * config.head_dim
    for name, width in (("q_proj", q), ("k_proj", kv), ("v_proj", kv)):
        out[dst + f"self_attn.{name}.weight"] = _take(state_dict, src + f"self_attn.{name}.weight")
        out[dst + f"self_attn.{name}.bias"] = torch.zeros(width)
    out[dst + "self_attn.o_proj.weight"] = _take(state_dict, src + "self_attn.out_proj.weight")
    out[dst + "self_attn.o_proj.bias"] = torch.zeros(config.hidden_size)
    out[dst + "self_attn.q_norm.weight"] = _take(state_dict, src + "self_attn.q_layernorm.weight")
    out[dst + "self_attn.k_norm.weight"] = _take(state_dict, src + "self_attn.k_layernorm.weight")
    return out
