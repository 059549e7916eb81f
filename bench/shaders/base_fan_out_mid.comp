#version 450
// Baseline of workload 3: the middle pass, 32 records per workgroup, four output records each.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(local_size_x = 32) in;
void main() {
    uint i = gl_GlobalInvocationID.x;
    bool has_record = i < queues[pass.in_queue].count;
    uint slot = AppendRecords(has_record ? 4u : 0u);
    if (has_record) {
        uint value = lists[pass.in_offset + i];
        for (uint k = 0u; k < 4u; ++k) lists[pass.out_offset + slot + k] = 4u * value + k;
    }
}
