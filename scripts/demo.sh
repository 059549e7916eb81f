#!/usr/bin/env bash
# The main job: install what is missing, build, and run the examples through the layer on lavapipe.
# The last line printed is the tile_shading example's verification against its CPU reference; the image it produced is
# written to tile_shading.png in the current directory (or to the path given as the first argument).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

bash "$EXECGRAPH_ROOT/scripts/install-deps.sh"
execgraph_configure_and_build -DEXECGRAPH_BUILD_TESTS=OFF
execgraph_use_lavapipe
export VK_INSTANCE_LAYERS=VK_LAYER_EXECGRAPH_shader_enqueue

echo "== execgraph_query_device: what the layer advertises"
"$EXECGRAPH_BUILD_DIR/examples/query_device/execgraph_query_device"
echo
echo "== execgraph_tile_shading: an execution graph classify -> shade[0..2] (examples/tile_shading)"
"$EXECGRAPH_BUILD_DIR/examples/tile_shading/execgraph_tile_shading" "${1:-tile_shading.png}"
