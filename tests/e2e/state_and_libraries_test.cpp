// Application state around a graph dispatch (descriptor sets and push constants seen by nodes, the application's compute
// pipeline, set and constants intact afterwards), execution graph pipeline libraries, specialization constants inside
// AMDX operands, and records with 8-byte members. Every test compares its buffers with a CPU reference.
#include <gtest/gtest.h>

#include <vector>

#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

// The application's compute pipeline (app_compute: writes its two push constants and counts its runs into app_buffer)
// with its own set, and a graph of push_constant_node (adds push constant 0 to each record's value at the record's
// index of graph_uav) with its set; both layouts have the same 8-byte push-constant range.
struct AppAndGraph {
    TestBuffer* graph_uav = nullptr;
    TestBuffer* app_buffer = nullptr;
    VkPipelineLayout app_layout = VK_NULL_HANDLE, graph_layout = VK_NULL_HANDLE;
    VkDescriptorSet app_set = VK_NULL_HANDLE, graph_set = VK_NULL_HANDLE;
    VkPipeline app_pipeline = VK_NULL_HANDLE, graph = VK_NULL_HANDLE;
};

class StateAndLibraries : public GraphTest {
  protected:
    AppAndGraph MakeAppAndGraph() {
        AppAndGraph made;
        made.graph_uav = &Uav(64);
        made.app_buffer = &Uav(16);
        made.app_layout = context_.CreateStorageBufferLayout({made.app_buffer}, 8);
        made.app_set = context_.descriptor_set();
        made.graph_layout = context_.CreateStorageBufferLayout({made.graph_uav}, 8);
        made.graph_set = context_.descriptor_set();
        made.app_pipeline = context_.CreateComputePipeline({ReadModule("app_compute"), "main"}, made.app_layout);
        EXPECT_NE(made.app_pipeline, VK_NULL_HANDLE) << context_.log().Problems();
        made.graph = context_.CreateGraph({{ReadModule("push_constant_node"), "main"}}, made.graph_layout);
        EXPECT_NE(made.graph, VK_NULL_HANDLE) << context_.log().Problems();
        return made;
    }
    // The application's pipeline and set bound at the compute bind point.
    static void BindApp(VkCommandBuffer cmd, const AppAndGraph& made) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, made.app_pipeline);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, made.app_layout, 0, 1, &made.app_set, 0, nullptr);
    }
};

struct IdxValue {
    uint32_t idx, v;
};

TEST_F(StateAndLibraries, NodesSeePushConstantsAndAppComputeStateSurvives) {
    // The app's compute pipeline, set (its own buffer) and constants are bound before the graph; the graph's set is
    // bound on the graph bind point. Both layouts have the same 8-byte push-constant range, so the node reads the
    // app's constants. After the graph dispatch, vkCmdDispatch must still use the app's pipeline, set and constants.
    const AppAndGraph made = MakeAppAndGraph();
    ASSERT_TRUE(made.app_pipeline != VK_NULL_HANDLE && made.graph != VK_NULL_HANDLE);
    TestBuffer &graph_uav = *made.graph_uav, &app_buffer = *made.app_buffer;
    const VkPipeline graph = made.graph;
    TestBuffer& scratch = PrepareScratch(graph);
    const std::vector<IdxValue> records = {{4, 1}, {5, 2}, {9, 3}};
    const uint32_t constants[2] = {1000, 2222};
    context_.Submit([&](VkCommandBuffer cmd) {
        BindApp(cmd, made);
        vkCmdPushConstants(cmd, made.app_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(constants), constants);
        BindGraph(cmd, graph, made.graph_layout, made.graph_set);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "main", 0), 3, records.data(), sizeof(IdxValue)}});
        vkCmdDispatch(cmd, 1, 1, 1);
        // A second graph dispatch after the app's own dispatch still sees the same constants.
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "main", 0), 1, records.data(), sizeof(IdxValue)}});
        vkCmdDispatch(cmd, 1, 1, 1);
    });
    ExpectUav(app_buffer, {1000, 2222, 2});
    std::vector<uint32_t> expected(10, 0);
    for (const IdxValue& r : records) expected[r.idx] = r.v + 1000;
    ExpectUav(graph_uav, expected);
}

