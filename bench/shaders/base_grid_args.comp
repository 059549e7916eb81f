#version 450
// Baseline of workload 5: the pass that turns records {grid, id, first} (lists[3 * r]) into one indirect dispatch
// command per record, queues[r] = {0, grid, 1, 1}, as a GPU-driven engine prepares a multi-dispatch.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 64) in;
void main() {
    uint r = gl_GlobalInvocationID.x;
    if (r < pass.param1) queues[r] = Queue(0u, lists[3u * r], 1u, 1u);
}
