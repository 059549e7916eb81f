#include "dispatch_reports.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "messages.h"

namespace execgraph {
namespace {

using runtime::GraphHeader;
using runtime::NodeStats;


struct FlagName {
    uint32_t bit;
    const char* json;  // the `overflow` array of the statistics line
    const char* text;  // the dropped-work message
};
constexpr FlagName kFlagNames[] = {
    {runtime::kStatusHeapOverflow, "heap", "the payload heap of a scratch half was full"},
    {runtime::kStatusRecordListOverflow, "record_list", "the record list of a scratch half was full"},
    {runtime::kStatusDepthLimit, "depth_limit",
     "the recursion limit (MaxNodeRecursionAMDX) or the depth limit (maxExecutionGraphDepth) was reached"},
    {runtime::kStatusGridClamped, "grid_clamped",
     "a dynamic grid exceeded MaxNumWorkgroupsAMDX or the advertised limits and was clamped"},
    {runtime::kStatusInvalidNodeIndex, "invalid_node_index", "an allocation or entry named no node of the graph"},
    {runtime::kStatusUninitialized, "uninitialized",
     "scratch was not initialized for this graph (vkCmdInitializeGraphScratchMemoryAMDX)"},
    {runtime::kStatusPayloadCountClamped, "payload_count_clamped",
     "an allocation asked for more records than its output's NodeMaxPayloadsAMDX (at most 256) and was clamped"},
    {runtime::kStatusFixedLevelExceeded, "fixed_level_exceeded",
     "a level got more records than its producers' NodeMaxPayloadsAMDX allow "
     "(VUID-vkCmdDispatchGraphAMDX-NodeMaxPayloadsAMDX-09188), "
     "more than the workgroups the layer launched for it could run"},
};

std::string DescribeStatus(uint32_t flags) {
    std::string text;
    for (const FlagName& name : kFlagNames) {
        if (!(flags & name.bit)) continue;
        if (!text.empty()) text += "; ";
        text += name.text;
    }
    return text;
}

std::string NodeLabel(const DispatchDescription& description, uint32_t node) {
    if (description.node_labels && node < description.node_labels->size()) return (*description.node_labels)[node];
    return "#" + std::to_string(node);
}

void AppendJsonString(std::string* out, std::string_view text) {
    *out += '"';
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            *out += '\\';
            *out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
            *out += escaped;
        } else {
            *out += c;
        }
    }
    *out += '"';
}

void AppendField(std::string* out, const char* key, uint64_t value) {
    *out += ",\"";
    *out += key;
    *out += "\":" + std::to_string(value);
}

// {"label":value,...} over the nodes, skipping zero values when `skip_zero`.
template <typename Value>
void AppendNodeMap(std::string* out, const char* key, const DispatchDescription& description, const DispatchReadback& readback,
                   Value value, bool skip_zero) {
    *out += ",\"";
    *out += key;
    *out += "\":{";
    bool first = true;
    for (uint32_t node = 0; node < readback.nodes.size(); ++node) {
        const uint64_t v = value(readback.nodes[node]);
        if (skip_zero && v == 0) continue;
        if (!first) *out += ',';
        first = false;
        AppendJsonString(out, NodeLabel(description, node));
        *out += ':' + std::to_string(v);
    }
    *out += '}';
}

void AppendMicroseconds(std::string* out, double value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f", value);
    *out += text;
}

// The `level_timestamps` fields from DispatchTimestampCount's timestamps (layer/scheduler.h): the whole dispatch, its
// setup (begin transfers and entry pass, up to level 0's start), and per level its time from its start to the next
// level's (the last level's includes the finish pass) and the part its level pass took.
void AppendTimes(std::string* out, const std::vector<double>& timestamps_us) {
    if (timestamps_us.size() < 2 || timestamps_us.size() % 2 != 0) return;
    const size_t levels = (timestamps_us.size() - 2) / 2;
    *out += ",\"gpu_us\":";
    AppendMicroseconds(out, timestamps_us.back() - timestamps_us.front());
    *out += ",\"setup_gpu_us\":";
    AppendMicroseconds(out, timestamps_us[1] - timestamps_us[0]);
    *out += ",\"level_gpu_us\":[";
    for (size_t level = 0; level < levels; ++level) {
        if (level != 0) *out += ',';
        AppendMicroseconds(out, timestamps_us[3 + 2 * level] - timestamps_us[1 + 2 * level]);
    }
    *out += "],\"level_pass_gpu_us\":[";
    for (size_t level = 0; level < levels; ++level) {
        if (level != 0) *out += ',';
        AppendMicroseconds(out, timestamps_us[2 + 2 * level] - timestamps_us[1 + 2 * level]);
    }
    *out += ']';
}

}  // namespace

