// Args pass of one level with the split passes (docs/design.md, "One graph dispatch", step 3; graphs beyond the fused
// level pass's limits). One workgroup, after scatter.
//
// Per node: the workgroups it needs at this level and its VkDispatchIndirectCommand (WriteDispatchArgs).
#version 460
#extension GL_GOOGLE_include_directive : require
#include "level_common.glsl"

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
                // come last. Stop at the end of the last kept record: a static grid's records all launch the grid; a
                // dynamic one's last kept entry says where it ends.
                total = 0u;
                if (launch == kLaunchBroadcastStatic) {
                    total = kept * StaticGridWorkgroups(table, n);
                } else if (kept != 0u) {
                    const DirectoryEntry last = directory.entries[input_half.nodes[n].directory_base + kept - 1u];
                    total = last.first_workgroup_or_node + last.finish_counter;
                }
            }
        } else {
            total = BatchedWorkgroups(table, n, kept);
        }
        WriteDispatchArgs(pc.scratch, header, input_half, n, header.level, total);
    }
}
