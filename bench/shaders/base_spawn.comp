#version 450
// Baseline of workloads 3 and 6: invocation i < count appends the record base + i to out_queue.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 256) in;
void main() {
    uint i = gl_GlobalInvocationID.x, base = pass.param0, count = pass.param1;
    bool has_record = i < count;
    uint slot = AppendRecords(has_record ? 1u : 0u);
    if (has_record) lists[pass.out_offset + slot] = base + i;
}
