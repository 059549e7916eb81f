// Instance and physical-device commands: layer discovery, settings, and advertising VK_AMDX_shader_enqueue.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "intercepts.h"
#include "layer_state.h"
#include "pnext_chain.h"
#include "settings.h"

namespace execgraph::intercept {
namespace {

VkLayerInstanceCreateInfo* FindLayerLinkInfo(const VkInstanceCreateInfo* create_info) {
    for (auto* node = static_cast<const VkBaseInStructure*>(create_info->pNext); node != nullptr; node = node->pNext) {
        if (node->sType != VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO) continue;
        auto* layer_info = reinterpret_cast<VkLayerInstanceCreateInfo*>(const_cast<VkBaseInStructure*>(node));
        if (layer_info->function == VK_LAYER_LINK_INFO) return layer_info;
    }
    return nullptr;
}

// Writes `available` into the caller's array following the Vulkan two-call idiom, VK_INCOMPLETE when it does not fit.
template <typename Properties>
VkResult WriteEnumeration(const std::vector<Properties>& available, uint32_t* count, Properties* properties) {
    if (properties == nullptr) {
        *count = static_cast<uint32_t>(available.size());
        return VK_SUCCESS;
    }
    const uint32_t written = std::min<uint32_t>(*count, static_cast<uint32_t>(available.size()));
    std::copy_n(available.begin(), written, properties);
    *count = written;
    return written < available.size() ? VK_INCOMPLETE : VK_SUCCESS;
}

VkLayerProperties OurLayerProperties() {
    VkLayerProperties properties{};
    std::strncpy(properties.layerName, kLayerName, sizeof(properties.layerName) - 1);
    std::strncpy(properties.description, kLayerDescription, sizeof(properties.description) - 1);
    properties.specVersion = VK_HEADER_VERSION_COMPLETE;
    properties.implementationVersion = kLayerImplementationVersion;
    return properties;
}

VkExtensionProperties ShaderEnqueueExtension() {
    VkExtensionProperties properties{};
    std::strncpy(properties.extensionName, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME, sizeof(properties.extensionName) - 1);
    properties.specVersion = VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION;
    return properties;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* pCreateInfo, const VkAllocationCallbacks* pAllocator,
                                              VkInstance* pInstance) {
    VkLayerInstanceCreateInfo* link_info = FindLayerLinkInfo(pCreateInfo);
    if (link_info == nullptr || link_info->u.pLayerInfo == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_get_instance_proc_addr = link_info->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    auto next_create_instance =
        reinterpret_cast<PFN_vkCreateInstance>(next_get_instance_proc_addr(VK_NULL_HANDLE, "vkCreateInstance"));
    if (next_create_instance == nullptr) return VK_ERROR_INITIALIZATION_FAILED;

    // The next layer must see its own link, not ours (LoaderLayerInterface.md, LLP_LAYER_12).
    link_info->u.pLayerInfo = link_info->u.pLayerInfo->pNext;

    SettingsReadResult settings = ReadLayerSettings(pCreateInfo->pNext);

    // VkLayerSettingsCreateInfoEXT stays in the chain: other layers below may read their own settings from it, and
    // structures a layer does not know are ignored (Vulkan spec, "Valid Usage for Structure Pointer Chains").
    VkResult result = next_create_instance(pCreateInfo, pAllocator, pInstance);
    if (result != VK_SUCCESS) return result;

    auto state = std::make_shared<InstanceState>();
    state->instance = *pInstance;
    state->api_version = pCreateInfo->pApplicationInfo != nullptr && pCreateInfo->pApplicationInfo->apiVersion != 0
                             ? pCreateInfo->pApplicationInfo->apiVersion
                             : VK_API_VERSION_1_0;
    LoadInstanceDispatchTable(*pInstance, next_get_instance_proc_addr, &state->dispatch);
    state->settings = settings.settings;
    for (uint32_t i = 0; i < pCreateInfo->enabledExtensionCount; ++i) {
        if (std::strcmp(pCreateInfo->ppEnabledExtensionNames[i], VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0)
            state->debug_utils_enabled = true;
    }
    state->messages.SetLogToStderr(state->settings.log_to_stderr);
    RegisterInstanceState(GetDispatchKey(*pInstance), state);

    // Settings problems go to the instance-creation messengers, the only ones that exist yet (VK_EXT_debug_utils).
    state->messages.AddCreationMessengers(pCreateInfo->pNext);
    for (const std::string& warning : settings.warnings) {
        state->messages.Emit(MessageSeverity::kWarning, message_id::kSettings, warning);
    }
    state->messages.RemoveMessenger(VK_NULL_HANDLE);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyInstance(VkInstance instance, const VkAllocationCallbacks* pAllocator) {
    if (instance == VK_NULL_HANDLE) return;
    std::shared_ptr<InstanceState> state = UnregisterInstanceState(GetDispatchKey(instance));
    if (state) state->dispatch.DestroyInstance(instance, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDebugUtilsMessengerEXT(VkInstance instance, const VkDebugUtilsMessengerCreateInfoEXT* pCreateInfo,
                                                            const VkAllocationCallbacks* pAllocator,
                                                            VkDebugUtilsMessengerEXT* pMessenger) {
    std::shared_ptr<InstanceState> state = FindInstanceState(GetDispatchKey(instance));
    if (!state || state->dispatch.CreateDebugUtilsMessengerEXT == nullptr) return VK_ERROR_EXTENSION_NOT_PRESENT;
    VkResult result = state->dispatch.CreateDebugUtilsMessengerEXT(instance, pCreateInfo, pAllocator, pMessenger);
    if (result == VK_SUCCESS) state->messages.AddMessenger(*pMessenger, *pCreateInfo);
    return result;
}

VKAPI_ATTR void VKAPI_CALL DestroyDebugUtilsMessengerEXT(VkInstance instance, VkDebugUtilsMessengerEXT messenger,
                                                         const VkAllocationCallbacks* pAllocator) {
    std::shared_ptr<InstanceState> state = FindInstanceState(GetDispatchKey(instance));
    if (!state || state->dispatch.DestroyDebugUtilsMessengerEXT == nullptr) return;
    if (messenger != VK_NULL_HANDLE) state->messages.RemoveMessenger(messenger);
    state->dispatch.DestroyDebugUtilsMessengerEXT(instance, messenger, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL EnumerateInstanceLayerProperties(uint32_t* pPropertyCount, VkLayerProperties* pProperties) {
    return WriteEnumeration(std::vector<VkLayerProperties>{OurLayerProperties()}, pPropertyCount, pProperties);
}

// Answers only for this layer; the loader asks the layers and drivers below for everything else (LLP_LAYER_15).
VKAPI_ATTR VkResult VKAPI_CALL EnumerateInstanceExtensionProperties(const char* pLayerName, uint32_t* pPropertyCount,
                                                                    VkExtensionProperties* pProperties) {
    // No instance extensions: VkLayerSettingsCreateInfoEXT is read from the chain without VK_EXT_layer_settings being
    // enabled, because bookworm's loader (1.3.239) predates that extension and refuses to enable it.
    if (pLayerName == nullptr || std::strcmp(pLayerName, kLayerName) != 0) return VK_ERROR_LAYER_NOT_PRESENT;
    *pPropertyCount = 0;
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL EnumerateDeviceLayerProperties(VkPhysicalDevice physicalDevice, uint32_t* pPropertyCount,
                                                              VkLayerProperties* pProperties) {
    return WriteEnumeration(std::vector<VkLayerProperties>{OurLayerProperties()}, pPropertyCount, pProperties);
}

VKAPI_ATTR VkResult VKAPI_CALL EnumerateDeviceExtensionProperties(VkPhysicalDevice physicalDevice, const char* pLayerName,
                                                                  uint32_t* pPropertyCount, VkExtensionProperties* pProperties) {
    // Asked for this layer's own extensions: the one it can provide, whatever the device.
    if (pLayerName != nullptr && std::strcmp(pLayerName, kLayerName) == 0) {
        return WriteEnumeration(std::vector<VkExtensionProperties>{ShaderEnqueueExtension()}, pPropertyCount, pProperties);
    }
    std::shared_ptr<InstanceState> state = physicalDevice != VK_NULL_HANDLE ? FindInstanceState(GetDispatchKey(physicalDevice)) : nullptr;
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    if (pLayerName != nullptr) return state->dispatch.EnumerateDeviceExtensionProperties(physicalDevice, pLayerName, pPropertyCount, pProperties);
    const PhysicalDeviceSupport& support = state->SupportOf(physicalDevice);
    if (support.native_shader_enqueue && !state->settings.force_enable) {
        return state->dispatch.EnumerateDeviceExtensionProperties(physicalDevice, nullptr, pPropertyCount, pProperties);
    }

    // Read the whole list so VK_INCOMPLETE is computed on the total. An AMDX entry from below that the driver does not
    // implement is the loader echoing an implicit manifest (emulation_support.cpp); it is replaced by ours or removed.
    uint32_t driver_count = 0;
    VkResult result = state->dispatch.EnumerateDeviceExtensionProperties(physicalDevice, nullptr, &driver_count, nullptr);
    if (result != VK_SUCCESS) return result;
    std::vector<VkExtensionProperties> extensions(driver_count);
    result = state->dispatch.EnumerateDeviceExtensionProperties(physicalDevice, nullptr, &driver_count, extensions.data());
    if (result < VK_SUCCESS) return result;
    extensions.resize(driver_count);
    std::erase_if(extensions, [](const VkExtensionProperties& extension) {
        return std::strcmp(extension.extensionName, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) == 0;
    });
    if (state->EmulatesOn(physicalDevice)) extensions.push_back(ShaderEnqueueExtension());
    return WriteEnumeration(extensions, pPropertyCount, pProperties);
}

VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceFeatures2(VkPhysicalDevice physicalDevice, VkPhysicalDeviceFeatures2* pFeatures) {
    std::shared_ptr<InstanceState> state = FindInstanceState(GetDispatchKey(physicalDevice));
    if (!state) return;
    if (!state->EmulatesOn(physicalDevice)) {
        state->dispatch.GetPhysicalDeviceFeatures2(physicalDevice, pFeatures);
        return;
    }
    auto* shader_enqueue = FindInChain<VkPhysicalDeviceShaderEnqueueFeaturesAMDX>(
        pFeatures->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX);
    {
        // The driver (and a validation layer below) must not see a structure it does not know.
        ScopedChainEdits edits;
        edits.Unlink(&pFeatures->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX);
        state->dispatch.GetPhysicalDeviceFeatures2(physicalDevice, pFeatures);
    }
    if (shader_enqueue != nullptr) FillAdvertisedFeatures(shader_enqueue);
}

VKAPI_ATTR void VKAPI_CALL GetPhysicalDeviceProperties2(VkPhysicalDevice physicalDevice, VkPhysicalDeviceProperties2* pProperties) {
    std::shared_ptr<InstanceState> state = FindInstanceState(GetDispatchKey(physicalDevice));
    if (!state) return;
    if (!state->EmulatesOn(physicalDevice)) {
        state->dispatch.GetPhysicalDeviceProperties2(physicalDevice, pProperties);
        return;
    }
    auto* shader_enqueue = FindInChain<VkPhysicalDeviceShaderEnqueuePropertiesAMDX>(
        pProperties->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX);
    {
        ScopedChainEdits edits;
        edits.Unlink(&pProperties->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX);
        state->dispatch.GetPhysicalDeviceProperties2(physicalDevice, pProperties);
    }
    if (shader_enqueue != nullptr) FillAdvertisedProperties(state->SupportOf(physicalDevice), shader_enqueue);
}

}  // namespace execgraph::intercept
