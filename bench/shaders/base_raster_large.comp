#version 450
// Baseline of workload 7: one 8x8 workgroup per tile of a large triangle (work items {large slot, tile}).
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 8, local_size_y = 8) in;
void main() {
    uint item = gl_WorkGroupID.y * 65535u + gl_WorkGroupID.x;
    if (item >= queues[2].count) return;
    uint base = pass.param3 + kTriangleWords * lists[pass.in_offset + 2u * item];
    uint tile = lists[pass.in_offset + 2u * item + 1u], tiles_x = lists[base + 1u];
    uint x = lists[base + 3u] + 8u * (tile % tiles_x) + gl_LocalInvocationID.x;
    uint y = lists[base + 4u] + 8u * (tile / tiles_x) + gl_LocalInvocationID.y;
    if (x <= lists[base + 5u] && y <= lists[base + 6u]) ShadeTrianglePixel(base, x, y);
}
