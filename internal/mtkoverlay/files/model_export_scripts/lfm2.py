# Copyright (c) MediaTek Inc.
# All rights reserved
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.
#
# LFM2 export for the MediaTek LLM scripts: written for exe-expo after the layout of
# qwen.py in ExecuTorch 1.4.0's examples/mediatek (internal/mtkoverlay), with the same flags.
# It differs in two ways. Calibration streams: every chunk is prepared for quantization
# first, then each prompt runs through all of them in one pass, so nothing is cached on
# disk and the short-convolution state flows from block to block as on the device.
# Prompts are fed in blocks of the prompt graph's size. The chunks read the
# convolution inputs and per-layer states of modeling_lfm2.py.

import os
import sys

if os.getcwd() not in sys.path:
    sys.path.append(os.getcwd())
import argparse
import struct
import warnings

import torch

from aot_utils.llm_utils.preformatter import Preformatter
from aot_utils.llm_utils.sanity_checks import (
    check_all_chunks_same_num_layer,
    check_between_inclusive,
    check_exist,
    check_ext,
    check_old_arg,
    check_shapes,
    check_supported_model,
    check_supported_tokenizer,
    check_tokenizer_exist,
    check_weights_exist,
)
from aot_utils.llm_utils.utils import (
    dump_embedding_lut_for_cmdline,
    generate_mask,
    get_dest_path,
    get_dirname,
    get_embedding_layer,
    get_exp_name,
    get_export_shapes,
    get_normalized_config,
    load_checkpoints,
    resolve_model_classes,
)
from executorch import exir
from executorch.backends.mediatek import (
    NeuropilotPartitioner,
    NeuropilotQuantizer,
    Precision,
)
from executorch.exir.backend.backend_api import (
    MethodProgramsPartitionerSpec,
    to_backend,
)
from executorch.exir.backend.backend_details import CompileSpec
from models.llm_models.modeling_lfm2 import rotary_table, short_conv_inputs, state_shapes
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

warnings.filterwarnings("ignore")

PLATFORMS = {"DX3": b"mt6989", "DX4": b"mt6991"}


def get_argument_parser():
    parser = argparse.ArgumentParser(
        description="Export LFM2 models to ExecuTorch for MediaTek NeuroPilot.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "config",
        type=str,
        help="[Required] Model config json file, in the folder that holds the weights and tokenizer.",
    )
    parser.add_argument(
        "-p",
        "--precision",
        type=str,
        default="A16W8",
        choices=["A16W4", "A16W8", "A16W16", "A8W4", "A8W8"],
        help="Precision to quantize the whole model to.",
    )
    parser.add_argument(
        "--platform",
        type=str,
        default="DX4",
        choices=sorted(PLATFORMS),
        help="DX3 for Dimensity 9300, DX4 for Dimensity 9400.",
    )
    parser.add_argument(
        "-d",
        "--dataset",
        type=str,
        default=None,
        help="Calibration prompts, one a line. Defaults to None: random inputs.",
    )
    parser.add_argument(
        "-n",
        "--num_chunks",
        type=int,
        default=4,
        help="Number of chunks to cut the model into. Defaults to 4.",
    )
    parser.add_argument(
        "-r",
        "--response_cap",
        type=int,
        default=9,
        help="Most response tokens generated per calibration prompt. Defaults to 9.",
    )
    parser.add_argument(
        "--preformatter",
        type=str,
        default=None,
        help="Preformatter template that wraps each prompt. Defaults to None.",
    )
    parser.add_argument(
        "-shapes",
        nargs="+",
        help="[Required] Shapes to export, xtyc (e.g. 128t512c 1t512c).",
    )
    return parser


def args_sanity_checks(args):
    check_old_arg(args.config)
    check_exist(args.config, "Config file")
    check_ext(args.config, ".json", "Config file")
    config = get_normalized_config(args.config)

    weight_dir = get_dirname(args.config)
    check_tokenizer_exist(weight_dir)
    check_weights_exist(weight_dir)

    check_supported_model(config)
    check_supported_tokenizer(config)
    if config.model_type != "lfm2":
        raise RuntimeError(f"lfm2.py exports lfm2 models, and the config is {config.model_type}")

    if args.preformatter is not None:
        check_exist(args.preformatter, "Preformatter json file")
        check_ext(args.preformatter, ".json", "preformatter")
    if args.dataset is not None:
        check_exist(args.dataset)
    check_between_inclusive(args.num_chunks, 1, config.num_hidden_layers, "num_chunks")
    check_shapes(args.shapes)