TEST_F(StateAndLibraries, NodesSeeConstantsPushedWithTheGraphLayout) {
    // Constants pushed after binding the graph, with the graph's layout, replace the app's for the graph; the app's
    // compute dispatch afterwards then sees what was pushed last (push constants are not per bind point).
    const AppAndGraph made = MakeAppAndGraph();
    ASSERT_TRUE(made.app_pipeline != VK_NULL_HANDLE && made.graph != VK_NULL_HANDLE);
    TestBuffer &graph_uav = *made.graph_uav, &app_buffer = *made.app_buffer;
    const VkPipeline graph = made.graph;
    TestBuffer& scratch = PrepareScratch(graph);
    const IdxValue record{3, 5};
    const uint32_t app_constants[2] = {1, 2};
    const uint32_t graph_constants[2] = {70, 80};
    context_.Submit([&](VkCommandBuffer cmd) {
        BindApp(cmd, made);
        vkCmdPushConstants(cmd, made.app_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(app_constants), app_constants);
        BindGraph(cmd, graph, made.graph_layout, made.graph_set);
        vkCmdPushConstants(cmd, made.graph_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(graph_constants), graph_constants);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "main", 0), 1, &record, sizeof(record)}});
        vkCmdDispatch(cmd, 1, 1, 1);
    });
    ExpectUav(app_buffer, {70, 80, 1});
    ExpectUav(graph_uav, {0, 0, 0, 75});
}

// The layer keeps the latest write of each pushed range and replays them in push order after a graph dispatch
// (layer/command_tracking.cpp). A range pushed again moves to the end of that order: {1, 2} at 0, then {9} at 4, then
// {3, 4} at 0 must leave {3, 4}, which a replay that kept the first range's place would turn into {3, 9}.
TEST_F(StateAndLibraries, ConstantsPushedAgainAreReplayedInTheOrderTheyWerePushed) {
    const AppAndGraph made = MakeAppAndGraph();
    ASSERT_TRUE(made.app_pipeline != VK_NULL_HANDLE && made.graph != VK_NULL_HANDLE);
    TestBuffer &graph_uav = *made.graph_uav, &app_buffer = *made.app_buffer;
    const VkPipeline graph = made.graph;
    TestBuffer& scratch = PrepareScratch(graph);
    const IdxValue record{6, 5};
    const uint32_t first[2] = {1, 2}, second = 9, third[2] = {3, 4};
    context_.Submit([&](VkCommandBuffer cmd) {
        BindApp(cmd, made);
        vkCmdPushConstants(cmd, made.app_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(first), first);
        vkCmdPushConstants(cmd, made.app_layout, VK_SHADER_STAGE_COMPUTE_BIT, 4, sizeof(second), &second);
        vkCmdPushConstants(cmd, made.app_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(third), third);
        BindGraph(cmd, graph, made.graph_layout, made.graph_set);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "main", 0), 1, &record, sizeof(record)}});
        vkCmdDispatch(cmd, 1, 1, 1);
    });
    ExpectUav(app_buffer, {3, 4, 1});
    ExpectUav(graph_uav, {0, 0, 0, 0, 0, 0, 5 + 3});
}

