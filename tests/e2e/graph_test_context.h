// A device with VK_AMDX_shader_enqueue through the layer (validation layer below it), plus the small amount of Vulkan
// boilerplate an end-to-end graph test needs: buffers with device addresses, node modules from AMDX assembly,
// a storage-buffer descriptor set, and one-shot command submission.
#pragma once

#include <vulkan/vulkan.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vulkan_test_support.h"

namespace execgraph::test {

struct TestBuffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    VkDeviceAddress address = 0;
    void* mapped = nullptr;

    template <typename T>
    T* As() const {
        return static_cast<T*>(mapped);
    }
};

struct NodeStage {
    std::string assembly;             // AMDX SPIR-V text (tests/spirv_corpus style)
    std::string entry_point;          // OpEntryPoint name
    const char* node_name = nullptr;  // VkPipelineShaderStageNodeCreateInfoAMDX::pName (null: entry point name)
    uint32_t node_index = VK_SHADER_INDEX_UNUSED_AMDX;
    const VkSpecializationInfo* specialization = nullptr;
};

struct GraphTestOptions {
    bool with_validation = true;            // VK_LAYER_KHRONOS_validation below the layer; every message fails the test
    bool synchronization_validation = true;  // with_validation: also check every barrier (VK_EXT_validation_features)
    std::vector<const char*> layers_below;  // layers between execgraph and validation (e.g. the test capture layer)
    bool debug_utils = true;                // enable VK_EXT_debug_utils (and the message log's messenger) on the instance
};

// How CreateGraphWith builds the execution graph create info.
struct GraphOptions {
    std::vector<VkPipeline> libraries;       // linked through pLibraryInfo
    VkPipelineCache cache = VK_NULL_HANDLE;  // vkCreateExecutionGraphPipelinesAMDX's pipelineCache
    bool inline_modules = false;             // each stage's module as a VkShaderModuleCreateInfo in its pNext
};

class GraphTestContext {
  public:
    // with_validation: VK_LAYER_KHRONOS_validation below the layer, with synchronization validation; every message fails
    // the test in TearDown.
    explicit GraphTestContext(bool with_validation = true) : GraphTestContext(GraphTestOptions{with_validation}) {}
    explicit GraphTestContext(const GraphTestOptions& options);
    ~GraphTestContext();

    bool ok() const { return device_ != nullptr && device_->result() == VK_SUCCESS; }
    VkDevice device() const { return device_->handle(); }
    VkPhysicalDevice physical_device() const { return instance_->PhysicalDevice(); }
    VkQueue queue() const { return queue_; }
    uint32_t queue_family() const { return device_->queue_family(); }
    // Destroys what the context made and the device, keeping the instance and the message log (teardown tests).
    void DestroyDevice();
    MessageLog& log() { return log_; }

    // Host-visible, coherent and mapped by default. Benchmarks ask for DEVICE_LOCAL `memory` instead; the buffer is
    // mapped only when `memory` includes HOST_VISIBLE.
    TestBuffer CreateBuffer(VkDeviceSize size, VkBufferUsageFlags usage,
                            VkMemoryPropertyFlags memory = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    TestBuffer CreateScratch(VkDeviceSize size);
    void Destroy(TestBuffer& buffer);

    // A descriptor set layout, set and pipeline layout with `buffers` storage buffers at set 0, bindings 0..n-1.
    // Every call makes a new set; descriptor_set() is the one from the latest call (tests that need the app's compute
    // state next to the graph's keep both).
    VkPipelineLayout CreateStorageBufferLayout(const std::vector<TestBuffer*>& buffers, uint32_t push_constant_bytes = 0);
    VkDescriptorSet descriptor_set() const { return descriptor_set_; }

    VkShaderModule CreateNodeModule(const std::string& assembly);
    // Creates an execution graph pipeline; returns VK_NULL_HANDLE and records the VkResult on failure.
    VkPipeline CreateGraph(const std::vector<NodeStage>& stages, VkPipelineLayout layout, VkResult* result = nullptr);
    // Same, linking `libraries` (node pipelines from CreateComputePipeline with `as_graph_library`) through pLibraryInfo.
    VkPipeline CreateGraph(const std::vector<NodeStage>& stages, const std::vector<VkPipeline>& libraries, VkPipelineLayout layout,
                           VkResult* result = nullptr);
    // Same, as `options` describe.
    VkPipeline CreateGraphWith(const std::vector<NodeStage>& stages, const GraphOptions& options, VkPipelineLayout layout,
                               VkResult* result = nullptr);
    // A plain compute pipeline, or with `as_graph_library` one node of an execution graph library
    // (VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR | VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX through
    // VkPipelineCreateFlags2CreateInfoKHR). Returns VK_NULL_HANDLE and records the VkResult on failure.
    VkPipeline CreateComputePipeline(const NodeStage& stage, VkPipelineLayout layout, bool as_graph_library = false,
                                     VkResult* result = nullptr);
    uint32_t NodeIndex(VkPipeline graph, const char* name, uint32_t index);

    void Submit(const std::function<void(VkCommandBuffer)>& record);
    // Records a command buffer and frees it without submitting it: for commands whose only effect a test checks is a
    // message at record time.
    void RecordOnly(const std::function<void(VkCommandBuffer)>& record);

    // The seven AMDX entry points as the application sees them.
    PFN_vkCreateExecutionGraphPipelinesAMDX vkCreateExecutionGraphPipelinesAMDX = nullptr;
    PFN_vkGetExecutionGraphPipelineScratchSizeAMDX vkGetExecutionGraphPipelineScratchSizeAMDX = nullptr;
    PFN_vkGetExecutionGraphPipelineNodeIndexAMDX vkGetExecutionGraphPipelineNodeIndexAMDX = nullptr;
    PFN_vkCmdInitializeGraphScratchMemoryAMDX vkCmdInitializeGraphScratchMemoryAMDX = nullptr;
    PFN_vkCmdDispatchGraphAMDX vkCmdDispatchGraphAMDX = nullptr;
    PFN_vkCmdDispatchGraphIndirectAMDX vkCmdDispatchGraphIndirectAMDX = nullptr;
    PFN_vkCmdDispatchGraphIndirectCountAMDX vkCmdDispatchGraphIndirectCountAMDX = nullptr;

  private:
    uint32_t FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags flags) const;

