// End-to-end execution graphs on lavapipe through the layer, with the validation layer below it. Every test reads the
// result buffers back and compares them with a CPU reference; any validation or layer message fails the test.
#include <gtest/gtest.h>
#include <stdlib.h>  // setenv, unsetenv

#include <cstring>
#include <numeric>
#include <vector>

#include "graph_test_context.h"
#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

// The shared end-to-end fixture (graph_test_fixture.h): validation below the layer, any message fails the test.
class GraphDispatch : public GraphTest {};

struct HelloEntryRecord {
    uint32_t grid_size;
    uint32_t record_index;
};

std::vector<NodeStage> HelloGraphStages() {
    return {{ReadCorpus("hello_first_node"), "firstNode"},
            {ReadCorpus("hello_second_node"), "secondNode"},
            {ReadCorpus("hello_third_node"), "thirdNode"}};
}

// D3D12HelloWorkGraphs: broadcasting → thread → coalescing (dxc-spirv-shapes.md §5.2).
const uint32_t kHelloExpected[8] = {5, 18, 39, 68, 2, 4, 6, 8};

TEST_F(GraphDispatch, HelloWorkGraphsFromHostPayloads) {
    TestBuffer& uav = Own(context_.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph(HelloGraphStages(), layout, &result);
    ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    // Naming a graph pipeline (a layer object) must not reach the driver with the layer's handle.
    auto set_name = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(vkGetDeviceProcAddr(context_.device(), "vkSetDebugUtilsObjectNameEXT"));
    ASSERT_NE(set_name, nullptr);
    VkDebugUtilsObjectNameInfoEXT name{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT, nullptr, VK_OBJECT_TYPE_PIPELINE,
                                       reinterpret_cast<uint64_t>(graph), "hello-graph"};
    EXPECT_EQ(set_name(context_.device(), &name), VK_SUCCESS);
    TestBuffer& scratch = PrepareScratch(graph);

    HelloEntryRecord records[4];
    for (uint32_t i = 0; i < 4; ++i) records[i] = {i + 1, i};
    VkDispatchGraphInfoAMDX info{context_.NodeIndex(graph, "firstNode", 0), 4, {}, sizeof(HelloEntryRecord)};
    info.payloads.hostAddress = records;
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    context_.Submit([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context_.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(uav.As<uint32_t>()[i], kHelloExpected[i]) << "UAV[" << i << "]";
}

// The settings validate_lowered_shaders and optimize_lowered_shaders (docs/settings.md) route every lowered node through
// the SPIRV-Tools validator and its performance passes at pipeline creation. Settings are read at vkCreateInstance, so
// the environment is set before the fixture's context is built (base classes initialise left to right).
struct OptimizeLoweredShadersEnvironment {
    OptimizeLoweredShadersEnvironment() {
        setenv("VK_EXECGRAPH_SHADER_ENQUEUE_OPTIMIZE_LOWERED_SHADERS", "true", 1);
        setenv("VK_EXECGRAPH_SHADER_ENQUEUE_VALIDATE_LOWERED_SHADERS", "true", 1);
    }
    ~OptimizeLoweredShadersEnvironment() {
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_OPTIMIZE_LOWERED_SHADERS");
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_VALIDATE_LOWERED_SHADERS");
    }
};
class OptimizedGraphDispatch : private OptimizeLoweredShadersEnvironment, public GraphTest {};

TEST_F(OptimizedGraphDispatch, OptimizedAndValidatedNodesGiveTheSameResults) {
    TestBuffer& uav = Own(context_.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph(HelloGraphStages(), layout, &result);
    ASSERT_EQ(result, VK_SUCCESS) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    HelloEntryRecord records[4];
    for (uint32_t i = 0; i < 4; ++i) records[i] = {i + 1, i};
    VkDispatchGraphInfoAMDX info{context_.NodeIndex(graph, "firstNode", 0), 4, {}, sizeof(HelloEntryRecord)};
    info.payloads.hostAddress = records;
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    context_.Submit([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context_.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(uav.As<uint32_t>()[i], kHelloExpected[i]) << "UAV[" << i << "]";
}

TEST_F(GraphDispatch, HelloWorkGraphsFromDevicePayloadsAndDeviceCount) {
    TestBuffer& uav = Own(context_.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph(HelloGraphStages(), layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);

    // Payloads padded to a 16-byte stride, infos and the count info all in device memory.
    TestBuffer& device_data = Own(context_.CreateBuffer(4096, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    auto* bytes = device_data.As<uint8_t>();
    constexpr uint32_t kStride = 16;
    for (uint32_t i = 0; i < 4; ++i) {
        HelloEntryRecord record{i + 1, i};
        std::memcpy(bytes + 1024 + i * kStride, &record, sizeof(record));
    }
    VkDispatchGraphInfoAMDX info{context_.NodeIndex(graph, "firstNode", 0), 4, {}, kStride};
    info.payloads.deviceAddress = device_data.address + 1024;
    std::memcpy(bytes + 256, &info, sizeof(info));
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.deviceAddress = device_data.address + 256;
    std::memcpy(bytes, &count_info, sizeof(count_info));

    // Once with host count + device infos, once with everything on the device: each adds the expected values.
    context_.Submit([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context_.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        context_.vkCmdDispatchGraphIndirectAMDX(cmd, scratch.address, scratch.size, &count_info);
        context_.vkCmdDispatchGraphIndirectCountAMDX(cmd, scratch.address, scratch.size, device_data.address);
    });
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(uav.As<uint32_t>()[i], 2 * kHelloExpected[i]) << "UAV[" << i << "]";
}

TEST_F(GraphDispatch, RecursionToMaxNodeRecursion) {
    TestBuffer& uav = Own(context_.CreateBuffer(1024 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({{ReadCorpus("vkd3d_basic_recursion_entry"), "EntryNode"},
                                             {ReadCorpus("vkd3d_basic_recursion_recursive"), "Recursive"}},
                                            layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    VkDispatchGraphInfoAMDX info{context_.NodeIndex(graph, "EntryNode", 0), 1, {}, 0};
    uint32_t empty_record = 0;
    info.payloads.hostAddress = &empty_record;
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    context_.Submit([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context_.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    const uint32_t expected[15] = {0, 7, 13, 17, 25, 34, 46, 59, 71, 76, 68, 47, 23, 7, 1};
    for (uint32_t i = 0; i < 1024; ++i) EXPECT_EQ(uav.As<uint32_t>()[i], i < 15 ? expected[i] : 0u) << "UAV[" << i << "]";
}

class GraphCreation : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_TRUE(context_.ok()); }
    GraphTestContext context_;
};

TEST_F(GraphCreation, MissingTargetNodeIsAnErrorNamingTheNode) {
    TestBuffer uav = context_.CreateBuffer(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph({{ReadCorpus("hello_first_node"), "firstNode"}}, layout, &result);
    EXPECT_EQ(result, VK_ERROR_UNKNOWN);
    EXPECT_EQ(graph, VK_NULL_HANDLE);
    ASSERT_EQ(context_.log().CountWithId("EXECGRAPH-PIPELINE-CREATION"), 1u) << context_.log().Problems();
    const std::string problems = context_.log().Problems();
    EXPECT_NE(problems.find("\"secondNode\"[0]"), std::string::npos) << problems;
    EXPECT_NE(problems.find("\"firstNode\"[0]"), std::string::npos) << problems;
    context_.log().Clear();
    context_.Destroy(uav);
}

TEST_F(GraphCreation, DuplicateNodeNamesAreAnError) {
    TestBuffer uav = context_.CreateBuffer(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkResult result = VK_SUCCESS;
    context_.CreateGraph({{ReadCorpus("hello_second_node"), "secondNode", "same"}, {ReadCorpus("hello_third_node"), "thirdNode", "same"}},
                         layout, &result);
    EXPECT_EQ(result, VK_ERROR_UNKNOWN);
    EXPECT_NE(context_.log().Problems().find("09134"), std::string::npos) << context_.log().Problems();
    context_.log().Clear();
    context_.Destroy(uav);
}

TEST_F(GraphCreation, NodeIndicesAreStableAndUnknownNamesFail) {
    TestBuffer uav = context_.CreateBuffer(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph(HelloGraphStages(), layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    const uint32_t first = context_.NodeIndex(graph, "firstNode", 0);
    EXPECT_EQ(context_.NodeIndex(graph, "firstNode", 0), first);
    EXPECT_NE(context_.NodeIndex(graph, "secondNode", 0), first);
    VkPipelineShaderStageNodeCreateInfoAMDX unknown{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, nullptr, "noSuchNode", 0};
    uint32_t index = 0;
    EXPECT_EQ(context_.vkGetExecutionGraphPipelineNodeIndexAMDX(context_.device(), graph, &unknown, &index), VK_ERROR_UNKNOWN);
    EXPECT_NE(context_.log().Problems().find("noSuchNode"), std::string::npos);
    context_.log().Clear();
    context_.Destroy(uav);
}

// Misuse the spec forbids is skipped with a message naming the problem, never recorded and never a crash.
TEST_F(GraphDispatch, InvalidDispatchesAreSkippedWithAMessage) {
    TestBuffer& uav = Own(context_.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph(HelloGraphStages(), layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    HelloEntryRecord records[2] = {{1, 0}, {1, 1}};
    VkDispatchGraphInfoAMDX info{context_.NodeIndex(graph, "firstNode", 0), 2, {}, sizeof(HelloEntryRecord)};
    info.payloads.hostAddress = records;
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    auto count_problems = [&](const char* needle) {
        size_t count = 0;
        for (const MessageLog::Message& message : context_.log().Messages()) {
            count += message.id == "EXECGRAPH-DISPATCH" && message.text.find(needle) != std::string::npos;
        }
        return count;
    };
    context_.Submit([&](VkCommandBuffer cmd) {
        // No graph bound yet.
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context_.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        // Scratch smaller than minSize.
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, 64, &count_info);
        // An unknown node index.
        VkDispatchGraphInfoAMDX unknown = info;
        unknown.nodeIndex = 77;
        VkDispatchGraphCountInfoAMDX unknown_count{1, {}, sizeof(unknown)};
        unknown_count.infos.hostAddress = &unknown;
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &unknown_count);
        // NULL payloads with a non-zero count, and a stride smaller than the record.
        VkDispatchGraphInfoAMDX null_payloads = info;
        null_payloads.payloads.hostAddress = nullptr;
        VkDispatchGraphCountInfoAMDX null_count{1, {}, sizeof(null_payloads)};
        null_count.infos.hostAddress = &null_payloads;
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &null_count);
        VkDispatchGraphInfoAMDX short_stride = info;
        short_stride.payloadStride = 4;
        VkDispatchGraphCountInfoAMDX short_count{1, {}, sizeof(short_stride)};
        short_count.infos.hostAddress = &short_stride;
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &short_count);
        // A NULL count info.
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, nullptr);
    });
    EXPECT_EQ(count_problems("no execution graph pipeline is bound"), 1u);
    EXPECT_EQ(count_problems("smaller than the graph's minSize"), 1u);
    EXPECT_EQ(count_problems("nodeIndex 77"), 1u);
    EXPECT_EQ(count_problems("payloads is NULL"), 1u);
    EXPECT_EQ(count_problems("payloadStride 4"), 1u);
    EXPECT_EQ(count_problems("pCountInfo or its infos pointer is NULL"), 1u);
    // Nothing ran.
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(uav.As<uint32_t>()[i], 0u);
    context_.log().Clear();
}

// More entry records than a scratch half holds: the excess is dropped, nothing outside scratch is written, every kept
// record runs, and the application hears about the drop (with the exact count) by the time its wait returns.
TEST_F(GraphDispatch, OverflowIsReportedWithTheDroppedCount) {
    constexpr uint32_t kRecords = 20000;
    TestBuffer& uav = Own(context_.CreateBuffer(kRecords * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({{ReadCorpus("thread_node"), "main"}}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);  // minSize: a few thousand records per half
    struct Record {
        uint32_t index, value;
    };
    std::vector<Record> records(kRecords);
    for (uint32_t i = 0; i < kRecords; ++i) records[i] = {i, i + 1};
    VkDispatchGraphInfoAMDX info{context_.NodeIndex(graph, "main", 0), kRecords, {}, sizeof(Record)};
    info.payloads.hostAddress = records.data();
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    context_.Submit([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context_.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    const uint32_t capacity = scratch.As<uint32_t>()[8];  // GraphHeader::record_capacity
    ASSERT_GT(capacity, 0u);
    ASSERT_LT(capacity, kRecords);
    uint32_t ran = 0;
    for (uint32_t i = 0; i < kRecords; ++i) {
        const uint32_t value = uav.As<uint32_t>()[i];
        EXPECT_TRUE(value == 0 || value == i + 1) << "UAV[" << i << "] = " << value;
        ran += value != 0;
    }
    EXPECT_EQ(ran, capacity);
    std::vector<std::string> reports;
    for (const MessageLog::Message& message : context_.log().Messages()) {
        if (message.id == "EXECGRAPH-DROPPED-WORK") reports.push_back(message.text);
    }
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_NE(reports[0].find(std::to_string(kRecords - capacity) + " records were dropped"), std::string::npos) << reports[0];
    // Entry records take whole 16-byte heap units, which is what the scratch plan budgets per record, so at minSize the
    // heap and the record list fill together (the half's 64-byte rounding can leave the heap one record more, and then
    // both are named); the heap is checked first.
    EXPECT_NE(reports[0].find("(the payload heap of a scratch half was full"), std::string::npos) << reports[0];
    context_.log().Clear();
}

}  // namespace
}  // namespace execgraph::test
