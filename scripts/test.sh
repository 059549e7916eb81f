#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite on lavapipe.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

bash "$EXECGRAPH_ROOT/scripts/install-deps.sh"
execgraph_configure_and_build -DEXECGRAPH_BUILD_TESTS=ON
# Tests carry their own Vulkan environment (CTest ENVIRONMENT), so nothing here leaks into them.
ctest --test-dir "$EXECGRAPH_BUILD_DIR" --output-on-failure -j "$EXECGRAPH_JOBS" --timeout 600
