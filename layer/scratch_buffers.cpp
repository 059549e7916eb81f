#include "device_objects.h"

#include <mutex>

namespace execgraph {

void ScratchBufferRegistry::AddBuffer(VkBuffer buffer, VkDeviceSize size) {
    std::unique_lock lock(mutex_);
    sizes_[buffer] = size;
}

void ScratchBufferRegistry::RecordAddress(VkBuffer buffer, VkDeviceAddress address) {
    std::unique_lock lock(mutex_);
    auto size = sizes_.find(buffer);
    if (size == sizes_.end() || address == 0) return;
    by_address_[address] = ScratchBuffer{buffer, size->second};
}

void ScratchBufferRegistry::RemoveBuffer(VkBuffer buffer) {
    std::unique_lock lock(mutex_);
    sizes_.erase(buffer);
    std::erase_if(by_address_, [buffer](const auto& entry) { return entry.second.buffer == buffer; });
}

bool ScratchBufferRegistry::IsScratchBuffer(VkBuffer buffer) const {
    std::shared_lock lock(mutex_);
    return sizes_.count(buffer) != 0;
}

std::optional<BufferRange> ScratchBufferRegistry::Find(VkDeviceAddress address, VkDeviceSize size) const {
    std::shared_lock lock(mutex_);
    auto it = by_address_.upper_bound(address);
    if (it == by_address_.begin()) return std::nullopt;
    --it;
    const VkDeviceAddress base = it->first;
    const ScratchBuffer& scratch = it->second;
    if (address - base >= scratch.size || size > scratch.size - (address - base)) return std::nullopt;
    return BufferRange{scratch.buffer, address - base, scratch.size - (address - base)};
}

}  // namespace execgraph
