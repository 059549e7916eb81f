#version 450
// Baseline of workloads 3 and 6: the last pass, one invocation per record.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= queues[pass.in_queue].count) return;
    uint value = lists[pass.in_offset + i];
    uav[value] = HashItem(value);
}
