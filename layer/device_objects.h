// Objects the layer keeps per emulating device: scratch buffers, AMDX shader modules, pipeline layouts, execution graph
// pipelines and per-command-buffer state. Lookups go through the concurrent maps in DeviceState.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace execgraph {

struct GraphPipeline;

// A buffer created with VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX. The AMDX commands receive scratch as a device
// address, but transfer and indirect-dispatch commands need the VkBuffer and an offset, so addresses are mapped back.
struct ScratchBuffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
};

struct BufferRange {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;           // of the address within the buffer
    VkDeviceSize bytes_available = 0;  // from the address to the end of the buffer
};

class ScratchBufferRegistry {
  public:
    void AddBuffer(VkBuffer buffer, VkDeviceSize size);
    void RecordAddress(VkBuffer buffer, VkDeviceAddress address);
    void RemoveBuffer(VkBuffer buffer);
    bool IsScratchBuffer(VkBuffer buffer) const;
    // The scratch buffer holding [address, address + size), if any.
    std::optional<BufferRange> Find(VkDeviceAddress address, VkDeviceSize size) const;

  private:
    mutable std::shared_mutex mutex_;
    std::map<VkBuffer, VkDeviceSize> sizes_;
    std::map<VkDeviceAddress, ScratchBuffer> by_address_;  // base address → buffer
};

// A shader module whose SPIR-V declares ShaderEnqueueAMDX. It never reaches the driver (which, and a validation layer
// below, would reject capability 5067); the layer keeps the words and lowers them at pipeline creation.
struct AmdxShaderModule {
    std::vector<uint32_t> words;
};

struct PipelineLayoutInfo {
    std::vector<VkDescriptorSetLayout> set_layouts;
    std::vector<VkPushConstantRange> push_constant_ranges;
    uint32_t push_constant_end = 0;  // one past the last byte of any range
};

// Compute or execution-graph bind point state of one command buffer, as the application left it.
struct BindPointState {
    struct SetBinding {
        VkDescriptorSet set = VK_NULL_HANDLE;
        VkPipelineLayout layout = VK_NULL_HANDLE;
        std::vector<uint32_t> dynamic_offsets;  // of the whole bind call that started at this set
        uint32_t replays_following = 0;        // sets bound by that call, starting here (0: bound as part of an earlier call)
    };
    VkPipeline pipeline = VK_NULL_HANDLE;
    std::vector<SetBinding> sets;  // indexed by set number
};

struct PushConstantWrite {
    VkPipelineLayout layout;
    VkShaderStageFlags stages;
    uint32_t offset;
    std::vector<uint8_t> bytes;
};

struct CommandBufferState {
    VkCommandPool pool = VK_NULL_HANDLE;
    bool is_primary = true;
    BindPointState compute;
    BindPointState graph;
    std::shared_ptr<GraphPipeline> bound_graph;
    // The latest push per (layout, stages, offset, size), in the order they were made, so they can be replayed.
    std::vector<PushConstantWrite> push_constants;

    void Reset() {
        compute = {};
        graph = {};
        bound_graph.reset();
        push_constants.clear();
    }
};

}  // namespace execgraph
