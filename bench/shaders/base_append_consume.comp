#version 450
// Baseline of append_rate, pass 2 (one indirect dispatch per bin, bin = in_queue): one invocation per record adds its
// value and whether its bin word names this bin, as bench/modules/append_consume.spvasm does (subgroup-reduced).
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(set = 0, binding = 1) buffer AppendLists { uvec2 append_records[]; };  // `lists` as 8-byte records
layout(local_size_x = 64) in;
void main() {
    uint i = gl_GlobalInvocationID.x, bin = pass.in_queue;
    if (i >= queues[bin].count) return;
    uvec2 record = append_records[bin * pass.param3 + i];
    uint sum = subgroupAdd(record.x);
    uint matching = subgroupAdd(record.y == bin ? 1u : 0u);
    if (subgroupElect()) {
        atomicAdd(uav[2u * bin], sum);
        atomicAdd(uav[2u * bin + 1u], matching);
    }
}
