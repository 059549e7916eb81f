#version 450
// Baseline of payload_throughput, pass 2: one invocation per record reads its 64 bytes and adds the checksum as
// bench/modules/payload_consume.spvasm does (subgroup-reduced, into the slot pair the elected lane's first word picks).
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(set = 0, binding = 1) buffer PayloadRecords { uvec4 payload_records[]; };  // `lists` as 16-byte words
layout(local_size_x = 64) in;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= queues[pass.in_queue].count) return;
    uint first = pass.in_offset / 4u + i * 4u;
    uvec4 words[4];
    uvec4 s = uvec4(0u);
    for (uint j = 0u; j < 4u; ++j) {
        words[j] = payload_records[first + j];
        s += words[j] * PayloadWeight(j);
    }
    uint sum = subgroupAdd(s.x + s.y + s.z + s.w);
    uint records = subgroupAdd(1u);
    if (subgroupElect()) {
        uint slot = words[0].x & 255u;
        atomicAdd(uav[2u * slot], sum);
        atomicAdd(uav[2u * slot + 1u], records);
    }
}
