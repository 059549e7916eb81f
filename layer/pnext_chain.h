// Helpers to read and temporarily edit Vulkan pNext chains.
//
// Bookworm has no Vulkan-Utility-Libraries "safe struct" deep copies, and a layer cannot copy structures it does not
// know the size of. So where a structure the driver must not see sits in the middle of the application's chain, the
// layer unlinks it in place for the duration of the call down and restores the chain before returning, as the Vulkan
// loader itself does for VkDeviceGroupDeviceCreateInfo. The application's structures are unchanged once the
// intercepted command returns.
#pragma once

#include <vulkan/vulkan.h>

#include <cstring>
#include <vector>

namespace execgraph {

template <typename T>
const T* FindInChain(const void* chain, VkStructureType type) {
    for (auto* base = static_cast<const VkBaseInStructure*>(chain); base != nullptr; base = base->pNext) {
        if (base->sType == type) return reinterpret_cast<const T*>(base);
    }
    return nullptr;
}

template <typename T>
T* FindInChain(void* chain, VkStructureType type) {
    for (auto* base = static_cast<VkBaseOutStructure*>(chain); base != nullptr; base = base->pNext) {
        if (base->sType == type) return reinterpret_cast<T*>(base);
    }
    return nullptr;
}

// Records in-place edits of application-owned structures and undoes them, newest first, on destruction.
class ScopedChainEdits {
  public:
    ScopedChainEdits() = default;
    ScopedChainEdits(const ScopedChainEdits&) = delete;
    ScopedChainEdits& operator=(const ScopedChainEdits&) = delete;
    ~ScopedChainEdits() {
        for (auto it = edits_.rbegin(); it != edits_.rend(); ++it) std::memcpy(it->address, it->original, it->size);
    }

    // Removes every structure of `type` from the chain that starts at *head (a pNext member).
    void Unlink(const void** head, VkStructureType type) { UnlinkImpl(const_cast<void**>(head), type); }
    void Unlink(void** head, VkStructureType type) { UnlinkImpl(head, type); }

    // Inserts `node` (owned by the caller, outliving this object) at the front of the chain at *head.
    void Prepend(const void** head, VkBaseOutStructure* node) {
        node->pNext = static_cast<VkBaseOutStructure*>(const_cast<void*>(*head));
        Set(const_cast<void**>(head), static_cast<void*>(node));
    }

    // Overwrites one scalar field (a VkBool32, a flags value, a pointer) until the edits are undone.
    template <typename T>
    void Set(T* field, T value) {
        static_assert(sizeof(T) <= sizeof(Edit::original));
        Edit edit{field, {}, sizeof(T)};
        std::memcpy(edit.original, field, sizeof(T));
        edits_.push_back(edit);
        *field = value;
    }

  private:
    struct Edit {
        void* address;
        unsigned char original[8];
        size_t size;
    };

    void UnlinkImpl(void** head, VkStructureType type) {
        void** link = head;
        while (*link != nullptr) {
            auto* node = static_cast<VkBaseOutStructure*>(*link);
            if (node->sType == type) {
                Set(link, static_cast<void*>(node->pNext));
            } else {
                link = reinterpret_cast<void**>(&node->pNext);
            }
        }
    }

    std::vector<Edit> edits_;
};

}  // namespace execgraph
