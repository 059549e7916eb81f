// A hand-lowered thread-launch node (batch of 32 records per workgroup) that recurses into itself: each record it runs
// at recursion depth d < max_depth enqueues a copy at depth d + 1. It counts every (id, depth) it sees.
//
// Payload: { uint id; uint workgroups; }.
#version 460
#extension GL_GOOGLE_include_directive : require
#include "scratch_layout.glsl"

layout(local_size_x = 32) in;

layout(push_constant) uniform Params {
    uint64_t seen;        // application constants: uint seen[id * 4 + depth], then uint workgroups[id] at +16384 words
    uint self_node;
    uint max_depth;
    uint64_t scratch;     // NodePushContext, at context_offset 16
    uint node_index;
    uint output_table_base;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Counters {
    uint c[];
};

void main() {
    GraphHeader header = GraphHeader(pc.scratch);
    const uint h = header.input_half;
    Half input_half = HalfAt(pc.scratch, header, h);
    const uint linear = gl_WorkGroupID.y * kDispatchSplitWidth + gl_WorkGroupID.x;
    const uint r = linear * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
    if (linear >= input_half.nodes[pc.self_node].workgroup_count || r >= input_half.nodes[pc.self_node].record_count) return;

    // Directory indices wrap in 32 bits, as the lowered nodes' byte offsets do: a sole consumer's directory_base points
    // back at the record list (level.comp, SoleConsumer). As an array index the entry's address would be computed in 64
    // bits without wrapping (on NVIDIA: a fault and a hang), so the byte offset is formed in 32 bits first.
    const uint entry_index = input_half.nodes[pc.self_node].directory_base + r;
    const uint entry_offset = HalfDirectoryOffset(header, h) + entry_index * kDirectoryEntrySize;
    const DirectoryEntry entry = Directory(pc.scratch + entry_offset).entries[0];
    Words payload = Words(HeapAddress(pc.scratch, header, h) + entry.payload_offset);
    const uint id = payload.w[0];
    Counters counters = Counters(pc.seen);
    atomicAdd(counters.c[id * 4u + min(entry.recursion_depth, 3u)], 1u);
    counters.c[16384u + id] = payload.w[1];

    if (entry.recursion_depth < pc.max_depth) {
        const uint out_half_index = 1u - h;
        Half output_half = HalfAt(pc.scratch, header, out_half_index);
        const uint offset = atomicAdd(output_half.heap_top, 8u);
        if (offset + 8u > header.heap_capacity) {
            ReportDrop(pc.scratch, header, pc.self_node, header.level, kStatusHeapOverflow, 1u);
            return;
        }
        const uint slot = atomicAdd(output_half.record_count, 1u);
        if (slot >= header.record_capacity) {
            ReportDrop(pc.scratch, header, pc.self_node, header.level, kStatusRecordListOverflow, 1u);
            return;
        }
        Words out_payload = Words(HeapAddress(pc.scratch, header, out_half_index) + offset);
        out_payload.w[0] = id;
        out_payload.w[1] = payload.w[1];
        RecordsAt(pc.scratch, header, out_half_index).entries[slot] =
            RecordEntry(offset, entry.recursion_depth + 1u, pc.self_node, 0u);
        atomicAdd(output_half.nodes[pc.self_node].record_count, 1u);
    }
}