    MessageLog log_;
    std::unique_ptr<TestInstance> instance_;
    std::unique_ptr<TestDevice> device_;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool command_pool_ = VK_NULL_HANDLE;
    std::vector<VkDescriptorSetLayout> set_layouts_;
    std::vector<VkDescriptorPool> descriptor_pools_;
    VkDescriptorSet descriptor_set_ = VK_NULL_HANDLE;
    std::vector<VkPipelineLayout> pipeline_layouts_;
    std::vector<VkShaderModule> modules_;
    std::vector<VkPipeline> pipelines_;
};

// Reads a corpus module (tests/spirv_corpus/NAME.spvasm).
std::string ReadCorpus(const std::string& name);
// Reads an end-to-end test module (tests/e2e/modules/NAME.spvasm); nothing but the e2e tests reads that folder.
std::string ReadModule(const std::string& name);
// The graph of uniform_allocate_array: "Entry" and the node array B[0..3] it allocates for (big_sink), both with records
// {uint value; uint pad[pad_words];}: 128 bytes by default; at most 23 pad words make records of at most 96 bytes, which
// the lowering reserves with one atomic (LoweringOptions::heap_holds_record_list).
std::vector<NodeStage> UniformAllocateArrayStages(uint32_t pad_words = 31);
// A chain of node arrays L0..L<levels - 1>, each `width` members of array_chain_step (a dispatch group of static
// broadcast nodes) whose UAV rows are `chains` words long; the last level has no output. `names` keeps the node names
// the stages point to ("L0", "L1", ...).
std::vector<NodeStage> ArrayChainStages(uint32_t width, uint32_t levels, uint32_t chains, std::vector<std::string>* names);
// array_chain_step's record: which chain, at which level.
struct ArrayChainRecord {
    uint32_t chain, level;
};
// The level-0 records of ArrayChainStages' chains, per member of L0: chain c enters at member c % width.
std::vector<std::vector<ArrayChainRecord>> ArrayChainEntryRecords(uint32_t width, uint32_t chains);
// The UAV those chains leave: each level moves a chain to the next member, which writes its index + 1 at
// [level * chains + chain].
std::vector<uint32_t> ArrayChainExpectedUav(uint32_t width, uint32_t levels, uint32_t chains);
// tests/spirv_corpus/output_node_array_runtime_index as "Entry" with an output array B of `sinks` members, and the
// array_sink nodes B[0..sinks-1]: each Entry record {node_idx, value} sends 8 records {value + thread} to B[node_idx],
// which adds them to UAV[2 * node_idx] and counts them in UAV[2 * node_idx + 1]. Level 0 is the static broadcast node
// Entry, level 1 the node array: the classification shape, with sinks + 1 nodes. With "array_static_sink" as the sink
// module the members are static broadcast nodes (grid 3x1x1; AddStaticSinkRecord says what each record leaves), as
// AMD's classify/compose: level 1 can then be a direct level with the members' dispatch group as its consumer.
std::vector<NodeStage> ClassificationStages(uint32_t sinks, const char* sink_module = "array_sink");
// Adds what one record of array_static_sink (grid 3x1x1, two invocations per workgroup) leaves in the UAV of member
// `member`: its value six times, six invocations, and two invocations in each of the three low bytes of word 2 (one
// byte per workgroup of the grid).
void AddStaticSinkRecord(std::vector<uint32_t>& expected, uint32_t member, uint32_t value);
// Replaces the one definition `%name = OpConstant %uint OLD` of a test module's text with VALUE (resizes a pad array).
std::string WithUintConstant(std::string text, const std::string& name, uint32_t value);

}  // namespace execgraph::test
