#!/usr/bin/env bash
# Runs on the GPU machine, from the folder scripts/gpu/stage.sh filled. Each GoogleTest case runs in its own process:
# one NVIDIA driver seen here stops loading after about 29 instance creations in one process.
#   bash run.sh tests [GTEST_FILTER]   end-to-end, GPU and scheduler (meta pass) tests
#   bash run.sh bench OUT_DIR [ARGS]   the workload benchmark, JSON into OUT_DIR
#   bash run.sh levels OUT_DIR [ARGS]  the same with level_timestamps: GPU time per level, OUT_DIR/levels.txt
#   bash run.sh recording OUT_DIR [ARGS]  host time to record single commands (plain driver), OUT_DIR/recording.json;
#                                         VK_INSTANCE_LAYERS=VK_LAYER_EXECGRAPH_shader_enqueue runs it through the layer
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export VK_ADD_LAYER_PATH=$here/layer:$here/validation
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export EXECGRAPH_SPIRV_CORPUS_DIR=$here/data/spirv_corpus EXECGRAPH_E2E_MODULES_DIR=$here/data/e2e_modules
export EXECGRAPH_AMD_FIXTURES_DIR=$here/data/amd
unset NODEVICE_SELECT
# The test binaries point the loader at lavapipe unless VK_DRIVER_FILES is set (tests/vulkan_support/vulkan_test_main.cpp),
# and the GPU machine has no lavapipe: without this every test fails at instance creation. The benchmarks take the
# loader's choice either way.
if [[ -z ${VK_DRIVER_FILES:-} ]]; then
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
               /etc/vulkan/icd.d/nvidia_icd.json; do
        [[ -f $icd ]] && { export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd; break; }
    done
fi
mode=${1:-tests}
case $mode in
tests)
    passed=0 failed=0 failures=()
    for binary in execgraph_e2e_tests execgraph_gpu_tests execgraph_scheduler_tests; do
        [[ -x $here/bin/$binary ]] || continue
        for test in $("$here/bin/$binary" --gtest_list_tests --gtest_filter="${2:-*}" |
                      awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}'); do
            # A test that hangs the GPU counts as failed after two minutes instead of stopping the whole run.
            if timeout 120 "$here/bin/$binary" --gtest_filter="$test" >"/tmp/gpu_test.log" 2>&1; then
                passed=$((passed + 1))
            else
                failed=$((failed + 1)) failures+=("$test")
                tail -30 /tmp/gpu_test.log
            fi
        done
    done
    for test in "${failures[@]}"; do echo "FAILED: $test"; done
    echo "$passed passed, $failed failed"
    ((failed == 0))
    ;;
bench)
    # Each workload runs in its own process: run together in one process, the later workloads were measured up to 3.5x
    # slower on an H100 (baselines too; docs/performance.md), which is not understood yet. The JSON files are merged.
    out=${2:?bench needs an output folder}
    shift 2
    mkdir -p "$out"  # the merge below writes bench.json there (a missing folder lost a whole suite's JSON once)
    # An idle GPU starts at low clocks (345 MHz seen on an H100): a throwaway run of the heaviest workload first.
    "$here/bin/execgraph_workload_bench" --only thread_launch --runs 5 >/dev/null 2>&1
    parts=$(mktemp -d)  # one JSON per workload, merged into $out/bench.json
    status=0
    for workload in overhead_single overhead_chain32 classify_8 classify_64 classify_1024 thread_launch fan_out_tree \
                    recursion binary_tree dynamic_broadcast raster payload_throughput append_rate large_classify_8 \
                    large_classify_64 large_classify_1024 large_fan_out_tree large_dynamic_broadcast; do
        "$here/bin/execgraph_workload_bench" --only "$workload" --json "$parts/$workload.json" "$@" || status=1
    done
    python3 - "$out" "$parts" <<'MERGE'
import glob, json, os, sys
out, parts, merged, seen = sys.argv[1], sys.argv[2], None, set()
for path in sorted(glob.glob(os.path.join(parts, "*.json")), key=os.path.getmtime):
    data = json.load(open(path))
    workloads = data["workloads"]
    if merged is None:  # the first file's metadata; its workloads are added below like every other file's
        merged = dict(data, workloads=[], method="each workload in its own process (scripts/gpu/run.sh)")
    for workload in workloads:
        if workload["name"] not in seen:  # --only matches by prefix: overhead_chain32 also runs overhead_chain32x8
            seen.add(workload["name"])
            merged["workloads"].append(workload)
json.dump(merged, open(os.path.join(out, "bench.json"), "w"), indent=1)
MERGE
    exit $status
    ;;
levels)
    # The workload suite with the layer's level_timestamps setting: each workload's statistics lines (one per graph
    # dispatch, with the GPU time of its setup, levels and level passes) go to OUT_DIR/levels/<workload>.jsonl, and
    # OUT_DIR/levels.txt has their medians (scripts/level-times.py). The timestamps wait for the work before them, so
    # these totals run a little longer than the suite's.
    out=${2:?levels needs an output folder}
    shift 2
    mkdir -p "$out/levels"
    "$here/bin/execgraph_workload_bench" --only thread_launch --runs 5 >/dev/null 2>&1
    status=0
    for workload in ${LEVEL_WORKLOADS:-overhead_single overhead_chain32 classify_8 classify_64 classify_1024 thread_launch \
                    fan_out_tree recursion binary_tree dynamic_broadcast raster payload_throughput append_rate large_classify_8 \
                    large_classify_64 large_classify_1024 large_fan_out_tree large_dynamic_broadcast}; do
        VK_EXECGRAPH_SHADER_ENQUEUE_LEVEL_TIMESTAMPS=1 VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS_FILE="$out/levels/$workload.jsonl" \
            "$here/bin/execgraph_workload_bench" --only "$workload" "$@" || status=1
    done
    python3 "$here/level-times.py" "$out"/levels/*.jsonl >"$out/levels.txt" || status=1
    exit $status
    ;;
recording)
    out=${2:?recording needs an output folder}
    shift 2
    mkdir -p "$out"
    "$here/bin/execgraph_recording_bench" --json "$out/recording.json" "$@"
    ;;
*)
    echo "unknown mode $mode (tests, bench, levels, recording)" >&2
    exit 2
    ;;
esac
