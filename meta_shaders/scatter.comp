// Scatter pass of one level with the split passes (docs/design.md, "One graph dispatch", step 3): sorts the input
// half's record list into the directory by node. One invocation per record entry, grid-stride.
//
// One 64-bit atomic on NodeState.scatter_cursor (high word: records, low word: workgroups) hands out the record's
// directory slot and its first linear workgroup together, so within a node first_workgroup ascends with the slot; a
// dynamic broadcast node finds its record by binary search over that order (design.md, "Lowered node semantics"). The
// other nodes' entries name their node instead (FirstWorkgroupOrNode).
//
// source_node == kInvalidNode: every entry goes to its own node. Otherwise only entries of source_node are scattered,
// into consumer_node's directory range: the pass for a node that SharesInputWithAMDX source_node.
#version 460
#extension GL_GOOGLE_include_directive : require
#include "level_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
    uint64_t scratch;
    uint source_node;
    uint consumer_node;
} pc;

void main() {
    GraphHeader header = GraphHeader(pc.scratch);
    const uint h = header.input_half;
    const uint node_count = header.node_count;
    Half input_half = HalfAt(pc.scratch, header, h);
    RecordList records = RecordsAt(pc.scratch, header, h);
    Directory directory = DirectoryAt(pc.scratch, header, h);
    const uint64_t heap = HeapAddress(pc.scratch, header, h);
    NodeTable table = NodeTable(pc.scratch + header.node_table_offset);
    const uint count = min(input_half.record_count, header.record_capacity);
    const uint invocations = gl_NumWorkGroups.x * gl_WorkGroupSize.x;

    for (uint e = gl_GlobalInvocationID.x; e < count; e += invocations) {
        const RecordEntry entry = records.entries[e];
        uint consumer = entry.node;
        if (pc.source_node != kInvalidNode) {
            if (entry.node != pc.source_node) continue;
            consumer = pc.consumer_node;
        }
        if (consumer >= node_count) {
            // Producers validate node indices before appending; this guards NodeState against a corrupt list.
            ReportDrop(pc.scratch, header, kInvalidNode, header.level, kStatusInvalidNodeIndex, 1u);
            continue;
        }
        const uint workgroups = RecordWorkgroups(pc.scratch, header, table, consumer, header.level, heap + entry.payload_offset);
        const uint64_t old = atomicAdd(input_half.nodes[consumer].scatter_cursor, (1ul << 32) | uint64_t(workgroups));
        const uint slot = uint(old >> 32);
        // Past the count prepare kept: already counted as dropped there.
        if (slot >= input_half.nodes[consumer].record_count) continue;
        StoreDirectoryEntry(directory, input_half.nodes[consumer].directory_base + slot,
                            DirectoryEntry(entry.payload_offset, entry.recursion_depth, FirstWorkgroupOrNode(table, consumer, uint(old)), workgroups));
    }
}