std::string FormatDroppedWork(const DispatchDescription& description, const DispatchReadback& readback) {
    const GraphHeader& header = readback.header;
    if (header.status_flags == 0 && header.dropped_records == 0) return {};
    if (header.status_flags == runtime::kStatusUninitialized && header.dropped_records == 0) {
        // A dispatch that rewrote the tables it reads (layer/scheduler.cpp, HostLevelZero) ran its records; one that
        // checks initialization had none to drop. Either way the application broke VUID-...-scratch-10194.
        std::string text = description.command;
        text += " with execution graph ";
        text += description.pipeline;
        text += ": ";
        text += DescribeStatus(header.status_flags);
        text +=
            " (VUID-vkCmdDispatchGraphAMDX-scratch-10194). No record was dropped: this dispatch rewrote what it reads of "
            "scratch or had no records, but a driver that implements the extension would read undefined scratch.";
        return text;
    }
    std::string text = description.command + " with execution graph " + description.pipeline + ": " +
                       std::to_string(header.dropped_records) + " records were dropped (" + DescribeStatus(header.status_flags) +
                       ").";
    uint64_t attributed = 0;
    for (uint32_t node = 0; node < readback.nodes.size(); ++node) {
        const NodeStats& stats = readback.nodes[node];
        if (stats.dropped_records == 0 && stats.drop_flags == 0) continue;
        attributed += stats.dropped_records;
        text += " Node " + NodeLabel(description, node) + ": " + std::to_string(stats.dropped_records) + " records dropped";
        if (stats.first_drop_level_complement != 0) text += " from level " + std::to_string(~stats.first_drop_level_complement);
        text += " (" + DescribeStatus(stats.drop_flags) + ").";
    }
    if (!readback.nodes.empty() && attributed < header.dropped_records) {
        text += " Entries that named no node of the graph: " + std::to_string(header.dropped_records - attributed) + " records.";
    }
    text += " Levels run: " + std::to_string(header.levels_run) + "; record high-water mark " +
            std::to_string(header.record_high_water) + " of " + std::to_string(header.record_capacity) +
            " records, payload heap high-water mark " + std::to_string(header.heap_high_water) + " of " +
            std::to_string(header.heap_capacity) +
            " bytes per scratch half. A larger scratchSize (up to maxSize) holds more records per level.";
    return text;
}

std::string FormatStatistics(const DispatchDescription& description, const DispatchReadback& readback) {
    const GraphHeader& header = readback.header;
    std::string line = "{\"command\":";
    AppendJsonString(&line, description.command);
    line += ",\"pipeline\":";
    AppendJsonString(&line, description.pipeline);
    AppendField(&line, "levels", header.levels_run);
    uint64_t node_dispatches = 0;
    for (const NodeStats& stats : readback.nodes) node_dispatches += stats.dispatches;
    AppendField(&line, "node_dispatches", node_dispatches);
    AppendNodeMap(
        &line, "records", description, readback, [](const NodeStats& s) { return uint64_t{s.records}; }, false);
    AppendNodeMap(
        &line, "workgroups", description, readback, [](const NodeStats& s) { return uint64_t{s.workgroups}; }, false);
    AppendField(&line, "record_high_water", header.record_high_water);
    AppendField(&line, "record_capacity", header.record_capacity);
    AppendField(&line, "heap_high_water", header.heap_high_water);
    AppendField(&line, "heap_capacity", header.heap_capacity);
    AppendField(&line, "dropped", header.dropped_records);
    AppendNodeMap(
        &line, "dropped_by_node", description, readback, [](const NodeStats& s) { return uint64_t{s.dropped_records}; }, true);
    line += ",\"overflow\":[";
    bool first = true;
    for (const FlagName& name : kFlagNames) {
        if (!(header.status_flags & name.bit)) continue;
        if (!first) line += ',';
        first = false;
        AppendJsonString(&line, name.json);
    }
    line += ']';
    AppendTimes(&line, readback.timestamps_us);
    line += '}';
    return line;
}