// The layer answers a thread's repeated commands into one command buffer from a per-thread cache of that command
// buffer's state (layer/command_tracking.cpp, RecordingStateOf). Two command buffers recorded in turns on one thread,
// each with its own constants, must each replay their own around their graph dispatch; and command buffers freed and
// allocated again (Submit does both, so handles are reused) must not see the state of the one freed before them.
TEST_F(StateAndLibraries, CommandBuffersRecordedInTurnsKeepTheirOwnState) {
    const AppAndGraph made = MakeAppAndGraph();
    ASSERT_TRUE(made.app_pipeline != VK_NULL_HANDLE && made.graph != VK_NULL_HANDLE);
    TestBuffer &graph_uav = *made.graph_uav, &app_buffer = *made.app_buffer;
    const VkPipeline graph = made.graph;
    TestBuffer* scratches[2] = {&PrepareScratch(graph), &PrepareScratch(graph)};

    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = context_.queue_family();
    VkCommandPool pool = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateCommandPool(context_.device(), &pool_info, nullptr, &pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 2;
    VkCommandBuffer cmds[2] = {};
    ASSERT_EQ(vkAllocateCommandBuffers(context_.device(), &allocate, cmds), VK_SUCCESS);
    const uint32_t constants[2][2] = {{10, 11}, {20, 21}};
    const IdxValue records[2] = {{1, 1}, {2, 2}};
    for (VkCommandBuffer cmd : cmds) {
        const VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        ASSERT_EQ(vkBeginCommandBuffer(cmd, &begin), VK_SUCCESS);
    }
    // Each step is recorded into both command buffers before the next, so every command switches buffers.
    for (uint32_t i = 0; i < 2; ++i) vkCmdBindPipeline(cmds[i], VK_PIPELINE_BIND_POINT_COMPUTE, made.app_pipeline);
    for (uint32_t i = 0; i < 2; ++i) {
        vkCmdBindDescriptorSets(cmds[i], VK_PIPELINE_BIND_POINT_COMPUTE, made.app_layout, 0, 1, &made.app_set, 0, nullptr);
    }
    for (uint32_t i = 0; i < 2; ++i) {
        vkCmdPushConstants(cmds[i], made.app_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(constants[i]), constants[i]);
    }
    for (uint32_t i = 0; i < 2; ++i) BindGraph(cmds[i], graph, made.graph_layout, made.graph_set);
    for (uint32_t i = 0; i < 2; ++i) {
        DispatchHost(cmds[i], *scratches[i], {{context_.NodeIndex(graph, "main", 0), 1, &records[i], sizeof(IdxValue)}});
    }
    for (uint32_t i = 0; i < 2; ++i) vkCmdDispatch(cmds[i], 1, 1, 1);
    for (VkCommandBuffer cmd : cmds) {
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0,
                             nullptr);
        ASSERT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
    }
    for (VkCommandBuffer cmd : cmds) {
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        ASSERT_EQ(vkQueueSubmit(context_.queue(), 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
        ASSERT_EQ(vkQueueWaitIdle(context_.queue()), VK_SUCCESS);
    }
    vkDestroyCommandPool(context_.device(), pool, nullptr);
    // Each node saw its own command buffer's first constant; the app's dispatches ran in submission order.
    ExpectUav(graph_uav, {0, 1 + 10, 2 + 20});
    ExpectUav(app_buffer, {20, 21, 2});

    // Freed and allocated again: each Submit records one command buffer after the last one's state was dropped.
    for (uint32_t round = 0; round < 4; ++round) {
        const uint32_t fresh[2] = {100 + round, 7};
        const IdxValue record{8 + round, 1};
        context_.Submit([&](VkCommandBuffer cmd) {
            BindApp(cmd, made);
            vkCmdPushConstants(cmd, made.app_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(fresh), fresh);
            BindGraph(cmd, graph, made.graph_layout, made.graph_set);
            DispatchHost(cmd, *scratches[0], {{context_.NodeIndex(graph, "main", 0), 1, &record, sizeof(record)}});
            vkCmdDispatch(cmd, 1, 1, 1);
        });
        EXPECT_EQ(graph_uav.As<uint32_t>()[8 + round], 1 + 100 + round) << "round " << round;
        EXPECT_EQ(app_buffer.As<uint32_t>()[0], 100 + round) << "round " << round;
        EXPECT_EQ(app_buffer.As<uint32_t>()[2], 3 + round) << "round " << round;
    }
}

// D3D12HelloWorkGraphs (dxc-spirv-shapes.md §5.2).
struct HelloEntryRecord {
    uint32_t grid_size, record_index;
};
const std::vector<uint32_t> kHelloExpected = {5, 18, 39, 68, 2, 4, 6, 8};

TEST_F(StateAndLibraries, GraphLinkedFromLibrariesOnly) {
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    std::vector<VkPipeline> libraries;
    for (const char* name : {"hello_first_node", "hello_second_node", "hello_third_node"}) {
        std::string entry = name == std::string("hello_first_node")    ? "firstNode"
                            : name == std::string("hello_second_node") ? "secondNode"
                                                                       : "thirdNode";
        VkResult result = VK_SUCCESS;
        libraries.push_back(context_.CreateComputePipeline({ReadCorpus(name), entry}, layout, /*as_graph_library=*/true, &result));
        ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    }
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph({}, libraries, layout, &result);
    ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    std::vector<HelloEntryRecord> records;
    for (uint32_t i = 0; i < 4; ++i) records.push_back({i + 1, i});
    VkDescriptorSet set = context_.descriptor_set();
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, set);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "firstNode", 0), 4, records.data(), sizeof(HelloEntryRecord)}});
    });
    ExpectUav(uav, kHelloExpected);
}