def print_args(args, exp_name):
    print("Please check if all arguments are correct:")
    print(f"Config file:                  {args.config}")
    print(f"Output pte folder:            pte/{exp_name}")
    print(f"Quantization precision:       {args.precision}")
    print(f"Preformatter:                 {args.preformatter}")
    print(f"Calibration Dataset:          {args.dataset}")
    print(f"Max Response Tokens:          {args.response_cap}")
    print(f"Number of chunks:             {args.num_chunks}")
    print(f"Export shape(s):              {args.shapes}")
    print(f"Platform:                     {args.platform}")
    print()


def read_prompts(path, preformatter=None):
    """The calibration prompts, one a line, blank lines skipped."""
    with open(path, encoding="utf-8") as f:
        prompts = [line.rstrip("\n") for line in f if line.strip()]
    if preformatter is not None:
        prompts = [preformatter.generate_prompt(p) for p in prompts]
    return prompts


def tokenize(tokenizer, text, bos_token_id):
    """Token ids of text with exactly one BOS in front, as the device runner feeds them."""
    ids = tokenizer(text)["input_ids"]
    if bos_token_id is not None and (not ids or ids[0] != bos_token_id):
        ids = [bos_token_id] + list(ids)
    return list(ids)


def initial_states(config, chunks, cache_size):
    """Zero states for every chunk: an empty KV cache and a fresh convolution state."""
    return [
        [torch.zeros(s) for s in state_shapes(config, chunk.layer_types, cache_size)]
        for chunk in chunks
    ]


def run_chunks(graphs, hidden, mask, pos_emb, conv_valid, conv_select, states):
    """One block through every chunk in order; states are replaced by the next ones."""
    with torch.no_grad():
        for i, graph in enumerate(graphs):
            out = graph(hidden, mask, pos_emb, conv_valid, conv_select, *states[i])
            hidden = out[0]
            states[i] = list(out[1:])
    return hidden


def stream_prompt(graphs, chunks, config, ids, embedding, rot, block, cache_size, eos, response_cap):
    """Runs one prompt the way the device does: the prompt in blocks of at most block
    tokens, then greedy replies one token at a time until EOS, response_cap tokens or a
    full cache. Returns the number of positions fed and the greedy tokens."""
    kernel = config.conv_L_cache
    states = initial_states(config, chunks, cache_size)
    pos = 0

    def step(tokens):
        nonlocal pos
        n = len(tokens)
        hidden = embedding(torch.tensor([tokens], dtype=torch.int64))
        mask = generate_mask(cache_size, pos, n, n)
        valid, select = short_conv_inputs(n, n, kernel)
        logits = run_chunks(graphs, hidden, mask, rot[:, :, pos : pos + n, :], valid, select, states)
        pos += n
        return int(torch.argmax(logits[0, -1]))

    ids = ids[:cache_size]
    for start in range(0, len(ids), block):
        token = step(ids[start : start + block])
    replies = [token]
    for _ in range(response_cap):
        if token == eos or pos >= cache_size:
            break
        token = step([token])
        replies.append(token)
    return pos, replies


def export_chunk(output_folder, exp_name, converted, chunk, chunk_idx, export_shapes, platform_b):
    """Lowers one calibrated chunk for every shape into one .pte, as qwen.py does."""
    method_to_edge_program = {}
    method_to_partitioner = {}
    shared_key = f"{exp_name}_{chunk_idx}"
    for shape, (num_token, cache_size) in export_shapes.items():
        method = f"{exp_name}_{shape}_{chunk_idx}"
        example_inputs = chunk.get_example_inputs(num_token, cache_size)
        print(f"Getting ATen Dialect Graph for {exp_name} {shape} chunk {chunk_idx}")
        aten = torch.export.export(converted, example_inputs, strict=True)
        method_to_edge_program[method] = exir.to_edge(aten).exported_program()
        del aten
        compile_spec = [
            CompileSpec("gno", b"LTS"),
            CompileSpec("gno-exp", b""),
            CompileSpec("gno-non-4d-tiling", b""),
            CompileSpec("ImportForever", struct.pack("?", True)),
            CompileSpec("platform-config", platform_b),
            CompileSpec("ExtractSharedBlobKey", shared_key.encode()),
        ]
        method_to_partitioner[method] = NeuropilotPartitioner(compile_spec)

    print("Delegating Edge Program to Neuropilot Backend")
    delegated = to_backend(
        MethodProgramsPartitionerSpec(method_to_edge_program, method_to_partitioner)
    )
    edge_manager = exir.EdgeProgramManager(
        delegated, compile_config=exir.EdgeCompileConfig(_check_ir_validity=False)
    )
    del delegated
    print("Transforming delegated program to executorch backend")
    program = edge_manager.to_executorch(
        config=exir.ExecutorchBackendConfig(
            memory_planning_pass=exir.passes.MemoryPlanningPass(
                alloc_graph_input=False,
                alloc_graph_output=False,
            ),
            extract_delegate_segments=True,
        )
    )
    del edge_manager
    print(f"\n Model Size: {len(program.buffer)}")
    dest_path = get_dest_path(output_folder, exp_name, None, chunk_idx)
    print(f"{exp_name} ET Model chunk {chunk_idx} Dest: {dest_path}\n")
    os.makedirs(os.path.dirname(dest_path), exist_ok=True)
    with open(dest_path, "wb") as f:
        f.write(program.buffer)


