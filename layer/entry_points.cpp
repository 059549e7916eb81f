// Loader interface (version 2) and the layer's intercept table: the one place that lists what execgraph intercepts.
//
// Zero cost for applications that do not use AMDX: vkGetDeviceProcAddr hands out the next layer's function for every
// command, except vkGetDeviceProcAddr/vkDestroyDevice (so state is freed) and, on devices where the application enabled
// the emulated VK_AMDX_shader_enqueue, the commands the emulation must see.
#include <cstring>
#include <string_view>

#include "intercepts.h"
#include "layer_state.h"
#include "settings.h"

namespace execgraph {
namespace {

enum class InterceptScope {
    kInstance,        // instance and physical-device commands
    kEveryDevice,     // device commands the layer needs on every device
    kEmulatingDevice  // device commands that only devices emulating VK_AMDX_shader_enqueue route through the layer
};

struct Intercept {
    std::string_view name;
    PFN_vkVoidFunction function;
    InterceptScope scope;
};

template <typename Function>
PFN_vkVoidFunction AsVoid(Function function) {
    return reinterpret_cast<PFN_vkVoidFunction>(function);
}

// clang-format off
const Intercept kIntercepts[] = {
    {"vkGetInstanceProcAddr",                      AsVoid(&intercept::GetInstanceProcAddr),                     InterceptScope::kInstance},
    {"vkCreateInstance",                           AsVoid(&intercept::CreateInstance),                          InterceptScope::kInstance},
    {"vkDestroyInstance",                          AsVoid(&intercept::DestroyInstance),                         InterceptScope::kInstance},
    {"vkCreateDebugUtilsMessengerEXT",             AsVoid(&intercept::CreateDebugUtilsMessengerEXT),            InterceptScope::kInstance},
    {"vkDestroyDebugUtilsMessengerEXT",            AsVoid(&intercept::DestroyDebugUtilsMessengerEXT),           InterceptScope::kInstance},
    {"vkEnumerateInstanceLayerProperties",         AsVoid(&intercept::EnumerateInstanceLayerProperties),        InterceptScope::kInstance},
    {"vkEnumerateInstanceExtensionProperties",     AsVoid(&intercept::EnumerateInstanceExtensionProperties),    InterceptScope::kInstance},
    {"vkEnumerateDeviceLayerProperties",           AsVoid(&intercept::EnumerateDeviceLayerProperties),          InterceptScope::kInstance},
    {"vkEnumerateDeviceExtensionProperties",       AsVoid(&intercept::EnumerateDeviceExtensionProperties),      InterceptScope::kInstance},
    {"vkGetPhysicalDeviceFeatures2",               AsVoid(&intercept::GetPhysicalDeviceFeatures2),              InterceptScope::kInstance},
    {"vkGetPhysicalDeviceFeatures2KHR",            AsVoid(&intercept::GetPhysicalDeviceFeatures2),              InterceptScope::kInstance},
    {"vkGetPhysicalDeviceProperties2",             AsVoid(&intercept::GetPhysicalDeviceProperties2),            InterceptScope::kInstance},
    {"vkGetPhysicalDeviceProperties2KHR",          AsVoid(&intercept::GetPhysicalDeviceProperties2),            InterceptScope::kInstance},
    {"vkCreateDevice",                             AsVoid(&intercept::CreateDevice),                            InterceptScope::kInstance},
    {"vkGetDeviceProcAddr",                        AsVoid(&intercept::GetDeviceProcAddr),                       InterceptScope::kEveryDevice},
    {"vkDestroyDevice",                            AsVoid(&intercept::DestroyDevice),                           InterceptScope::kEveryDevice},
    {"vkCreateBuffer",                             AsVoid(&intercept::CreateBuffer),                            InterceptScope::kEmulatingDevice},
    {"vkDestroyBuffer",                            AsVoid(&intercept::DestroyBuffer),                           InterceptScope::kEmulatingDevice},
    {"vkGetBufferDeviceAddress",                   AsVoid(&intercept::GetBufferDeviceAddress),                  InterceptScope::kEmulatingDevice},
    {"vkGetBufferDeviceAddressKHR",                AsVoid(&intercept::GetBufferDeviceAddress),                  InterceptScope::kEmulatingDevice},
    {"vkGetBufferDeviceAddressEXT",                AsVoid(&intercept::GetBufferDeviceAddress),                  InterceptScope::kEmulatingDevice},
    {"vkCreateShaderModule",                       AsVoid(&intercept::CreateShaderModule),                      InterceptScope::kEmulatingDevice},
    {"vkDestroyShaderModule",                      AsVoid(&intercept::DestroyShaderModule),                     InterceptScope::kEmulatingDevice},
    {"vkCreatePipelineLayout",                     AsVoid(&intercept::CreatePipelineLayout),                    InterceptScope::kEmulatingDevice},
    {"vkDestroyPipelineLayout",                    AsVoid(&intercept::DestroyPipelineLayout),                   InterceptScope::kEmulatingDevice},
    {"vkCreateComputePipelines",                   AsVoid(&intercept::CreateComputePipelines),                  InterceptScope::kEmulatingDevice},
    {"vkDestroyPipeline",                          AsVoid(&intercept::DestroyPipeline),                         InterceptScope::kEmulatingDevice},
    {"vkSetDebugUtilsObjectNameEXT",               AsVoid(&intercept::SetDebugUtilsObjectNameEXT),              InterceptScope::kEmulatingDevice},
    {"vkAllocateCommandBuffers",                   AsVoid(&intercept::AllocateCommandBuffers),                  InterceptScope::kEmulatingDevice},
    {"vkFreeCommandBuffers",                       AsVoid(&intercept::FreeCommandBuffers),                      InterceptScope::kEmulatingDevice},
    {"vkDestroyCommandPool",                       AsVoid(&intercept::DestroyCommandPool),                      InterceptScope::kEmulatingDevice},
    {"vkBeginCommandBuffer",                       AsVoid(&intercept::BeginCommandBuffer),                      InterceptScope::kEmulatingDevice},
    {"vkCmdBindPipeline",                          AsVoid(&intercept::CmdBindPipeline),                         InterceptScope::kEmulatingDevice},
    {"vkCmdBindDescriptorSets",                    AsVoid(&intercept::CmdBindDescriptorSets),                   InterceptScope::kEmulatingDevice},
    {"vkCmdPushConstants",                         AsVoid(&intercept::CmdPushConstants),                        InterceptScope::kEmulatingDevice},
    {"vkQueueSubmit",                              AsVoid(&intercept::QueueSubmit),                             InterceptScope::kEmulatingDevice},
    {"vkQueueSubmit2",                             AsVoid(&intercept::QueueSubmit2),                            InterceptScope::kEmulatingDevice},
    {"vkQueueSubmit2KHR",                          AsVoid(&intercept::QueueSubmit2),                            InterceptScope::kEmulatingDevice},
    {"vkQueueWaitIdle",                            AsVoid(&intercept::QueueWaitIdle),                           InterceptScope::kEmulatingDevice},
    {"vkDeviceWaitIdle",                           AsVoid(&intercept::DeviceWaitIdle),                          InterceptScope::kEmulatingDevice},
    {"vkWaitForFences",                            AsVoid(&intercept::WaitForFences),                           InterceptScope::kEmulatingDevice},
    {"vkGetFenceStatus",                           AsVoid(&intercept::GetFenceStatus),                          InterceptScope::kEmulatingDevice},
    {"vkWaitSemaphores",                           AsVoid(&intercept::WaitSemaphores),                          InterceptScope::kEmulatingDevice},
    {"vkWaitSemaphoresKHR",                        AsVoid(&intercept::WaitSemaphores),                          InterceptScope::kEmulatingDevice},
    {"vkCreateExecutionGraphPipelinesAMDX",        AsVoid(&intercept::CreateExecutionGraphPipelinesAMDX),       InterceptScope::kEmulatingDevice},
    {"vkGetExecutionGraphPipelineScratchSizeAMDX", AsVoid(&intercept::GetExecutionGraphPipelineScratchSizeAMDX), InterceptScope::kEmulatingDevice},
    {"vkGetExecutionGraphPipelineNodeIndexAMDX",   AsVoid(&intercept::GetExecutionGraphPipelineNodeIndexAMDX),  InterceptScope::kEmulatingDevice},
    {"vkCmdInitializeGraphScratchMemoryAMDX",      AsVoid(&intercept::CmdInitializeGraphScratchMemoryAMDX),     InterceptScope::kEmulatingDevice},
    {"vkCmdDispatchGraphAMDX",                     AsVoid(&intercept::CmdDispatchGraphAMDX),                    InterceptScope::kEmulatingDevice},
    {"vkCmdDispatchGraphIndirectAMDX",             AsVoid(&intercept::CmdDispatchGraphIndirectAMDX),            InterceptScope::kEmulatingDevice},
    {"vkCmdDispatchGraphIndirectCountAMDX",        AsVoid(&intercept::CmdDispatchGraphIndirectCountAMDX),       InterceptScope::kEmulatingDevice},
};
// clang-format on

const Intercept* FindIntercept(const char* name) {
    if (name == nullptr) return nullptr;
    const std::string_view wanted(name);
    for (const Intercept& intercept : kIntercepts) {
        if (intercept.name == wanted) return &intercept;
    }
    return nullptr;
}

}  // namespace

PFN_vkVoidFunction FindDeviceIntercept(const char* name, bool device_emulates_shader_enqueue) {
    const Intercept* intercept = FindIntercept(name);
    if (intercept == nullptr) return nullptr;
    switch (intercept->scope) {
        case InterceptScope::kInstance:
            return nullptr;
        case InterceptScope::kEveryDevice:
            return intercept->function;
        case InterceptScope::kEmulatingDevice:
            return device_emulates_shader_enqueue ? intercept->function : nullptr;
    }
    return nullptr;
}

// The loader asks for instance commands here. Device commands are answered too (every device-level intercept forwards
// when its device does not emulate), as the loader interface requires of a layer's vkGetInstanceProcAddr.
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL intercept::GetInstanceProcAddr(VkInstance instance, const char* pName) {
    if (const Intercept* intercept = FindIntercept(pName)) return intercept->function;
    if (instance == VK_NULL_HANDLE) return nullptr;
    std::shared_ptr<InstanceState> state = FindInstanceState(GetDispatchKey(instance));
    if (!state) return nullptr;
    return state->dispatch.GetInstanceProcAddr(instance, pName);
}

}  // namespace execgraph