TEST_F(StateAndLibraries, GraphMixingStagesAndLibraries) {
    // firstNode as a stage, the other two from libraries; secondNode's library renames its node through pName.
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline second = context_.CreateComputePipeline({ReadCorpus("hello_second_node"), "secondNode"}, layout, true);
    VkPipeline third = context_.CreateComputePipeline({ReadCorpus("hello_third_node"), "thirdNode"}, layout, true);
    ASSERT_NE(second, VK_NULL_HANDLE) << context_.log().Problems();
    ASSERT_NE(third, VK_NULL_HANDLE) << context_.log().Problems();
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph({{ReadCorpus("hello_first_node"), "firstNode"}}, {second, third}, layout, &result);
    ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    std::vector<HelloEntryRecord> records;
    for (uint32_t i = 0; i < 4; ++i) records.push_back({i + 1, i});
    VkDescriptorSet set = context_.descriptor_set();
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, set);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "firstNode", 0), 4, records.data(), sizeof(HelloEntryRecord)}});
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "firstNode", 0), 4, records.data(), sizeof(HelloEntryRecord)}});
    });
    std::vector<uint32_t> expected;
    for (uint32_t v : kHelloExpected) expected.push_back(2 * v);
    ExpectUav(uav, expected);
}

// An execution graph pipeline can itself be a library (VK_PIPELINE_CREATE_LIBRARY_BIT_KHR), linked into a graph later.
TEST_F(StateAndLibraries, ExecutionGraphLibraryLinkedIntoAGraph) {
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                                 {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
    stages[0].stage = stages[1].stage = VK_SHADER_STAGE_COMPUTE_BIT;
    stages[0].module = context_.CreateNodeModule(ReadCorpus("hello_second_node"));
    stages[0].pName = "secondNode";
    stages[1].module = context_.CreateNodeModule(ReadCorpus("hello_third_node"));
    stages[1].pName = "thirdNode";
    VkExecutionGraphPipelineCreateInfoAMDX library_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
    library_info.flags = VK_PIPELINE_CREATE_LIBRARY_BIT_KHR;
    library_info.stageCount = 2;
    library_info.pStages = stages;
    library_info.layout = layout;
    library_info.basePipelineIndex = -1;
    VkPipeline library = VK_NULL_HANDLE;
    ASSERT_EQ(context_.vkCreateExecutionGraphPipelinesAMDX(context_.device(), VK_NULL_HANDLE, 1, &library_info, nullptr, &library),
              VK_SUCCESS)
        << context_.log().Problems();
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph({{ReadCorpus("hello_first_node"), "firstNode"}}, {library}, layout, &result);
    ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    std::vector<HelloEntryRecord> records;
    for (uint32_t i = 0; i < 4; ++i) records.push_back({i + 1, i});
    VkDescriptorSet set = context_.descriptor_set();
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, set);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "firstNode", 0), 4, records.data(), sizeof(HelloEntryRecord)}});
    });
    ExpectUav(uav, kHelloExpected);
    vkDestroyPipeline(context_.device(), library, nullptr);
}

