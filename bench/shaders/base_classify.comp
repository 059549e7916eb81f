#version 450
// Baseline of workload 2: classify pass. One workgroup per 16x16 tile appends the tile to its material's list
// (lists[material * capacity + slot], x | y << 16) and counts the material's shading workgroups in queues[material].
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
void main() {
    if (gl_LocalInvocationIndex != 0u) return;
    uint materials = pass.param1, capacity = pass.param3;
    uint material = TileMaterialHash(gl_WorkGroupID.x, gl_WorkGroupID.y) % materials;
    uint slot = atomicAdd(queues[material].count, 1u);
    atomicMax(queues[material].workgroups, slot + 1u);
    lists[material * capacity + slot] = gl_WorkGroupID.x | (gl_WorkGroupID.y << 16);
}
