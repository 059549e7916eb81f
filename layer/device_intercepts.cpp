// Device creation and the core device commands that carry AMDX values on emulating devices.
#include <cstring>
#include <string>
#include <vector>

#include "intercepts.h"
#include "layer_state.h"
#include "pnext_chain.h"

namespace execgraph::intercept {
namespace {

VkLayerDeviceCreateInfo* FindLayerLinkInfo(const VkDeviceCreateInfo* create_info) {
    for (auto* node = static_cast<const VkBaseInStructure*>(create_info->pNext); node != nullptr; node = node->pNext) {
        if (node->sType != VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO) continue;
        auto* layer_info = reinterpret_cast<VkLayerDeviceCreateInfo*>(const_cast<VkBaseInStructure*>(node));
        if (layer_info->function == VK_LAYER_LINK_INFO) return layer_info;
    }
    return nullptr;
}

// Everything the driver must see in place of what the application asked for, when the layer emulates AMDX on a device.
// Owns the copies; the in-place edits of the application's chain are undone when this goes out of scope.
struct EmulatedDeviceCreateInfo {
    VkDeviceCreateInfo create_info{};
    std::vector<const char*> extensions;
    VkPhysicalDeviceFeatures enabled_features{};
    VkPhysicalDeviceBufferDeviceAddressFeatures buffer_device_address{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
    ScopedChainEdits edits;
};

// Removes the extension and its feature structure, and turns on the features the emulation itself uses
// (emulation_support.h). Turning a feature on changes nothing the application can observe: it only allows more.
void PrepareEmulatedDeviceCreateInfo(const VkDeviceCreateInfo& original, EmulatedDeviceCreateInfo* emulated) {
    emulated->create_info = original;
    for (uint32_t i = 0; i < original.enabledExtensionCount; ++i) {
        if (std::strcmp(original.ppEnabledExtensionNames[i], VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) != 0) {
            emulated->extensions.push_back(original.ppEnabledExtensionNames[i]);
        }
    }
    emulated->create_info.enabledExtensionCount = static_cast<uint32_t>(emulated->extensions.size());
    emulated->create_info.ppEnabledExtensionNames = emulated->extensions.data();

    ScopedChainEdits& edits = emulated->edits;
    const void** head = &emulated->create_info.pNext;
    edits.Unlink(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX);

    // bufferDeviceAddress lives in either structure; both at once is invalid (VUID-VkDeviceCreateInfo-pNext-02830), so set
    // it where the application put it, else add the narrow structure.
    if (auto* vulkan12 = FindInChain<VkPhysicalDeviceVulkan12Features>(const_cast<void*>(*head),
                                                                        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)) {
        edits.Set<VkBool32>(&vulkan12->bufferDeviceAddress, VK_TRUE);
    } else if (auto* address = FindInChain<VkPhysicalDeviceBufferDeviceAddressFeatures>(
                   const_cast<void*>(*head), VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES)) {
        edits.Set<VkBool32>(&address->bufferDeviceAddress, VK_TRUE);
    } else {
        emulated->buffer_device_address.bufferDeviceAddress = VK_TRUE;
        edits.Prepend(head, reinterpret_cast<VkBaseOutStructure*>(&emulated->buffer_device_address));
    }

    // shaderInt64 lives in VkPhysicalDeviceFeatures2 if chained, else in pEnabledFeatures (VUID-VkDeviceCreateInfo-pNext-00373).
    if (auto* features2 = FindInChain<VkPhysicalDeviceFeatures2>(const_cast<void*>(*head), VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)) {
        edits.Set<VkBool32>(&features2->features.shaderInt64, VK_TRUE);
    } else {
        if (original.pEnabledFeatures != nullptr) emulated->enabled_features = *original.pEnabledFeatures;
        emulated->enabled_features.shaderInt64 = VK_TRUE;
        emulated->create_info.pEnabledFeatures = &emulated->enabled_features;
    }
}

bool RequestsShaderEnqueue(const VkDeviceCreateInfo& create_info) {
    for (uint32_t i = 0; i < create_info.enabledExtensionCount; ++i) {
        if (std::strcmp(create_info.ppEnabledExtensionNames[i], VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) == 0) return true;
    }
    return false;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physicalDevice, const VkDeviceCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkDevice* pDevice) {
    std::shared_ptr<InstanceState> instance = FindInstanceState(GetDispatchKey(physicalDevice));
    VkLayerDeviceCreateInfo* link_info = FindLayerLinkInfo(pCreateInfo);
    if (!instance || link_info == nullptr || link_info->u.pLayerInfo == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_get_instance_proc_addr = link_info->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_get_device_proc_addr = link_info->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    auto next_create_device =
        reinterpret_cast<PFN_vkCreateDevice>(next_get_instance_proc_addr(instance->instance, "vkCreateDevice"));
    if (next_create_device == nullptr) return VK_ERROR_INITIALIZATION_FAILED;

    const bool requested = RequestsShaderEnqueue(*pCreateInfo);
    const bool emulate = requested && instance->EmulatesOn(physicalDevice);
    if (requested && !emulate && !instance->SupportOf(physicalDevice).native_shader_enqueue) {
        // Only reachable when the application ignored vkEnumerateDeviceExtensionProperties, which did not list it.
        instance->messages.Emit(MessageSeverity::kError, message_id::kEmulationUnavailable,
                                "VK_AMDX_shader_enqueue cannot be emulated on this device: " +
                                    instance->SupportOf(physicalDevice).missing_requirement,
                                {ObjectOf(VK_OBJECT_TYPE_PHYSICAL_DEVICE, physicalDevice)});
        return VK_ERROR_EXTENSION_NOT_PRESENT;
    }

    bool shader_enqueue_feature = false;
    if (auto* features = FindInChain<VkPhysicalDeviceShaderEnqueueFeaturesAMDX>(
            pCreateInfo->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX)) {
        shader_enqueue_feature = features->shaderEnqueue == VK_TRUE;
    }

    link_info->u.pLayerInfo = link_info->u.pLayerInfo->pNext;  // LLP_LAYER_13: the next layer sees its own link
    VkResult result;
    if (emulate) {
        EmulatedDeviceCreateInfo emulated;
        PrepareEmulatedDeviceCreateInfo(*pCreateInfo, &emulated);
        result = next_create_device(physicalDevice, &emulated.create_info, pAllocator, pDevice);
    } else {
        result = next_create_device(physicalDevice, pCreateInfo, pAllocator, pDevice);
    }
    if (result != VK_SUCCESS) return result;

    auto state = std::make_shared<DeviceState>();
    state->device = *pDevice;
    state->physical_device = physicalDevice;
    state->instance = instance;
    state->emulates_shader_enqueue = emulate;
    state->shader_enqueue_feature_enabled = shader_enqueue_feature;
    LoadDeviceDispatchTable(*pDevice, next_get_device_proc_addr, &state->dispatch);
    RegisterDeviceState(GetDispatchKey(*pDevice), state);
    if (emulate) {
        instance->messages.Emit(MessageSeverity::kInfo, message_id::kEmulationActive,
                                "VK_AMDX_shader_enqueue is emulated on this device with plain compute dispatches",
                                {ObjectOf(VK_OBJECT_TYPE_DEVICE, *pDevice)});
    }
    return VK_SUCCESS;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* pName) {
    if (device == VK_NULL_HANDLE) return nullptr;
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return nullptr;
    if (PFN_vkVoidFunction function = FindDeviceIntercept(pName, state->emulates_shader_enqueue)) return function;
    return state->dispatch.GetDeviceProcAddr(device, pName);
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* pAllocator) {
    if (device == VK_NULL_HANDLE) return;
    std::shared_ptr<DeviceState> state = UnregisterDeviceState(GetDispatchKey(device));
    if (state) state->dispatch.DestroyDevice(device, pAllocator);
}

// Scratch buffers carry VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX, unknown to the driver. The emulation reads
// and writes scratch from shaders, takes indirect dispatch arguments from it, and clears it with transfer commands, so
// it asks the driver for exactly those usages instead (facts §11: scratch is accessed as storage in compute shaders).
VKAPI_ATTR VkResult VKAPI_CALL CreateBuffer(VkDevice device, const VkBufferCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkBuffer* pBuffer) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    constexpr VkBufferUsageFlags kScratchUsage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

    VkBufferCreateInfo create_info = *pCreateInfo;
    ScopedChainEdits edits;
    // With maintenance5, VkBufferUsageFlags2CreateInfoKHR replaces `usage` (VK_KHR_maintenance5). A driver without
    // maintenance5 would ignore it, so fold its low 32 bits (all that 1.3 usages use) into `usage` and unlink it there.
    if (auto* usage2 = FindInChain<VkBufferUsageFlags2CreateInfoKHR>(pCreateInfo->pNext,
                                                                      VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR)) {
        VkBufferUsageFlags2KHR usage = usage2->usage;
        if (usage & VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) {
            usage = (usage & ~VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) | kScratchUsage;
        }
        if (state->instance->SupportOf(state->physical_device).has_maintenance5) {
            edits.Set(const_cast<VkBufferUsageFlags2KHR*>(&usage2->usage), usage);
        } else {
            edits.Unlink(&create_info.pNext, VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR);
            create_info.usage = static_cast<VkBufferUsageFlags>(usage);
        }
    } else if (create_info.usage & VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) {
        create_info.usage = (create_info.usage & ~VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) | kScratchUsage;
    }
    return state->dispatch.CreateBuffer(device, &create_info, pAllocator, pBuffer);
}

}  // namespace execgraph::intercept