DispatchReporter::DispatchReporter(VkDevice device, const DeviceDispatchTable* dispatch,
                                   const VkPhysicalDeviceMemoryProperties& memory, ReportOptions options, VkDeviceSize ring_size,
                                   uint32_t timestamp_queries)
    : device_(device),
      dispatch_(dispatch),
      memory_properties_(memory),
      options_(std::move(options)),
      ring_size_(ring_size),
      timestamp_queries_(timestamp_queries) {}

DispatchReporter::~DispatchReporter() { Destroy(); }

void DispatchReporter::Destroy() {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkQueryPool pool;
    {
        std::lock_guard lock(mutex_);
        buffer = buffer_;
        memory = memory_;
        buffer_ = VK_NULL_HANDLE;
        memory_ = VK_NULL_HANDLE;
        ring_address_ = 0;
        ring_ = nullptr;
        pending_.clear();
        pool = timestamp_pool_;
        timestamp_pool_ = VK_NULL_HANDLE;
    }
    if (buffer != VK_NULL_HANDLE) dispatch_->DestroyBuffer(device_, buffer, nullptr);
    if (memory != VK_NULL_HANDLE) dispatch_->FreeMemory(device_, memory, nullptr);
    if (pool != VK_NULL_HANDLE) dispatch_->DestroyQueryPool(device_, pool, nullptr);
}

// kRingSize of host-visible memory, created on the first graph dispatch: the only memory the layer allocates itself.
// Shaders write it through its device address (the finish pass), so it needs SHADER_DEVICE_ADDRESS usage and memory
// allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT. Created without the lock; when two threads race, the loser
// destroys its copy.
bool DispatchReporter::EnsureBuffer() {
    {
        std::lock_guard lock(mutex_);
        if (ring_ != nullptr) return true;
        if (creation_failed_) return false;
    }
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    VkDeviceAddress address = 0;
    VkBufferCreateInfo create_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create_info.size = ring_size_;
    create_info.usage = VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    bool ok = dispatch_->CreateBuffer(device_, &create_info, nullptr, &buffer) == VK_SUCCESS;
    if (ok) {
        VkMemoryRequirements requirements;
        dispatch_->GetBufferMemoryRequirements(device_, buffer, &requirements);
        constexpr VkMemoryPropertyFlags kWanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        uint32_t type = UINT32_MAX;
        for (uint32_t i = 0; i < memory_properties_.memoryTypeCount && type == UINT32_MAX; ++i) {
            if ((requirements.memoryTypeBits & (1u << i)) && (memory_properties_.memoryTypes[i].propertyFlags & kWanted) == kWanted)
                type = i;
        }
        VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
        flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
        VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
        allocate.allocationSize = requirements.size;
        allocate.memoryTypeIndex = type;
        ok = type != UINT32_MAX && dispatch_->AllocateMemory(device_, &allocate, nullptr, &memory) == VK_SUCCESS &&
             dispatch_->BindBufferMemory(device_, buffer, memory, 0) == VK_SUCCESS &&
             dispatch_->MapMemory(device_, memory, 0, VK_WHOLE_SIZE, 0, &mapped) == VK_SUCCESS;
    }
    if (ok) {
        VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, buffer};
        PFN_vkGetBufferDeviceAddress get_address = dispatch_->GetBufferDeviceAddress;
        if (get_address == nullptr) get_address = dispatch_->GetBufferDeviceAddressKHR;
        address = get_address != nullptr ? get_address(device_, &address_info) : 0;
        ok = address != 0;
    }
    if (ok) std::memset(mapped, 0, ring_size_);
    bool installed = false;
    {
        std::lock_guard lock(mutex_);
        if (ring_ == nullptr && ok) {
            buffer_ = buffer;
            memory_ = memory;
            ring_address_ = address;
            ring_ = static_cast<volatile uint8_t*>(mapped);
            installed = true;
        } else if (!ok) {
            creation_failed_ = true;
        }
        ok = ring_ != nullptr;
    }
    if (!installed) {
        if (buffer != VK_NULL_HANDLE) dispatch_->DestroyBuffer(device_, buffer, nullptr);
        if (memory != VK_NULL_HANDLE) dispatch_->FreeMemory(device_, memory, nullptr);
    }
    return ok;
}

