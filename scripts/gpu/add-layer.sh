#!/usr/bin/env bash
# Adds another build's layer to a staged folder (scripts/gpu/stage.sh) under a name of its own, for scripts/gpu/ab.sh.
# Stripped of debug information, as stage.sh does: the device tool carries at most 64 MiB.
#   bash scripts/gpu/add-layer.sh BUILD_DIR STAGED_DIR/layer_NAME
set -euo pipefail
build=${1:?usage: add-layer.sh BUILD_DIR STAGED_DIR/layer_NAME} target=${2:?target folder}
mkdir -p "$target"
objcopy --strip-debug "$build/layer/libVkLayer_execgraph_shader_enqueue.so" "$target/libVkLayer_execgraph_shader_enqueue.so"
cp "$build/layer/VkLayer_execgraph_shader_enqueue.json" "$target/"
