// The `prepared_levels` setting (layer/prepared_levels.h): a graph dispatch's levels recorded once into a secondary
// command buffer and executed again where the same commands would be recorded. The suites of direct levels, linking,
// dispatch commands and the application's state also run with the setting on (PreparedLevels/<suite>.<test>,
// tests/e2e/CMakeLists.txt); these tests check what only the setting does: that repeated dispatches reuse one prepared
// secondary and still run, and that changing what it binds prepares another.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

constexpr char kPreparedLevelsId[] = "EXECGRAPH-PREPARED-LEVELS";

class PreparedLevels : private ScopedEnvironmentVariable, public GraphTest {
  protected:
    PreparedLevels() : ScopedEnvironmentVariable("VK_EXECGRAPH_SHADER_ENQUEUE_PREPARED_LEVELS", "1") {}

    // The host entries of a chain of node arrays: each member of L0 gets its chains' records.
    std::vector<EntryDispatch> ChainEntries(VkPipeline graph, const std::vector<std::vector<ArrayChainRecord>>& entry_records) {
        std::vector<EntryDispatch> entries;
        for (uint32_t member = 0; member < entry_records.size(); ++member) {
            entries.push_back({context_.NodeIndex(graph, "L0", member), static_cast<uint32_t>(entry_records[member].size()),
                               entry_records[member].data(), sizeof(ArrayChainRecord)});
        }
        return entries;
    }

    // A chain of node arrays (ArrayChainStages) with its UAV bound, scratch initialized and the host entries of its
    // chains; `graph` is VK_NULL_HANDLE where creation failed.
    struct ChainGraph {
        TestBuffer* uav = nullptr;
        VkPipelineLayout layout = VK_NULL_HANDLE;
        VkDescriptorSet set = VK_NULL_HANDLE;
        VkPipeline graph = VK_NULL_HANDLE;
        TestBuffer* scratch = nullptr;
        std::vector<EntryDispatch> entries;
        std::vector<uint32_t> expected;                            // the UAV after one dispatch
        std::vector<std::vector<ArrayChainRecord>> entry_records;  // what `entries` point into
    };
    ChainGraph BuildChainGraph(uint32_t width, uint32_t levels, uint32_t chains) {
        ChainGraph chain;
        std::vector<std::string> names;
        const std::vector<NodeStage> stages = ArrayChainStages(width, levels, chains, &names);
        chain.entry_records = ArrayChainEntryRecords(width, chains);
        chain.expected = ArrayChainExpectedUav(width, levels, chains);
        chain.uav = &Uav(levels * chains);
        chain.layout = context_.CreateStorageBufferLayout({chain.uav});
        chain.set = context_.descriptor_set();
        VkResult result = VK_SUCCESS;
        chain.graph = context_.CreateGraph(stages, chain.layout, &result);
        EXPECT_EQ(result, VK_SUCCESS) << context_.log().Problems();
        if (result != VK_SUCCESS) chain.graph = VK_NULL_HANDLE;
        if (chain.graph == VK_NULL_HANDLE) return chain;
        chain.scratch = &PrepareScratch(chain.graph);
        chain.entries = ChainEntries(chain.graph, chain.entry_records);
        return chain;
    }

    // Clears `uav` between two graph dispatches of one command buffer: ordered after the last one's writes and before
    // the next one's.
    static void ClearBetweenDispatches(VkCommandBuffer cmd, const TestBuffer& uav) {
        VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        before.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr,
                             0, nullptr);
        vkCmdFillBuffer(cmd, uav.buffer, 0, uav.size, 0);
        VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        after.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &after, 0, nullptr, 0,
                             nullptr);
    }
};

