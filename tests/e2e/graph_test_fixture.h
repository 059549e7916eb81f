// Shared fixture for the end-to-end graph tests: owns buffers, prepares scratch, and records the common
// bind-and-dispatch sequence so that each test spells out only its graph, its records and its CPU reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "graph_test_context.h"

namespace execgraph::test {

// One VkDispatchGraphInfoAMDX with its payload bytes kept alive by the test.
// Sets an environment variable for the object's lifetime: a layer setting read when the fixture's context creates its
// instance, so a fixture takes it as its first base.
class ScopedEnvironmentVariable {
  public:
    ScopedEnvironmentVariable(const char* variable, const char* value) : variable_(variable) { setenv(variable, value, 1); }
    ~ScopedEnvironmentVariable() { unsetenv(variable_); }
    ScopedEnvironmentVariable(const ScopedEnvironmentVariable&) = delete;
    ScopedEnvironmentVariable& operator=(const ScopedEnvironmentVariable&) = delete;

  private:
    const char* variable_;
};

struct EntryDispatch {
    uint32_t node_index = 0;
    uint32_t payload_count = 0;
    const void* payloads = nullptr;
    uint64_t stride = 0;
};

// Packs records of one type into a byte vector at `stride` (stride >= sizeof(T); the padding is filled with a pattern
// so that a scheduler reading the padding as record data shows up in the results).
template <typename T>
std::vector<uint8_t> PackRecords(const std::vector<T>& records, size_t stride = sizeof(T)) {
    std::vector<uint8_t> bytes(std::max<size_t>(1, records.size()) * std::max(stride, sizeof(T)), 0xA5);
    for (size_t i = 0; i < records.size(); ++i) std::memcpy(bytes.data() + i * stride, &records[i], sizeof(T));
    return bytes;
}

// VkSpecializationInfos for uint32 constants with SpecIds 0..n-1, kept at stable addresses for the test's lifetime.
class SpecializationStore {
  public:
    const VkSpecializationInfo* Add(const std::vector<uint32_t>& values) {
        Entry& entry = entries_.emplace_back();
        entry.values = values;
        for (uint32_t i = 0; i < values.size(); ++i) entry.map.push_back({i, i * 4, 4});
        entry.info = {static_cast<uint32_t>(entry.map.size()), entry.map.data(), entry.values.size() * 4, entry.values.data()};
        return &entry.info;
    }

  private:
    struct Entry {
        std::vector<uint32_t> values;
        std::vector<VkSpecializationMapEntry> map;
        VkSpecializationInfo info{};
    };
    std::list<Entry> entries_;
};

class GraphTest : public ::testing::Test {
  protected:
    GraphTest() = default;
    explicit GraphTest(const GraphTestOptions& options) : context_(options) {}

    void SetUp() override { ASSERT_TRUE(context_.ok()); }
    void TearDown() override {
        for (auto& buffer : buffers_) context_.Destroy(*buffer);
        EXPECT_EQ(context_.log().Problems(), "");
    }

    TestBuffer& Own(TestBuffer buffer) {
        buffers_.push_back(std::make_unique<TestBuffer>(buffer));
        return *buffers_.back();
    }
    TestBuffer& Uav(uint32_t uints) {
        return Own(context_.CreateBuffer(uints * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    }

    // Scratch of the graph's minimum size, initialised in its own submission.
    TestBuffer& PrepareScratch(VkPipeline graph) {
        VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
        EXPECT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
        EXPECT_GT(size.minSize, 0u);
        EXPECT_LE(size.minSize, size.maxSize);
        TestBuffer& scratch = Own(context_.CreateScratch(size.minSize));
        context_.Submit([&](VkCommandBuffer cmd) {
            context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size);
        });
        return scratch;
    }

    // Binds the graph and the latest descriptor set on the graph bind point.
    void BindGraph(VkCommandBuffer cmd, VkPipeline graph, VkPipelineLayout layout, VkDescriptorSet set) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
    }

    // Records vkCmdDispatchGraphAMDX with host infos and payloads.
    void DispatchHost(VkCommandBuffer cmd, const TestBuffer& scratch, const std::vector<EntryDispatch>& entries) {
        std::vector<VkDispatchGraphInfoAMDX> infos;
        for (const EntryDispatch& entry : entries) {
            VkDispatchGraphInfoAMDX info{entry.node_index, entry.payload_count, {}, entry.stride};
            info.payloads.hostAddress = entry.payloads;
            infos.push_back(info);
        }
        VkDispatchGraphCountInfoAMDX count_info{static_cast<uint32_t>(infos.size()), {}, sizeof(VkDispatchGraphInfoAMDX)};
        count_info.infos.hostAddress = infos.data();
        context_.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    }

    // Creates the graph, prepares scratch, and runs one host dispatch of `entries` (node indices resolved by name).
    struct NamedEntry {
        const char* node_name;
        uint32_t node_index;
        uint32_t payload_count;
        const void* payloads;
        uint64_t stride;
    };
    VkPipeline RunGraph(const std::vector<NodeStage>& stages, TestBuffer& uav, const std::vector<NamedEntry>& entries) {
        VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
        VkResult result = VK_SUCCESS;
        VkPipeline graph = context_.CreateGraph(stages, layout, &result);
        EXPECT_EQ(result, VK_SUCCESS) << context_.log().Problems();
        if (graph == VK_NULL_HANDLE) return graph;
        TestBuffer& scratch = PrepareScratch(graph);
        last_scratch_ = &scratch;
        std::vector<EntryDispatch> dispatches;
        for (const NamedEntry& entry : entries) {
            dispatches.push_back(
                {context_.NodeIndex(graph, entry.node_name, entry.node_index), entry.payload_count, entry.payloads, entry.stride});
        }
        VkDescriptorSet set = context_.descriptor_set();
        context_.Submit([&](VkCommandBuffer cmd) {
            BindGraph(cmd, graph, layout, set);
            DispatchHost(cmd, scratch, dispatches);
        });
        return graph;
    }

    // Compares the whole UAV with `expected` (missing tail entries mean 0).
    static void ExpectUav(const TestBuffer& uav, const std::vector<uint32_t>& expected) {
        const size_t count = uav.size / sizeof(uint32_t);
        uint32_t mismatches = 0;
        for (size_t i = 0; i < count && mismatches < 16; ++i) {
            const uint32_t want = i < expected.size() ? expected[i] : 0u;
            if (uav.As<uint32_t>()[i] != want) {
                ADD_FAILURE() << "UAV[" << i << "] = " << uav.As<uint32_t>()[i] << ", expected " << want;
                ++mismatches;
            }
        }
    }

    GraphTestContext context_;
    TestBuffer* last_scratch_ = nullptr;  // RunGraph's scratch (its GraphHeader: capacities, counters)
    SpecializationStore specs_;
    std::vector<std::unique_ptr<TestBuffer>> buffers_;
};

// vkd3d-proton's cell layout for NumThreads(2,3,4) broadcast nodes: every thread of every workgroup of a record's grid
// adds `value` to UAV[z*100 + y*10 + x] of its dispatch thread id.
inline void AddGridCells(std::vector<uint32_t>& cells, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t value) {
    for (uint32_t z = 0; z < gz * 4; ++z) {
        for (uint32_t y = 0; y < gy * 3; ++y) {
            for (uint32_t x = 0; x < gx * 2; ++x) {
                const uint32_t cell = z * 100 + y * 10 + x;
                if (cells.size() <= cell) cells.resize(cell + 1, 0);
                cells[cell] += value;
            }
        }
    }
}

}  // namespace execgraph::test
