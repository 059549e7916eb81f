// Robustness through the layer (issue 5): bad input gets an error VkResult where the API has one, otherwise the command
// is skipped, and always a debug-utils message; allocation failures return VK_ERROR_OUT_OF_HOST_MEMORY; teardown in the
// wrong order does not crash; many threads may create, record, submit and destroy at once. The validation layer runs
// below the layer with synchronization validation, and any message a test does not expect fails it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "amdx_assembler.h"
#include "graph_test_context.h"
#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

// tests/spirv_corpus/thread_node.spvasm: a thread node whose record {index, value} stores UAV[index] = value.
struct IndexValueRecord {
    uint32_t index;
    uint32_t value;
};

NodeStage ThreadNodeStage() { return {ReadCorpus("thread_node"), "main"}; }

std::vector<IndexValueRecord> IndexValueRecords(uint32_t count, uint32_t base) {
    std::vector<IndexValueRecord> records(count);
    for (uint32_t i = 0; i < count; ++i) records[i] = {i, base + i};
    return records;
}

VkDispatchGraphInfoAMDX HostInfo(uint32_t node_index, const std::vector<IndexValueRecord>& records) {
    VkDispatchGraphInfoAMDX info{node_index, static_cast<uint32_t>(records.size()), {}, sizeof(IndexValueRecord)};
    info.payloads.hostAddress = records.data();
    return info;
}

size_t CountMessages(const MessageLog& log, const std::string& id, const std::string& needle) {
    size_t count = 0;
    for (const MessageLog::Message& message : log.Messages()) {
        count += message.id == id && message.text.find(needle) != std::string::npos;
    }
    return count;
}

class Robustness : public GraphTest {
  protected:
    // Records and submits one command buffer without waiting; the caller waits on the returned fence.
    VkFence SubmitWithoutWaiting(VkCommandPool pool, const std::function<void(VkCommandBuffer)>& record) {
        VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, pool,
                                             VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        EXPECT_EQ(vkAllocateCommandBuffers(context_.device(), &allocate, &cmd), VK_SUCCESS);
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        vkBeginCommandBuffer(cmd, &begin);
        record(cmd);
        EXPECT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
        VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkFence fence = VK_NULL_HANDLE;
        EXPECT_EQ(vkCreateFence(context_.device(), &fence_info, nullptr, &fence), VK_SUCCESS);
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        EXPECT_EQ(vkQueueSubmit(context_.queue(), 1, &submit, fence), VK_SUCCESS);
        return fence;
    }

    // What vkCreateExecutionGraphPipelinesAMDX takes for a graph of one node, entry point "main" of an AMDX module. The
    // layer keeps AMDX modules and parses them at pipeline creation (vkCreateShaderModule has no error code for bad
    // SPIR-V without VK_NV_glsl_shader), so the module is created whatever `words` hold.
    struct OneNodeGraph {
        VkShaderModule module = VK_NULL_HANDLE;
        VkPipelineShaderStageCreateInfo stage{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
    };
    void PrepareOneNodeGraph(const std::vector<uint32_t>& words, VkPipelineLayout layout, OneNodeGraph& graph) {
        VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        module_info.codeSize = words.size() * sizeof(uint32_t);
        module_info.pCode = words.data();
        ASSERT_EQ(vkCreateShaderModule(context_.device(), &module_info, nullptr, &graph.module), VK_SUCCESS);
        graph.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        graph.stage.module = graph.module;
        graph.stage.pName = "main";
        graph.create_info.stageCount = 1;
        graph.create_info.pStages = &graph.stage;
        graph.create_info.layout = layout;
        graph.create_info.basePipelineIndex = -1;
    }

    // Creating a one-node graph from the AMDX module `words` must fail with VK_ERROR_UNKNOWN, a null pipeline and one
    // EXECGRAPH-PIPELINE-CREATION message containing `needle`.
    void ExpectLevelOneRefusesTablesNotInitializedForTheGraph(uint32_t sinks, const char* sink_module);
    void ExpectGraphCreationFails(const std::vector<uint32_t>& words, const std::string& needle) {
        TestBuffer& uav = Uav(8);
        OneNodeGraph one;
        PrepareOneNodeGraph(words, context_.CreateStorageBufferLayout({&uav}), one);
        VkPipeline graph = reinterpret_cast<VkPipeline>(uintptr_t{0x1234});
        EXPECT_EQ(
            context_.vkCreateExecutionGraphPipelinesAMDX(context_.device(), VK_NULL_HANDLE, 1, &one.create_info, nullptr, &graph),
            VK_ERROR_UNKNOWN);
        EXPECT_EQ(graph, VK_NULL_HANDLE);
        EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-PIPELINE-CREATION", needle), 1u) << context_.log().Problems();
        vkDestroyShaderModule(context_.device(), one.module, nullptr);
        context_.log().Clear();
    }

