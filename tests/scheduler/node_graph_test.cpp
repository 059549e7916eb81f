// Whole graph dispatches with hand-lowered GLSL node shaders (tests/scheduler/shaders): the per-level node dispatches,
// the push-constant context, the bind hook, the > 65535 workgroup split, recursion across levels, the depth limit, and
// repeated dispatches on one initialization.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>

#include "graph_reference.h"

namespace execgraph::meta_shaders {
extern const uint32_t kBroadcastNodeSpv[];
extern const size_t kBroadcastNodeSpvWords;
extern const uint32_t kThreadNodeSpv[];
extern const size_t kThreadNodeSpvWords;
}  // namespace execgraph::meta_shaders

namespace execgraph::test {
namespace {

using runtime::GraphHeader;

constexpr uint32_t kGraphTag = 77;
constexpr uint32_t kMaxDepth = 2;  // the thread node re-enqueues itself until depth 2
constexpr uint32_t kLaunchThread = 3;

struct AppConstants {
    uint64_t address;
    uint32_t a;
    uint32_t b;
};

// Parameter: record barriers with synchronization2 (true) or vkCmdPipelineBarrier (false).
// Parameters: record barriers with synchronization2; force the split level passes.
class NodeGraphTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
  protected:
    void SetUp() override {
        ASSERT_EQ(gpu_.error(), "");
        graph_.Add(TestGraph::Dynamic(4, 3, 32, 8, 8, 8), 16);      // 0: broadcast, MaxNumWorkgroups (8, 8, 8)
        graph_.Add(TestGraph::Batched(kLaunchThread, 32), 8);        // 1: thread node, batches of 32
        graph_.nodes[1].max_recursion = kMaxDepth;
        // The application's 16 bytes of constants, then NodePushContext at context offset 16.
        constexpr uint32_t kPushSize = 16 + sizeof(runtime::NodePushContext);
        broadcast_ = gpu_.CreatePipeline(meta_shaders::kBroadcastNodeSpv, meta_shaders::kBroadcastNodeSpvWords, kPushSize);
        thread_ = gpu_.CreatePipeline(meta_shaders::kThreadNodeSpv, meta_shaders::kThreadNodeSpvWords, kPushSize);
        plan_.graph_tag = kGraphTag;
        plan_.scratch_plan = ScratchPlan(2, 0, 0);
        plan_.nodes = {{broadcast_.pipeline, broadcast_.layout, 16, 16, runtime::kInvalidNode},
                       {thread_.pipeline, thread_.layout, 16, 8, runtime::kInvalidNode}};
        plan_.force_split_level_passes = std::get<1>(GetParam());
        options_.bind_node_state = [this](const DeviceDispatchTable& commands, VkCommandBuffer cmd, uint32_t node, bool) {
            // What the layer does for the application's push constants, with the node's (longer) layout.
            const AppConstants constants = node == 0 ? AppConstants{visits_.address, 0, 1} : AppConstants{seen_.address, 1, kMaxDepth};
            commands.CmdPushConstants(cmd, plan_.nodes[node].layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(constants), &constants);
            ++hook_calls_;
        };
        scratch_ = gpu_.CreateBuffer(plan_.scratch_plan.MinSize());
        recorder_ = std::make_unique<SchedulerRecorder>(&gpu_.table(), &gpu_.pipelines(), std::get<0>(GetParam()));
    }
    void TearDown() override {
        gpu_.DestroyBuffer(&scratch_);
        gpu_.DestroyBuffer(&visits_);
        gpu_.DestroyBuffer(&seen_);
    }

    // Fresh result buffers, then one dispatch (after initialization when `initialize`).
    void Dispatch(const EntrySource& entries, bool initialize) {
        gpu_.DestroyBuffer(&visits_);
        gpu_.DestroyBuffer(&seen_);
        visits_ = gpu_.CreateBuffer(kIds * 512 * 4);
        seen_ = gpu_.CreateBuffer((16384 + kIds) * 4);
        const ScratchBinding binding{scratch_.buffer, 0, scratch_.address, scratch_.size};
        gpu_.Run([&](VkCommandBuffer cmd) {
            if (initialize) {
                const RecordResult init = recorder_->RecordInitialize(cmd, binding, plan_.scratch_plan, kGraphTag, graph_.nodes, {});
                ASSERT_EQ(init.result, VK_SUCCESS) << init.error;
            }
            const RecordResult result = recorder_->RecordDispatch(cmd, binding, plan_, entries, options_);
            ASSERT_EQ(result.result, VK_SUCCESS) << result.error;
        });
    }

