// meta_shaders/scratch_layout.glsl must describe the same bytes as execgraph/runtime/scratch_layout.h: its constants
// are compared with offsetof()/sizeof(), and its buffer_reference structs with bytes written by a shader.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "execgraph/runtime/scratch_layout.h"
#include "gpu_harness.h"
#include "scratch_plan.h"

namespace execgraph::meta_shaders {
extern const uint32_t kLayoutProbeSpv[];
extern const size_t kLayoutProbeSpvWords;
}  // namespace execgraph::meta_shaders

namespace execgraph::test {
namespace {

using namespace execgraph::runtime;

TEST(LayoutConsistency, GlslConstantsMatchTheCppHeader) {
    std::ifstream file(EXECGRAPH_SCRATCH_LAYOUT_GLSL_PATH);
    ASSERT_TRUE(file.good()) << EXECGRAPH_SCRATCH_LAYOUT_GLSL_PATH;
    std::stringstream text;
    text << file.rdbuf();
    const std::string source = text.str();

    const std::map<std::string, uint64_t> expected = {
        {"kInvalidNode", kInvalidNode},
        {"kScratchMagic", kScratchMagic},
        {"kDispatchSplitWidth", kDispatchSplitWidth},
        {"kStatusHeapOverflow", kStatusHeapOverflow},
        {"kStatusRecordListOverflow", kStatusRecordListOverflow},
        {"kStatusDepthLimit", kStatusDepthLimit},
        {"kStatusGridClamped", kStatusGridClamped},
        {"kStatusInvalidNodeIndex", kStatusInvalidNodeIndex},
        {"kStatusUninitialized", kStatusUninitialized},
        {"kStatusPayloadCountClamped", kStatusPayloadCountClamped},
        {"kStatusFixedLevelExceeded", kStatusFixedLevelExceeded},
        {"kGraphHeaderSize", sizeof(GraphHeader)},
        {"kGraphHeaderMagicOffset", offsetof(GraphHeader, magic)},
        {"kGraphHeaderGraphTagOffset", offsetof(GraphHeader, graph_tag)},
        {"kGraphHeaderNodeCountOffset", offsetof(GraphHeader, node_count)},
        {"kGraphHeaderInputHalfOffset", offsetof(GraphHeader, input_half)},
        {"kGraphHeaderLevelOffset", offsetof(GraphHeader, level)},
        {"kGraphHeaderStatusFlagsOffset", offsetof(GraphHeader, status_flags)},
        {"kGraphHeaderDroppedRecordsOffset", offsetof(GraphHeader, dropped_records)},
        {"kGraphHeaderHeapHighWaterOffset", offsetof(GraphHeader, heap_high_water)},
        {"kGraphHeaderRecordCapacityOffset", offsetof(GraphHeader, record_capacity)},
        {"kGraphHeaderHeapCapacityOffset", offsetof(GraphHeader, heap_capacity)},
        {"kGraphHeaderNodeTableOffsetOffset", offsetof(GraphHeader, node_table_offset)},
        {"kGraphHeaderOutputTableOffsetOffset", offsetof(GraphHeader, output_table_offset)},
        {"kGraphHeaderTrashOffsetOffset", offsetof(GraphHeader, trash_offset)},
        {"kGraphHeaderTrashSizeOffset", offsetof(GraphHeader, trash_size)},
        {"kGraphHeaderHalfOffsetOffset", offsetof(GraphHeader, half_offset)},
        {"kGraphHeaderNodeStatsOffsetOffset", offsetof(GraphHeader, node_stats_offset)},
        {"kGraphHeaderLevelsRunOffset", offsetof(GraphHeader, levels_run)},
        {"kGraphHeaderRecordHighWaterOffset", offsetof(GraphHeader, record_high_water)},
        {"kGraphHeaderLevelPassRecordsPerWorkgroupOffset", offsetof(GraphHeader, level_pass_records_per_workgroup)},
        {"kGraphHeaderLevelWorkgroupsOffset", offsetof(GraphHeader, level_workgroups)},
        {"kGraphHeaderDirectLevelConsumerOffset", offsetof(GraphHeader, direct_level_consumer)},
        {"kGraphHeaderDispatchGraphTagOffset", offsetof(GraphHeader, dispatch_graph_tag)},
        {"kGraphHeaderTablesTagOffset", offsetof(GraphHeader, tables_tag)},
        {"kMaxLevels", kMaxLevels},
        {"kNodeStatsSize", sizeof(NodeStats)},
        {"kNodeStatsRecordsOffset", offsetof(NodeStats, records)},
        {"kNodeStatsDispatchesOffset", offsetof(NodeStats, dispatches)},
        {"kNodeStatsWorkgroupsOffset", offsetof(NodeStats, workgroups)},
        {"kNodeStatsDroppedRecordsOffset", offsetof(NodeStats, dropped_records)},
        {"kNodeStatsDropFlagsOffset", offsetof(NodeStats, drop_flags)},
        {"kNodeStatsFirstDropLevelComplementOffset", offsetof(NodeStats, first_drop_level_complement)},
        {"kNodeStaticInfoSize", sizeof(NodeStaticInfo)},
        {"kNodeStaticInfoLaunchOffset", offsetof(NodeStaticInfo, launch)},
        {"kNodeStaticInfoRecordStrideOffset", offsetof(NodeStaticInfo, record_stride)},
        {"kNodeStaticInfoStaticGridOffset", offsetof(NodeStaticInfo, static_grid)},
        {"kNodeStaticInfoGridOffsetOffset", offsetof(NodeStaticInfo, grid_offset)},
        {"kNodeStaticInfoGridComponentsOffset", offsetof(NodeStaticInfo, grid_components)},
        {"kNodeStaticInfoGridComponentBitsOffset", offsetof(NodeStaticInfo, grid_component_bits)},
        {"kNodeStaticInfoRecordsPerWorkgroupOffset", offsetof(NodeStaticInfo, records_per_workgroup)},
        {"kNodeStaticInfoMaxRecursionOffset", offsetof(NodeStaticInfo, max_recursion)},
        {"kNodeStaticInfoSharesInputWithOffset", offsetof(NodeStaticInfo, shares_input_with)},
        {"kNodeStaticInfoIsApiEntryOffset", offsetof(NodeStaticInfo, is_api_entry)},
        {"kNodeStaticInfoShaderIndexOffset", offsetof(NodeStaticInfo, shader_index)},
        {"kNodeStaticInfoOutputTableBaseOffset", offsetof(NodeStaticInfo, output_table_base)},
        {"kNodeStaticInfoDispatchGroupFirstOffset", offsetof(NodeStaticInfo, dispatch_group_first)},
        {"kNodeStaticInfoDispatchGroupSizeOffset", offsetof(NodeStaticInfo, dispatch_group_size)},
        {"kHalfHeaderSize", sizeof(HalfHeader)},
        {"kHalfHeaderHeapTopOffset", offsetof(HalfHeader, heap_top)},
        {"kHalfHeaderRecordCountOffset", offsetof(HalfHeader, record_count)},
        {"kHalfHeaderLevelPassDoneOffset", offsetof(HalfHeader, level_pass_done)},
        {"kHalfHeaderLevelPassWorkgroupsOffset", offsetof(HalfHeader, level_pass_workgroups)},
        {"kHalfHeaderLevelPassDispatchYOffset", offsetof(HalfHeader, level_pass_dispatch_y)},
        {"kHalfHeaderLevelPassDispatchZOffset", offsetof(HalfHeader, level_pass_dispatch_z)},
        {"kNodeStateSize", sizeof(NodeState)},
        {"kNodeStateRecordCountOffset", offsetof(NodeState, record_count)},
        {"kNodeStateDirectoryBaseOffset", offsetof(NodeState, directory_base)},
        {"kNodeStateWorkgroupCountOffset", offsetof(NodeState, workgroup_count)},
        {"kNodeStateDispatchOffset", offsetof(NodeState, dispatch)},
        {"kNodeStateScatterCursorOffset", offsetof(NodeState, scatter_cursor)},
        {"kNodeStateGroupFirstWorkgroupOffset", offsetof(NodeState, group_first_workgroup)},
        {"kNodeStateGroupDirectoryBaseOffset", offsetof(NodeState, group_directory_base)},
        {"kNodeStateGroupWorkgroupsOffset", offsetof(NodeState, group_workgroups)},
        {"kRecordEntrySize", sizeof(RecordEntry)},
        {"kRecordEntryNodeOffset", offsetof(RecordEntry, node)},
        {"kRecordEntryPayloadOffsetOffset", offsetof(RecordEntry, payload_offset)},
        {"kRecordEntryRecursionDepthOffset", offsetof(RecordEntry, recursion_depth)},
        {"kDirectoryEntrySize", sizeof(DirectoryEntry)},
        {"kDirectoryEntryPayloadOffsetOffset", offsetof(DirectoryEntry, payload_offset)},
        {"kDirectoryEntryRecursionDepthOffset", offsetof(DirectoryEntry, recursion_depth)},
        {"kDirectoryEntryFirstWorkgroupOrNodeOffset", offsetof(DirectoryEntry, first_workgroup_or_node)},
        {"kDirectoryEntryFinishCounterOffset", offsetof(DirectoryEntry, finish_counter)},
    };
    std::map<std::string, uint64_t> found;
    const std::regex constant(R"(const uint (k\w+) = (0x[0-9A-Fa-f]+|\d+)u(?: << (\d+))?;)");
    for (std::sregex_iterator it(source.begin(), source.end(), constant), end; it != end; ++it) {
        uint64_t value = std::stoull((*it)[2].str(), nullptr, 0);
        if ((*it)[3].matched) value <<= std::stoul((*it)[3].str());
        found[(*it)[1].str()] = value;
    }
    for (const auto& [name, value] : expected) {
        auto it = found.find(name);
        ASSERT_NE(it, found.end()) << name << " is missing from scratch_layout.glsl";
        EXPECT_EQ(it->second, value) << name;
    }
    // Any layout constant in the GLSL (sizes and offsets) must be checked here.
    for (const auto& [name, value] : found) {
        const bool layout_constant = name.ends_with("Offset") || name.ends_with("Size");
        if (layout_constant) {
            EXPECT_TRUE(expected.count(name)) << name << " is not checked against the C++ header";
        }
    }
}

TEST(LayoutConsistency, GlslStructsMatchTheCppStructs) {
    GpuHarness gpu;
    ASSERT_EQ(gpu.error(), "");
    GpuHarness::Pipeline probe = gpu.CreatePipeline(meta_shaders::kLayoutProbeSpv, meta_shaders::kLayoutProbeSpvWords, 16);
    GpuBuffer out = gpu.CreateBuffer(4096);
    GpuBuffer probe_header = gpu.CreateBuffer(sizeof(GraphHeader));

    // A header as RecordDispatch writes it, for the derived half offsets.
    const ScratchPlan plan(7, 9, 123);
    const ScratchLayout layout = *plan.LayoutFor(plan.MinSize() + 3 * plan.SizeGranularity());
    GraphHeader* header = probe_header.As<GraphHeader>();
    header->node_count = layout.node_count;
    header->record_capacity = layout.record_capacity;
    header->heap_capacity = layout.heap_capacity;
    header->half_offset[0] = layout.half_offset[0];
    header->half_offset[1] = layout.half_offset[1];
    header->input_half = 0xAABBCCDDu;  // LoadU64 at probe_header + 12 (not 8-byte aligned): {input_half, level}
    header->level = 0x01020304u;

    gpu.Run([&](VkCommandBuffer cmd) {
        const uint64_t params[2] = {out.address, probe_header.address};
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, probe.pipeline);
        vkCmdPushConstants(cmd, probe.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(params), params);
        vkCmdDispatch(cmd, 1, 1, 1);
    });