// timestamp_queries_ timestamp queries, created on the first dispatch that asks for them, the same way as the ring.
bool DispatchReporter::EnsureTimestampPool() {
    {
        std::lock_guard lock(mutex_);
        if (timestamp_pool_ != VK_NULL_HANDLE) return true;
        if (timestamp_pool_failed_) return false;
    }
    VkQueryPoolCreateInfo create_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    create_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    create_info.queryCount = timestamp_queries_;
    VkQueryPool pool = VK_NULL_HANDLE;
    const bool ok = dispatch_->CreateQueryPool != nullptr && dispatch_->DestroyQueryPool != nullptr &&
                    dispatch_->GetQueryPoolResults != nullptr &&
                    dispatch_->CreateQueryPool(device_, &create_info, nullptr, &pool) == VK_SUCCESS;
    {
        std::lock_guard lock(mutex_);
        if (timestamp_pool_ == VK_NULL_HANDLE && ok) {
            timestamp_pool_ = pool;
            return true;
        }
        if (!ok) timestamp_pool_failed_ = true;
    }
    if (pool != VK_NULL_HANDLE) dispatch_->DestroyQueryPool(device_, pool, nullptr);
    std::lock_guard lock(mutex_);
    return timestamp_pool_ != VK_NULL_HANDLE;
}

ReportSlot DispatchReporter::Reserve(uint32_t node_count, DispatchDescription description, uint32_t timestamp_count) {
    if (!EnsureBuffer()) return {};
    // A dispatch with more timestamps than the pool holds (about 4000 levels) is reported without them.
    const bool timestamps = options_.level_timestamps && options_.statistics && timestamp_count != 0 &&
                            timestamp_count <= timestamp_queries_ && EnsureTimestampPool();
    // A graph too large for a quarter of the ring is reported from its header alone (totals, no per-node attribution).
    const uint32_t stats_count = ReportSlotSize(node_count) > ring_size_ / 4 ? 0 : node_count;
    const VkDeviceSize size = ReportSlotSize(stats_count);
    std::lock_guard lock(mutex_);
    if (ring_ == nullptr) return {};  // destroyed meanwhile
    if (next_offset_ + size > ring_size_) next_offset_ = 0;
    const VkDeviceSize slot = next_offset_;
    next_offset_ += size;
    const uint32_t serial = next_serial_++;
    if (next_serial_ == 0) next_serial_ = 1;  // 0 marks a slot that holds nothing new
    // A newer dispatch takes over the bytes of older ones it overlaps; they were recorded a ring's size ago.
    std::erase_if(pending_, [slot, size](const Pending& pending) {
        return pending.offset < slot + size && slot < pending.offset + pending.size;
    });
    Pending pending{slot, size, serial, stats_count, std::move(description)};
    ReportSlot reserved{ring_address_ + slot, serial, stats_count, !options_.statistics};
    if (timestamps) {
        if (next_timestamp_ + timestamp_count > timestamp_queries_) next_timestamp_ = 0;
        const uint32_t first = next_timestamp_;
        next_timestamp_ += timestamp_count;
        // Older dispatches whose queries these overlap are still reported, without their times (a newer recording
        // resets those queries).
        for (Pending& older : pending_) {
            if (older.timestamp_count != 0 && older.first_timestamp < first + timestamp_count &&
                first < older.first_timestamp + older.timestamp_count) {
                older.timestamp_count = 0;
            }
        }
        pending.first_timestamp = first;
        pending.timestamp_count = timestamp_count;
        reserved.timestamp_pool = timestamp_pool_;
        reserved.first_timestamp = first;
    }
    pending_.push_back(std::move(pending));
    return reserved;
}

void DispatchReporter::Cancel(const ReportSlot& slot) {
    std::lock_guard lock(mutex_);
    std::erase_if(pending_, [&slot](const Pending& pending) { return pending.serial == slot.serial; });
}

