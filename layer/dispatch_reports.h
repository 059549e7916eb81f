// Reports what a graph dispatch did and what it dropped (ring overflow, depth and recursion limits, clamped grids and
// payload counts, unknown node indices) once the GPU has run it: nothing is lost silently (docs/reliability.md, "GPU-side
// faults and reports").
//
// The GPU keeps per-dispatch totals in the scratch GraphHeader and per-node counters in NodeStats (scratch_layout.h).
// After each graph dispatch the layer copies both into a slot of a host-visible ring buffer it owns, then writes the
// slot's serial number behind a transfer barrier, so a host that sees the serial also sees the data. The layer polls the
// pending slots at the application's synchronisation points (queue submit, fence and semaphore waits, idle waits), which
// is no later than the application could have seen the results itself. There it emits EXECGRAPH-DROPPED-WORK for a
// dispatch that dropped work (then aborts with `overflow_fatal`) and, with `statistics`, one JSON line per dispatch.
//
// Locking: the mutex guards the ring and the pending list only. Creating the ring, recording the copies and emitting
// messages all happen without it, so no lock is held while calling down the dispatch chain or into the application.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dispatch_table.h"
#include "execgraph/runtime/scratch_layout.h"

namespace execgraph {

class MessageSink;

// What a dispatch report says about where the dispatch came from.
struct DispatchDescription {
    std::string command;                                          // e.g. "vkCmdDispatchGraphAMDX"
    std::string pipeline;                                         // the graph's debug name, or its handle in hex when it has none
    std::shared_ptr<const std::vector<std::string>> node_labels;  // "name[index]" per graph node
};

struct ReportOptions {
    bool statistics = false;      // one JSON line per dispatch (INFO, EXECGRAPH-STATISTICS)
    std::string statistics_file;  // also append the lines to this file when not empty
    bool overflow_fatal = false;  // abort the process after reporting dropped work
};

// The data one dispatch leaves behind, as read back (also what the formatting functions below take).
struct DispatchReadback {
    runtime::GraphHeader header{};
    std::vector<runtime::NodeStats> nodes;  // empty when the graph had too many nodes for a ring slot
};

// The EXECGRAPH-DROPPED-WORK text for a dispatch, or empty when it dropped and clamped nothing.
std::string FormatDroppedWork(const DispatchDescription& description, const DispatchReadback& readback);
// The `statistics` JSON line (no trailing newline); docs/reliability.md documents every field.
std::string FormatStatistics(const DispatchDescription& description, const DispatchReadback& readback);

class DispatchReporter {
  public:
    DispatchReporter(VkDevice device, const DeviceDispatchTable* dispatch, const VkPhysicalDeviceMemoryProperties& memory,
                     ReportOptions options = {});
    ~DispatchReporter();
    DispatchReporter(const DispatchReporter&) = delete;
    DispatchReporter& operator=(const DispatchReporter&) = delete;

    // Records the copy of the dispatch's GraphHeader (at `scratch_offset` in `scratch_buffer`) and its `node_count`
    // NodeStats (at `scratch_offset + node_stats_offset`) after the dispatch's commands.
    void RecordReadback(VkCommandBuffer command_buffer, VkBuffer scratch_buffer, VkDeviceSize scratch_offset,
                        uint32_t node_stats_offset, uint32_t node_count, DispatchDescription description);

    // Reports every finished dispatch, once per submission that ran it.
    void Poll(const MessageSink& messages);

    void Destroy();

    static constexpr VkDeviceSize kRingSize = 1024 * 1024;

  private:
    struct Pending {
        VkDeviceSize offset;  // of the slot in the ring
        VkDeviceSize size;
        uint32_t serial;
        uint32_t node_count;  // NodeStats copied into the slot
        DispatchDescription description;
    };

    bool EnsureBuffer();

    VkDevice device_;
    const DeviceDispatchTable* dispatch_;
    VkPhysicalDeviceMemoryProperties memory_properties_;
    ReportOptions options_;
    std::mutex mutex_;  // guards everything below
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    volatile uint8_t* ring_ = nullptr;
    bool creation_failed_ = false;
    VkDeviceSize next_offset_ = 0;
    uint32_t next_serial_ = 1;
    std::vector<Pending> pending_;
    std::mutex file_mutex_;  // orders appends to statistics_file
};

}  // namespace execgraph
