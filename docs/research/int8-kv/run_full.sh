#!/usr/bin/env bash
# Evaluation files for per-position logits (not shipped files): full logits per chunk of 256.
set -u
E=$(dirname "$0")/export_variant.sh
FULL=(+debug.generate_full_logits=true)
$E x-fp32-w2048-s256-full 2048 256 xnnpack "${FULL[@]}"
$E x-int8-w2048-s256-full 2048 256 xnnpack "${FULL[@]}" +model.quantize_kv_cache=true
# quantize_kv_cache without the custom SDPA: the cache is dequantized to fp32 every step
$E x-int8-nosdpa-w512 512 512 xnnpack +model.quantize_kv_cache=true model.use_sdpa_with_kv_cache=false
# Vulkan with the static int8 cache (quantize_kv_cache fails in the Vulkan preprocess)
$E v-static-w512 512 512 vulkan model.enable_dynamic_shape=false model.use_sdpa_with_kv_cache=false +model.static_quantize_kv_cache=true
# the static cache's bytes per token (slope against x-static-w512)
$E x-static-w1024 1024 1024 xnnpack model.enable_dynamic_shape=false model.use_sdpa_with_kv_cache=false +model.static_quantize_kv_cache=true
