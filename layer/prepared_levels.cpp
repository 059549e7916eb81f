// Prepared levels: the command capture, its replay, and the cache of prepared secondary command buffers
// (prepared_levels.h says why).
#include "prepared_levels.h"

#include <algorithm>
#include <cstring>

namespace execgraph {
namespace {

enum class Op : uint32_t {
    kBindPipeline = 1,
    kBindDescriptorSets,
    kPushConstants,
    kDispatch,
    kDispatchIndirect,
    kPipelineBarrier,
    kPipelineBarrier2,
    kFillBuffer,
    kUpdateBuffer,
    kCopyBuffer,
    kResetQueryPool,
    kWriteTimestamp2,
    kBeginLabel,
    kEndLabel,
};

thread_local CommandCapture* t_capture = nullptr;

// Appends one command: opcode, length in words (this header included), operands.
class CommandWriter {
  public:
    explicit CommandWriter(Op op) : capture_(t_capture) {
        if (capture_ == nullptr) return;
        start_ = capture_->words.size();
        capture_->words.push_back(static_cast<uint32_t>(op));
        capture_->words.push_back(0);
    }
    ~CommandWriter() {
        if (capture_ != nullptr) capture_->words[start_ + 1] = static_cast<uint32_t>(capture_->words.size() - start_);
    }
    CommandWriter& U32(uint32_t value) {
        if (capture_ != nullptr) capture_->words.push_back(value);
        return *this;
    }
    CommandWriter& U64(uint64_t value) { return U32(static_cast<uint32_t>(value)).U32(static_cast<uint32_t>(value >> 32)); }
    template <typename Handle>
    CommandWriter& Handle64(Handle handle) {
        uint64_t value = 0;
        static_assert(sizeof(Handle) <= sizeof(value));
        std::memcpy(&value, &handle, sizeof(Handle));
        return U64(value);
    }
    // `size` bytes, preceded by their count and padded to whole words.
    CommandWriter& Bytes(const void* data, size_t size) {
        U32(static_cast<uint32_t>(size));
        if (capture_ == nullptr) return *this;
        const size_t at = capture_->words.size();
        capture_->words.resize(at + (size + 3) / 4, 0);
        if (size > 0) std::memcpy(capture_->words.data() + at, data, size);
        return *this;
    }
    void Unsupported() {
        if (capture_ != nullptr) capture_->unsupported = true;
    }
    CommandCapture* capture() const { return capture_; }

  private:
    CommandCapture* capture_;
    size_t start_ = 0;
};

// Reads one command's operands back, in the order CommandWriter wrote them.
class CommandReader {
  public:
    CommandReader(const uint32_t* words, size_t count) : words_(words), count_(count) {}
    uint32_t U32() { return at_ < count_ ? words_[at_++] : 0; }
    uint64_t U64() {
        const uint64_t low = U32();
        return low | (uint64_t(U32()) << 32);
    }
    template <typename Handle>
    Handle Handle64() {
        const uint64_t value = U64();
        Handle handle{};
        std::memcpy(&handle, &value, sizeof(Handle));
        return handle;
    }
    // The bytes Bytes() wrote: a pointer into the capture and their count.
    const void* Bytes(uint32_t* size) {
        *size = U32();
        const void* data = words_ + at_;
        at_ = std::min(count_, at_ + (*size + 3) / 4);
        return data;
    }