void DispatchReporter::Poll(const MessageSink& messages) {
    struct Finished {
        DispatchDescription description;
        DispatchReadback readback;
    };
    std::vector<Finished> finished;
    bool report_timestamp_failure = false;
    {
        std::lock_guard lock(mutex_);
        if (ring_ == nullptr) return;
        report_timestamp_failure = timestamp_pool_failed_ && !timestamp_failure_reported_;
        timestamp_failure_reported_ |= report_timestamp_failure;
        for (const Pending& pending : pending_) {
            volatile uint8_t* slot = ring_ + pending.offset;
            if (*reinterpret_cast<volatile uint32_t*>(slot) != pending.serial) continue;
            // The GPU wrote the data before the serial; keep the host's reads of it after the serial's.
            std::atomic_thread_fence(std::memory_order_acquire);
            Finished done{pending.description, {}};
            if (pending.timestamp_count != 0) {
                // The last timestamps follow the serial (it is written by the last level's preparer or the finish
                // pass): wait for the next poll until all are available. Without VK_QUERY_RESULT_WAIT_BIT this does
                // not block.
                std::vector<uint64_t> values(2 * size_t{pending.timestamp_count});
                const VkResult result = dispatch_->GetQueryPoolResults(
                    device_, timestamp_pool_, pending.first_timestamp, pending.timestamp_count, values.size() * sizeof(uint64_t),
                    values.data(), 2 * sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
                bool available = result == VK_SUCCESS || result == VK_NOT_READY;
                for (uint32_t i = 0; available && i < pending.timestamp_count; ++i) available = values[2 * i + 1] != 0;
                if (!available && result == VK_NOT_READY) continue;
                if (available) {
                    // Differences modulo the valid bits, so a counter that wrapped during the dispatch still works.
                    const uint64_t mask =
                        options_.timestamp_valid_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << options_.timestamp_valid_bits) - 1;
                    for (uint32_t i = 0; i < pending.timestamp_count; ++i) {
                        const uint64_t ticks = (values[2 * i] - values[0]) & mask;
                        done.readback.timestamps_us.push_back(double(ticks) * options_.timestamp_period_ns / 1000.0);
                    }
                }
            }
            std::memcpy(&done.readback.header, const_cast<const uint8_t*>(slot + kReportSlotHeaderOffset), sizeof(GraphHeader));
            done.readback.nodes.resize(pending.node_count);
            // A header-only report has no statistics (and memcpy must not get the empty vector's null pointer).
            if (pending.node_count != 0) {
                std::memcpy(done.readback.nodes.data(), const_cast<const uint8_t*>(slot + kReportSlotStatsOffset),
                            pending.node_count * sizeof(NodeStats));
            }
            // Consumed: a later submission of the same command buffer writes the serial again and is reported again.
            *reinterpret_cast<volatile uint32_t*>(slot) = 0;
            finished.push_back(std::move(done));
        }
    }
    if (report_timestamp_failure) {
        messages.Emit(MessageSeverity::kWarning, message_id::kSettings,
                      "level_timestamps: creating the layer's timestamp query pool failed; statistics lines come without GPU times");
    }
    std::string first_report;
    for (const Finished& done : finished) {
        if (options_.statistics) {
            const std::string line = FormatStatistics(done.description, done.readback);
            messages.Emit(MessageSeverity::kInfo, message_id::kStatistics, line);
            if (!options_.statistics_file.empty()) {
                std::lock_guard lock(file_mutex_);
                if (FILE* file = std::fopen(options_.statistics_file.c_str(), "a")) {
                    std::fprintf(file, "%s\n", line.c_str());
                    std::fclose(file);
                } else {
                    messages.Emit(MessageSeverity::kWarning, message_id::kSettings,
                                  "statistics_file: cannot append to " + options_.statistics_file);
                }
            }
        }
        const std::string report = FormatDroppedWork(done.description, done.readback);
        if (report.empty()) continue;
        if (first_report.empty()) first_report = report;
        messages.Emit(MessageSeverity::kError, message_id::kDroppedWork, report);
    }
    if (!first_report.empty() && options_.overflow_fatal) {
        // Also on stderr, whatever log_to_stderr says: a CI log must show why the process died.
        std::fprintf(stderr, "[execgraph] overflow_fatal: aborting after %s: %s\n", message_id::kDroppedWork, first_report.c_str());
        std::fflush(stderr);
        std::abort();
    }
}

}  // namespace execgraph
