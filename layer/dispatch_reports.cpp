#include "dispatch_reports.h"

#include <cstring>

#include "execgraph/runtime/scratch_layout.h"
#include "messages.h"

namespace execgraph {
namespace {

std::string DescribeStatus(uint32_t flags) {
    static const std::pair<uint32_t, const char*> kNames[] = {
        {runtime::kStatusHeapOverflow, "the payload heap of a scratch half was full"},
        {runtime::kStatusRecordListOverflow, "the record list of a scratch half was full"},
        {runtime::kStatusDepthLimit, "records were left when the last level ran"},
        {runtime::kStatusGridClamped, "a dynamic grid exceeded MaxNumWorkgroupsAMDX or the advertised limits and was clamped"},
        {runtime::kStatusInvalidNodeIndex, "an allocation or entry named no node of the graph"},
        {runtime::kStatusUninitialized, "scratch was not initialized for this graph (vkCmdInitializeGraphScratchMemoryAMDX)"},
    };
    std::string text;
    for (const auto& [bit, name] : kNames) {
        if (!(flags & bit)) continue;
        if (!text.empty()) text += "; ";
        text += name;
    }
    return text;
}

}  // namespace

DispatchReporter::DispatchReporter(VkDevice device, const DeviceDispatchTable* dispatch,
                                   const VkPhysicalDeviceMemoryProperties& memory)
    : device_(device), dispatch_(dispatch), memory_properties_(memory) {}

DispatchReporter::~DispatchReporter() { Destroy(); }

void DispatchReporter::Destroy() {
    std::lock_guard lock(mutex_);
    if (buffer_ != VK_NULL_HANDLE) dispatch_->DestroyBuffer(device_, buffer_, nullptr);
    if (memory_ != VK_NULL_HANDLE) dispatch_->FreeMemory(device_, memory_, nullptr);
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    slots_ = nullptr;
}

// 32 KiB, created on the first graph dispatch: the only memory the layer allocates itself.
bool DispatchReporter::EnsureBuffer() {
    if (slots_ != nullptr) return true;
    VkBufferCreateInfo create_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create_info.size = sizeof(Slot) * kSlotCount;
    create_info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (dispatch_->CreateBuffer(device_, &create_info, nullptr, &buffer_) != VK_SUCCESS) return false;
    VkMemoryRequirements requirements;
    dispatch_->GetBufferMemoryRequirements(device_, buffer_, &requirements);
    constexpr VkMemoryPropertyFlags kWanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < memory_properties_.memoryTypeCount && type == UINT32_MAX; ++i) {
        if ((requirements.memoryTypeBits & (1u << i)) && (memory_properties_.memoryTypes[i].propertyFlags & kWanted) == kWanted) type = i;
    }
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = type;
    void* mapped = nullptr;
    if (type == UINT32_MAX || dispatch_->AllocateMemory(device_, &allocate, nullptr, &memory_) != VK_SUCCESS ||
        dispatch_->BindBufferMemory(device_, buffer_, memory_, 0) != VK_SUCCESS ||
        dispatch_->MapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS) {
        return false;
    }
    std::memset(mapped, 0, sizeof(Slot) * kSlotCount);
    slots_ = static_cast<volatile Slot*>(mapped);
    return true;
}

void DispatchReporter::RecordReadback(VkCommandBuffer command_buffer, VkBuffer scratch_buffer, VkDeviceSize status_offset,
                                      std::string description) {
    std::lock_guard lock(mutex_);
    if (!EnsureBuffer()) return;
    const uint32_t serial = next_serial_++;
    const uint32_t slot = serial % kSlotCount;
    // A slot reused by a newer dispatch takes over; the older dispatch was recorded 1024 dispatches ago.
    std::erase_if(pending_, [slot](const Pending& pending) { return pending.slot == slot; });
    pending_.push_back({slot, serial, std::move(description)});

    const VkDeviceSize slot_offset = sizeof(Slot) * slot;
    VkMemoryBarrier2 to_copy{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    to_copy.srcStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_TRANSFER_BIT;
    to_copy.srcAccessMask = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT;
    to_copy.dstStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT;
    to_copy.dstAccessMask = VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT;
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &to_copy;
    // The serial is cleared first, so a host that polls during the copy never pairs a new serial with old status.
    dispatch_->CmdFillBuffer(command_buffer, buffer_, slot_offset, sizeof(uint32_t), 0);
    dispatch_->CmdPipelineBarrier2(command_buffer, &dependency);
    const VkBufferCopy copy{status_offset, slot_offset + offsetof(Slot, status_flags), 3 * sizeof(uint32_t)};
    dispatch_->CmdCopyBuffer(command_buffer, scratch_buffer, buffer_, 1, &copy);
    VkMemoryBarrier2 to_serial{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    to_serial.srcStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT;
    to_serial.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
    to_serial.dstStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT | VK_PIPELINE_STAGE_2_HOST_BIT;
    to_serial.dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_HOST_READ_BIT;
    dependency.pMemoryBarriers = &to_serial;
    dispatch_->CmdPipelineBarrier2(command_buffer, &dependency);
    dispatch_->CmdFillBuffer(command_buffer, buffer_, slot_offset + offsetof(Slot, serial), sizeof(uint32_t), serial);
    VkMemoryBarrier2 to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    to_host.srcStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT;
    to_host.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
    to_host.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
    to_host.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
    dependency.pMemoryBarriers = &to_host;
    dispatch_->CmdPipelineBarrier2(command_buffer, &dependency);
}

void DispatchReporter::Poll(const MessageSink& messages) {
    std::vector<std::string> reports;
    {
        std::lock_guard lock(mutex_);
        if (slots_ == nullptr) return;
        for (const Pending& pending : pending_) {
            volatile Slot& slot = slots_[pending.slot];
            if (slot.serial != pending.serial) continue;
            const uint32_t flags = slot.status_flags;
            const uint32_t dropped = slot.dropped_records;
            const uint32_t high_water = slot.heap_high_water;
            // Consumed: a later submission of the same command buffer writes the serial again and is reported again.
            slot.serial = 0;
            if (flags == 0 && dropped == 0) continue;
            reports.push_back(pending.description + ": " + std::to_string(dropped) + " records were dropped (" + DescribeStatus(flags) +
                              "); payload heap high-water mark " + std::to_string(high_water) +
                              " bytes. A larger scratchSize (up to maxSize) holds more records per level.");
        }
    }
    for (const std::string& report : reports) messages.Emit(MessageSeverity::kError, message_id::kDroppedWork, report);
}

}  // namespace execgraph
