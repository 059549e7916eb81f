// Writes a distinct marker into every field of every scratch_layout.glsl struct, and the derived half offsets of a
// header the test provides, so layout_consistency_test.cpp can compare the bytes with the C++ structs.
#version 460
#extension GL_GOOGLE_include_directive : require
#include "scratch_layout.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Params {
    uint64_t out_base;
    uint64_t probe_header;
} pc;

void main() {
    GraphHeader header = GraphHeader(pc.out_base);
    header.magic = 1u;
    header.graph_tag = 2u;
    header.node_count = 3u;
    header.input_half = 4u;
    header.level = 5u;
    header.status_flags = 6u;
    header.dropped_records = 7u;
    header.heap_high_water = 8u;
    header.record_capacity = 9u;
    header.heap_capacity = 10u;
    header.node_table_offset = 11u;
    header.output_table_offset = 12u;
    header.trash_offset = 13u;
    header.trash_size = 14u;
    header.half_offset[0] = 15u;
    header.half_offset[1] = 16u;
    header.node_stats_offset = 17u;
    header.levels_run = 18u;
    header.record_high_water = 19u;
    header.level_workgroups[0] = 23u;
    header.level_workgroups[1] = 24u;
    header.direct_level_consumer[0] = 25u;
    header.direct_level_consumer[kMaxLevels - 1u] = 26u;
    header.tables_tag = 20u;
    header.header_reserved[2] = 21u;
    header.dispatch_graph_tag = 30u;
    header.report_slot = 0x0123456789ABCDEFul;
    header.report_serial = 27u;
    header.report_stats = 28u;
    header.report_level = 29u;
    header.level_pass_records_per_workgroup = 22u;

    NodeTable table = NodeTable(pc.out_base + 256ul);
    table.infos[1] = NodeStaticInfo(101u, 102u, uint[3](103u, 104u, 105u), 106u, 107u, 108u, 109u, 110u, 111u, 112u,
                                    113u, 114u, 115u, 116u);

    Half half_ref = Half(pc.out_base + 512ul);
    half_ref.heap_top = 201u;
    half_ref.record_count = 202u;
    half_ref.level_pass_done = 203u;
    half_ref.level_pass_workgroups = 204u;
    half_ref.level_pass_dispatch_y = 215u;
    half_ref.level_pass_dispatch_z = 216u;
    half_ref.nodes[1] = NodeState(205u, 206u, 207u, uint[3](208u, 209u, 210u), 0x1122334455667788ul, 211u, 212u, 213u, 214u);

    RecordList records = RecordList(pc.out_base + 1024ul);
    records.entries[1] = RecordEntry(301u, 302u, 303u, 304u);
    Directory directory = Directory(pc.out_base + 1088ul);
    directory.entries[1] = DirectoryEntry(401u, 402u, 403u, 404u);

    NodeStatsTable stats = NodeStatsTable(pc.out_base + 3072ul);
    stats.stats[1] = NodeStats(501u, 502u, 503u, 504u, 505u, 506u, uint[2](507u, 508u));

    GraphHeader probe = GraphHeader(pc.probe_header);
    Words derived = Words(pc.out_base + 2048ul);
    for (uint h = 0u; h < 2u; ++h) {
        derived.w[h * 4u + 0u] = HalfNodesOffset(probe, h);
        derived.w[h * 4u + 1u] = HalfRecordsOffset(probe, h);
        derived.w[h * 4u + 2u] = HalfDirectoryOffset(probe, h);
        derived.w[h * 4u + 3u] = HalfHeapOffset(probe, h);
    }
    // LoadU64 at a 4-byte (not 8-byte) aligned address, as the entry pass reads the application's infos.
    Words unaligned = Words(pc.probe_header + 12ul);  // input_half, level
    Words(pc.out_base + 2080ul).w[0] = uint(LoadU64(unaligned, 0u) >> 32);
    Words(pc.out_base + 2080ul).w[1] = uint(LoadU64(unaligned, 0u));
}
