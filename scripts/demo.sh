#!/usr/bin/env bash
# The main job: install what is missing, build, and run the example through the layer on lavapipe.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

bash "$EXECGRAPH_ROOT/scripts/install-deps.sh"
execgraph_configure_and_build -DEXECGRAPH_BUILD_TESTS=OFF
execgraph_use_lavapipe
export VK_INSTANCE_LAYERS=VK_LAYER_EXECGRAPH_shader_enqueue
"$EXECGRAPH_BUILD_DIR/examples/query_device/execgraph_query_device"
