// Fixed levels (runtime::kLevelNextFixedWorkgroupsShift; docs/design.md, "Fixed levels"): a direct level whose records
// the host can bound is dispatched with that many workgroups, without indirect arguments. Each test runs with the
// `fixed_levels` setting on (the default) and off, and must give the same results both ways, except where a shader
// breaks its NodeMaxPayloadsAMDX: then the fixed level runs what its workgroups can and reports the rest as dropped.
// (tests/e2e/debugging_test.cpp checks which commands a fixed level records.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

class FixedLevels : public ::testing::WithParamInterface<bool>, private ScopedEnvironmentVariable, public GraphTest {
  protected:
    // Settings are read when the instance is created: before GraphTest's context.
    FixedLevels() : ScopedEnvironmentVariable("VK_EXECGRAPH_SHADER_ENQUEUE_FIXED_LEVELS", GetParam() ? "true" : "false") {}

    std::vector<std::string> DroppedWork() {
        std::vector<std::string> texts;
        for (const MessageLog::Message& message : context_.log().Messages()) {
            if (message.id == "EXECGRAPH-DROPPED-WORK") texts.push_back(message.text);
        }
        return texts;
    }
};

// Chains of one-node levels, three records a level: the host prepares level 0 (three workgroups), and each level's bound
// is the last one's times the step's NodeMaxPayloadsAMDX of 1, so every level is fixed at three workgroups. A chain
// whose records do not all reach its end, or a level run twice, leaves a wrong UAV.
TEST_P(FixedLevels, ChainsOfOneNodeLevelsRunEveryStepOnce) {
    constexpr uint32_t kLevels = 7, kChains = 3;
    std::vector<std::string> names;
    const std::vector<NodeStage> stages = ArrayChainStages(1, kLevels, kChains, &names);
    const std::vector<std::vector<ArrayChainRecord>> records = ArrayChainEntryRecords(1, kChains);
    TestBuffer& uav = Uav(kLevels * kChains);
    RunGraph(stages, uav, {{"L0", 0, kChains, records[0].data(), sizeof(ArrayChainRecord)}});
    ExpectUav(uav, ArrayChainExpectedUav(1, kLevels, kChains));
}

// The same chain entered with fewer records than the fixed workgroups of a later dispatch: a second dispatch of the
// graph in the same command buffer, one chain, runs one workgroup a level (its own bound), and the first dispatch's
// surplus cannot leak into it.
TEST_P(FixedLevels, ASecondDispatchWithFewerEntriesRunsOnlyItsOwnRecords) {
    constexpr uint32_t kLevels = 5, kChains = 4;
    std::vector<std::string> names;
    const std::vector<NodeStage> stages = ArrayChainStages(1, kLevels, kChains, &names);
    const std::vector<std::vector<ArrayChainRecord>> records = ArrayChainEntryRecords(1, kChains);
    TestBuffer& uav = Uav(kLevels * kChains);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph(stages, layout, &result);
    ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    const VkDescriptorSet set = context_.descriptor_set();
    const uint32_t l0 = context_.NodeIndex(graph, "L0", 0);
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, set);
        DispatchHost(cmd, scratch, {{l0, kChains, records[0].data(), sizeof(ArrayChainRecord)}});
        // The UAV cleared between the dispatches: what the second leaves is its own.
        VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr,
                             0, nullptr);
        vkCmdFillBuffer(cmd, uav.buffer, 0, uav.size, 0);
        VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_TRANSFER_WRITE_BIT,
                              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &after, 0, nullptr, 0,
                             nullptr);
        DispatchHost(cmd, scratch, {{l0, 1, &records[0][2], sizeof(ArrayChainRecord)}});  // chain 2 alone
    });
    std::vector<uint32_t> expected(kLevels * kChains, 0);
    for (uint32_t level = 0; level < kLevels; ++level) expected[level * kChains + 2] = 1;
    ExpectUav(uav, expected);
}

// over_limit_step declares MaxRecords(1) but enqueues two records to Sink per record (VUID-09188). Level 1 is bounded by
// the declaration: with fixed levels, Sink runs four workgroups for the eight records, and the four it cannot run are
// dropped and reported against Sink with the flag that names the cause; which four run depends on the order of the
// producers' allocations. Without fixed levels, all eight run.
TEST_P(FixedLevels, RecordsBeyondTheDeclaredLimitAreDroppedAndReportedNotLost) {
    constexpr uint32_t kEntries = 4;
    const std::vector<NodeStage> stages{{ReadModule("over_limit_step"), "main", "Entry", 0},
                                        {ReadModule("index_sink"), "main", "Sink", 0}};
    std::vector<uint32_t> indices(kEntries);
    for (uint32_t i = 0; i < kEntries; ++i) indices[i] = i;
    TestBuffer& uav = Uav(32);
    RunGraph(stages, uav, {{"Entry", 0, kEntries, indices.data(), sizeof(uint32_t)}});
    uint32_t ran = 0;
    for (uint32_t i = 0; i < 32; ++i) {
        const uint32_t value = uav.As<uint32_t>()[i];
        const bool produced = i < kEntries || (i >= 16 && i < 16 + kEntries);
        EXPECT_TRUE(value == 0 || (produced && value == i + 1)) << "UAV[" << i << "] = " << value;
        ran += value != 0 ? 1 : 0;
    }
    const std::vector<std::string> reports = DroppedWork();
    if (GetParam()) {
        EXPECT_EQ(ran, kEntries);
        ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
        EXPECT_NE(reports[0].find("Node Sink[0]: 4 records dropped from level 1 (a level got more records than its producers' "
                                  "NodeMaxPayloadsAMDX allow"),
                  std::string::npos)
            << reports[0];
    } else {
        EXPECT_EQ(ran, 2 * kEntries);
        EXPECT_TRUE(reports.empty()) << context_.log().Problems();
    }
    context_.log().Clear();
}

INSTANTIATE_TEST_SUITE_P(Setting, FixedLevels, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "On" : "Off"; });

}  // namespace
}  // namespace execgraph::test