def prepare_chunk(chunk, chunk_idx, precision, max_num_token, max_cache_size):
    print(f"Exporting Chunk {chunk_idx} to PTE")
    example_inputs, dynamic_shapes = chunk.get_example_inputs(max_num_token, max_cache_size, True)
    graph = torch.export.export(
        chunk, example_inputs, dynamic_shapes=dynamic_shapes, strict=True
    ).module()
    quantizer = NeuropilotQuantizer()
    quantizer.setup_precision(getattr(Precision, precision))
    return prepare_pt2e(graph, quantizer), example_inputs


def build_chunks(chunk_class, config, state_dict, num_blocks_per_chunk):
    """The model cut into chunks of equal layer counts, the last one with the head."""
    print("Instantiating submodels")
    chunks = []
    for chunk_idx, num_blocks in enumerate(num_blocks_per_chunk):
        first = sum(num_blocks_per_chunk[:chunk_idx])
        chunk = chunk_class(
            config,
            num_blocks,
            chunk_idx=chunk_idx,
            dtype=torch.float32,
            include_tail=(chunk_idx == len(num_blocks_per_chunk) - 1),
            jit_trace=True,
            first_layer=first,
        )
        chunks.append(chunk.load_weights(state_dict, first))
    return chunks


def main():
    args = get_argument_parser().parse_args()
    args_sanity_checks(args)
    suffix = "" if args.dataset is not None else "_dummy_cal"
    exp_name = f"{get_exp_name(args.config)}_{args.precision}{suffix}_{args.num_chunks}_chunks"
    platform_b = PLATFORMS[args.platform]
    print_args(args, exp_name)

    config, weight_dir, tokenizer_class, chunk_class = resolve_model_classes(args.config)
    tokenizer = tokenizer_class.from_pretrained(weight_dir)
    preformatter = Preformatter(args.preformatter) if args.preformatter else None

    layers = config.num_hidden_layers
    num_blocks_per_chunk = [
        layers // args.num_chunks + (i < layers % args.num_chunks)
        for i in range(args.num_chunks)
    ]
    check_all_chunks_same_num_layer(num_blocks_per_chunk)
    output_folder = os.path.join("pte", exp_name)

    state_dict = load_checkpoints(weight_dir)
    dump_embedding_lut_for_cmdline(weight_dir, state_dict, config)
    export_shapes, max_num_token, max_cache_size = get_export_shapes(args.shapes)
    print(f"export shapes: {export_shapes}")
    print(f"Max Num Token: {max_num_token}")
    print(f"Max Cache Size: {max_cache_size}")
    embedding = get_embedding_layer(config, weight_dir, state_dict) if args.dataset else None

    chunks = build_chunks(chunk_class, config, state_dict, num_blocks_per_chunk)
    del state_dict
    prepared = [
        prepare_chunk(c, i, args.precision, max_num_token, max_cache_size)
        for i, c in enumerate(chunks)
    ]
    graphs = [p[0] for p in prepared]
    if args.dataset is None:
        for graph, example_inputs in prepared:
            graph(*example_inputs)  # dummy calibration
    else:
        eos = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else config.eos_token_id
        rot = rotary_table(config, max_cache_size)
        prompts = read_prompts(args.dataset, preformatter)
        print(f"Calibrating Model: {len(prompts)} prompts streamed through {len(graphs)} chunks")
        for n, text in enumerate(prompts):
            ids = tokenize(tokenizer, text, config.bos_token_id)
            fed, _ = stream_prompt(
                graphs, chunks, config, ids, embedding, rot,
                max_num_token, max_cache_size, eos, args.response_cap,
            )
            print(f"Calibration prompt {n + 1}/{len(prompts)}: {len(ids)} prompt tokens, {fed} positions")
    del prepared
    for chunk_idx, chunk in enumerate(chunks):
        converted = convert_pt2e(graphs[chunk_idx], fold_quantize=False)
        graphs[chunk_idx] = None
        export_chunk(output_folder, exp_name, converted, chunk, chunk_idx, export_shapes, platform_b)


if __name__ == "__main__":
    main()
