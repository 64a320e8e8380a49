#!/usr/bin/env bash
# The exports behind int8-kv.md, one after another (2 shared cores: never in parallel).
# x = XNNPACK (8da4w g32, int8 embeddings "8,0", as exe-expo's recipe), v = Vulkan.
set -u
E=$(dirname "$0")/export_variant.sh
INT8=(+model.quantize_kv_cache=true)
STATIC=(model.enable_dynamic_shape=false model.use_sdpa_with_kv_cache=false +model.static_quantize_kv_cache=true)
$E x-static-w512   512  512  xnnpack "${STATIC[@]}"
$E v-int8-w512     512  512  vulkan  "${INT8[@]}"
$E x-fp32-w512     512  512  xnnpack
$E x-fp32-w1024    1024 1024 xnnpack
$E x-int8-w1024    1024 1024 xnnpack "${INT8[@]}"
$E x-fp32-w512-s128  512  128 xnnpack
$E x-int8-w512-s128  512  128 xnnpack "${INT8[@]}"
$E x-fp32-w1024-s128 1024 128 xnnpack
$E x-int8-w1024-s128 1024 128 xnnpack "${INT8[@]}"
$E x-fp32-w2048    2048 2048 xnnpack
$E x-int8-w2048    2048 2048 xnnpack "${INT8[@]}"
