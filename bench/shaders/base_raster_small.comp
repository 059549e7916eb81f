#version 450
// Baseline of workload 7: one invocation rasterises a whole small triangle (bounding box of at most 256 pixels).
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= queues[0].count) return;
    uint base = pass.out_offset + kTriangleWords * i;
    uint min_x = lists[base + 3u], min_y = lists[base + 4u], box_width = lists[base + 5u] - min_x + 1u;
    uint pixels = box_width * (lists[base + 6u] - min_y + 1u);
    for (uint p = 0u; p < pixels; ++p) ShadeTrianglePixel(base, min_x + p % box_width, min_y + p / box_width);
}