TEST_F(StateAndLibraries, SpecializationConstantsInAmdxOperands) {
    // spec_constants: GroupsX (SpecId 1) = 7 workgroups of ThreadsX (SpecId 2) = 16, each sending one record with the
    // input's value to "child"[ChildIndex (SpecId 3) = 2] with MaxPayloads (SpecId 0) = 2.
    TestBuffer& uav = Uav(16);
    const std::vector<uint32_t> records = {5, 100};
    RunGraph({{ReadCorpus("spec_constants"), "main", "Entry", VK_SHADER_INDEX_UNUSED_AMDX, specs_.Add({2, 7, 16, 2})},
              {ReadModule("array_sink"), "main", "child", 2}},
             uav, {{"Entry", 0, 2, records.data(), sizeof(uint32_t)}});
    ExpectUav(uav, {0, 0, 0, 0, 7 * 105, 14});
}

TEST_F(StateAndLibraries, SpecializationConstantDefaults) {
    // Without specialization: 4 workgroups to "child"[0].
    TestBuffer& uav = Uav(16);
    const uint32_t record = 9;
    RunGraph({{ReadCorpus("spec_constants"), "main", "Entry"}, {ReadModule("array_sink"), "main", "child", 0}}, uav,
             {{"Entry", 0, 1, &record, sizeof(record)}});
    ExpectUav(uav, {36, 4});
}

TEST_F(StateAndLibraries, RecordsWithEightByteMembers) {
    struct In {
        uint32_t idx, pad;
        uint64_t value;
        uint32_t w, pad2;
    };
    static_assert(sizeof(In) == 24);
    std::vector<In> records;
    std::vector<uint32_t> expected(2 * 16, 0);
    for (uint32_t i = 0; i < 16; ++i) {
        const uint64_t value = 0x123456789ABull + i * 0x100000001ull + (uint64_t{i} << 45);
        records.push_back({i ^ 5, 0xDEAD, value, i * 3, 0xBEEF});
        const uint64_t result = value * 3 + i * 3;
        expected[2 * (i ^ 5)] = static_cast<uint32_t>(result);
        expected[2 * (i ^ 5) + 1] = static_cast<uint32_t>(result >> 32);
    }
    TestBuffer& uav = Uav(64);
    RunGraph({{ReadModule("wide_payload_entry"), "main", "Entry"}, {ReadModule("wide_payload_sink"), "main", "Wide"}}, uav,
             {{"Entry", 0, 16, records.data(), sizeof(In)}});
    ExpectUav(uav, expected);
}

std::vector<NodeStage> HelloStages() {
    return {{ReadCorpus("hello_first_node"), "firstNode"},
            {ReadCorpus("hello_second_node"), "secondNode"},
            {ReadCorpus("hello_third_node"), "thirdNode"}};
}

TEST_F(StateAndLibraries, ShaderModulesChainedInlineInTheStages) {
    // No vkCreateShaderModule: each stage's VkShaderModuleCreateInfo sits in its pNext (after the node create info).
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    GraphOptions options;
    options.inline_modules = true;
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraphWith(HelloStages(), options, layout, &result);
    ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    std::vector<HelloEntryRecord> records;
    for (uint32_t i = 0; i < 4; ++i) records.push_back({i + 1, i});
    VkDescriptorSet set = context_.descriptor_set();
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, set);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "firstNode", 0), 4, records.data(), sizeof(HelloEntryRecord)}});
    });
    ExpectUav(uav, kHelloExpected);
}

