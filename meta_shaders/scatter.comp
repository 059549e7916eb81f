// Scatter pass of one level (docs/design.md, "One graph dispatch", step 3.2): sorts the input half's record list into
// the directory by node. One invocation per record entry, grid-stride.
//
// One 64-bit atomic on NodeState.scatter_cursor (high word: records, low word: workgroups) hands out the record's
// directory slot and its first linear workgroup together, so within a node first_workgroup ascends with the slot; the
// lowered node finds its record by binary search over that order (design.md, "Lowered node semantics").
//
// source_node == kInvalidNode: every entry goes to its own node. Otherwise only entries of source_node are scattered,
// into consumer_node's directory range: the pass for a node that SharesInputWithAMDX source_node.
#version 460
#extension GL_GOOGLE_include_directive : require
#include "scratch_layout.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
    uint64_t scratch;
    uint source_node;
    uint consumer_node;
} pc;

uint GridComponent(Words payload, uint grid_offset, uint bits, uint i) {
    if (bits == 16u) {
        const uint byte_offset = grid_offset + 2u * i;
        return (payload.w[byte_offset >> 2u] >> ((byte_offset & 2u) * 8u)) & 0xFFFFu;
    }
    return payload.w[(grid_offset >> 2u) + i];
}

// Workgroups one record launches on `node`: 0 for coalescing and thread nodes, whose workgroups the args pass derives
// from the record count.
uint RecordWorkgroups(GraphHeader header, NodeTable table, uint node, uint64_t payload_address) {
    const uint level = header.level;
    const uint launch = table.infos[node].launch;
    if (launch == kLaunchBroadcastStatic) {
        // Validated at pipeline creation against maxExecutionGraphWorkgroups.
        return table.infos[node].static_grid[0] * table.infos[node].static_grid[1] * table.infos[node].static_grid[2];
    }
    if (launch != kLaunchBroadcastDynamic) return 0u;
    Words payload = Words(payload_address);
    const uint components = table.infos[node].grid_components;
    const uint grid_offset = table.infos[node].grid_offset;
    const uint bits = table.infos[node].grid_component_bits;
    uint64_t product = 1ul;
    bool clamped = false;
    for (uint i = 0u; i < 3u; ++i) {
        // A scalar or 2-vector grid member leaves the remaining dimensions 1 (facts 12.5).
        uint value = i < components ? GridComponent(payload, grid_offset, bits, i) : 1u;
        // static_grid holds MaxNumWorkgroupsAMDX for dynamic nodes; 0 means the node declared none, so the advertised
        // maxExecutionGraphWorkgroupCount applies (VUID-...-maxComputeWorkGroupCount-09186 makes larger grids invalid;
        // clamping keeps the dispatch inside what the lowered node can address).
        const uint maximum = table.infos[node].static_grid[i] == 0u ? kMaxGraphWorkgroupCount : table.infos[node].static_grid[i];
        if (value > maximum) {
            value = maximum;
            clamped = true;
        }
        product *= uint64_t(value);
    }
    if (clamped) ReportDrop(pc.scratch, header, node, level, kStatusGridClamped, 0u);
    if (product > uint64_t(kMaxGraphWorkgroups)) {
        // Over maxExecutionGraphWorkgroups even after clamping: the record is dropped (0 workgroups). A zero-workgroup
        // entry is harmless: the lowered node's search takes the last entry whose first_workgroup <= its workgroup.
        ReportDrop(pc.scratch, header, node, level, kStatusGridClamped, 1u);
        return 0u;
    }
    return uint(product);
}

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
        const uint workgroups = RecordWorkgroups(header, table, consumer, heap + entry.payload_offset);
        const uint64_t old = atomicAdd(input_half.nodes[consumer].scatter_cursor, (1ul << 32) | uint64_t(workgroups));
        const uint slot = uint(old >> 32);
        // Past the count prepare kept: already counted as dropped there.
        if (slot >= input_half.nodes[consumer].record_count) continue;
        directory.entries[input_half.nodes[consumer].directory_base + slot] =
            DirectoryEntry(entry.payload_offset, entry.recursion_depth, uint(old), workgroups);
    }
}
