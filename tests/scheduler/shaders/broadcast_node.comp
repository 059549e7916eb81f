// A hand-lowered dynamic-broadcast node, written against the runtime contract (docs/design.md, "Lowered node
// semantics") the way the SPIR-V lowering will emit it: it finds its record by binary search over first_workgroup,
// records which (record, workgroup) pairs ran, and its first workgroup of each record enqueues one record for the
// thread node `next_node` in the output half.
//
// Payload: { uint id; uint grid[3]; } with the grid at offset 4.
#version 460
#extension GL_GOOGLE_include_directive : require
#include "scratch_layout.glsl"

layout(local_size_x = 4) in;

layout(push_constant) uniform Params {
    uint64_t visits;      // application constants: uint visits[id * 512 + workgroup in record]
    uint self_node;
    uint next_node;
    uint64_t scratch;     // NodePushContext, at context_offset 16
    uint node_index;
    uint output_table_base;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Counters {
    uint c[];
};

shared uint s_dummy;

void main() {
    GraphHeader header = GraphHeader(pc.scratch);
    const uint h = header.input_half;
    Half input_half = HalfAt(pc.scratch, header, h);
    const uint linear = gl_WorkGroupID.y * kDispatchSplitWidth + gl_WorkGroupID.x;
    if (linear >= input_half.nodes[pc.self_node].workgroup_count) return;

    const uint base = input_half.nodes[pc.self_node].directory_base;
    const uint count = input_half.nodes[pc.self_node].record_count;
    Directory directory = DirectoryAt(pc.scratch, header, h);
    // Last entry whose first_workgroup <= linear.
    uint lo = 0u, hi = count;
    while (hi - lo > 1u) {
        const uint mid = (lo + hi) / 2u;
        if (directory.entries[base + mid].first_workgroup_or_node <= linear) lo = mid; else hi = mid;
    }
    const DirectoryEntry entry = directory.entries[base + lo];
    const uint local = linear - entry.first_workgroup_or_node;
    Words payload = Words(HeapAddress(pc.scratch, header, h) + entry.payload_offset);
    const uint id = payload.w[0];
    if (gl_LocalInvocationIndex == 0u) atomicAdd(Counters(pc.visits).c[id * 512u + local], 1u);

    if (local == 0u && gl_LocalInvocationIndex == 0u) {
        // OpAllocateNodePayloadsAMDX + OpEnqueueNodePayloadsAMDX, lowered: output half heap, list and node count.
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
        out_payload.w[1] = entry.finish_counter;  // the record's workgroups
        RecordsAt(pc.scratch, header, out_half_index).entries[slot] = RecordEntry(offset, 0u, pc.next_node, 0u);
        atomicAdd(output_half.nodes[pc.next_node].record_count, 1u);
    }
}
