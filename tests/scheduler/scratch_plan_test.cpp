// ScratchPlan: the sizes vkGetExecutionGraphPipelineScratchSizeAMDX reports and the layout of each scratch size.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "execgraph/runtime/scratch_layout.h"
#include "scratch_plan.h"

namespace execgraph {
namespace {

using runtime::GraphHeader;
using runtime::HalfHeader;
using runtime::NodeStaticInfo;
using runtime::NodeState;

// Every region of a layout, [begin, end), for overlap and bounds checks.
std::vector<std::pair<uint64_t, uint64_t>> Regions(const ScratchLayout& layout) {
    std::vector<std::pair<uint64_t, uint64_t>> regions = {
        {0, sizeof(GraphHeader)},
        {layout.node_table_offset, layout.node_table_offset + uint64_t(layout.node_count) * sizeof(NodeStaticInfo)},
        {layout.output_table_offset, layout.output_table_offset + uint64_t(layout.output_table_entries) * 4},
        {layout.trash_offset, uint64_t(layout.trash_offset) + layout.trash_size},
        {layout.node_stats_offset, layout.node_stats_offset + uint64_t(layout.node_count) * sizeof(runtime::NodeStats)},
    };
    for (uint32_t half = 0; half < 2; ++half) {
        regions.push_back({layout.half_offset[half], layout.NodeStatesOffset(half)});
        regions.push_back({layout.NodeStatesOffset(half), layout.RecordsOffset(half)});
        regions.push_back({layout.RecordsOffset(half), layout.DirectoryOffset(half)});
        regions.push_back({layout.DirectoryOffset(half), layout.HeapOffset(half)});
        regions.push_back({layout.HeapOffset(half), uint64_t(layout.HeapOffset(half)) + layout.heap_capacity});
        // The guard after the heap: a dropped-to-heap write past the allocation (up to trash_size bytes) stays in scratch.
        regions.push_back({uint64_t(layout.HeapOffset(half)) + layout.heap_capacity,
                           uint64_t(layout.HeapOffset(half)) + layout.heap_capacity + layout.trash_size});
    }
    return regions;
}

void ExpectWellFormed(const ScratchLayout& layout) {
    auto regions = Regions(layout);
    std::sort(regions.begin(), regions.end());
    for (size_t i = 0; i < regions.size(); ++i) {
        EXPECT_LE(regions[i].first, regions[i].second);
        EXPECT_LE(regions[i].second, layout.used_size) << "region " << i << " past the used size";
        if (i + 1 < regions.size()) {
            EXPECT_LE(regions[i].second, regions[i + 1].first) << "regions overlap";
        }
    }
    for (uint32_t half = 0; half < 2; ++half) {
        EXPECT_EQ(layout.half_offset[half] % 64, 0u);
        EXPECT_EQ(layout.HeapOffset(half) % 16, 0u);
        EXPECT_EQ((layout.NodeStatesOffset(half) + offsetof(NodeState, scatter_cursor)) % 8, 0u) << "64-bit atomic alignment";
        EXPECT_EQ(layout.DispatchArgsOffset(half, 0) % 4, 0u) << "vkCmdDispatchIndirect offset alignment";
        EXPECT_LE(uint64_t(layout.HeapOffset(half)) + layout.heap_capacity, uint64_t(layout.half_offset[half]) + layout.half_size);
    }
    EXPECT_EQ(layout.half_offset[1], layout.half_offset[0] + layout.half_size);
    EXPECT_EQ(layout.trash_offset % 16, 0u);
}

TEST(ScratchPlan, MinimumGuaranteesCapacities) {
    for (uint32_t node_count : {1u, 7u, 300u}) {
        const ScratchPlan plan(node_count, 3 * node_count, 32768);
        const std::optional<ScratchLayout> layout = plan.LayoutFor(plan.MinSize());
        ASSERT_TRUE(layout.has_value());
        EXPECT_GE(layout->record_capacity, ScratchPlan::kMinRecordsPerHalf);
        EXPECT_GE(layout->heap_capacity, ScratchPlan::kMinHeapBytesPerHalf);
        EXPECT_EQ(layout->used_size, plan.MinSize());
        ExpectWellFormed(*layout);
        EXPECT_FALSE(plan.LayoutFor(plan.MinSize() - 1).has_value()) << "below minSize must be rejected";
        EXPECT_EQ(plan.SizeGranularity(), 64u * 1024);
        EXPECT_EQ((plan.MaxSize() - plan.MinSize()) % plan.SizeGranularity(), 0u) << "maxSize is a granularity step";
        EXPECT_GE(plan.MaxSize(), ScratchPlan::kMaxUsefulSize);
        EXPECT_LT(plan.MaxSize(), ScratchPlan::kMaxUsefulSize + plan.SizeGranularity());
    }
}

// The split of each half follows the graph's largest input record: entries and heap run out together when every record
// is that large, for records of 16 to 96 bytes; larger records keep the 96-byte split. The guarantees of minSize hold
// for every record size, and maxSize stays within kMaxUsefulSize.
TEST(ScratchPlan, SmallRecordsGetMoreRecordsPerHalf) {
    const ScratchPlan default_split(5, 10, 4096);
    for (uint32_t stride : {0u, 4u, 8u, 16u, 20u, 64u, 96u, 100u, 1024u}) {
        const ScratchPlan plan(5, 10, 4096, stride);
        const uint32_t heap_per_record = std::clamp((stride + 15) / 16 * 16, 16u, 96u);
        EXPECT_EQ(plan.HeapBytesPerRecord(), heap_per_record) << stride;
        for (VkDeviceSize size : {plan.MinSize(), plan.MaxSize()}) {
            const ScratchLayout layout = *plan.LayoutFor(size);
            ExpectWellFormed(layout);
            EXPECT_GE(layout.record_capacity, ScratchPlan::kMinRecordsPerHalf) << stride;
            EXPECT_GE(layout.heap_capacity, ScratchPlan::kMinHeapBytesPerHalf) << stride;
            // Full record list, every record of the largest size: the heap holds them.
            EXPECT_GE(uint64_t(layout.heap_capacity), uint64_t(layout.record_capacity) * heap_per_record) << stride;
        }
        EXPECT_LT(plan.MaxSize(), ScratchPlan::kMaxUsefulSize + plan.SizeGranularity());
        const ScratchLayout largest = *plan.LayoutFor(plan.MaxSize());
        const ScratchLayout reference = *default_split.LayoutFor(default_split.MaxSize());
        if (heap_per_record < 96) {
            EXPECT_GT(largest.record_capacity, reference.record_capacity) << stride;
        } else {
            EXPECT_EQ(largest.record_capacity, reference.record_capacity) << stride;
        }
    }
    // Records of up to 16 bytes: about 128 MiB / 48 bytes per half at maxSize.
    const ScratchLayout small = *ScratchPlan(5, 10, 4096, 8).LayoutFor(ScratchPlan(5, 10, 4096, 8).MaxSize());
    EXPECT_GT(small.record_capacity, 2'700'000u);
}

// spirv::LoweringOptions::heap_holds_record_list relies on this: for records of up to 96 bytes, at every scratch size
// (not only minSize and maxSize), a full record list of the largest record, rounded to 16 bytes, fits the heap. Then a
// single atomic may reserve heap bytes and record slots together, since records that fit the list fit the heap.
TEST(ScratchPlan, HeapHoldsAFullRecordListOfRecordsUpTo96Bytes) {
    for (uint32_t stride : {0u, 4u, 8u, 12u, 16u, 17u, 40u, 64u, 80u, 95u, 96u, 97u, 112u, 1024u}) {
        const bool holds = ScratchPlan::HeapHoldsRecordList(stride);
        EXPECT_EQ(holds, stride <= 96u) << stride;
        if (!holds) continue;
        for (uint32_t nodes : {1u, 5u, 300u}) {
            const ScratchPlan plan(nodes, 10, 4096 + 4 * stride, stride);
            const uint64_t rounded = (stride + 15) / 16 * 16;
            for (uint64_t step = 0; step * plan.SizeGranularity() <= plan.MaxSize() - plan.MinSize(); step += 97) {
                const ScratchLayout layout = *plan.LayoutFor(plan.MinSize() + step * plan.SizeGranularity());
                EXPECT_GE(uint64_t(layout.heap_capacity), uint64_t(layout.record_capacity) * rounded)
                    << "stride " << stride << ", " << nodes << " nodes, step " << step;
            }
            const ScratchLayout largest = *plan.LayoutFor(plan.MaxSize());
            EXPECT_GE(uint64_t(largest.heap_capacity), uint64_t(largest.record_capacity) * rounded) << stride;
        }
    }
}

TEST(ScratchPlan, MinSizeGrowsWithTheFixedPart) {
    const ScratchPlan small(4, 8, 0), more_nodes(40, 8, 0), more_outputs(4, 8000, 0), more_trash(4, 8, 1 << 20);
    EXPECT_GT(more_nodes.MinSize(), small.MinSize());
    EXPECT_GE(more_outputs.MinSize() + 64, small.MinSize() + 4 * (8000 - 8));  // up to 64 bytes of alignment slack
    EXPECT_GE(more_trash.MinSize(), small.MinSize() + (1 << 20));
    // Node count is paid in the header table and in each half's NodeState array.
    EXPECT_GE(more_nodes.MinSize() - small.MinSize(), 36u * (sizeof(NodeStaticInfo) + 2 * sizeof(NodeState)));
}

TEST(ScratchPlan, OnlyGranularityStepsAreUsed) {
    const ScratchPlan plan(5, 10, 4096);
    const VkDeviceSize granularity = plan.SizeGranularity();
    const ScratchLayout at_min = *plan.LayoutFor(plan.MinSize());
    const ScratchLayout below_step = *plan.LayoutFor(plan.MinSize() + granularity - 4);
    EXPECT_EQ(below_step.used_size, at_min.used_size);
    EXPECT_EQ(below_step.record_capacity, at_min.record_capacity);
    EXPECT_EQ(below_step.heap_capacity, at_min.heap_capacity);
    for (uint64_t steps : {1ull, 5ull, 100ull}) {
        const ScratchLayout layout = *plan.LayoutFor(plan.MinSize() + steps * granularity + 3);
        EXPECT_EQ(layout.used_size, plan.MinSize() + steps * granularity);
        EXPECT_GT(layout.record_capacity, at_min.record_capacity);
        EXPECT_GT(layout.heap_capacity, at_min.heap_capacity);
        // The 1/4 : 3/4 split: record entries take about a quarter of each half's variable part.
        const double record_bytes = double(layout.record_capacity) * ScratchPlan::kBytesPerRecord;
        EXPECT_NEAR(record_bytes / (record_bytes + layout.heap_capacity), 0.25, 0.01);
        ExpectWellFormed(layout);
    }
    const ScratchLayout at_max = *plan.LayoutFor(plan.MaxSize());
    const ScratchLayout past_max = *plan.LayoutFor(plan.MaxSize() * 4);
    EXPECT_EQ(past_max.used_size, plan.MaxSize());
    EXPECT_EQ(past_max.heap_capacity, at_max.heap_capacity);
    EXPECT_GE(at_max.record_capacity, 1000000u);
    ExpectWellFormed(at_max);
}

TEST(ScratchPlan, LayoutOffsetsFollowTheContractOrder) {
    const ScratchPlan plan(3, 5, 100);
    const ScratchLayout layout = *plan.LayoutFor(plan.MinSize());
    EXPECT_EQ(layout.node_table_offset, sizeof(GraphHeader));
    EXPECT_EQ(layout.output_table_offset, sizeof(GraphHeader) + 3 * sizeof(NodeStaticInfo));
    EXPECT_EQ(layout.trash_offset, (layout.output_table_offset + 5 * 4 + 15) / 16 * 16);
    EXPECT_EQ(layout.node_stats_offset, (layout.trash_offset + 100 + 15) / 16 * 16);
    EXPECT_GE(layout.half_offset[0], layout.node_stats_offset + 3 * sizeof(runtime::NodeStats));
    EXPECT_EQ(layout.NodeStateOffset(1, 2), layout.half_offset[1] + sizeof(HalfHeader) + 2 * sizeof(runtime::NodeState));
    EXPECT_EQ(layout.DispatchArgsOffset(0, 1), layout.half_offset[0] + sizeof(HalfHeader) + sizeof(runtime::NodeState) + offsetof(runtime::NodeState, dispatch));
    EXPECT_EQ(layout.RecordsOffset(0), layout.half_offset[0] + sizeof(HalfHeader) + 3 * sizeof(runtime::NodeState));
    EXPECT_EQ(layout.DirectoryOffset(0), layout.RecordsOffset(0) + 16 * layout.record_capacity);
    EXPECT_EQ(layout.HeapOffset(0), layout.DirectoryOffset(0) + 16 * layout.record_capacity);
}

}  // namespace
}  // namespace execgraph
