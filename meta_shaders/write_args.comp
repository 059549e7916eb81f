// Args pass of one level (docs/design.md, "One graph dispatch", step 3.2, last part). One workgroup, after scatter.
//
// Per node: the workgroups it needs at this level and its VkDispatchIndirectCommand. x stays within the 65535 every
// device supports (maxComputeWorkGroupCount) and y carries the rest; the lowered node computes its linear workgroup as
// WorkgroupId.y * 65535 + WorkgroupId.x and returns past workgroup_count (scratch_layout.h, kDispatchSplitWidth).
#version 460
#extension GL_GOOGLE_include_directive : require
#include "scratch_layout.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
    uint64_t scratch;
} pc;

void main() {
    GraphHeader header = GraphHeader(pc.scratch);
    const uint h = header.input_half;
    const uint node_count = header.node_count;
    Half input_half = HalfAt(pc.scratch, header, h);
    Directory directory = DirectoryAt(pc.scratch, header, h);
    NodeTable table = NodeTable(pc.scratch + header.node_table_offset);

    for (uint n = gl_LocalInvocationIndex; n < node_count; n += gl_WorkGroupSize.x) {
        const uint kept = input_half.nodes[n].record_count;
        const uint64_t cursor = input_half.nodes[n].scatter_cursor;
        const uint launch = table.infos[n].launch;
        uint total;
        if (launch == kLaunchBroadcastStatic || launch == kLaunchBroadcastDynamic) {
            total = uint(cursor);
            if (uint(cursor >> 32) > kept) {
                // Prepare dropped the tail of this node's records; the cursor also counted their workgroups, which
                // come last. Stop at the end of the last kept record.
                total = 0u;
                if (kept != 0u) {
                    const DirectoryEntry last = directory.entries[input_half.nodes[n].directory_base + kept - 1u];
                    total = last.first_workgroup + last.finish_counter;
                }
            }
        } else {
            // Coalescing: NodeMaxPayloadsAMDX records per workgroup; thread: the lowered batch size.
            const uint per_workgroup = max(table.infos[n].records_per_workgroup, 1u);
            total = kept / per_workgroup + (kept % per_workgroup != 0u ? 1u : 0u);
        }
        uvec3 dispatch = uvec3(0u);
        if (total != 0u) {
            uint rows = total / kDispatchSplitWidth + (total % kDispatchSplitWidth != 0u ? 1u : 0u);
            if (rows > kDispatchSplitWidth) {
                // Only reachable past 65535 * 65535 workgroups in one node and level.
                rows = kDispatchSplitWidth;
                ReportDrop(pc.scratch, header, n, header.level, kStatusGridClamped, 0u);
            }
            dispatch = uvec3(min(total, kDispatchSplitWidth), rows, 1u);
        }
        input_half.nodes[n].workgroup_count = total;
        if (total != 0u) {
            // Statistics; node n belongs to this invocation alone.
            NodeStatsTable stats = NodeStatsAt(pc.scratch, header);
            stats.stats[n].dispatches += 1u;
            const uint before = stats.stats[n].workgroups;
            stats.stats[n].workgroups = before + min(total, 0xFFFFFFFFu - before);
        }
        input_half.nodes[n].dispatch[0] = dispatch.x;
        input_half.nodes[n].dispatch[1] = dispatch.y;
        input_half.nodes[n].dispatch[2] = dispatch.z;
    }
}