    VkCommandPool CreatePool() {
        VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool_info.queueFamilyIndex = context_.queue_family();
        VkCommandPool pool = VK_NULL_HANDLE;
        EXPECT_EQ(vkCreateCommandPool(context_.device(), &pool_info, nullptr, &pool), VK_SUCCESS);
        return pool;
    }
};

// ---- Bad shaders ----------------------------------------------------------------------------------------------------

// An AMDX module whose instruction stream is cut off fails graph creation with an error VkResult and a message.
TEST_F(Robustness, MalformedAmdxModuleFailsGraphCreationWithAMessage) {
    AssembleResult assembled = AssembleAmdx(ReadCorpus("thread_node"));
    ASSERT_TRUE(assembled.error.empty()) << assembled.error;
    std::vector<uint32_t> words = assembled.words;
    words.resize(words.size() * 2 / 3);  // ends in the middle of the module
    words.push_back((9u << 16) | 54u);   // an OpFunction that claims more words than remain
    ExpectGraphCreationFails(words, "vkCreateExecutionGraphPipelinesAMDX: pCreateInfos[0]");
}

// A well-formed module whose id bound is near 2^32 (a fuzzer's find): the lowering's fresh ids would wrap onto the
// module's own, so it is refused, naming SPIR-V's universal limit, instead of lowered into a corrupt module or a crash.
TEST_F(Robustness, AmdxModuleWithAnIdBoundBeyondTheUniversalLimitIsRefused) {
    AssembleResult assembled = AssembleAmdx(ReadCorpus("thread_node"));
    ASSERT_TRUE(assembled.error.empty()) << assembled.error;
    std::vector<uint32_t> words = assembled.words;
    words[3] = 0xFFFFFFDEu;  // the header's bound
    ExpectGraphCreationFails(words, "exceeds SPIR-V's universal limit of 4194303");
}

// A module of the withdrawn 2023 revision of SPV_AMDX_shader_enqueue (different opcodes and storage classes) is refused
// at graph creation, through the layer, with an error VkResult and a message naming the revision.
TEST_F(Robustness, Revision2023AmdxModuleIsRefusedWithAMessage) {
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph({{ReadCorpus("revision2023_reject"), "main"}}, layout, &result);
    EXPECT_EQ(result, VK_ERROR_UNKNOWN);
    EXPECT_EQ(graph, VK_NULL_HANDLE);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-PIPELINE-CREATION", "2023"), 1u) << context_.log().Problems();
    context_.log().Clear();
}

// The layer appends its 32-byte NodePushContext after the application's push constants (docs/design.md, "How a node
// receives its scheduler context"). A graph layout that leaves exactly that room works, and the node still reads the
// application's constants; one that leaves 8 bytes less is refused at creation with an error VkResult and a message that
// names the sizes, instead of a pipeline whose push constants overrun the device's limit.
TEST_F(Robustness, PushConstantsLeavingTooLittleRoomForTheContextAreRefused) {
    VkPhysicalDeviceProperties properties{};
    vkGetPhysicalDeviceProperties(context_.physical_device(), &properties);
    const uint32_t room = 32;
    ASSERT_GE(properties.limits.maxPushConstantsSize, room + 16);
    TestBuffer& uav = Uav(16);

    VkPipelineLayout fitting = context_.CreateStorageBufferLayout({&uav}, properties.limits.maxPushConstantsSize - room);
    VkPipeline graph = context_.CreateGraph({{ReadModule("push_constant_node"), "main"}}, fitting);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    struct IdxValue {
        uint32_t idx, v;
    };
    const std::vector<IdxValue> records = {{3, 5}, {7, 9}};
    const uint32_t constants[2] = {40, 0};
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, fitting, context_.descriptor_set());
        vkCmdPushConstants(cmd, fitting, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(constants), constants);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "main", 0), 2, records.data(), sizeof(IdxValue)}});
    });
    ExpectUav(uav, {0, 0, 0, 45, 0, 0, 0, 49});

    VkPipelineLayout crowded = context_.CreateStorageBufferLayout({&uav}, properties.limits.maxPushConstantsSize - room + 8);
    VkResult result = VK_SUCCESS;
    EXPECT_EQ(context_.CreateGraph({{ReadModule("push_constant_node"), "main"}}, crowded, &result), VK_NULL_HANDLE);
    EXPECT_EQ(result, VK_ERROR_UNKNOWN);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-PIPELINE-CREATION", "needs 32 more"), 1u) << context_.log().Problems();
    context_.log().Clear();
}

// ---- Bad API use ----------------------------------------------------------------------------------------------------

// Unknown node names: a graph whose node enqueues to a node that is not in it fails creation, and asking a graph for a
// node index by a name it does not have fails the query; both with VK_ERROR_UNKNOWN and a message naming the node.
TEST_F(Robustness, UnknownNodeNamesAreRefusedWithAMessage) {
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkResult result = VK_SUCCESS;
    // hello_first_node enqueues to "secondNode", which this graph lacks.
    EXPECT_EQ(context_.CreateGraph({{ReadCorpus("hello_first_node"), "firstNode"}}, layout, &result), VK_NULL_HANDLE);
    EXPECT_EQ(result, VK_ERROR_UNKNOWN);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-PIPELINE-CREATION", "which is not in the graph"), 1u)
        << context_.log().Problems();

    VkPipeline graph = context_.CreateGraph({ThreadNodeStage()}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    VkPipelineShaderStageNodeCreateInfoAMDX node{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, nullptr,
                                                 "noSuchNode", 0};
    uint32_t node_index = 12345;
    EXPECT_EQ(context_.vkGetExecutionGraphPipelineNodeIndexAMDX(context_.device(), graph, &node, &node_index), VK_ERROR_UNKNOWN);
    EXPECT_EQ(node_index, 12345u);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-INVALID-USAGE", "has no node \"noSuchNode\"[0]"), 1u)
        << context_.log().Problems();
    context_.log().Clear();
}

