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
// it, so no lock is held while calling into the application or down the dispatch chain, except for
// vkGetQueryPoolResults on the reporter's own query pool without VK_QUERY_RESULT_WAIT_BIT, which does not block. The
// reporter records nothing.
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
    // The `level_timestamps` setting, where every queue family that can run the dispatches has timestamps: slots come
    // with timestamp queries, and the statistics line gets the GPU times (needs `statistics`).
    bool level_timestamps = false;
    float timestamp_period_ns = 1.0f;    // VkPhysicalDeviceLimits::timestampPeriod
    uint32_t timestamp_valid_bits = 64;  // the smallest VkQueueFamilyProperties::timestampValidBits of those families
};

// The data one dispatch leaves behind, as read back (also what the formatting functions below take).
struct DispatchReadback {
    runtime::GraphHeader header{};
    std::vector<runtime::NodeStats> nodes;  // empty when the graph had too many nodes for a ring slot
    // With `level_timestamps`: the DispatchTimestampCount timestamps (layer/scheduler.h) in µs after the first; empty
    // without them.
    std::vector<double> timestamps_us;
};

// The EXECGRAPH-DROPPED-WORK text for a dispatch, or empty when it dropped and clamped nothing.
std::string FormatDroppedWork(const DispatchDescription& description, const DispatchReadback& readback);
// The `statistics` JSON line (no trailing newline); docs/reliability.md documents every field.
std::string FormatStatistics(const DispatchDescription& description, const DispatchReadback& readback);

class DispatchReporter {
  public:
    static constexpr VkDeviceSize kRingSize = 1024 * 1024;
    // Timestamp queries of the `level_timestamps` pool, used as a ring like the slots (34 per dispatch of 16 levels).
    static constexpr uint32_t kTimestampQueries = 8192;

    // `ring_size` (a multiple of 16) and `timestamp_queries` are kRingSize and kTimestampQueries but for tests of the
    // rings' wraparound. The device must have bufferDeviceAddress enabled (the finish pass writes the ring through its
    // address).
    DispatchReporter(VkDevice device, const DeviceDispatchTable* dispatch, const VkPhysicalDeviceMemoryProperties& memory,
                     ReportOptions options = {}, VkDeviceSize ring_size = kRingSize, uint32_t timestamp_queries = kTimestampQueries);
    ~DispatchReporter();
    DispatchReporter(const DispatchReporter&) = delete;
    DispatchReporter& operator=(const DispatchReporter&) = delete;

    // Reserves the ring slot for one dispatch of a graph with `node_count` nodes, for DispatchOptions::report, and
    // registers it for Poll. A graph whose NodeStats would take more than a quarter of the ring is reported from its
    // header alone (stats_count 0). With `level_timestamps`, the slot also gets `timestamp_count` queries
    // (DispatchTimestampCount of the plan's levels). Returns no slot (address 0) when the ring cannot be created.
    ReportSlot Reserve(uint32_t node_count, DispatchDescription description, uint32_t timestamp_count = 0);
    // Forgets a reserved slot whose dispatch was not recorded after all.
    void Cancel(const ReportSlot& slot);

    // Reports every finished dispatch, once per submission that ran it. A dispatch with timestamps waits for the next
    // poll until its last timestamp is available (it follows the report's serial).
    void Poll(const MessageSink& messages);

    void Destroy();

  private:
    struct Pending {
        VkDeviceSize offset;  // of the slot in the ring
        VkDeviceSize size;
        uint32_t serial;
        uint32_t node_count;  // NodeStats copied into the slot
        DispatchDescription description;
        uint32_t first_timestamp = 0;
        uint32_t timestamp_count = 0;  // 0: no timestamps (none asked for, or a later dispatch took over its queries)
    };

    bool EnsureBuffer();
    bool EnsureTimestampPool();

    VkDevice device_;
    const DeviceDispatchTable* dispatch_;
    VkPhysicalDeviceMemoryProperties memory_properties_;
    ReportOptions options_;
    VkDeviceSize ring_size_;
    uint32_t timestamp_queries_;
    std::mutex mutex_;  // guards everything below
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    VkDeviceAddress ring_address_ = 0;
    volatile uint8_t* ring_ = nullptr;
    bool creation_failed_ = false;
    VkDeviceSize next_offset_ = 0;
    uint32_t next_serial_ = 1;
    std::vector<Pending> pending_;
    VkQueryPool timestamp_pool_ = VK_NULL_HANDLE;
    bool timestamp_pool_failed_ = false;
    bool timestamp_failure_reported_ = false;
    uint32_t next_timestamp_ = 0;
    std::mutex file_mutex_;  // orders appends to statistics_file
};

}  // namespace execgraph