  private:
    const uint32_t* words_;
    size_t count_;
    size_t at_ = 0;
};

// The capture functions. Each has the signature of the command it stands for and ignores the command buffer.
VKAPI_ATTR void VKAPI_CALL CaptureBindPipeline(VkCommandBuffer, VkPipelineBindPoint bind_point, VkPipeline pipeline) {
    CommandWriter(Op::kBindPipeline).U32(bind_point).Handle64(pipeline);
}

VKAPI_ATTR void VKAPI_CALL CaptureBindDescriptorSets(VkCommandBuffer, VkPipelineBindPoint bind_point, VkPipelineLayout layout,
                                                     uint32_t first_set, uint32_t set_count, const VkDescriptorSet* sets,
                                                     uint32_t dynamic_offset_count, const uint32_t* dynamic_offsets) {
    CommandWriter writer(Op::kBindDescriptorSets);
    writer.U32(bind_point).Handle64(layout).U32(first_set).U32(set_count);
    for (uint32_t i = 0; i < set_count; ++i) {
        writer.Handle64(sets[i]);
        if (writer.capture() != nullptr) writer.capture()->descriptor_sets.push_back(sets[i]);
    }
    writer.U32(dynamic_offset_count);
    for (uint32_t i = 0; i < dynamic_offset_count; ++i) writer.U32(dynamic_offsets[i]);
}

VKAPI_ATTR void VKAPI_CALL CapturePushConstants(VkCommandBuffer, VkPipelineLayout layout, VkShaderStageFlags stages,
                                                uint32_t offset, uint32_t size, const void* values) {
    CommandWriter(Op::kPushConstants).Handle64(layout).U32(stages).U32(offset).Bytes(values, size);
}

VKAPI_ATTR void VKAPI_CALL CaptureDispatch(VkCommandBuffer, uint32_t x, uint32_t y, uint32_t z) {
    CommandWriter(Op::kDispatch).U32(x).U32(y).U32(z);
}

VKAPI_ATTR void VKAPI_CALL CaptureDispatchIndirect(VkCommandBuffer, VkBuffer buffer, VkDeviceSize offset) {
    CommandWriter(Op::kDispatchIndirect).Handle64(buffer).U64(offset);
}

void WriteMemoryBarrier2(CommandWriter& writer, const VkMemoryBarrier2& barrier) {
    writer.U64(barrier.srcStageMask).U64(barrier.srcAccessMask).U64(barrier.dstStageMask).U64(barrier.dstAccessMask);
}

VKAPI_ATTR void VKAPI_CALL CapturePipelineBarrier(VkCommandBuffer, VkPipelineStageFlags src_stages, VkPipelineStageFlags dst_stages,
                                                  VkDependencyFlags flags, uint32_t memory_barrier_count,
                                                  const VkMemoryBarrier* memory_barriers, uint32_t buffer_barrier_count,
                                                  const VkBufferMemoryBarrier*, uint32_t image_barrier_count,
                                                  const VkImageMemoryBarrier*) {
    CommandWriter writer(Op::kPipelineBarrier);
    if (buffer_barrier_count != 0 || image_barrier_count != 0) writer.Unsupported();
    writer.U32(src_stages).U32(dst_stages).U32(flags).U32(memory_barrier_count);
    for (uint32_t i = 0; i < memory_barrier_count; ++i) {
        if (memory_barriers[i].pNext != nullptr) writer.Unsupported();
        writer.U32(memory_barriers[i].srcAccessMask).U32(memory_barriers[i].dstAccessMask);
    }
}

VKAPI_ATTR void VKAPI_CALL CapturePipelineBarrier2(VkCommandBuffer, const VkDependencyInfo* dependency) {
    CommandWriter writer(Op::kPipelineBarrier2);
    if (dependency->pNext != nullptr || dependency->bufferMemoryBarrierCount != 0 || dependency->imageMemoryBarrierCount != 0) {
        writer.Unsupported();
    }
    writer.U32(dependency->dependencyFlags).U32(dependency->memoryBarrierCount);
    for (uint32_t i = 0; i < dependency->memoryBarrierCount; ++i) {
        if (dependency->pMemoryBarriers[i].pNext != nullptr) writer.Unsupported();
        WriteMemoryBarrier2(writer, dependency->pMemoryBarriers[i]);
    }
}

VKAPI_ATTR void VKAPI_CALL CaptureFillBuffer(VkCommandBuffer, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                                             uint32_t data) {
    CommandWriter(Op::kFillBuffer).Handle64(buffer).U64(offset).U64(size).U32(data);
}

VKAPI_ATTR void VKAPI_CALL CaptureUpdateBuffer(VkCommandBuffer, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                                               const void* data) {
    CommandWriter(Op::kUpdateBuffer).Handle64(buffer).U64(offset).Bytes(data, static_cast<size_t>(size));
}

VKAPI_ATTR void VKAPI_CALL CaptureCopyBuffer(VkCommandBuffer, VkBuffer source, VkBuffer destination, uint32_t region_count,
                                             const VkBufferCopy* regions) {
    CommandWriter writer(Op::kCopyBuffer);
    writer.Handle64(source).Handle64(destination).U32(region_count);
    for (uint32_t i = 0; i < region_count; ++i) writer.U64(regions[i].srcOffset).U64(regions[i].dstOffset).U64(regions[i].size);
}

VKAPI_ATTR void VKAPI_CALL CaptureResetQueryPool(VkCommandBuffer, VkQueryPool pool, uint32_t first, uint32_t count) {
    CommandWriter(Op::kResetQueryPool).Handle64(pool).U32(first).U32(count);
}

VKAPI_ATTR void VKAPI_CALL CaptureWriteTimestamp2(VkCommandBuffer, VkPipelineStageFlags2 stage, VkQueryPool pool, uint32_t query) {
    CommandWriter(Op::kWriteTimestamp2).U64(stage).Handle64(pool).U32(query);
}

VKAPI_ATTR void VKAPI_CALL CaptureBeginLabel(VkCommandBuffer, const VkDebugUtilsLabelEXT* label) {
    CommandWriter writer(Op::kBeginLabel);
    if (label->pNext != nullptr) writer.Unsupported();
    for (float component : label->color) {
        uint32_t bits = 0;
        std::memcpy(&bits, &component, sizeof(bits));
        writer.U32(bits);
    }
    const char* name = label->pLabelName != nullptr ? label->pLabelName : "";
    writer.Bytes(name, std::strlen(name) + 1);
}

VKAPI_ATTR void VKAPI_CALL CaptureEndLabel(VkCommandBuffer) { CommandWriter writer(Op::kEndLabel); }

}  // namespace

DeviceDispatchTable MakeCaptureDispatchTable(const DeviceDispatchTable& real) {
    DeviceDispatchTable table = real;
    // Every vkCmd* function of the table: one the capture does not replace would reach the driver with a command buffer
    // that is not being recorded.
    auto replace = [](auto& slot, auto capture) {
        if (slot != nullptr) slot = capture;
    };
    replace(table.CmdBindPipeline, &CaptureBindPipeline);
    replace(table.CmdBindDescriptorSets, &CaptureBindDescriptorSets);
    replace(table.CmdPushConstants, &CapturePushConstants);
    replace(table.CmdDispatch, &CaptureDispatch);
    replace(table.CmdDispatchIndirect, &CaptureDispatchIndirect);
    replace(table.CmdPipelineBarrier, &CapturePipelineBarrier);
    replace(table.CmdPipelineBarrier2, &CapturePipelineBarrier2);
    replace(table.CmdFillBuffer, &CaptureFillBuffer);
    replace(table.CmdUpdateBuffer, &CaptureUpdateBuffer);
    replace(table.CmdCopyBuffer, &CaptureCopyBuffer);
    replace(table.CmdResetQueryPool, &CaptureResetQueryPool);
    replace(table.CmdWriteTimestamp2, &CaptureWriteTimestamp2);
    replace(table.CmdBeginDebugUtilsLabelEXT, &CaptureBeginLabel);
    replace(table.CmdEndDebugUtilsLabelEXT, &CaptureEndLabel);
    table.CmdExecuteCommands = nullptr;
    return table;
}

CaptureScope::CaptureScope(CommandCapture& capture) : previous_(t_capture) { t_capture = &capture; }
CaptureScope::~CaptureScope() { t_capture = previous_; }

void ReplayCapture(const DeviceDispatchTable& dispatch, VkCommandBuffer cmd, const CommandCapture& capture) {
    const std::vector<uint32_t>& words = capture.words;
    for (size_t at = 0; at + 2 <= words.size();) {
        const auto op = static_cast<Op>(words[at]);
        const size_t length = std::max<size_t>(words[at + 1], 2);
        CommandReader in(words.data() + at + 2, std::min(length, words.size() - at) - 2);
        at += length;
        switch (op) {
            case Op::kBindPipeline: {
                const auto bind_point = static_cast<VkPipelineBindPoint>(in.U32());
                dispatch.CmdBindPipeline(cmd, bind_point, in.Handle64<VkPipeline>());
                break;
            }
            case Op::kBindDescriptorSets: {
                const auto bind_point = static_cast<VkPipelineBindPoint>(in.U32());
                const auto layout = in.Handle64<VkPipelineLayout>();
                const uint32_t first_set = in.U32();
                std::vector<VkDescriptorSet> sets(in.U32());
                for (VkDescriptorSet& set : sets) set = in.Handle64<VkDescriptorSet>();
                std::vector<uint32_t> offsets(in.U32());
                for (uint32_t& offset : offsets) offset = in.U32();
                dispatch.CmdBindDescriptorSets(cmd, bind_point, layout, first_set, static_cast<uint32_t>(sets.size()), sets.data(),
                                               static_cast<uint32_t>(offsets.size()), offsets.data());
                break;
            }
            case Op::kPushConstants: {
                const auto layout = in.Handle64<VkPipelineLayout>();
                const VkShaderStageFlags stages = in.U32();
                const uint32_t offset = in.U32();
                uint32_t size = 0;
                const void* values = in.Bytes(&size);
                dispatch.CmdPushConstants(cmd, layout, stages, offset, size, values);
                break;
            }
            case Op::kDispatch: {
                const uint32_t x = in.U32(), y = in.U32(), z = in.U32();
                dispatch.CmdDispatch(cmd, x, y, z);
                break;
            }
            case Op::kDispatchIndirect: {
                const auto buffer = in.Handle64<VkBuffer>();
                dispatch.CmdDispatchIndirect(cmd, buffer, in.U64());
                break;
            }
            case Op::kPipelineBarrier: {
                const VkPipelineStageFlags src = in.U32(), dst = in.U32();
                const VkDependencyFlags flags = in.U32();
                std::vector<VkMemoryBarrier> barriers(in.U32(), VkMemoryBarrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER});
                for (VkMemoryBarrier& barrier : barriers) {
                    barrier.srcAccessMask = in.U32();
                    barrier.dstAccessMask = in.U32();
                }
                dispatch.CmdPipelineBarrier(cmd, src, dst, flags, static_cast<uint32_t>(barriers.size()), barriers.data(), 0,
                                            nullptr, 0, nullptr);
                break;
            }
            case Op::kPipelineBarrier2: {
                VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
                dependency.dependencyFlags = in.U32();
                std::vector<VkMemoryBarrier2> barriers(in.U32(), VkMemoryBarrier2{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2});
                for (VkMemoryBarrier2& barrier : barriers) {
                    barrier.srcStageMask = in.U64();
                    barrier.srcAccessMask = in.U64();
                    barrier.dstStageMask = in.U64();
                    barrier.dstAccessMask = in.U64();
                }
                dependency.memoryBarrierCount = static_cast<uint32_t>(barriers.size());
                dependency.pMemoryBarriers = barriers.data();
                dispatch.CmdPipelineBarrier2(cmd, &dependency);
                break;
            }
            case Op::kFillBuffer: {
                const auto buffer = in.Handle64<VkBuffer>();
                const VkDeviceSize offset = in.U64(), size = in.U64();
                dispatch.CmdFillBuffer(cmd, buffer, offset, size, in.U32());
                break;
            }
            case Op::kUpdateBuffer: {
                const auto buffer = in.Handle64<VkBuffer>();
                const VkDeviceSize offset = in.U64();
                uint32_t size = 0;
                const void* data = in.Bytes(&size);
                dispatch.CmdUpdateBuffer(cmd, buffer, offset, size, data);
                break;
            }
            case Op::kCopyBuffer: {
                const auto source = in.Handle64<VkBuffer>();
                const auto destination = in.Handle64<VkBuffer>();
                std::vector<VkBufferCopy> regions(in.U32());
                for (VkBufferCopy& region : regions) {
                    region.srcOffset = in.U64();
                    region.dstOffset = in.U64();
                    region.size = in.U64();
                }
                dispatch.CmdCopyBuffer(cmd, source, destination, static_cast<uint32_t>(regions.size()), regions.data());
                break;
            }
            case Op::kResetQueryPool: {
                const auto pool = in.Handle64<VkQueryPool>();
                const uint32_t first = in.U32();
                dispatch.CmdResetQueryPool(cmd, pool, first, in.U32());
                break;
            }
            case Op::kWriteTimestamp2: {
                const VkPipelineStageFlags2 stage = in.U64();
                const auto pool = in.Handle64<VkQueryPool>();
                dispatch.CmdWriteTimestamp2(cmd, stage, pool, in.U32());
                break;
            }
            case Op::kBeginLabel: {
                VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
                for (float& component : label.color) {
                    const uint32_t bits = in.U32();
                    std::memcpy(&component, &bits, sizeof(bits));
                }
                uint32_t size = 0;
                label.pLabelName = static_cast<const char*>(in.Bytes(&size));
                dispatch.CmdBeginDebugUtilsLabelEXT(cmd, &label);
                break;
            }
            case Op::kEndLabel:
                dispatch.CmdEndDebugUtilsLabelEXT(cmd);
                break;
        }
    }
}