// Graph commands are primary-only (cmdbufferlevel="primary", VUID-*-commandBuffer-09182): in a secondary command buffer
// all four are skipped with a message each, and executing that secondary runs nothing.
TEST_F(Robustness, GraphCommandsInSecondaryCommandBuffersAreSkipped) {
    TestBuffer& uav = Uav(64);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({ThreadNodeStage()}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    const std::vector<IndexValueRecord> records = IndexValueRecords(16, 1);
    VkDispatchGraphInfoAMDX info = HostInfo(context_.NodeIndex(graph, "main", 0), records);
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    // Device-side entry data for the two indirect commands (never read: the commands are refused first).
    TestBuffer& device_infos = Own(context_.CreateBuffer(256, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    VkDispatchGraphCountInfoAMDX device_count_info{1, {}, sizeof(info)};
    device_count_info.infos.deviceAddress = device_infos.address;

    VkCommandPool pool = CreatePool();
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, pool,
                                         VK_COMMAND_BUFFER_LEVEL_SECONDARY, 1};
    VkCommandBuffer secondary = VK_NULL_HANDLE;
    ASSERT_EQ(vkAllocateCommandBuffers(context_.device(), &allocate, &secondary), VK_SUCCESS);
    VkCommandBufferInheritanceInfo inheritance{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.pInheritanceInfo = &inheritance;
    ASSERT_EQ(vkBeginCommandBuffer(secondary, &begin), VK_SUCCESS);
    BindGraph(secondary, graph, layout, context_.descriptor_set());
    context_.vkCmdInitializeGraphScratchMemoryAMDX(secondary, graph, scratch.address, scratch.size);
    context_.vkCmdDispatchGraphAMDX(secondary, scratch.address, scratch.size, &count_info);
    context_.vkCmdDispatchGraphIndirectAMDX(secondary, scratch.address, scratch.size, &device_count_info);
    context_.vkCmdDispatchGraphIndirectCountAMDX(secondary, scratch.address, scratch.size, device_infos.address);
    ASSERT_EQ(vkEndCommandBuffer(secondary), VK_SUCCESS);
    context_.Submit([&](VkCommandBuffer cmd) { vkCmdExecuteCommands(cmd, 1, &secondary); });

    for (const char* command : {"vkCmdInitializeGraphScratchMemoryAMDX", "vkCmdDispatchGraphAMDX", "vkCmdDispatchGraphIndirectAMDX",
                                "vkCmdDispatchGraphIndirectCountAMDX"}) {
        EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DISPATCH", std::string(command) + ": must be recorded in a primary"), 1u)
            << command << "\n"
            << context_.log().Problems();
    }
    EXPECT_EQ(context_.log().CountWithId("EXECGRAPH-DISPATCH"), 4u) << context_.log().Problems();
    ExpectUav(uav, {});  // nothing ran
    vkDestroyCommandPool(context_.device(), pool, nullptr);
    context_.log().Clear();
}

// Scratch that was never initialised (facts §11, VUID-vkCmdDispatchGraphAMDX-scratch-10194) is detected on the GPU (no
// scratch header for this graph) where the entry pass runs: no node runs and the application is told by the time its
// wait returns. vkCmdDispatchGraphIndirectAMDX reads its infos and payloads on the device, so the entry pass runs.
TEST_F(Robustness, UninitializedScratchIsReportedAndNothingRunsWhereTheEntryPassChecks) {
    TestBuffer& uav = Uav(64);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({ThreadNodeStage()}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
    TestBuffer& scratch = Own(context_.CreateScratch(size.minSize));  // never initialised
    // One VkDispatchGraphInfoAMDX, then its 16 payloads, in one device buffer.
    const std::vector<IndexValueRecord> records = IndexValueRecords(16, 1);
    TestBuffer& entry_data = Own(context_.CreateBuffer(256, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    VkDispatchGraphInfoAMDX info{
        context_.NodeIndex(graph, "main", 0), static_cast<uint32_t>(records.size()), {}, sizeof(IndexValueRecord)};
    info.payloads.deviceAddress = entry_data.address + 64;
    std::memcpy(entry_data.As<uint8_t>(), &info, sizeof(info));
    std::memcpy(entry_data.As<uint8_t>() + 64, records.data(), records.size() * sizeof(IndexValueRecord));
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.deviceAddress = entry_data.address;
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphIndirectAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    ExpectUav(uav, {});
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "16 records were dropped (scratch was not initialized"), 1u)
        << context_.log().Problems();
    context_.log().Clear();
}

// vkCmdDispatchGraphAMDX of a graph whose level 0 is direct (a thread node) has no entry pass: the begin transfers write
// and prepare level 0, and rewrite the node and output tables, so the dispatch reads nothing that initialization wrote
// (layer/scheduler.cpp, HostLevelZero). Uninitialised scratch then cannot misdirect it: the records run, and the report
// still names the missing initialization.
TEST_F(Robustness, UninitializedScratchIsReportedWhereTheHostPreparedADirectLevelZero) {
    TestBuffer& uav = Uav(64);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({ThreadNodeStage()}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
    TestBuffer& scratch = Own(context_.CreateScratch(size.minSize));  // never initialised
    const std::vector<IndexValueRecord> records = IndexValueRecords(16, 1);
    VkDispatchGraphInfoAMDX info = HostInfo(context_.NodeIndex(graph, "main", 0), records);
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    std::vector<uint32_t> expected(64, 0);
    for (const IndexValueRecord& record : records) expected[record.index] = record.value;
    ExpectUav(uav, expected);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "scratch was not initialized for this graph"), 1u)
        << context_.log().Problems();
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "No record was dropped"), 1u) << context_.log().Problems();
    EXPECT_EQ(context_.log().CountWithId("EXECGRAPH-DROPPED-WORK"), 1u) << context_.log().Problems();
    context_.log().Clear();
}

// Every dispatch starts from cleared counters, node states and statistics, whichever way the begin clears their runs
// (inline zeros up to kInlineZeroMaxBytes, vkCmdFillBuffer beyond: layer/scheduler.cpp). A 1025-node graph has three runs
// of more than 16 KiB (half 0's and half 1's node states, the statistics after Entry's), and after a dispatch half 1
// holds the sinks' record counts and directory bases: a second dispatch on the same scratch that did not clear them
// would run the first one's records again or lose its own.
TEST_F(Robustness, DispatchesOfALargeGraphStartFromClearedScratch) {
    constexpr uint32_t kSinks = 1024;
    TestBuffer& uav = Uav(2 * kSinks);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph(ClassificationStages(kSinks), layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
    TestBuffer& scratch = Own(context_.CreateScratch(size.minSize));
    ASSERT_NE(scratch.mapped, nullptr);
    std::memset(scratch.mapped, 0xA5, scratch.size);  // initialization must clear what the dispatches read
    context_.Submit(
        [&](VkCommandBuffer cmd) { context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size); });
    struct ClassifyRecord {
        uint32_t node_idx, value;
    };
    const std::vector<std::vector<ClassifyRecord>> dispatches = {
        {{3, 10}, {kSinks - 1, 7}, {600, 1}}, {{5, 20}, {kSinks - 1, 9}}, {{3, 30}, {0, 2}, {5, 4}, {600, 8}}};
    std::vector<uint32_t> expected(2 * kSinks, 0);
    for (const std::vector<ClassifyRecord>& records : dispatches) {
        VkDispatchGraphInfoAMDX info{
            context_.NodeIndex(graph, "Entry", 0), static_cast<uint32_t>(records.size()), {}, sizeof(ClassifyRecord)};
        info.payloads.hostAddress = records.data();
        VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
        count_info.infos.hostAddress = &info;
        context_.Submit([&](VkCommandBuffer cmd) {
            BindGraph(cmd, graph, layout, context_.descriptor_set());
            context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
        });
        // Each Entry record sends 8 records {value + thread} to its sink, which adds them up and counts them.
        for (const ClassifyRecord& record : records) {
            for (uint32_t thread = 0; thread < 8; ++thread) expected[2 * record.node_idx] += record.value + thread;
            expected[2 * record.node_idx + 1] += 8;
        }
        ExpectUav(uav, expected);
    }
    EXPECT_EQ(context_.log().Problems(), "");
}

// A dispatch that rewrote the tables (above) leaves them another graph's in scratch that was initialised for this one.
// This graph's level 0 has a level pass (its dispatch names two nodes), which checks initialization: it must not trust
// those tables (GraphHeader::tables_tag), so nothing runs and the records are reported, until scratch is initialised
// again. Graph "two" has two thread nodes main[0] and main[1], graph "one" a single thread node.
TEST_F(Robustness, TablesAnotherGraphsDispatchRewroteAreNotTrusted) {
    TestBuffer& uav = Uav(64);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline two = context_.CreateGraph({ThreadNodeStage(), {ReadCorpus("thread_node"), "main", "main", 1}}, layout);
    VkPipeline one = context_.CreateGraph({ThreadNodeStage()}, layout);
    ASSERT_NE(two, VK_NULL_HANDLE) << context_.log().Problems();
    ASSERT_NE(one, VK_NULL_HANDLE) << context_.log().Problems();
    VkDeviceSize min_size = 0;
    for (VkPipeline graph : {two, one}) {
        VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
        ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
        min_size = std::max(min_size, size.minSize);
    }
    TestBuffer& scratch = Own(context_.CreateScratch(min_size));
    // "two": main[0] stores to UAV words 0..15, main[1] to 16..31. "one": values from 500 to words 40..47.
    const std::vector<IndexValueRecord> first = IndexValueRecords(16, 1);
    std::vector<IndexValueRecord> second = IndexValueRecords(16, 100);
    for (IndexValueRecord& record : second) record.index += 16;
    std::vector<IndexValueRecord> third = IndexValueRecords(8, 500);
    for (IndexValueRecord& record : third) record.index += 40;
    VkDispatchGraphInfoAMDX two_infos[2] = {HostInfo(context_.NodeIndex(two, "main", 0), first),
                                            HostInfo(context_.NodeIndex(two, "main", 1), second)};
    VkDispatchGraphCountInfoAMDX two_count_info{2, {}, sizeof(VkDispatchGraphInfoAMDX)};
    two_count_info.infos.hostAddress = two_infos;
    VkDispatchGraphInfoAMDX one_info = HostInfo(context_.NodeIndex(one, "main", 0), third);
    VkDispatchGraphCountInfoAMDX one_count_info{1, {}, sizeof(one_info)};
    one_count_info.infos.hostAddress = &one_info;

    // Initialised for "two", dispatched with "one": "one" runs on the tables it wrote, and is reported.
    context_.Submit([&](VkCommandBuffer cmd) {
        context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, two, scratch.address, scratch.size);
        BindGraph(cmd, one, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &one_count_info);
    });
    std::vector<uint32_t> expected(64, 0);
    for (const IndexValueRecord& record : third) expected[record.index] = record.value;
    ExpectUav(uav, expected);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "No record was dropped"), 1u) << context_.log().Problems();
    context_.log().Clear();

    // Then "two" without initialising again: its level pass finds "one"'s tables, so none of its 32 records runs.
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, two, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &two_count_info);
    });
    ExpectUav(uav, expected);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "32 records were dropped (scratch was not initialized"), 1u)
        << context_.log().Problems();
    context_.log().Clear();

    // Initialised again, "two" runs all of them.
    context_.Submit([&](VkCommandBuffer cmd) {
        context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, two, scratch.address, scratch.size);
        BindGraph(cmd, two, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &two_count_info);
    });
    for (const std::vector<IndexValueRecord>* records : {&first, static_cast<const std::vector<IndexValueRecord>*>(&second)}) {
        for (const IndexValueRecord& record : *records) expected[record.index] = record.value;
    }
    ExpectUav(uav, expected);
    EXPECT_EQ(context_.log().Problems(), "");
}

