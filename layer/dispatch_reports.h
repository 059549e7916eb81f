// Reports what a graph dispatch did and what it dropped (ring overflow, depth and recursion limits, clamped grids and
// payload counts, unknown node indices) once the GPU has run it: nothing is lost silently (docs/reliability.md, "GPU-side
// faults and reports").
//
// The GPU keeps per-dispatch totals in the scratch GraphHeader and per-node counters in NodeStats (scratch_layout.h).
// Before each graph dispatch is recorded the reporter reserves a slot of a host-visible ring buffer it owns (Reserve);
// the scheduler's finish pass, the dispatch's last pass, copies both into the slot through its device address and
// writes the slot's serial number last, after a fence, so a host that sees the serial also sees the data
// (layer/scheduler.h, ReportSlot). The layer polls the pending slots at the application's synchronisation points (queue
// submit, fence and semaphore waits, idle waits), which is no later than the application could have seen the results
// itself. There it emits EXECGRAPH-DROPPED-WORK for a dispatch that dropped work (then aborts with `overflow_fatal`)
// and, with `statistics`, one JSON line per dispatch.
//
// Locking: the mutex guards the ring and the pending list only. Creating the ring and emitting messages happen without
// it, so no lock is held while calling down the dispatch chain or into the application; the reporter records nothing.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dispatch_table.h"
#include "execgraph/runtime/scratch_layout.h"
#include "scheduler.h"

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
    static constexpr VkDeviceSize kRingSize = 1024 * 1024;

    // `ring_size` (a multiple of 16) is kRingSize but for tests of the ring's wraparound. The device must have
    // bufferDeviceAddress enabled (the finish pass writes the ring through its address).
    DispatchReporter(VkDevice device, const DeviceDispatchTable* dispatch, const VkPhysicalDeviceMemoryProperties& memory,
                     ReportOptions options = {}, VkDeviceSize ring_size = kRingSize);
    ~DispatchReporter();
    DispatchReporter(const DispatchReporter&) = delete;
    DispatchReporter& operator=(const DispatchReporter&) = delete;

    // Reserves the ring slot for one dispatch of a graph with `node_count` nodes, for DispatchOptions::report, and
    // registers it for Poll. A graph whose NodeStats would take more than a quarter of the ring is reported from its
    // header alone (stats_count 0). Returns no slot (address 0) when the ring cannot be created.
    ReportSlot Reserve(uint32_t node_count, DispatchDescription description);
    // Forgets a reserved slot whose dispatch was not recorded after all.
    void Cancel(const ReportSlot& slot);

    // Reports every finished dispatch, once per submission that ran it.
    void Poll(const MessageSink& messages);

    void Destroy();

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
    VkDeviceSize ring_size_;
    std::mutex mutex_;  // guards everything below
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    VkDeviceAddress ring_address_ = 0;
    volatile uint8_t* ring_ = nullptr;
    bool creation_failed_ = false;
    VkDeviceSize next_offset_ = 0;
    uint32_t next_serial_ = 1;
    std::vector<Pending> pending_;
    std::mutex file_mutex_;  // orders appends to statistics_file
};

}  // namespace execgraph
