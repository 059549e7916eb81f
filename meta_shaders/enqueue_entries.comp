// Entry pass of a graph dispatch (docs/design.md, "One graph dispatch", step 2).
//
// Reads a VkDispatchGraphCountInfoAMDX at a device address (the host-only dispatch commands stage theirs into scratch
// first, so all three commands share this path and vkCmdDispatchGraphIndirectCountAMDX never needs the CPU), and for
// every payload of every VkDispatchGraphInfoAMDX appends one record to half 0: payload bytes bump-allocated in the heap,
// a RecordEntry in the record list, and one more NodeState.record_count for the node.
//
// Work split: workgroups stride over the infos and the invocations of a workgroup stride over one info's payloads, so a
// fixed dispatch size handles any count that is only known on the device. Every drop (unknown node, full heap, full
// record list, uninitialized scratch) sets a status flag and is counted in dropped_records; nothing is lost silently.
#version 460
#extension GL_GOOGLE_include_directive : require
#include "level_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
    uint64_t scratch;     // scratch base address
    uint64_t count_info;  // VkDispatchGraphCountInfoAMDX, 4-byte aligned (executionGraphDispatchAddressAlignment)
    uint graph_tag;       // the graph the scratch must have been initialized for
} pc;

shared bool s_last;

void main() {
    GraphHeader header = GraphHeader(pc.scratch);
    // VUID-...-scratch-10194: scratch must hold this graph's initialization. If it does not, the node table is not
    // this graph's, so nothing may be enqueued; every record is reported instead.
    const bool initialized = ScratchInitializedFor(header, pc.graph_tag);
    const uint node_count = header.node_count;
    const uint record_capacity = header.record_capacity;
    const uint heap_capacity = header.heap_capacity;
    NodeTable table = NodeTable(pc.scratch + header.node_table_offset);
    Half half0 = HalfAt(pc.scratch, header, 0u);
    RecordList records = RecordsAt(pc.scratch, header, 0u);
    const uint64_t heap = HeapAddress(pc.scratch, header, 0u);

    // VkDispatchGraphCountInfoAMDX (facts 3.8): uint32 count, 4 bytes padding, uint64 infos, uint64 stride.
    Words count_info = Words(pc.count_info);
    const uint count = count_info.w[0];
    const uint64_t infos = LoadU64(count_info, 2u);
    const uint64_t info_stride = LoadU64(count_info, 4u);

    for (uint i = gl_WorkGroupID.x; i < count; i += gl_NumWorkGroups.x) {
        // VkDispatchGraphInfoAMDX (facts 3.7): uint32 nodeIndex, uint32 payloadCount, uint64 payloads, uint64 stride.
        Words info = Words(infos + uint64_t(i) * info_stride);
        const uint node = info.w[0];
        const uint payload_count = info.w[1];
        // Facts §12.3: only IsApiEntryAMDX nodes that do not share another's input may be dispatched from the API. The
        // scheduler dispatches just those at level 0, so a record for any other node would never run: it is dropped
        // and reported as an invalid index (the host-side commands reject such infos before recording).
        const bool dispatchable = initialized && node < node_count && table.infos[node].is_api_entry != 0u &&
                                  table.infos[node].shares_input_with == kInvalidNode;
        if (!dispatchable) {
            if (gl_LocalInvocationIndex == 0u) {
                // An index past the graph is charged to no node; uninitialized scratch and non-entry nodes to the entry's node.
                ReportDrop(pc.scratch, header, node, 0u, initialized ? kStatusInvalidNodeIndex : kStatusUninitialized, payload_count);
            }
            continue;
        }
        const uint64_t payloads = LoadU64(info, 2u);
        const uint64_t payload_stride = LoadU64(info, 4u);
        const uint record_stride = table.infos[node].record_stride;
        // Every record takes whole 16-byte units, as a lowered allocation's do: the lowered nodes access members at the
        // alignment a 16-byte aligned record start gives (RewritePayloadPointersPass), e.g. a uint4 in one access.
        const uint heap_bytes = (record_stride + 15u) & ~15u;
        for (uint p = gl_LocalInvocationIndex; p < payload_count; p += gl_WorkGroupSize.x) {
            // The heap is checked first so that a record that cannot get payload bytes never takes a list slot. Once a
            // counter is past its capacity it is not bumped further, which keeps the 32-bit counters from wrapping
            // around into valid offsets however many records are dropped.
            if (half0.heap_top > heap_capacity) {
                ReportDrop(pc.scratch, header, node, 0u, kStatusHeapOverflow, 1u);
                continue;
            }
            const uint offset = atomicAdd(half0.heap_top, heap_bytes);
            if (uint64_t(offset) + heap_bytes > uint64_t(heap_capacity)) {
                ReportDrop(pc.scratch, header, node, 0u, kStatusHeapOverflow, 1u);
                continue;
            }
            if (half0.record_count > record_capacity) {
                ReportDrop(pc.scratch, header, node, 0u, kStatusRecordListOverflow, 1u);
                continue;
            }
            const uint slot = atomicAdd(half0.record_count, 1u);
            if (slot >= record_capacity) {
                ReportDrop(pc.scratch, header, node, 0u, kStatusRecordListOverflow, 1u);
                continue;
            }
            // The first record of each block of level_pass_records_per_workgroup sizes level 0's level pass to cover
            // its block (HalfHeader::level_pass_workgroups).
            const uint per_workgroup = max(header.level_pass_records_per_workgroup, 1u);
            if (slot % per_workgroup == 0u) atomicMax(half0.level_pass_workgroups, min(slot / per_workgroup + 1u, kDispatchSplitWidth));
            Words source = Words(payloads + uint64_t(p) * payload_stride);
            Words destination = Words(heap + offset);
            for (uint word = 0u; word < record_stride / 4u; ++word) destination.w[word] = source.w[word];
            // Entry records start a chain: recursion depth 0.
            StoreRecordEntry(records, slot, RecordEntry(offset, 0u, node, 0u));
            atomicAdd(half0.nodes[node].record_count, 1u);
        }
    }

    // A direct level 0 (docs/design.md, "Direct levels": its records can only be one node's) has no level pass: the last
    // workgroup of this pass prepares it. The condition is a header value, uniform across the workgroup.
    const uint consumer = header.direct_level_consumer[0];
    if (consumer >= node_count) return;
    const bool alone = gl_NumWorkGroups.x == 1u;
    FenceBeforeCount(alone);
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
        s_last = alone || atomicAdd(half0.level_pass_done, 1u) == gl_NumWorkGroups.x - 1u;
    }
    barrier();
    if (!s_last) return;
    if (gl_LocalInvocationIndex == 0u) {
        if (!alone) memoryBarrierBuffer();
        PrepareDirectLevel(pc.scratch, header, table, half0, 0u, consumer, 0u);
        half0.level_pass_done = 0u;  // every other workgroup has counted; level 0's nodes count here next
    }
    // A direct level 0 that is the only level, without a finish pass: its nodes have no outputs, so with its statistics
    // written the report is final (as in level.comp).
    if (header.report_slot != 0ul && header.report_level == 0u) {
        WriteReport(pc.scratch, header, header.report_slot, header.report_serial, header.report_stats,
                    gl_WorkGroupSize.x);
    }
}
