#!/usr/bin/env bash
# Copies what a GPU machine needs to run the layer's tests and benchmarks into one folder (default: gpu/, ignored by
# git): the layer and its manifest, stripped test and benchmark binaries, the SPIR-V text the tests assemble, the AMD
# fixtures and, because the GPU image has no Vulkan SDK, Debian's validation layer. The GPU machine must be x86-64
# with a Vulkan loader; scripts/gpu/run.sh runs everything there.
#   bash scripts/gpu/stage.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
out=${2:-$root/gpu}
rm -rf "$out"
mkdir -p "$out/bin" "$out/layer" "$out/validation" "$out/data" "$out/lib"

strip_copy() { objcopy --strip-debug "$1" "$2"; }
strip_copy "$build/layer/libVkLayer_execgraph_shader_enqueue.so" "$out/layer/libVkLayer_execgraph_shader_enqueue.so"
cp "$build/layer/VkLayer_execgraph_shader_enqueue.json" "$out/layer/"
for binary in tests/e2e/execgraph_e2e_tests tests/gpu/execgraph_gpu_tests tests/scheduler/execgraph_scheduler_tests \
              examples/tile_shading/execgraph_tile_shading \
              bench/execgraph_graph_creation_bench bench/execgraph_workload_bench bench/execgraph_recording_bench \
              bench/execgraph_pipeline_stats bench/execgraph_barrier_floor_bench; do
    [[ -x $build/$binary ]] && strip_copy "$build/$binary" "$out/bin/$(basename "$binary")"
done
# Shared libraries of Debian's that the GPU image lacks: SPIRV-Cross (the layer renders GLSL dumps with it) and Google
# Benchmark (the graph creation benchmark).
for binary in "$build/layer/libVkLayer_execgraph_shader_enqueue.so" "$out"/bin/*; do
    for library in $(ldd "$binary" | awk '/spirv-cross|libbenchmark/ {print $3}'); do
        cp -L "$library" "$out/lib/"
    done
done
cp -r "$root/tests/spirv_corpus" "$out/data/spirv_corpus"
cp -r "$root/tests/e2e/modules" "$out/data/e2e_modules"
[[ -d $root/../shared/fixtures/amd-vulkan-samples ]] && cp -r "$root/../shared/fixtures/amd-vulkan-samples" "$out/data/amd"
validation=/usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so
if [[ -f $validation ]]; then
    strip_copy "$validation" "$out/validation/libVkLayer_khronos_validation.so"
    sed 's|"library_path": *"[^"]*"|"library_path": "./libVkLayer_khronos_validation.so"|' \
        /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >"$out/validation/VkLayer_khronos_validation.json"
fi
cp "$root/scripts/gpu/run.sh" "$root/scripts/gpu/ab.sh" "$root/scripts/level-times.py" "$out/"
du -sh "$out"
