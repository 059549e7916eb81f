#version 450
// Baseline of workload 7: triangle setup and binning. Small triangles go to queue 0 (lists from pass.out_offset),
// large ones to queue 1 (lists from pass.param3) and each of their 8x8 tiles to queue 2 as {large slot, tile}
// (lists from pass.in_offset), so that the large-triangle pass runs one workgroup per tile, as the graph does.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint i = gl_GlobalInvocationID.x, count = pass.param0, width = pass.param1 & 0xFFFFu, height = pass.param1 >> 16;
    bool has_triangle = i < count;
    Triangle t;
    bool small = true;
    if (has_triangle) {
        t = SetUpTriangle(i, width, height);
        small = IsSmallTriangle(t);
    }
    uint small_slot = AppendRecordsTo(0u, has_triangle && small ? 1u : 0u, 64u);
    uint large_slot = AppendRecordsTo(1u, has_triangle && !small ? 1u : 0u, 1u);
    uint tiles = has_triangle && !small ? t.words[0] : 0u;
    uint tile_slot = AppendWorkgroupItems(2u, tiles);
    if (!has_triangle) return;
    uint base = small ? pass.out_offset + kTriangleWords * small_slot : pass.param3 + kTriangleWords * large_slot;
    for (uint w = 0u; w < kTriangleWords; ++w) lists[base + w] = t.words[w];
    for (uint tile = 0u; tile < tiles; ++tile) {
        lists[pass.in_offset + 2u * (tile_slot + tile)] = large_slot;
        lists[pass.in_offset + 2u * (tile_slot + tile) + 1u] = tile;
    }
}
