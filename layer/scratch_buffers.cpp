#include <iterator>
#include <mutex>

#include "device_objects.h"

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

bool ScratchBufferRegistry::RemoveBuffer(VkBuffer buffer) {
    std::unique_lock lock(mutex_);
    bool was_scratch = sizes_.erase(buffer) > 0;
    for (auto it = by_address_.begin(); it != by_address_.end();) {
        if (it->second.buffer != buffer) {
            ++it;
            continue;
        }
        was_scratch = true;
        ForgetInitializations(it->first, it->second.size);
        it = by_address_.erase(it);
    }
    return was_scratch;
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

void ScratchBufferRegistry::ForgetInitializations(VkDeviceAddress address, VkDeviceSize size) {
    // Entries start at their address; the one before `address` may reach into the range, the later ones start in it.
    auto it = initializations_.lower_bound(address);
    if (it != initializations_.begin()) {
        auto before = std::prev(it);
        if (before->first + before->second.size > address) it = before;
    }
    while (it != initializations_.end() && it->first < address + size) it = initializations_.erase(it);
}

void ScratchBufferRegistry::RecordInitialization(VkDeviceAddress address, VkDeviceSize size, uint32_t graph_tag) {
    std::unique_lock lock(mutex_);
    ForgetInitializations(address, size);
    initializations_[address] = RecordedInitialization{size, graph_tag};
}

bool ScratchBufferRegistry::LatestInitializationIs(VkDeviceAddress address, uint32_t graph_tag) const {
    std::shared_lock lock(mutex_);
    auto it = initializations_.find(address);
    return it != initializations_.end() && it->second.graph_tag == graph_tag;
}

}  // namespace execgraph