// A chain of node arrays L0..L5 (dispatch groups; every level direct on both device types): each dispatch's result is
// cleared before the next, so each one shows in the UAV only if it ran. The first dispatch records the prepared
// secondary; the second in the same command buffer and the third in another one execute it again (one
// EXECGRAPH-PREPARED-LEVELS message in all). Pointing the descriptor set at another buffer invalidates the secondary
// that bound it: the fourth dispatch prepares again and writes the new buffer.
TEST_F(PreparedLevels, RepeatedDispatchesExecuteOnePreparedSecondaryUntilItsDescriptorSetChanges) {
    constexpr uint32_t kLevels = 6, kChains = 6;
    const ChainGraph chain = BuildChainGraph(4, kLevels, kChains);
    ASSERT_NE(chain.graph, VK_NULL_HANDLE);
    TestBuffer& uav = *chain.uav;
    TestBuffer& other_uav = Uav(kLevels * kChains);
    const VkDescriptorSet set = chain.set;
    const std::vector<uint32_t>& expected = chain.expected;
    auto dispatch = [&](VkCommandBuffer cmd) {
        BindGraph(cmd, chain.graph, chain.layout, set);
        DispatchHost(cmd, *chain.scratch, chain.entries);
    };

    context_.Submit([&](VkCommandBuffer cmd) {
        dispatch(cmd);
        ClearBetweenDispatches(cmd, uav);
        dispatch(cmd);
    });
    ExpectUav(uav, expected);
    EXPECT_EQ(context_.log().CountWithId(kPreparedLevelsId), 1u);

    std::memset(uav.As<uint32_t>(), 0, uav.size);
    context_.Submit(dispatch);
    ExpectUav(uav, expected);
    EXPECT_EQ(context_.log().CountWithId(kPreparedLevelsId), 1u) << "a dispatch of the same commands prepared its levels again";

    VkDescriptorBufferInfo buffer_info{other_uav.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set;
    write.dstBinding = 0;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &buffer_info;
    vkUpdateDescriptorSets(context_.device(), 1, &write, 0, nullptr);
    std::memset(uav.As<uint32_t>(), 0, uav.size);
    context_.Submit(dispatch);
    ExpectUav(other_uav, expected);
    ExpectUav(uav, {});
    EXPECT_EQ(context_.log().CountWithId(kPreparedLevelsId), 2u)
        << "the secondary that bound the updated descriptor set was executed again";
}

// The application's compute pipeline, descriptor set and push constants, bound before a graph dispatch whose levels are
// prepared, are bound again after it (executing a secondary leaves them undefined): app_compute, dispatched right after
// the graph dispatch without binding anything, writes its two push constants and counts itself in its own buffer.
TEST_F(PreparedLevels, TheApplicationsComputeStateIsBoundAgainAfterPreparedLevels) {
    constexpr uint32_t kWidth = 4, kLevels = 4, kChains = 5;
    std::vector<std::string> names;
    const std::vector<NodeStage> stages = ArrayChainStages(kWidth, kLevels, kChains, &names);
    const std::vector<std::vector<ArrayChainRecord>> entry_records = ArrayChainEntryRecords(kWidth, kChains);

    TestBuffer& uav = Uav(kLevels * kChains);
    TestBuffer& app_buffer = Uav(4);
    VkPipelineLayout graph_layout = context_.CreateStorageBufferLayout({&uav});
    const VkDescriptorSet graph_set = context_.descriptor_set();
    VkPipelineLayout app_layout = context_.CreateStorageBufferLayout({&app_buffer}, 8);
    const VkDescriptorSet app_set = context_.descriptor_set();
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph(stages, graph_layout, &result);
    ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    VkPipeline app_pipeline = context_.CreateComputePipeline({ReadModule("app_compute"), "main"}, app_layout);
    ASSERT_NE(app_pipeline, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    const std::vector<EntryDispatch> entries = ChainEntries(graph, entry_records);
    for (uint32_t round = 0; round < 2; ++round) {  // the second round executes the secondary the first one prepared
        std::memset(app_buffer.As<uint32_t>(), 0, app_buffer.size);
        std::memset(uav.As<uint32_t>(), 0, uav.size);
        const uint32_t constants[2] = {1000 + round, 2222};
        context_.Submit([&](VkCommandBuffer cmd) {
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, app_pipeline);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, app_layout, 0, 1, &app_set, 0, nullptr);
            vkCmdPushConstants(cmd, app_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(constants), constants);
            BindGraph(cmd, graph, graph_layout, graph_set);
            DispatchHost(cmd, scratch, entries);
            vkCmdDispatch(cmd, 1, 1, 1);
        });
        ExpectUav(uav, ArrayChainExpectedUav(kWidth, kLevels, kChains));
        ExpectUav(app_buffer, {1000 + round, 2222, 1});
    }
    EXPECT_EQ(context_.log().CountWithId(kPreparedLevelsId), 1u);
}

// A primary with an active query cannot execute a secondary that inherits none (VUID-vkCmdExecuteCommands-commandBuffer-00101
// where inheritedQueries is off, as on lavapipe): a dispatch inside an occlusion query records its levels directly, and
// the next one after the query's end in the same command buffer prepares them. The validation layer below checks every
// command; the UAV is cleared between the two dispatches, so each result shows only if that dispatch ran.
TEST_F(PreparedLevels, ADispatchInsideAnActiveQueryRecordsItsLevelsDirectly) {
    constexpr uint32_t kLevels = 4, kChains = 5;
    const ChainGraph chain = BuildChainGraph(4, kLevels, kChains);
    ASSERT_NE(chain.graph, VK_NULL_HANDLE);
    TestBuffer& uav = *chain.uav;
    TestBuffer& copy = Uav(kLevels * kChains);
    VkQueryPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    pool_info.queryType = VK_QUERY_TYPE_OCCLUSION;
    pool_info.queryCount = 1;
    VkQueryPool pool = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateQueryPool(context_.device(), &pool_info, nullptr, &pool), VK_SUCCESS);

    context_.Submit([&](VkCommandBuffer cmd) {
        vkCmdResetQueryPool(cmd, pool, 0, 1);
        vkCmdBeginQuery(cmd, pool, 0, 0);
        BindGraph(cmd, chain.graph, chain.layout, chain.set);
        DispatchHost(cmd, *chain.scratch, chain.entries);
        vkCmdEndQuery(cmd, pool, 0);
        // The first dispatch's result, kept before the UAV is cleared for the second.
        VkMemoryBarrier to_copy{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        to_copy.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        to_copy.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &to_copy, 0, nullptr,
                             0, nullptr);
        const VkBufferCopy region{0, 0, uav.size};
        vkCmdCopyBuffer(cmd, uav.buffer, copy.buffer, 1, &region);
        // The copy's read of the UAV before the clear's write (an execution dependency is enough after a read).
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 0,
                             nullptr);
        ClearBetweenDispatches(cmd, uav);
        DispatchHost(cmd, *chain.scratch, chain.entries);
    });
    ExpectUav(copy, chain.expected);
    ExpectUav(uav, chain.expected);
    EXPECT_EQ(context_.log().CountWithId(kPreparedLevelsId), 1u) << "only the dispatch after the query's end prepares its levels";
    uint64_t samples = ~0ull;
    EXPECT_EQ(vkGetQueryPoolResults(context_.device(), pool, 0, 1, sizeof(samples), &samples, sizeof(samples),
                                    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              VK_SUCCESS);
    EXPECT_EQ(samples, 0u) << "the query around compute work counted samples";
    vkDestroyQueryPool(context_.device(), pool, nullptr);
}

}  // namespace
}  // namespace execgraph::test
