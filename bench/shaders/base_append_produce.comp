#version 450
// Baseline of append_rate, pass 1: invocation i < param1 appends {HashItem(i), bin} to the list of bin = HashItem(i) %
// kAppendBins (lists[bin * param3 ..], 8 bytes a record). The workgroup counts its records per bin in shared memory,
// then one invocation per bin reserves the bin's range with one atomic and raises its pass-2 workgroup count.
#extension GL_GOOGLE_include_directive : require
#include "bench_common.glsl"
layout(set = 0, binding = 1) buffer AppendLists { uvec2 append_records[]; };  // `lists` as 8-byte records
layout(local_size_x = 256) in;
shared uint bin_count[kAppendBins];
shared uint bin_first[kAppendBins];
void main() {
    uint i = gl_GlobalInvocationID.x, t = gl_LocalInvocationIndex;
    if (t < kAppendBins) bin_count[t] = 0u;
    barrier();
    bool has_record = i < pass.param1;
    uint h = HashItem(i), bin = h % kAppendBins, rank = 0u;
    if (has_record) rank = atomicAdd(bin_count[bin], 1u);
    barrier();
    if (t < kAppendBins && bin_count[t] != 0u) {
        uint first = atomicAdd(queues[t].count, bin_count[t]);
        atomicMax(queues[t].workgroups, (first + bin_count[t] + pass.consumer_group_size - 1u) / pass.consumer_group_size);
        bin_first[t] = first;
    }
    barrier();
    if (has_record) append_records[bin * pass.param3 + bin_first[bin] + rank] = uvec2(h, bin);
}
