// Prepared levels (the opt-in `prepared_levels` setting): a graph dispatch's levels recorded once into a secondary
// command buffer and executed again wherever the same commands would be recorded.
//
// Recording the levels costs the driver about 0.4 µs per barrier and 0.3 to 0.6 µs per indirect dispatch (NVIDIA 580),
// about 30 µs for 32 levels before the layer does anything, while vkCmdExecuteCommands of a secondary command buffer
// holding them costs 0.08 µs of CPU; on the GPU the same driver charges about 1.5 to 2 µs for each executed secondary
// (an H100, docs/performance.md, "Session of the whole dispatch prepared"). The commands a dispatch records depend on the graph,
// the entries' nodes, the scratch range, the settings and the application's descriptor sets and push constants; rather than derive
// a key from all of those, the scheduler records the levels into a CommandCapture (a DeviceDispatchTable whose
// recording functions append words), and a prepared secondary command buffer is reused only where its captured words
// are the same. What the capture costs is the layer's own recording work, without the driver's.
//
// The spec makes all state of a primary command buffer undefined after vkCmdExecuteCommands ("Secondary Command Buffer
// Execution"). The layer puts the compute state back as after every graph dispatch (RestoreComputeState); the
// application must bind any other state again, which is why the setting is off unless asked for (docs/settings.md).
#pragma once

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "dispatch_table.h"

namespace execgraph {

// Commands recorded through CaptureDispatchTable, as words: per command its opcode, its length in words, its operands.
struct CommandCapture {
    std::vector<uint32_t> words;
    // The descriptor sets the commands bind: updating, freeing or resetting one invalidates a command buffer that bound
    // it ("Command Buffer Lifecycle"), so prepared secondaries that hold them are dropped then.
    std::vector<VkDescriptorSet> descriptor_sets;
    // A command the capture cannot hold (a barrier on a buffer or image range) was recorded: nothing may be replayed.
    bool unsupported = false;

    void Clear() {
        words.clear();
        descriptor_sets.clear();
        unsupported = false;
    }
};

// `real` with every command-recording function the scheduler uses replaced by one that appends to the capture of
// the calling thread's CaptureScope (the command buffer handle it is given is ignored); the other functions are
// `real`'s. Functions `real` lacks stay null, so the scheduler's checks for optional commands see the same.
DeviceDispatchTable MakeCaptureDispatchTable(const DeviceDispatchTable& real);

// Directs the capture functions of this thread to `capture` while it lives.
class CaptureScope {
  public:
    explicit CaptureScope(CommandCapture& capture);
    ~CaptureScope();
    CaptureScope(const CaptureScope&) = delete;
    CaptureScope& operator=(const CaptureScope&) = delete;

  private:
    CommandCapture* previous_;
};

// Records the captured commands into `command_buffer` through `dispatch`, in order.
void ReplayCapture(const DeviceDispatchTable& dispatch, VkCommandBuffer command_buffer, const CommandCapture& capture);

// The layer's own command pool for one queue family, from which prepared secondaries are allocated. Allocating,
// recording and freeing command buffers of one pool need external synchronization, hence the mutex.
class PreparedLevelPool {
  public:
    PreparedLevelPool(VkDevice device, const DeviceDispatchTable& dispatch, PFN_vkSetDeviceLoaderData set_loader_data,
                      uint32_t queue_family);
    ~PreparedLevelPool();
    PreparedLevelPool(const PreparedLevelPool&) = delete;
    PreparedLevelPool& operator=(const PreparedLevelPool&) = delete;

    // A secondary command buffer holding `capture`'s commands (VK_NULL_HANDLE with `error` set where that failed).
    VkCommandBuffer Record(const CommandCapture& capture, std::string* error);
    void Free(VkCommandBuffer command_buffer);
    uint32_t queue_family() const { return queue_family_; }

  private:
    VkDevice device_;
    const DeviceDispatchTable& dispatch_;
    PFN_vkSetDeviceLoaderData set_loader_data_;
    uint32_t queue_family_;
    std::mutex mutex_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkResult create_result_ = VK_SUCCESS;
};

// One prepared secondary command buffer. Freed when the cache has dropped it and no primary command buffer that
// executed it holds it any more (CommandBufferState::prepared_levels, released when the primary is begun again, freed
// or its pool destroyed: only then can it no longer be pending).
struct PreparedLevels {
    std::shared_ptr<PreparedLevelPool> pool;
    VkCommandBuffer command_buffer = VK_NULL_HANDLE;
    uint32_t queue_family = 0;
    CommandCapture capture;

    PreparedLevels() = default;
    PreparedLevels(const PreparedLevels&) = delete;
    PreparedLevels& operator=(const PreparedLevels&) = delete;
    ~PreparedLevels() {
        if (pool && command_buffer != VK_NULL_HANDLE) pool->Free(command_buffer);
    }
};

// The prepared secondaries of one device, most recently used last, at most kMaxEntries.
class PreparedLevelCache {
  public:
    static constexpr size_t kMaxEntries = 64;

    PreparedLevelCache(VkDevice device, const DeviceDispatchTable& dispatch, PFN_vkSetDeviceLoaderData set_loader_data)
        : device_(device), dispatch_(dispatch), set_loader_data_(set_loader_data) {}

    // The prepared secondary of `queue_family` holding exactly `capture`'s commands; on a miss one is recorded
    // (`*recorded` true). Null with `error` set where no secondary could be recorded.
    std::shared_ptr<PreparedLevels> FindOrRecord(uint32_t queue_family, const CommandCapture& capture, bool* recorded,
                                                 std::string* error);
    // Drops the entries that bind any of `sets` (their secondaries are invalid from now on), or every entry.
    void DropBinding(std::span<const VkDescriptorSet> sets);
    void DropAll();
    // Entries recorded so far and entries the cache holds now (for tests and statistics).
    uint64_t recorded_count() const;
    size_t size() const;

  private:
    VkDevice device_;
    const DeviceDispatchTable& dispatch_;
    PFN_vkSetDeviceLoaderData set_loader_data_;
    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<PreparedLevels>> entries_;
    std::vector<std::shared_ptr<PreparedLevelPool>> pools_;  // one per queue family used so far
    uint64_t recorded_ = 0;
};

}  // namespace execgraph