    // The same markers written through the C++ structs.
    std::vector<uint8_t> expected(4096, 0);
    auto* expected_header = reinterpret_cast<GraphHeader*>(expected.data());
    *expected_header = GraphHeader{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, {15, 16}, 17, 18, 19, 22, {}};
    expected_header->level_workgroups[0] = 23;
    expected_header->level_workgroups[1] = 24;
    expected_header->direct_level_consumer[0] = 25;
    expected_header->direct_level_consumer[kMaxLevels - 1] = 26;
    expected_header->tables_tag = 20;
    expected_header->reserved[2] = 21;
    expected_header->dispatch_graph_tag = 30;
    expected_header->report_slot = 0x0123456789ABCDEFull;
    expected_header->report_serial = 27;
    expected_header->report_stats = 28;
    expected_header->report_level = 29;
    reinterpret_cast<NodeStats*>(expected.data() + 3072)[1] = NodeStats{501, 502, 503, 504, 505, 506, {507, 508}};
    reinterpret_cast<NodeStaticInfo*>(expected.data() + 256)[1] =
        NodeStaticInfo{101, 102, {103, 104, 105}, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116};
    auto* expected_half = reinterpret_cast<HalfHeader*>(expected.data() + 512);
    *expected_half = HalfHeader{201, 202, 203, 204, 215, 216};
    reinterpret_cast<NodeState*>(expected.data() + 512 + sizeof(HalfHeader))[1] =
        NodeState{205, 206, 207, {208, 209, 210}, 0x1122334455667788ull, 211, 212, 213, 214};
    reinterpret_cast<RecordEntry*>(expected.data() + 1024)[1] = RecordEntry{301, 302, 303, 304};
    reinterpret_cast<DirectoryEntry*>(expected.data() + 1088)[1] = DirectoryEntry{401, 402, 403, 404};
    auto* derived = reinterpret_cast<uint32_t*>(expected.data() + 2048);
    for (uint32_t h = 0; h < 2; ++h) {
        derived[h * 4 + 0] = layout.NodeStatesOffset(h);
        derived[h * 4 + 1] = layout.RecordsOffset(h);
        derived[h * 4 + 2] = layout.DirectoryOffset(h);
        derived[h * 4 + 3] = layout.HeapOffset(h);
    }
    derived[8] = 0x01020304u;
    derived[9] = 0xAABBCCDDu;

    for (size_t word = 0; word < expected.size() / 4; ++word) {
        uint32_t got, want;
        std::memcpy(&got, out.mapped + word * 4, 4);
        std::memcpy(&want, expected.data() + word * 4, 4);
        EXPECT_EQ(got, want) << "byte offset " << word * 4;
    }
    gpu.DestroyBuffer(&out);
    gpu.DestroyBuffer(&probe_header);
}

}  // namespace
}  // namespace execgraph::test