using namespace execgraph;

// The exported names forward to the layer's internal functions. The layer never takes the address of an exported
// symbol itself: the process that loads it (the loader, an application linked to libvulkan) defines the same names, and
// the dynamic linker would resolve such a reference to theirs.
extern "C" {

VK_LAYER_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance, const char* pName) {
    return intercept::GetInstanceProcAddr(instance, pName);
}

VK_LAYER_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char* pName) {
    return intercept::GetDeviceProcAddr(device, pName);
}

// Interface-version-0 introspection entry points; harmless on Linux and used by some tools.
VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateInstanceLayerProperties(uint32_t* pPropertyCount,
                                                                                  VkLayerProperties* pProperties) {
    return intercept::EnumerateInstanceLayerProperties(pPropertyCount, pProperties);
}

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateInstanceExtensionProperties(const char* pLayerName,
                                                                                      uint32_t* pPropertyCount,
                                                                                      VkExtensionProperties* pProperties) {
    return intercept::EnumerateInstanceExtensionProperties(pLayerName, pPropertyCount, pProperties);
}

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateDeviceLayerProperties(VkPhysicalDevice physicalDevice,
                                                                                uint32_t* pPropertyCount,
                                                                                VkLayerProperties* pProperties) {
    return intercept::EnumerateDeviceLayerProperties(physicalDevice, pPropertyCount, pProperties);
}

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateDeviceExtensionProperties(VkPhysicalDevice physicalDevice,
                                                                                    const char* pLayerName,
                                                                                    uint32_t* pPropertyCount,
                                                                                    VkExtensionProperties* pProperties) {
    return intercept::EnumerateDeviceExtensionProperties(physicalDevice, pLayerName, pPropertyCount, pProperties);
}

// Loader-layer interface version 2 (LoaderLayerInterface.md, "Layer Version Negotiation"). AMDX adds no
// physical-device commands, so there is no vk_layerGetPhysicalDeviceProcAddr.
VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* pVersionStruct) {
    if (pVersionStruct == nullptr || pVersionStruct->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT) return VK_ERROR_INITIALIZATION_FAILED;
    if (pVersionStruct->loaderLayerInterfaceVersion < 2) return VK_ERROR_INITIALIZATION_FAILED;
    pVersionStruct->loaderLayerInterfaceVersion = 2;
    pVersionStruct->pfnGetInstanceProcAddr = intercept::GetInstanceProcAddr;
    pVersionStruct->pfnGetDeviceProcAddr = intercept::GetDeviceProcAddr;
    pVersionStruct->pfnGetPhysicalDeviceProcAddr = nullptr;
    return VK_SUCCESS;
}

}  // extern "C"
