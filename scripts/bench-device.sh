#!/usr/bin/env bash
# Runs the workload benchmark (bench/workload_bench.cpp) on whatever Vulkan device the loader picks, through the layer
# of a build tree, and writes the results to an output folder:
#   OUT_DIR/workloads.json  machine-readable results (scripts/plot-bench.py turns it into a ratio chart)
#   OUT_DIR/workloads.txt   the human-readable table and log
#
# Usage: scripts/bench-device.sh BUILD_DIR OUT_DIR [benchmark options, e.g. --only classify --runs 50]
#
# The driver is the loader's choice: on the GPU machine set VK_DRIVER_FILES (and VK_ICD_FILENAMES for older loaders)
# to the NVIDIA ICD json first; nothing here overrides them. EXECGRAPH_BENCH_SMOKE=1 selects the small sizes.
# The exit status is the benchmark's: non-zero when any workload's results were wrong (the JSON is written anyway).
set -euo pipefail

if [[ $# -lt 2 ]]; then
    sed -n '2,12p' "$0" >&2
    exit 2
fi
build_dir=$(cd "$1" && pwd)
out_dir=$2
shift 2
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

bench="$build_dir/bench/execgraph_workload_bench"
if [[ ! -x $bench || ! -f $build_dir/layer/VkLayer_execgraph_shader_enqueue.json ]]; then
    echo "$build_dir has no bench/execgraph_workload_bench or layer/VkLayer_execgraph_shader_enqueue.json" >&2
    exit 2
fi

export VK_ADD_LAYER_PATH="$build_dir/layer${VK_ADD_LAYER_PATH:+:$VK_ADD_LAYER_PATH}"
export NODEVICE_SELECT=1  # Mesa's device-select layer would otherwise reorder devices
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${EXECGRAPH_BENCH_COMMIT:-} ]]; then
    EXECGRAPH_BENCH_COMMIT=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
fi
export EXECGRAPH_BENCH_COMMIT

echo "driver files: ${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-(loader default)}}; layer: $build_dir/layer; commit: $EXECGRAPH_BENCH_COMMIT"
status=0
"$bench" --json "$out_dir/workloads.json" "$@" 2>&1 | tee "$out_dir/workloads.txt" || status=${PIPESTATUS[0]}
exit "$status"