    // Checks the node outputs against the grids of `payloads`; returns the number of records with workgroups.
    uint32_t CheckOutputs(const std::vector<std::vector<uint32_t>>& payloads, uint32_t depths_run) {
        uint32_t live = 0;
        for (const std::vector<uint32_t>& payload : payloads) {
            const uint32_t id = payload[0];
            const uint32_t workgroups = CpuRecordWorkgroups(graph_.nodes[0], payload).workgroups;
            const uint32_t* visits = visits_.As<uint32_t>() + id * 512;
            for (uint32_t w = 0; w < 512; ++w) {
                EXPECT_EQ(visits[w], w < workgroups ? 1u : 0u) << "record " << id << " workgroup " << w;
            }
            const uint32_t* seen = seen_.As<uint32_t>() + id * 4;
            for (uint32_t depth = 0; depth < 4; ++depth) {
                EXPECT_EQ(seen[depth], workgroups != 0 && depth < depths_run ? 1u : 0u) << "record " << id << " depth " << depth;
            }
            if (workgroups != 0) {
                EXPECT_EQ(seen_.As<uint32_t>()[16384 + id], workgroups) << "record " << id;
            }
            live += workgroups != 0;
        }
        return live;
    }

    static constexpr uint32_t kIds = 320;
    GpuHarness gpu_;
    TestGraph graph_;
    GpuHarness::Pipeline broadcast_, thread_;
    GraphPlan plan_;
    DispatchOptions options_;
    GpuBuffer scratch_, visits_, seen_;
    uint32_t hook_calls_ = 0;
    std::unique_ptr<SchedulerRecorder> recorder_;
};

TEST_P(NodeGraphTest, LevelsRunEveryRecordOnceAndRecursionStopsAtTheDepthLimit) {
    std::mt19937 random(1234);
    std::uniform_int_distribution<uint32_t> big(5, 8);
    std::vector<std::vector<uint32_t>> payloads;
    uint64_t total_workgroups = 0;
    for (uint32_t id = 0; id < 300; ++id) payloads.push_back({id, big(random), big(random), big(random)});
    payloads[17] = {17, 20, 2, 1};  // x over MaxNumWorkgroupsAMDX: clamped to 8
    payloads[42] = {42, 3, 0, 2};   // an empty grid: no workgroup, no output
    for (const auto& payload : payloads) total_workgroups += CpuRecordWorkgroups(graph_.nodes[0], payload).workgroups;
    ASSERT_GT(total_workgroups, 65535u) << "the broadcast node must need a y split";

    // 1. Host entries, enough levels for the whole recursion.
    plan_.levels = {{0}, {1}, {1}, {1}};
    const std::vector<TestInfo> infos = {{0, {payloads.begin(), payloads.begin() + 150}}, {0, {payloads.begin() + 150, payloads.end()}}};
    HostInfos host = MakeHostInfos(graph_, infos);
    Dispatch(EntrySource::HostInfos(host.count_info), true);
    const auto* header = scratch_.As<GraphHeader>();
    EXPECT_EQ(header->status_flags, uint32_t{runtime::kStatusGridClamped});
    EXPECT_EQ(header->dropped_records, 0u);
    EXPECT_EQ(header->level, 3u);
    EXPECT_EQ(header->input_half, 1u);
    EXPECT_EQ(CheckOutputs(payloads, 3), 299u);
    EXPECT_EQ(hook_calls_, 4u);

    // 2. Again on the same initialization (no re-init, facts §11), device-side count, without the clamped record, and
    // one level short: the depth-2 records are left over. Status describes this dispatch alone.
    payloads[17] = {17, 2, 2, 2};
    plan_.levels = {{0}, {1}, {1}};
    const std::vector<TestInfo> device_infos = {{0, payloads}};
    DeviceInfos uploaded = UploadInfos(&gpu_, graph_, device_infos);
    Dispatch(EntrySource::DeviceCountInfo(uploaded.count_info), false);
    const uint32_t live = CheckOutputs(payloads, 2);
    EXPECT_EQ(header->status_flags, uint32_t{runtime::kStatusDepthLimit});
    EXPECT_EQ(header->dropped_records, live);
    gpu_.DestroyBuffer(&uploaded.buffer);
}

// The report a multi-level dispatch leaves in its slot (layer/scheduler.h, ReportSlot; the layer's DispatchReporter
// reads it back): the finish pass runs the leftover check (one level short of the recursion) and copies the header and
// NodeStats with their real content, checked against what the CPU expects and against scratch itself.
TEST_P(NodeGraphTest, TheReportSlotHoldsTheDispatchsHeaderAndStatistics) {
    std::mt19937 random(4321);
    std::uniform_int_distribution<uint32_t> grid(0, 6);
    std::vector<std::vector<uint32_t>> payloads;
    uint32_t total_workgroups = 0;
    for (uint32_t id = 0; id < 200; ++id) payloads.push_back({id, grid(random), grid(random), grid(random)});
    for (const auto& payload : payloads) total_workgroups += CpuRecordWorkgroups(graph_.nodes[0], payload).workgroups;
    plan_.levels = {{0}, {1}, {1}};  // the thread node's depth-2 records are left over
    HostInfos host = MakeHostInfos(graph_, {{0, payloads}});
    GpuBuffer slot = gpu_.CreateBuffer(ReportSlotSize(2));
    constexpr uint32_t kSerial = 91;
    options_.report = {slot.address, kSerial, 2};
    Dispatch(EntrySource::HostInfos(host.count_info), true);
    const uint32_t live = CheckOutputs(payloads, 2);
    ASSERT_GT(live, 0u);
    ASSERT_LT(live, 200u) << "some grids are empty";

    EXPECT_EQ(*slot.As<uint32_t>(), kSerial);
    const auto& header = *slot.As<GraphHeader>(kReportSlotHeaderOffset);
    const auto* stats = slot.As<runtime::NodeStats>(kReportSlotStatsOffset);
    EXPECT_EQ(header.status_flags, uint32_t{runtime::kStatusDepthLimit});
    EXPECT_EQ(header.dropped_records, live);
    EXPECT_EQ(header.levels_run, 3u);
    EXPECT_EQ(header.record_high_water, 200u);
    // Node 0 (broadcast) ran every record at level 0; each live record went on to node 1 at depths 0 and 1 (levels 1
    // and 2) and its depth-2 copy is charged to node 1 at level 3, the level count.
    EXPECT_EQ(stats[0].records, 200u);
    EXPECT_EQ(stats[0].dispatches, 1u);
    EXPECT_EQ(stats[0].workgroups, total_workgroups);
    EXPECT_EQ(stats[0].dropped_records, 0u);
    EXPECT_EQ(stats[1].records, 2 * live);
    EXPECT_EQ(stats[1].dispatches, 2u);
    EXPECT_EQ(stats[1].workgroups, 2 * ((live + 31) / 32));
    EXPECT_EQ(stats[1].dropped_records, live);
    EXPECT_EQ(stats[1].drop_flags, uint32_t{runtime::kStatusDepthLimit});
    EXPECT_EQ(stats[1].first_drop_level_complement, ~3u);
    EXPECT_EQ(std::memcmp(&header, scratch_.mapped, sizeof(GraphHeader)), 0) << "the slot's header is scratch's";
    const ScratchLayout layout = *plan_.scratch_plan.LayoutFor(scratch_.size);
    EXPECT_EQ(std::memcmp(stats, scratch_.mapped + layout.node_stats_offset, 2 * sizeof(runtime::NodeStats)), 0);
    gpu_.DestroyBuffer(&slot);
}

INSTANTIATE_TEST_SUITE_P(BarriersAndLevelPasses, NodeGraphTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<bool, bool>>& info) {
                             return std::string(std::get<0>(info.param) ? "Synchronization2" : "PipelineBarrier1") +
                                    (std::get<1>(info.param) ? "SplitLevelPasses" : "FusedLevelPass");
                         });

}  // namespace
}  // namespace execgraph::test