// A graph whose tables are too large to rewrite with every dispatch (layer/scheduler.cpp, TablesRewrite) still has its
// level 0 prepared on the host, with only the tables that level 0 reads rewritten, and whoever prepares level 1 checks
// initialization before level 1's nodes trust the rest. In scratch full of garbage, level 0 runs on what was rewritten
// and level 1's records are reported, not run on garbage tables. Initialized, everything runs. After another graph's
// dispatch rewrote all of its own (smaller) tables, level 1 again refuses them, until scratch is initialized again.
// `sink_module` names the members of Entry's output array (ClassificationStages): with array_sink, coalescing nodes,
// level 1 has a level pass that checks; with array_static_sink, static broadcast nodes, level 1 is direct with their
// dispatch group as consumer, and Entry's last workgroup checks in its hand-off (runtime::kDirectLevelChecksInitialization).
void Robustness::ExpectLevelOneRefusesTablesNotInitializedForTheGraph(uint32_t sinks, const char* sink_module) {
    const bool static_sinks = std::string(sink_module) == "array_static_sink";
    const uint32_t words_per_sink = static_sinks ? 4 : 2;
    TestBuffer& uav = Uav(words_per_sink * sinks + 16);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline large = context_.CreateGraph(ClassificationStages(sinks, sink_module), layout);
    VkPipeline small = context_.CreateGraph({ThreadNodeStage()}, layout);
    ASSERT_NE(large, VK_NULL_HANDLE) << context_.log().Problems();
    ASSERT_NE(small, VK_NULL_HANDLE) << context_.log().Problems();
    VkDeviceSize min_size = 0;
    for (VkPipeline graph : {large, small}) {
        VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
        ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
        min_size = std::max(min_size, size.minSize);
    }
    TestBuffer& scratch = Own(context_.CreateScratch(min_size));
    ASSERT_NE(scratch.mapped, nullptr);
    std::memset(scratch.mapped, 0xA5, scratch.size);  // never initialized, and not zero either
    struct ClassifyRecord {
        uint32_t node_idx, value;
    };
    const ClassifyRecord classify[] = {{2, 10}, {sinks - 1, 7}, {0, 100}};
    VkDispatchGraphInfoAMDX large_info{context_.NodeIndex(large, "Entry", 0), 3, {}, sizeof(ClassifyRecord)};
    large_info.payloads.hostAddress = classify;
    VkDispatchGraphCountInfoAMDX large_count_info{1, {}, sizeof(large_info)};
    large_count_info.infos.hostAddress = &large_info;
    auto dispatch_large = [&](bool initialize) {
        context_.Submit([&](VkCommandBuffer cmd) {
            if (initialize) context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, large, scratch.address, scratch.size);
            BindGraph(cmd, large, layout, context_.descriptor_set());
            context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &large_count_info);
        });
    };
    // Each Entry record sends 8 records {value + thread} to its sink.
    std::vector<uint32_t> expected(words_per_sink * sinks + 16, 0);
    auto add_classify_records = [&]() {
        for (const ClassifyRecord& record : classify) {
            for (uint32_t thread = 0; thread < 8; ++thread) {
                if (static_sinks) {
                    AddStaticSinkRecord(expected, record.node_idx, record.value + thread);
                } else {
                    expected[2 * record.node_idx] += record.value + thread;
                    expected[2 * record.node_idx + 1] += 1;
                }
            }
        }
    };
    add_classify_records();

    dispatch_large(false);
    ExpectUav(uav, {});
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "24 records were dropped (scratch was not initialized"), 1u)
        << context_.log().Problems();
    // Charged to the sinks that lost them, at level 1: B[0] 8, B[2] 8 and B[sinks - 1] 8.
    for (const uint32_t sink : {0u, 2u, sinks - 1}) {
        const std::string charge =
            "Node B[" + std::to_string(sink) + "]: 8 records dropped from level 1 (scratch was not initialized";
        EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", charge), 1u) << context_.log().Problems();
    }
    EXPECT_EQ(context_.log().CountWithId("EXECGRAPH-DROPPED-WORK"), 1u) << context_.log().Problems();
    context_.log().Clear();

    dispatch_large(true);
    ExpectUav(uav, expected);
    EXPECT_EQ(context_.log().Problems(), "");

    // "small" rewrites all of its tables (and their tag) in scratch initialized for "large": it runs, and is reported (its
    // one level of a leaf node keeps its report because the latest initialization recorded there was "large"'s).
    std::vector<IndexValueRecord> small_records = IndexValueRecords(8, 500);
    for (IndexValueRecord& record : small_records) record.index += words_per_sink * sinks;
    VkDispatchGraphInfoAMDX small_info = HostInfo(context_.NodeIndex(small, "main", 0), small_records);
    VkDispatchGraphCountInfoAMDX small_count_info{1, {}, sizeof(small_info)};
    small_count_info.infos.hostAddress = &small_info;
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, small, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &small_count_info);
    });
    for (const IndexValueRecord& record : small_records) expected[record.index] = record.value;
    ExpectUav(uav, expected);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "No record was dropped"), 1u) << context_.log().Problems();
    context_.log().Clear();

    // "large" again: level 0 runs on its own rewritten tables, level 1 finds "small"'s tag and runs nothing.
    dispatch_large(false);
    ExpectUav(uav, expected);
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "24 records were dropped (scratch was not initialized"), 1u)
        << context_.log().Problems();
    context_.log().Clear();

    // Initialized again, all of it runs.
    dispatch_large(true);
    add_classify_records();
    ExpectUav(uav, expected);
    EXPECT_EQ(context_.log().Problems(), "");
}

