#version 450
// Baseline of binary_tree_marks (bench/modules/binary_tree.spvasm): one level of the tree, one invocation per record
// {index, depth} (2 uints); the node adds one to UAV[index] and, below depth param0, appends children 2 * index + 1 and
// 2 * index + 2.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint index = 0u, depth = 0u, children = 0u;
    if (i < queues[pass.in_queue].count) {
        index = lists[pass.in_offset + 2u * i];
        depth = lists[pass.in_offset + 2u * i + 1u];
        atomicAdd(uav[index], 1u);
        children = depth < pass.param0 ? 2u : 0u;
    }
    uint slot = AppendRecords(children);
    for (uint k = 0u; k < children; ++k) {
        uint out_index = pass.out_offset + 2u * (slot + k);
        lists[out_index] = 2u * index + 1u + k;
        lists[out_index + 1u] = depth + 1u;
    }
}
