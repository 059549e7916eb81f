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
    // Also forgets the initializations recorded in the buffer's memory (a new buffer there starts uninitialized).
    // Forgets `buffer`; returns whether it was a scratch buffer.
    bool RemoveBuffer(VkBuffer buffer);
    bool IsScratchBuffer(VkBuffer buffer) const;
    // The scratch buffer holding [address, address + size), if any.
    std::optional<BufferRange> Find(VkDeviceAddress address, VkDeviceSize size) const;

    // The application recorded vkCmdInitializeGraphScratchMemoryAMDX of [address, address + size) for the graph with
    // `graph_tag` (GraphPipeline::graph_tag). Initializations recorded earlier whose ranges it overlaps are forgotten: it
    // overwrites their headers, or may.
    void RecordInitialization(VkDeviceAddress address, VkDeviceSize size, uint32_t graph_tag);
    // Whether the latest initialization recorded at `address` (and not overlapped since) was for `graph_tag`. Recorded,
    // not executed: command buffers run in the order they are submitted, not recorded, and may never run at all. So this
    // only lets a dispatch leave out a GPU check whose result cannot change what it does (RecordGraphDispatch); where it
    // says false, the GPU checks.
    bool LatestInitializationIs(VkDeviceAddress address, uint32_t graph_tag) const;

  private:
    struct RecordedInitialization {
        VkDeviceSize size = 0;
        uint32_t graph_tag = 0;
    };
    mutable std::shared_mutex mutex_;
    std::map<VkBuffer, VkDeviceSize> sizes_;
    std::map<VkDeviceAddress, ScratchBuffer> by_address_;                // base address → buffer
    std::map<VkDeviceAddress, RecordedInitialization> initializations_;  // scratch address → its latest initialization
    // Forgets the recorded initializations that overlap [address, address + size). Called with mutex_ held.
    void ForgetInitializations(VkDeviceAddress address, VkDeviceSize size);
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

struct PreparedLevels;  // prepared_levels.h

struct CommandBufferState {
    VkCommandPool pool = VK_NULL_HANDLE;
    bool is_primary = true;
    BindPointState compute;
    BindPointState graph;
    std::shared_ptr<GraphPipeline> bound_graph;
    // The latest push per (layout, stages, offset, size), in the order they were made, so they can be replayed.
    std::vector<PushConstantWrite> push_constants;
    // The prepared secondaries this command buffer executed (the `prepared_levels` setting): kept until it is begun
    // again, freed or its pool destroyed, when it can no longer be pending and they may be freed.
    std::vector<std::shared_ptr<const PreparedLevels>> prepared_levels;
    // Queries begun and not yet ended in this command buffer, counted only where the `prepared_levels` setting is on. A
    // primary with an active query cannot execute the layer's secondaries, which inherit no query
    // (VUID-vkCmdExecuteCommands-commandBuffer-00101, -00102 and -00104), so its graph dispatches record their levels
    // directly until the count is back at zero.
    uint32_t active_queries = 0;

    void Reset() {
        compute = {};
        graph = {};
        bound_graph.reset();
        push_constants.clear();
        prepared_levels.clear();
        active_queries = 0;
    }
};

}  // namespace execgraph
