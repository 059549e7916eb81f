#version 450
// Baseline of workload 1: one node of the chain as a plain compute pass. The record of (level, chain) is in
// lists[2 * (level * width + chain)]; the pass writes the next level's record and indirect arguments itself.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 1) in;
void main() {
    uint width = pass.param0, levels = pass.param1, level = pass.in_queue, chain = pass.out_queue;
    uint index = level * width + chain;
    uint record_chain = lists[2u * index], record_level = lists[2u * index + 1u];
    uint slot = record_level * width + record_chain;
    uav[slot] = slot + 1u;
    if (record_level + 1u < levels) {
        uint next = index + width;
        lists[2u * next] = record_chain;
        lists[2u * next + 1u] = record_level + 1u;
        queues[next] = Queue(1u, 1u, 1u, 1u);
    }
}
