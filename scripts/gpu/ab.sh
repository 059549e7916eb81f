#!/usr/bin/env bash
# Compares layer builds on the GPU machine: each workload runs with each layer folder in turn (one process each, as
# run.sh bench does), ROUNDS times, and every result is appended as one JSON line, with `mode` (the folder) and `round`,
# to OUT_DIR/ab.jsonl. Interleaving the builds per workload is what makes a few-percent difference readable: the machines
# lent differ by several percent from one call to the next (docs/performance.md, "Measuring"). Stage the builds with
#   bash scripts/gpu/stage.sh BUILD gpu; scripts/gpu/add-layer.sh OTHER_BUILD gpu/layer_other
# and summarise with scripts/gpu/ab-compare.py OUT_DIR/ab.jsonl layer layer_other.
#   bash ab.sh OUT_DIR ROUNDS "LAYER_FOLDER..." [WORKLOAD...]   (default: every workload of run.sh bench)
# A layer folder may carry settings for its runs as FOLDER+VAR=VALUE[+VAR=VALUE...] (the mode is the whole token), to
# compare settings of one build: "layer layer+VK_EXECGRAPH_SHADER_ENQUEUE_ALLOCATION_RESERVATION=subgroup".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset NODEVICE_SELECT
out=${1:?usage: ab.sh OUT_DIR ROUNDS "LAYER_FOLDER..." [WORKLOAD...]} rounds=${2:?rounds} layers=${3:?layer folders}
shift 3
workloads=("$@")
if ((${#workloads[@]} == 0)); then
    workloads=(overhead_single overhead_chain32 classify_8 classify_64 classify_1024 thread_launch fan_out_tree recursion
               binary_tree dynamic_broadcast raster payload_throughput append_rate large_classify_8 large_classify_64
               large_classify_1024 large_fan_out_tree large_dynamic_broadcast)
fi
mkdir -p "$out"
for layer in $layers; do
    [[ -f $here/${layer%%+*}/VkLayer_execgraph_shader_enqueue.json ]] || { echo "no layer manifest in $here/${layer%%+*}" >&2; exit 2; }
done
# An idle GPU starts at low clocks: a throwaway run first (as run.sh bench).
first=${layers%% *}
first=${first%%+*}
VK_ADD_LAYER_PATH=$here/$first "$here/bin/execgraph_workload_bench" --only thread_launch --runs 5 >/dev/null 2>&1
status=0 scratch=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
    for workload in "${workloads[@]}"; do
        for layer in $layers; do
            settings=()
            [[ $layer == *+* ]] && IFS=+ read -ra settings <<<"${layer#*+}"
            if ! env "${settings[@]}" VK_ADD_LAYER_PATH=$here/${layer%%+*} timeout 120 "$here/bin/execgraph_workload_bench" --only "$workload" \
                    --json "$scratch/run.json" >"$scratch/run.log" 2>&1; then
                status=1
                echo "== $workload with $layer failed" | tee -a "$out/failures.log"
                tail -c 3000 "$scratch/run.log" >>"$out/failures.log"
            fi
            [[ -f $scratch/run.json ]] && python3 - "$scratch/run.json" "$layer" "$round" >>"$out/ab.jsonl" <<'LINES'
import json, sys
for workload in json.load(open(sys.argv[1]))["workloads"]:
    print(json.dumps(dict(workload, mode=sys.argv[2], round=int(sys.argv[3]))))
LINES
            rm -f "$scratch/run.json"
        done
    done
done
rm -rf "$scratch"
exit $status