PreparedLevelPool::PreparedLevelPool(VkDevice device, const DeviceDispatchTable& dispatch,
                                     PFN_vkSetDeviceLoaderData set_loader_data, uint32_t queue_family)
    : device_(device), dispatch_(dispatch), set_loader_data_(set_loader_data), queue_family_(queue_family) {
    VkCommandPoolCreateInfo create_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    create_info.queueFamilyIndex = queue_family;
    create_result_ = dispatch_.CreateCommandPool != nullptr ? dispatch_.CreateCommandPool(device_, &create_info, nullptr, &pool_)
                                                            : VK_ERROR_INITIALIZATION_FAILED;
}

PreparedLevelPool::~PreparedLevelPool() {
    if (pool_ != VK_NULL_HANDLE) dispatch_.DestroyCommandPool(device_, pool_, nullptr);
}

VkCommandBuffer PreparedLevelPool::Record(const CommandCapture& capture, std::string* error) {
    std::lock_guard lock(mutex_);
    if (pool_ == VK_NULL_HANDLE) {
        *error = "vkCreateCommandPool failed (" + std::to_string(create_result_) + ")";
        return VK_NULL_HANDLE;
    }
    if (set_loader_data_ == nullptr || dispatch_.EndCommandBuffer == nullptr) {
        *error = "the loader gave no vkSetDeviceLoaderData";
        return VK_NULL_HANDLE;
    }
    VkCommandBufferAllocateInfo allocate_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate_info.commandPool = pool_;
    allocate_info.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    allocate_info.commandBufferCount = 1;
    VkCommandBuffer command_buffer = VK_NULL_HANDLE;
    VkResult result = dispatch_.AllocateCommandBuffers(device_, &allocate_info, &command_buffer);
    // A command buffer the layer allocates below the loader's trampoline gets its dispatch pointer from the loader
    // (LLP_LAYER_22 of the loader interface), as every dispatchable handle a layer creates must.
    if (result == VK_SUCCESS) result = set_loader_data_(device_, command_buffer);
    if (result == VK_SUCCESS) {
        VkCommandBufferInheritanceInfo inheritance{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
        VkCommandBufferBeginInfo begin_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        // Executed by any number of primaries, which may be pending at the same time.
        begin_info.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
        begin_info.pInheritanceInfo = &inheritance;
        result = dispatch_.BeginCommandBuffer(command_buffer, &begin_info);
    }
    if (result == VK_SUCCESS) {
        ReplayCapture(dispatch_, command_buffer, capture);
        result = dispatch_.EndCommandBuffer(command_buffer);
    }
    if (result != VK_SUCCESS) {
        if (command_buffer != VK_NULL_HANDLE) dispatch_.FreeCommandBuffers(device_, pool_, 1, &command_buffer);
        *error = "recording a secondary command buffer failed (" + std::to_string(result) + ")";
        return VK_NULL_HANDLE;
    }
    return command_buffer;
}

void PreparedLevelPool::Free(VkCommandBuffer command_buffer) {
    std::lock_guard lock(mutex_);
    dispatch_.FreeCommandBuffers(device_, pool_, 1, &command_buffer);
}

std::shared_ptr<PreparedLevels> PreparedLevelCache::FindOrRecord(uint32_t queue_family, const CommandCapture& capture,
                                                                 bool* recorded, std::string* error) {
    *recorded = false;
    std::shared_ptr<PreparedLevelPool> pool;
    {
        std::lock_guard lock(mutex_);
        // The words themselves are compared, newest entry first (a repeated dispatch finds its secondary at once), with no
        // hash: hashing a 32 x 8 graph's few thousand words one multiply after the other cost more than the rest of the
        // lookup (perf on lavapipe's host), while a compare of two captures runs at memcmp's speed and stops at the
        // first difference, or at a different length before that.
        for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
            const PreparedLevels& entry = **it;
            if (entry.queue_family == queue_family && entry.capture.words == capture.words) {
                std::shared_ptr<PreparedLevels> found = *it;
                // Most recently used last: the first entry is the one dropped when the cache is full.
                entries_.erase(std::next(it).base());
                entries_.push_back(found);
                return found;
            }
        }
        for (const std::shared_ptr<PreparedLevelPool>& candidate : pools_) {
            if (candidate->queue_family() == queue_family) pool = candidate;
        }
        if (!pool) {
            pool = std::make_shared<PreparedLevelPool>(device_, dispatch_, set_loader_data_, queue_family);
            pools_.push_back(pool);
        }
    }
    // Recorded outside the cache's lock (the pool has its own), so other threads' hits do not wait for it.
    auto entry = std::make_shared<PreparedLevels>();
    entry->command_buffer = pool->Record(capture, error);
    if (entry->command_buffer == VK_NULL_HANDLE) return nullptr;
    entry->pool = pool;
    entry->queue_family = queue_family;
    entry->capture = capture;
    *recorded = true;
    std::lock_guard lock(mutex_);
    if (entries_.size() >= kMaxEntries) entries_.erase(entries_.begin());
    entries_.push_back(entry);
    ++recorded_;
    return entry;
}

void PreparedLevelCache::DropBinding(std::span<const VkDescriptorSet> sets) {
    std::vector<std::shared_ptr<PreparedLevels>> dropped;  // released after the lock: freeing takes the pool's
    std::lock_guard lock(mutex_);
    auto binds_any = [&](const std::shared_ptr<PreparedLevels>& entry) {
        for (VkDescriptorSet set : entry->capture.descriptor_sets) {
            if (std::find(sets.begin(), sets.end(), set) != sets.end()) return true;
        }
        return false;
    };
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (binds_any(*it)) {
            dropped.push_back(std::move(*it));
            it = entries_.erase(it);
        } else {
            ++it;
        }
    }
}

void PreparedLevelCache::DropAll() {
    std::vector<std::shared_ptr<PreparedLevels>> dropped;
    std::lock_guard lock(mutex_);
    dropped.swap(entries_);
}

uint64_t PreparedLevelCache::recorded_count() const {
    std::lock_guard lock(mutex_);
    return recorded_;
}

size_t PreparedLevelCache::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

}  // namespace execgraph