TEST_F(Robustness, ALargeGraphsLevelOneChecksInitializationWhereTheHostRewroteOnlyLevelZerosTables) {
    ExpectLevelOneRefusesTablesNotInitializedForTheGraph(300, "array_sink");  // 301 nodes, 20 KB of tables
}

TEST_F(Robustness, ALargeGraphsDirectGroupLevelOneIsCheckedByLevelZerosHandOff) {
    ExpectLevelOneRefusesTablesNotInitializedForTheGraph(1024, "array_static_sink");  // 1025 nodes, 68 KB of tables
}

// The same where level 0 has a level pass: a dispatch naming two nodes. The host then writes level 0's records with the
// begin transfers and no entry pass runs (layer/scheduler.cpp, HostLevelZero), so level 0's level pass makes the check.
TEST_F(Robustness, UninitializedScratchIsReportedWhereTheHostWroteLevelZero) {
    TestBuffer& uav = Uav(64);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({ThreadNodeStage(), {ReadCorpus("thread_node"), "main", "main", 1}}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
    TestBuffer& scratch = Own(context_.CreateScratch(size.minSize));  // never initialised
    // Each node's records store to their own UAV words: main[0] to 0..15, main[1] to 16..31.
    const std::vector<IndexValueRecord> first = IndexValueRecords(16, 1);
    std::vector<IndexValueRecord> second = IndexValueRecords(16, 100);
    for (IndexValueRecord& record : second) record.index += 16;
    VkDispatchGraphInfoAMDX infos[2] = {HostInfo(context_.NodeIndex(graph, "main", 0), first),
                                        HostInfo(context_.NodeIndex(graph, "main", 1), second)};
    VkDispatchGraphCountInfoAMDX count_info{2, {}, sizeof(VkDispatchGraphInfoAMDX)};
    count_info.infos.hostAddress = infos;
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    ExpectUav(uav, {});
    EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-DROPPED-WORK", "not initialized"), 1u) << context_.log().Problems();
    context_.log().Clear();

    // Initialised, the same dispatch runs both nodes' records.
    context_.Submit([&](VkCommandBuffer cmd) {
        context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size);
        BindGraph(cmd, graph, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    std::vector<uint32_t> expected(64, 0);
    for (const std::vector<IndexValueRecord>* records : {&first, static_cast<const std::vector<IndexValueRecord>*>(&second)}) {
        for (const IndexValueRecord& record : *records) expected[record.index] = record.value;
    }
    ExpectUav(uav, expected);
    EXPECT_EQ(context_.log().Problems(), "");
}

// ---- Out of memory --------------------------------------------------------------------------------------------------

// Host allocation callbacks that fail after a budget of allocations. The layer passes the application's callbacks to
// every object it creates for a graph, so each budget makes a different one of those creations fail.
class FailingAllocator {
  public:
    explicit FailingAllocator(int budget) : budget_(budget) {}
    VkAllocationCallbacks Callbacks() {
        VkAllocationCallbacks callbacks{};
        callbacks.pUserData = this;
        callbacks.pfnAllocation = [](void* user, size_t size, size_t alignment, VkSystemAllocationScope) -> void* {
            auto* self = static_cast<FailingAllocator*>(user);
            if (self->budget_.fetch_sub(1) <= 0) return nullptr;
            void* memory = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
            if (memory != nullptr) ++self->live_;
            return memory;
        };
        callbacks.pfnReallocation = [](void* user, void* original, size_t size, size_t alignment,
                                       VkSystemAllocationScope) -> void* {
            auto* self = static_cast<FailingAllocator*>(user);
            if (self->budget_.fetch_sub(1) <= 0) return nullptr;
            void* memory = std::realloc(original, size);  // the drivers ask for at most malloc's alignment here
            if (original == nullptr && memory != nullptr) ++self->live_;
            return memory;
        };
        callbacks.pfnFree = [](void* user, void* memory) {
            if (memory == nullptr) return;
            --static_cast<FailingAllocator*>(user)->live_;
            std::free(memory);
        };
        return callbacks;
    }
    int live() const { return live_; }

  private:
    std::atomic<int> budget_;
    std::atomic<int> live_{0};
};

// Every allocation budget from 0 up until creation succeeds: each failure returns VK_ERROR_OUT_OF_HOST_MEMORY with a
// message and no pipeline, and frees everything it had made (the allocator's live count is back to zero).
TEST_F(Robustness, AllocationFailuresDuringGraphCreationReturnOutOfHostMemory) {
    TestBuffer& uav = Uav(64);
    AssembleResult assembled = AssembleAmdx(ReadCorpus("thread_node"));
    ASSERT_TRUE(assembled.error.empty()) << assembled.error;
    OneNodeGraph one;
    PrepareOneNodeGraph(assembled.words, context_.CreateStorageBufferLayout({&uav}), one);
    const VkExecutionGraphPipelineCreateInfoAMDX& create_info = one.create_info;

    int failures = 0;
    VkPipeline graph = VK_NULL_HANDLE;
    for (int budget = 0; budget < 256 && graph == VK_NULL_HANDLE; ++budget) {
        FailingAllocator allocator(budget);
        const VkAllocationCallbacks callbacks = allocator.Callbacks();
        context_.log().Clear();
        const VkResult result =
            context_.vkCreateExecutionGraphPipelinesAMDX(context_.device(), VK_NULL_HANDLE, 1, &create_info, &callbacks, &graph);
        if (result == VK_SUCCESS) {
            ASSERT_NE(graph, VK_NULL_HANDLE);
            EXPECT_EQ(context_.log().Problems(), "");
            vkDestroyPipeline(context_.device(), graph, &callbacks);
            EXPECT_EQ(allocator.live(), 0) << "budget " << budget;
            break;
        }
        ++failures;
        EXPECT_EQ(result, VK_ERROR_OUT_OF_HOST_MEMORY) << "budget " << budget;
        EXPECT_EQ(graph, VK_NULL_HANDLE);
        EXPECT_EQ(CountMessages(context_.log(), "EXECGRAPH-PIPELINE-CREATION", "pCreateInfos[0]"), 1u)
            << "budget " << budget << "\n"
            << context_.log().Problems();
        EXPECT_EQ(allocator.live(), 0) << "budget " << budget << ": the failed creation leaked";
    }
    EXPECT_NE(graph, VK_NULL_HANDLE) << "creation never succeeded";
    EXPECT_GT(failures, 0) << "the driver never used the allocation callbacks, so nothing was tested";
    vkDestroyShaderModule(context_.device(), one.module, nullptr);
    context_.log().Clear();
}

// std::bad_alloc inside the layer (injected through the test hook EXECGRAPH_TEST_INJECT_BAD_ALLOC, read at instance
// creation) never crosses the C ABI: a command with a VkResult returns VK_ERROR_OUT_OF_HOST_MEMORY, a void command is
// skipped, and both say so through debug utils.
TEST(OutOfMemory, BadAllocInsideTheLayerBecomesAnErrorNotACrash) {
    setenv("EXECGRAPH_TEST_INJECT_BAD_ALLOC", "vkCreateExecutionGraphPipelinesAMDX,vkCmdDispatchGraphAMDX", 1);
    {
        GraphTestContext context;
        ASSERT_TRUE(context.ok());
        TestBuffer uav = context.CreateBuffer(64 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
        VkResult result = VK_SUCCESS;
        EXPECT_EQ(context.CreateGraph({ThreadNodeStage()}, layout, &result), VK_NULL_HANDLE);
        EXPECT_EQ(result, VK_ERROR_OUT_OF_HOST_MEMORY);
        EXPECT_EQ(CountMessages(context.log(), "EXECGRAPH-OUT-OF-MEMORY",
                                "vkCreateExecutionGraphPipelinesAMDX: the layer ran out of host memory"),
                  1u)
            << context.log().Problems();
        context.Destroy(uav);
    }
    setenv("EXECGRAPH_TEST_INJECT_BAD_ALLOC", "vkCmdDispatchGraphAMDX", 1);
    {
        GraphTestContext context;
        ASSERT_TRUE(context.ok());
        TestBuffer uav = context.CreateBuffer(64 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
        VkPipeline graph = context.CreateGraph({ThreadNodeStage()}, layout);
        ASSERT_NE(graph, VK_NULL_HANDLE) << context.log().Problems();
        VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
        ASSERT_EQ(context.vkGetExecutionGraphPipelineScratchSizeAMDX(context.device(), graph, &size), VK_SUCCESS);
        TestBuffer scratch = context.CreateScratch(size.minSize);
        const std::vector<IndexValueRecord> records = IndexValueRecords(16, 1);
        VkDispatchGraphInfoAMDX info = HostInfo(context.NodeIndex(graph, "main", 0), records);
        VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
        count_info.infos.hostAddress = &info;
        VkDescriptorSet set = context.descriptor_set();
        context.Submit([&](VkCommandBuffer cmd) {
            context.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size);
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
            context.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
        });
        for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(uav.As<uint32_t>()[i], 0u) << i;
        EXPECT_EQ(
            CountMessages(context.log(), "EXECGRAPH-OUT-OF-MEMORY", "vkCmdDispatchGraphAMDX: the layer ran out of host memory"), 1u)
            << context.log().Problems();
        context.Destroy(scratch);
        context.Destroy(uav);
    }
    unsetenv("EXECGRAPH_TEST_INJECT_BAD_ALLOC");
}

// ---- Teardown -------------------------------------------------------------------------------------------------------

// The application destroys its device while graph pipelines (that have run) are alive: the layer destroys their driver
// objects first, so the validation layer below sees no leaked pipeline, layout or meta pipeline at vkDestroyDevice.
TEST_F(Robustness, DeviceDestroyedWithGraphPipelinesAlive) {
    TestBuffer& uav = Uav(64);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    AssembleResult assembled = AssembleAmdx(ReadCorpus("thread_node"));
    ASSERT_TRUE(assembled.error.empty()) << assembled.error;
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = assembled.words.size() * sizeof(uint32_t);
    module_info.pCode = assembled.words.data();
    VkShaderModule module = VK_NULL_HANDLE;  // leaked on purpose too
    ASSERT_EQ(vkCreateShaderModule(context_.device(), &module_info, nullptr, &module), VK_SUCCESS);
    VkPipelineShaderStageCreateInfo stage{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    stage.module = module;
    stage.pName = "main";
    VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
    create_info.stageCount = 1;
    create_info.pStages = &stage;
    create_info.layout = layout;
    create_info.basePipelineIndex = -1;
    VkPipeline graphs[2] = {};
    const VkExecutionGraphPipelineCreateInfoAMDX infos[2] = {create_info, create_info};
    ASSERT_EQ(context_.vkCreateExecutionGraphPipelinesAMDX(context_.device(), VK_NULL_HANDLE, 2, infos, nullptr, graphs),
              VK_SUCCESS);
    TestBuffer& scratch = PrepareScratch(graphs[0]);
    const std::vector<IndexValueRecord> records = IndexValueRecords(64, 7);
    VkDispatchGraphInfoAMDX info = HostInfo(context_.NodeIndex(graphs[0], "main", 0), records);
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graphs[0], layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    std::vector<uint32_t> expected;
    for (const IndexValueRecord& record : records) expected.push_back(record.value);
    ExpectUav(uav, expected);
    for (auto& buffer : buffers_) context_.Destroy(*buffer);
    buffers_.clear();
    context_.DestroyDevice();  // graphs[0], graphs[1] and the AMDX module are still alive
    EXPECT_EQ(context_.log().Problems(), "");
}

// Destroying a graph pipeline while a command buffer that uses it is pending is forbidden
// (VUID-vkDestroyPipeline-pipeline-00765), but the layer must not crash: its own per-command-buffer state keeps what
// it needs alive. The validation layer below reports the misuse on the lowered pipelines; that, and nothing else, is
// expected. The device keeps working afterwards.
TEST_F(Robustness, PipelineDestroyedWhileCommandBufferPendingDoesNotCrash) {
    constexpr uint32_t kRecords = 2000;
    TestBuffer& uav = Uav(kRecords);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkShaderModule module = context_.CreateNodeModule(ReadCorpus("thread_node"));
    VkPipelineShaderStageCreateInfo stage{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    stage.module = module;
    stage.pName = "main";
    VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
    create_info.stageCount = 1;
    create_info.pStages = &stage;
    create_info.layout = layout;
    create_info.basePipelineIndex = -1;
    VkPipeline graph = VK_NULL_HANDLE;
    ASSERT_EQ(context_.vkCreateExecutionGraphPipelinesAMDX(context_.device(), VK_NULL_HANDLE, 1, &create_info, nullptr, &graph),
              VK_SUCCESS);
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
    TestBuffer& scratch = Own(context_.CreateScratch(size.maxSize));
    const std::vector<IndexValueRecord> records = IndexValueRecords(kRecords, 1);
    VkDispatchGraphInfoAMDX info = HostInfo(context_.NodeIndex(graph, "main", 0), records);
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;

    VkCommandPool pool = CreatePool();
    VkFence fence = SubmitWithoutWaiting(pool, [&](VkCommandBuffer cmd) {
        context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size);
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
                                VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_INDIRECT_COMMAND_READ_BIT |
                                    VK_ACCESS_TRANSFER_WRITE_BIT};
        vkCmdPipelineBarrier(
            cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
            &barrier, 0, nullptr, 0, nullptr);
        BindGraph(cmd, graph, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    vkDestroyPipeline(context_.device(), graph, nullptr);  // the application's bug
    EXPECT_EQ(vkQueueWaitIdle(context_.queue()), VK_SUCCESS);
    vkDestroyFence(context_.device(), fence, nullptr);
    vkDestroyCommandPool(context_.device(), pool, nullptr);
    // Only the validation layer's report of the misuse; the layer itself has nothing to say.
    std::vector<std::string> unexpected;
    for (const MessageLog::Message& message : context_.log().Messages()) {
        if (message.severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) continue;
        if (message.text.find("VUID-vkDestroyPipeline-pipeline-00765") != std::string::npos) continue;
        unexpected.push_back(message.id + ": " + message.text);
    }
    EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " unexpected messages, first: " << unexpected.front();
    context_.log().Clear();

    // The device still runs graphs correctly.
    TestBuffer& uav2 = Uav(16);
    VkPipeline graph2 = RunGraph({ThreadNodeStage()}, uav2, {{"main", 0, 16, records.data(), sizeof(IndexValueRecord)}});
    ASSERT_NE(graph2, VK_NULL_HANDLE);
    std::vector<uint32_t> expected;
    for (uint32_t i = 0; i < 16; ++i) expected.push_back(records[i].value);
    ExpectUav(uav2, expected);
}

// ---- Concurrency ----------------------------------------------------------------------------------------------------

// kThreads threads at once, each kIterations times: create an AMDX module and a graph pipeline, make and initialise
// scratch, record a graph dispatch, submit it (the queue is shared, so submission is serialised as Vulkan requires),
// wait, check every value the graph wrote, and destroy the pipeline, module, scratch and pool. Runs under TSan in CI.
TEST_F(Robustness, ManyThreadsCreateRecordSubmitAndDestroyAtOnce) {
    constexpr uint32_t kThreads = 8;
    constexpr uint32_t kIterations = 3;
    constexpr uint32_t kRecords = 64;
    AssembleResult assembled = AssembleAmdx(ReadCorpus("thread_node"));
    ASSERT_TRUE(assembled.error.empty()) << assembled.error;
    // Per-thread UAV, descriptor set and layout, made up front (the context's helpers are single-threaded).
    std::vector<TestBuffer*> uavs;
    std::vector<VkPipelineLayout> layouts;
    std::vector<VkDescriptorSet> sets;
    for (uint32_t t = 0; t < kThreads; ++t) {
        uavs.push_back(&Uav(kRecords));
        layouts.push_back(context_.CreateStorageBufferLayout({uavs.back()}));
        sets.push_back(context_.descriptor_set());
    }
    std::mutex queue_mutex;
    // The layer labels each graph dispatch (debug_labels), and the validation layer below it on bookworm (1.3.239)
    // erases a freed command buffer's labels without its lock: another thread's label then crashes it now and then
    // (KhronosGroup/Vulkan-ValidationLayers issue 5172, fixed by pull request 5312 in 1.3.243). The dispatches still
    // record concurrently with each other; only the frees wait for them. docs/debugging.md has the user-facing note.
    std::shared_mutex label_free_mutex;
    std::atomic<uint32_t> checked{0};
    auto worker = [&](uint32_t t) {
        VkDevice device = context_.device();
        VkCommandPool pool = CreatePool();
        for (uint32_t iteration = 0; iteration < kIterations; ++iteration) {
            VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
            module_info.codeSize = assembled.words.size() * sizeof(uint32_t);
            module_info.pCode = assembled.words.data();
            VkShaderModule module = VK_NULL_HANDLE;
            ASSERT_EQ(vkCreateShaderModule(device, &module_info, nullptr, &module), VK_SUCCESS);
            VkPipelineShaderStageCreateInfo stage{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
            stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
            stage.module = module;
            stage.pName = "main";
            VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
            create_info.stageCount = 1;
            create_info.pStages = &stage;
            create_info.layout = layouts[t];
            create_info.basePipelineIndex = -1;
            VkPipeline graph = VK_NULL_HANDLE;
            ASSERT_EQ(context_.vkCreateExecutionGraphPipelinesAMDX(device, VK_NULL_HANDLE, 1, &create_info, nullptr, &graph),
                      VK_SUCCESS);
            vkDestroyShaderModule(device, module, nullptr);  // allowed once the pipeline exists
            VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
            ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(device, graph, &size), VK_SUCCESS);
            TestBuffer scratch = context_.CreateScratch(size.minSize);
            VkPipelineShaderStageNodeCreateInfoAMDX node{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, nullptr,
                                                         "main", 0};
            uint32_t node_index = ~0u;
            ASSERT_EQ(context_.vkGetExecutionGraphPipelineNodeIndexAMDX(device, graph, &node, &node_index), VK_SUCCESS);
            const uint32_t base = (t + 1) * 100000 + iteration * 1000;
            const std::vector<IndexValueRecord> records = IndexValueRecords(kRecords, base);
            VkDispatchGraphInfoAMDX info = HostInfo(node_index, records);
            VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
            count_info.infos.hostAddress = &info;
            std::memset(uavs[t]->mapped, 0, uavs[t]->size);

            VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, pool,
                                                 VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
            VkCommandBuffer cmd = VK_NULL_HANDLE;
            ASSERT_EQ(vkAllocateCommandBuffers(device, &allocate, &cmd), VK_SUCCESS);
            VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
            vkBeginCommandBuffer(cmd, &begin);
            context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size);
            VkMemoryBarrier init_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
                                         VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                                         VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                             VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
            vkCmdPipelineBarrier(
                cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                &init_barrier, 0, nullptr, 0, nullptr);
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layouts[t], 0, 1, &sets[t], 0, nullptr);
            {
                std::shared_lock labels(label_free_mutex);
                context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
            }
            VkMemoryBarrier host_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                                         VK_ACCESS_HOST_READ_BIT};
            vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host_barrier, 0,
                                 nullptr, 0, nullptr);
            ASSERT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
            VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
            VkFence fence = VK_NULL_HANDLE;
            ASSERT_EQ(vkCreateFence(device, &fence_info, nullptr, &fence), VK_SUCCESS);
            VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
            submit.commandBufferCount = 1;
            submit.pCommandBuffers = &cmd;
            {
                std::lock_guard lock(queue_mutex);  // VkQueue is externally synchronised
                ASSERT_EQ(vkQueueSubmit(context_.queue(), 1, &submit, fence), VK_SUCCESS);
            }
            ASSERT_EQ(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
            for (uint32_t i = 0; i < kRecords; ++i) {
                EXPECT_EQ(uavs[t]->As<uint32_t>()[i], base + i)
                    << "thread " << t << " iteration " << iteration << " UAV[" << i << "]";
            }
            checked += kRecords;
            vkDestroyFence(device, fence, nullptr);
            {
                std::unique_lock frees(label_free_mutex);
                vkFreeCommandBuffers(device, pool, 1, &cmd);
            }
            vkDestroyPipeline(device, graph, nullptr);
            vkDestroyBuffer(device, scratch.buffer, nullptr);
            vkFreeMemory(device, scratch.memory, nullptr);
        }
        std::unique_lock frees(label_free_mutex);
        vkDestroyCommandPool(device, pool, nullptr);
    };
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(checked.load(), kThreads * kIterations * kRecords);
}

// Two command buffers, each dispatching the same graph against its own scratch buffer into its own UAV, submitted in
// one vkQueueSubmit: scratch is the only per-dispatch state, so both produce their full, separate results.
TEST_F(Robustness, TwoCommandBuffersWithSeparateScratchSubmittedTogether) {
    constexpr uint32_t kRecords = 256;
    TestBuffer& uav_a = Uav(kRecords);
    TestBuffer& uav_b = Uav(kRecords);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav_a});
    VkDescriptorSet set_a = context_.descriptor_set();
    context_.CreateStorageBufferLayout({&uav_b});  // same set layout shape, a second set pointing at uav_b
    VkDescriptorSet set_b = context_.descriptor_set();
    VkPipeline graph = context_.CreateGraph({ThreadNodeStage()}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch_a = PrepareScratch(graph);
    TestBuffer& scratch_b = PrepareScratch(graph);
    const uint32_t node_index = context_.NodeIndex(graph, "main", 0);
    const std::vector<IndexValueRecord> records_a = IndexValueRecords(kRecords, 1000);
    const std::vector<IndexValueRecord> records_b = IndexValueRecords(kRecords, 5000);
    VkDispatchGraphInfoAMDX info_a = HostInfo(node_index, records_a), info_b = HostInfo(node_index, records_b);
    VkDispatchGraphCountInfoAMDX count_a{1, {}, sizeof(info_a)}, count_b{1, {}, sizeof(info_b)};
    count_a.infos.hostAddress = &info_a;
    count_b.infos.hostAddress = &info_b;

    VkCommandPool pool = CreatePool();
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, pool,
                                         VK_COMMAND_BUFFER_LEVEL_PRIMARY, 2};
    VkCommandBuffer cmds[2] = {};
    ASSERT_EQ(vkAllocateCommandBuffers(context_.device(), &allocate, cmds), VK_SUCCESS);
    const struct {
        TestBuffer* scratch;
        VkDescriptorSet set;
        VkDispatchGraphCountInfoAMDX* count;
    } work[2] = {{&scratch_a, set_a, &count_a}, {&scratch_b, set_b, &count_b}};
    for (int i = 0; i < 2; ++i) {
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        vkBeginCommandBuffer(cmds[i], &begin);
        BindGraph(cmds[i], graph, layout, work[i].set);
        context_.vkCmdDispatchGraphAMDX(cmds[i], work[i].scratch->address, work[i].scratch->size, work[i].count);
        VkMemoryBarrier host_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                                     VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(cmds[i], VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host_barrier, 0,
                             nullptr, 0, nullptr);
        ASSERT_EQ(vkEndCommandBuffer(cmds[i]), VK_SUCCESS);
    }
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 2;
    submit.pCommandBuffers = cmds;
    ASSERT_EQ(vkQueueSubmit(context_.queue(), 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
    ASSERT_EQ(vkQueueWaitIdle(context_.queue()), VK_SUCCESS);
    std::vector<uint32_t> expected_a, expected_b;
    for (uint32_t i = 0; i < kRecords; ++i) {
        expected_a.push_back(records_a[i].value);
        expected_b.push_back(records_b[i].value);
    }
    ExpectUav(uav_a, expected_a);
    ExpectUav(uav_b, expected_b);
    vkDestroyCommandPool(context_.device(), pool, nullptr);
}

// ---- Synchronization validation ---------------------------------------------------------------------------------------

// Proof that synchronization validation is on in every end-to-end test (GraphTestContext): two transfer writes to the
// UAV after a graph dispatch, with no barrier between them, are reported as a hazard. (A write right after the dispatch
// is not one: the layer's status read-back ends the dispatch with a barrier.) The other tests see no such message, which
// is how the layer's own barriers are checked.
TEST_F(Robustness, SynchronizationValidationReportsAMissingBarrier) {
    TestBuffer& uav = Uav(64);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({ThreadNodeStage()}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    const std::vector<IndexValueRecord> records = IndexValueRecords(64, 1);
    VkDispatchGraphInfoAMDX info = HostInfo(context_.NodeIndex(graph, "main", 0), records);
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, context_.descriptor_set());
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
        vkCmdFillBuffer(cmd, uav.buffer, 0, VK_WHOLE_SIZE, 0);
        vkCmdFillBuffer(cmd, uav.buffer, 0, VK_WHOLE_SIZE, 1);  // the application's missing barrier
    });
    size_t hazards = 0;
    for (const MessageLog::Message& message : context_.log().Messages()) hazards += message.id.rfind("SYNC-HAZARD", 0) == 0;
    EXPECT_GE(hazards, 1u) << context_.log().Problems();
    context_.log().Clear();
}

}  // namespace
}  // namespace execgraph::test