TEST_F(StateAndLibraries, GraphsCreatedThroughAPipelineCache) {
    // The same graph twice through one VkPipelineCache, which the layer hands to the driver for every node pipeline (the
    // validation layer checks the handle there); both graphs give the reference result. (Lavapipe keeps nothing in
    // application caches, so whether the second graph hit the cache is not observable here.)
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipelineCacheCreateInfo cache_info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    VkPipelineCache cache = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreatePipelineCache(context_.device(), &cache_info, nullptr, &cache), VK_SUCCESS);
    GraphOptions options;
    options.cache = cache;
    VkPipeline graphs[2] = {};
    for (VkPipeline& graph : graphs) {
        VkResult result = VK_SUCCESS;
        graph = context_.CreateGraphWith(HelloStages(), options, layout, &result);
        ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    }
    size_t cache_size = 0;
    EXPECT_EQ(vkGetPipelineCacheData(context_.device(), cache, &cache_size, nullptr), VK_SUCCESS);
    std::vector<HelloEntryRecord> records;
    for (uint32_t i = 0; i < 4; ++i) records.push_back({i + 1, i});
    VkDescriptorSet set = context_.descriptor_set();
    for (VkPipeline graph : graphs) {
        TestBuffer& scratch = PrepareScratch(graph);
        context_.Submit([&](VkCommandBuffer cmd) {
            BindGraph(cmd, graph, layout, set);
            DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "firstNode", 0), 4, records.data(), sizeof(HelloEntryRecord)}});
        });
    }
    std::vector<uint32_t> expected;
    for (uint32_t v : kHelloExpected) expected.push_back(2 * v);
    ExpectUav(uav, expected);
    vkDestroyPipelineCache(context_.device(), cache, nullptr);
}

// Bookworm's validation layer (1.3.239) crashes in synchronization validation on a dispatch whose descriptor set is not
// bound, which is exactly the misuse the next test records to make the validation layer name a node pipeline. That test
// therefore runs with core validation only.
class GraphNames : public GraphTest {
  protected:
    GraphNames() : GraphTest(GraphTestOptions{.synchronization_validation = false}) {}
};

TEST_F(GraphNames, GraphNameNamesItsNodePipelines) {
    // Naming a graph names its lowered node pipelines "<name>/<node>[<index>]" in the layers below (docs/settings.md).
    // The names become visible where the validation layer reports on a node pipeline: here a dispatch with the graph's
    // descriptor set left unbound, recorded and never submitted, which the validation layer reports for the two nodes
    // that use the set (firstNode does not).
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph(HelloStages(), layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    auto set_name =
        reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(vkGetDeviceProcAddr(context_.device(), "vkSetDebugUtilsObjectNameEXT"));
    ASSERT_NE(set_name, nullptr);
    VkDebugUtilsObjectNameInfoEXT name{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT, nullptr, VK_OBJECT_TYPE_PIPELINE,
                                       reinterpret_cast<uint64_t>(graph), "tiles"};
    EXPECT_EQ(set_name(context_.device(), &name), VK_SUCCESS);
    TestBuffer& scratch = PrepareScratch(graph);
    ASSERT_EQ(context_.log().Problems(), "");  // naming is silent
    HelloEntryRecord record{1, 0};
    context_.RecordOnly([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        DispatchHost(cmd, scratch, {{context_.NodeIndex(graph, "firstNode", 0), 1, &record, sizeof(record)}});
    });
    std::string messages;
    for (const MessageLog::Message& message : context_.log().Messages()) messages += message.text + "\n";
    for (const char* node : {"[tiles/secondNode[0]]", "[tiles/thirdNode[0]]"}) {
        EXPECT_NE(messages.find(node), std::string::npos) << node << " in " << messages;
    }
    context_.log().Clear();
}

}  // namespace
}  // namespace execgraph::test
