// Reports work a graph dispatch dropped (ring overflow, depth limit, clamped grids, unknown node indices) to the
// application once the GPU has run it: nothing is lost silently (docs/design.md, "Runtime contract").
//
// The GPU counts drops in the scratch header. After each graph dispatch the layer copies that status into a slot of a
// small host-visible buffer it owns, then writes the slot's serial number behind a transfer barrier, so a host that sees
// the serial also sees the status. The layer polls the pending slots at the application's synchronisation points
// (queue submit, fence and semaphore waits, idle waits), which is no later than the application could have seen the
// results itself.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "dispatch_table.h"

namespace execgraph {

class MessageSink;

class DispatchReporter {
  public:
    DispatchReporter(VkDevice device, const DeviceDispatchTable* dispatch, const VkPhysicalDeviceMemoryProperties& memory);
    ~DispatchReporter();
    DispatchReporter(const DispatchReporter&) = delete;
    DispatchReporter& operator=(const DispatchReporter&) = delete;

    // Records the copy of the dispatch's status after the dispatch's commands. `status_offset` is the byte offset of
    // GraphHeader::status_flags in `scratch_buffer`. `description` names the command and pipeline for the message.
    void RecordReadback(VkCommandBuffer command_buffer, VkBuffer scratch_buffer, VkDeviceSize status_offset, std::string description);

    // Reports every finished dispatch that dropped work, once per submission that ran it.
    void Poll(const MessageSink& messages);

    void Destroy();

  private:
    struct Slot {
        uint32_t serial;
        uint32_t status_flags;
        uint32_t dropped_records;
        uint32_t heap_high_water;
    };
    struct Pending {
        uint32_t slot;
        uint32_t serial;
        std::string description;
    };
    static constexpr uint32_t kSlotCount = 1024;

    bool EnsureBuffer();

    VkDevice device_;
    const DeviceDispatchTable* dispatch_;
    VkPhysicalDeviceMemoryProperties memory_properties_;
    std::mutex mutex_;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    volatile Slot* slots_ = nullptr;
    uint32_t next_serial_ = 1;
    std::vector<Pending> pending_;
};

}  // namespace execgraph
