#version 450
// Baseline of workload 2: the shading pass of one material (pass.in_queue), one workgroup per listed tile.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
void main() {
    uint width = pass.param0 & 0xFFFFu, height = pass.param0 >> 16, capacity = pass.param3, material = pass.in_queue;
    uint tile = lists[material * capacity + gl_WorkGroupID.x];
    uint x = (tile & 0xFFFFu) * 16u + gl_LocalInvocationID.x, y = (tile >> 16) * 16u + gl_LocalInvocationID.y;
    if (x < width && y < height) uav[y * width + x] = ShadePixel(x, y, material);
}
