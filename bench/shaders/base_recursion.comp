#version 450
// Baseline of workload 4 and the binary tree: one level of the tree, one invocation per record {seed, depth, max_depth}
// (3 uints); a record has param0 + seed % param1 children.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint i = gl_GlobalInvocationID.x;
    bool has_record = i < queues[pass.in_queue].count;
    uint seed = 0u, depth = 0u, max_depth = 0u, children = 0u;
    if (has_record) {
        seed = lists[pass.in_offset + 3u * i];
        depth = lists[pass.in_offset + 3u * i + 1u];
        max_depth = lists[pass.in_offset + 3u * i + 2u];
        atomicAdd(uav[depth], 1u);
        atomicAdd(uav[32u + depth], seed);
        children = depth < max_depth ? pass.param0 + seed % pass.param1 : 0u;  // fan-out base and modulus
    }
    uint slot = AppendRecords(children);
    for (uint k = 0u; k < children; ++k) {
        uint out_index = pass.out_offset + 3u * (slot + k);
        lists[out_index] = ChildSeed(seed, k);
        lists[out_index + 1u] = depth + 1u;
        lists[out_index + 2u] = max_depth;
    }
}
