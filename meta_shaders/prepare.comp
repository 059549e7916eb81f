// Prepare pass of one level with the split passes (docs/design.md, "One graph dispatch", step 3). One workgroup.
//
// `written_half` is the half the previous step (entry pass or the previous level's nodes) wrote. It becomes the input
// half: NodeState.directory_base is the exclusive prefix sum of the record counts in graph-node order, so the
// directory is sorted by node, and the scatter/args fields are zeroed for the scatter pass. The other half is cleared to
// receive this level's outputs.
//
// Nodes with SharesInputWithAMDX consume their source node's records too: their count is their own plus the source's,
// and they get their own directory range (their grid, hence first_workgroup, can differ from the source's), which the
// scheduler fills with one extra scatter dispatch per sharing node.
#version 460
#extension GL_GOOGLE_include_directive : require
#include "scratch_layout.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Params {
    uint64_t scratch;
    uint written_half;  // 0 or 1
    uint level;         // GraphHeader.level for the nodes of this level
} pc;

shared uint s_scan[256];

void main() {
    GraphHeader header = GraphHeader(pc.scratch);
    const uint t = gl_LocalInvocationIndex;
    const uint h = pc.written_half;
    const uint node_count = header.node_count;
    const uint capacity = header.record_capacity;
    Half input_half = HalfAt(pc.scratch, header, h);
    Half output_half = HalfAt(pc.scratch, header, 1u - h);

    if (t == 0u) {
        atomicMax(header.heap_high_water, input_half.heap_top);
        atomicMax(header.record_high_water, input_half.record_count);
    }

    NodeTable table = NodeTable(pc.scratch + header.node_table_offset);
    NodeStatsTable stats = NodeStatsAt(pc.scratch, header);
    // Phase 1: each node's input count. workgroup_count is free until the args pass, so it holds the count between the
    // phases. Node n is handled by the same invocation in both phases, so no cross-invocation buffer visibility is needed,
    // and sources' record_count is not written until phase 2.
    for (uint n = t; n < node_count; n += 256u) {
        uint count = input_half.nodes[n].record_count;
        const uint source = table.infos[n].shares_input_with;
        if (source < node_count && source != n) count += input_half.nodes[source].record_count;
        input_half.nodes[n].workgroup_count = count;
    }

    // Phase 2: exclusive prefix sum, 256 nodes per chunk (Hillis-Steele in shared memory).
    uint running = 0u;
    for (uint chunk = 0u; chunk < node_count; chunk += 256u) {
        const uint n = chunk + t;
        const uint count = n < node_count ? input_half.nodes[n].workgroup_count : 0u;
        s_scan[t] = count;
        barrier();
        for (uint d = 1u; d < 256u; d <<= 1u) {
            const uint addend = t >= d ? s_scan[t - d] : 0u;
            barrier();
            s_scan[t] += addend;
            barrier();
        }
        const uint inclusive = s_scan[t];
        const uint chunk_total = s_scan[255];
        barrier();  // s_scan is rewritten by the next chunk
        if (n < node_count) {
            // Sharing nodes can need more directory entries than the record list holds; the excess is dropped here
            // (and scatter skips slots past the kept count) so that no node writes outside its directory range.
            const uint base = running + (inclusive - count);
            const uint kept = base >= capacity ? 0u : min(count, capacity - base);
            if (kept < count) ReportDrop(pc.scratch, header, n, pc.level, kStatusRecordListOverflow, count - kept);
            stats.stats[n].records += kept;  // node n belongs to this invocation alone
            input_half.nodes[n].record_count = kept;
            input_half.nodes[n].directory_base = min(base, capacity);
            input_half.nodes[n].workgroup_count = 0u;
            input_half.nodes[n].dispatch[0] = 0u;
            input_half.nodes[n].dispatch[1] = 0u;
            input_half.nodes[n].dispatch[2] = 0u;
            input_half.nodes[n].scatter_cursor = 0ul;
        }
        running += chunk_total;
    }

    // The other half receives this level's outputs.
    for (uint n = t; n < node_count; n += 256u) output_half.nodes[n].record_count = 0u;
    if (t == 0u) {
        output_half.heap_top = 0u;
        output_half.record_count = 0u;
        header.input_half = h;
        header.level = pc.level;
        if (running != 0u) header.levels_run = pc.level + 1u;
    }
}
