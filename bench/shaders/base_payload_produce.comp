#version 450
// Baseline of payload_throughput, pass 1: invocation i < param1 appends its 64-byte record (word k = HashItem(i) ^
// (k * 0x9E3779B9), as bench/modules/payload_produce.spvasm writes it) to out_queue's list.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(set = 0, binding = 1) buffer PayloadRecords { uvec4 payload_records[]; };  // `lists` as 16-byte words
layout(local_size_x = 256) in;
void main() {
    uint i = gl_GlobalInvocationID.x;
    bool has_record = i < pass.param1;
    uint slot = AppendRecords(has_record ? 1u : 0u);
    if (!has_record) return;
    uvec4 h = uvec4(HashItem(i));
    uint first = pass.out_offset / 4u + slot * 4u;
    for (uint j = 0u; j < 4u; ++j) payload_records[first + j] = h ^ PayloadSalt(j);
}
