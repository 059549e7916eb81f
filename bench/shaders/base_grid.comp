#version 450
// Baseline of workload 5: the grid of record pass.in_queue, dispatched indirectly with the record's own workgroup count.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint r = pass.in_queue;
    uint id = lists[3u * r + 1u], first = lists[3u * r + 2u];
    uint index = first + 64u * gl_WorkGroupID.x + gl_LocalInvocationIndex;
    uav[index] = HashItem(index) ^ id;
}
