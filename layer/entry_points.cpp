// Loader interface (version 2) and the layer's intercept table: the one place that lists what execgraph intercepts.
//
// Zero cost for applications that do not use AMDX: vkGetDeviceProcAddr hands out the next layer's function for every
// command, except vkGetDeviceProcAddr/vkDestroyDevice (so state is freed) and, on devices where the application enabled
// the emulated VK_AMDX_shader_enqueue, the commands the emulation must see.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

#include "intercepts.h"
#include "layer_state.h"
#include "settings.h"

namespace execgraph {
namespace {

enum class InterceptScope {
    kInstance,         // instance and physical-device commands
    kEveryDevice,      // device commands the layer needs on every device
    kEmulatingDevice,  // device commands that only devices emulating VK_AMDX_shader_enqueue route through the layer
    kPreparedLevels    // ... and only where the `prepared_levels` setting is on (prepared_levels.h)
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

// ---- Exceptions never cross the C ABI ----------------------------------------------------------------------------------
// The layer is C++ and allocates (std::vector, std::string, std::make_shared) in most intercepts; the loader and the
// application are C and cannot unwind. Every intercept is therefore reached through Guarded<>::Call, the one place that
// turns an escaping exception into the command's failure result: VK_ERROR_OUT_OF_HOST_MEMORY for std::bad_alloc (the
// result the spec gives for host allocation failure), VK_ERROR_UNKNOWN for anything else, and for commands that return
// nothing a skipped command. Each gets an error message through VK_EXT_debug_utils.

// A command name as a template argument (C++20 class-type non-type parameter).
template <size_t N>
struct CommandName {
    char text[N];
    constexpr CommandName(const char (&name)[N]) { std::copy_n(name, N, text); }
    constexpr bool Is(std::string_view other) const { return std::string_view(text, N - 1) == other; }
};

// Test hook: the environment variable EXECGRAPH_TEST_INJECT_BAD_ALLOC=<command>[,<command>...], read at each
// vkCreateInstance, makes those commands throw std::bad_alloc inside the layer, so tests can prove the guard below works
// end to end.
class BadAllocInjection {
  public:
    static void Refresh() {
        const char* value = std::getenv("EXECGRAPH_TEST_INJECT_BAD_ALLOC");
        std::lock_guard lock(mutex_);
        std::fill(std::begin(command_), std::end(command_), '\0');
        if (value != nullptr) std::strncpy(command_, value, sizeof(command_) - 1);
        active_.store(value != nullptr && value[0] != '\0', std::memory_order_relaxed);
    }
    static void MaybeThrow(std::string_view command) {
        if (!active_.load(std::memory_order_relaxed)) return;  // the only cost outside tests: one relaxed load
        bool matches = false;
        {
            std::lock_guard lock(mutex_);
            std::string_view list(command_);
            while (!list.empty() && !matches) {
                const size_t comma = list.find(',');
                matches = list.substr(0, comma) == command;
                list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
            }
        }
        if (matches) throw std::bad_alloc();
    }

  private:
    static inline std::atomic<bool> active_{false};
    static inline std::mutex mutex_;
    static inline char command_[256] = {};
};

// The instance whose messengers hear about a failed command, found from the command's first (dispatchable) parameter.
inline std::shared_ptr<InstanceState> InstanceOfHandle() { return nullptr; }
template <typename First, typename... Rest>
std::shared_ptr<InstanceState> InstanceOfHandle(First first, Rest...) {
    if constexpr (std::is_same_v<First, VkInstance> || std::is_same_v<First, VkPhysicalDevice>) {
        return first != VK_NULL_HANDLE ? FindInstanceState(GetDispatchKey(first)) : nullptr;
    } else if constexpr (std::is_same_v<First, VkDevice> || std::is_same_v<First, VkQueue> || std::is_same_v<First, VkCommandBuffer>) {
        if (first == VK_NULL_HANDLE) return nullptr;
        std::shared_ptr<DeviceState> device = FindDeviceState(GetDispatchKey(first));
        return device ? device->instance : nullptr;
    } else {
        return nullptr;
    }
}

template <typename Result>
constexpr Result FailureResult(VkResult result) {
    if constexpr (std::is_same_v<Result, VkResult>) {
        return result;
    } else if constexpr (!std::is_void_v<Result>) {
        return Result{};  // PFN_vkVoidFunction: nullptr; VkDeviceAddress: 0
    }
}

// Best effort: reporting allocates too, and memory may still be short.
void ReportEscapedException(const std::shared_ptr<InstanceState>& instance, const char* command, bool returns_result,
                            bool out_of_memory, const char* what) noexcept {
    try {
        std::string text = std::string(command) + (out_of_memory ? ": the layer ran out of host memory" : ": internal error in the layer: ") +
                           (out_of_memory ? "" : what);
        text += returns_result ? (out_of_memory ? "; returned VK_ERROR_OUT_OF_HOST_MEMORY" : "; returned VK_ERROR_UNKNOWN")
                               : "; the command was skipped and may be partly recorded: do not submit this command buffer";
        const char* id = out_of_memory ? message_id::kOutOfMemory : message_id::kInvalidUsage;
        if (instance) {
            instance->messages.Emit(MessageSeverity::kError, id, text);
        } else {
            MessageSink().Emit(MessageSeverity::kError, id, text);
        }
    } catch (...) {
    }
}

template <CommandName kName, auto kFunction, typename Signature = decltype(kFunction)>
struct Guarded;

template <CommandName kName, auto kFunction, typename Result, typename... Args>
struct Guarded<kName, kFunction, Result (*)(Args...)> {
    static VKAPI_ATTR Result VKAPI_CALL Call(Args... args) {
        constexpr bool kReturnsResult = std::is_same_v<Result, VkResult>;
        try {
            if constexpr (kName.Is("vkCreateInstance")) BadAllocInjection::Refresh();
            BadAllocInjection::MaybeThrow(kName.text);
            return kFunction(args...);
        } catch (const std::bad_alloc&) {
            ReportEscapedException(InstanceOfHandle(args...), kName.text, kReturnsResult, true, "");
            return FailureResult<Result>(VK_ERROR_OUT_OF_HOST_MEMORY);
        } catch (const std::exception& error) {
            ReportEscapedException(InstanceOfHandle(args...), kName.text, kReturnsResult, false, error.what());
            return FailureResult<Result>(VK_ERROR_UNKNOWN);
        }
    }
};

// The guarded entry point of intercept::<function> under the Vulkan name "vk<function>" (or an alias), and its table row.
#define EXECGRAPH_GUARDED_AS(vk_name, function) (&Guarded<vk_name, &intercept::function>::Call)
#define EXECGRAPH_GUARDED(function) EXECGRAPH_GUARDED_AS("vk" #function, function)
#define EXECGRAPH_INTERCEPT_ALIAS(vk_name, function, scope) \
    { vk_name, AsVoid(EXECGRAPH_GUARDED_AS(vk_name, function)), InterceptScope::scope }
#define EXECGRAPH_INTERCEPT(function, scope) EXECGRAPH_INTERCEPT_ALIAS("vk" #function, function, scope)

// clang-format off
const Intercept kIntercepts[] = {
    EXECGRAPH_INTERCEPT(GetInstanceProcAddr,                                                     kInstance),
    EXECGRAPH_INTERCEPT(CreateInstance,                                                          kInstance),
    EXECGRAPH_INTERCEPT(DestroyInstance,                                                         kInstance),
    EXECGRAPH_INTERCEPT(CreateDebugUtilsMessengerEXT,                                            kInstance),
    EXECGRAPH_INTERCEPT(DestroyDebugUtilsMessengerEXT,                                           kInstance),
    EXECGRAPH_INTERCEPT(EnumerateInstanceLayerProperties,                                        kInstance),
    EXECGRAPH_INTERCEPT(EnumerateInstanceExtensionProperties,                                    kInstance),
    EXECGRAPH_INTERCEPT(EnumerateDeviceLayerProperties,                                          kInstance),
    EXECGRAPH_INTERCEPT(EnumerateDeviceExtensionProperties,                                      kInstance),
    EXECGRAPH_INTERCEPT(GetPhysicalDeviceFeatures2,                                              kInstance),
    EXECGRAPH_INTERCEPT_ALIAS("vkGetPhysicalDeviceFeatures2KHR", GetPhysicalDeviceFeatures2,     kInstance),
    EXECGRAPH_INTERCEPT(GetPhysicalDeviceProperties2,                                            kInstance),
    EXECGRAPH_INTERCEPT_ALIAS("vkGetPhysicalDeviceProperties2KHR", GetPhysicalDeviceProperties2, kInstance),
    EXECGRAPH_INTERCEPT(CreateDevice,                                                            kInstance),
    EXECGRAPH_INTERCEPT(GetDeviceProcAddr,                                                       kEveryDevice),
    EXECGRAPH_INTERCEPT(DestroyDevice,                                                           kEveryDevice),
    EXECGRAPH_INTERCEPT(CreateBuffer,                                                            kEmulatingDevice),
    EXECGRAPH_INTERCEPT(DestroyBuffer,                                                           kEmulatingDevice),
    EXECGRAPH_INTERCEPT(GetBufferDeviceAddress,                                                  kEmulatingDevice),
    EXECGRAPH_INTERCEPT_ALIAS("vkGetBufferDeviceAddressKHR", GetBufferDeviceAddress,             kEmulatingDevice),
    EXECGRAPH_INTERCEPT_ALIAS("vkGetBufferDeviceAddressEXT", GetBufferDeviceAddress,             kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CreateShaderModule,                                                      kEmulatingDevice),
    EXECGRAPH_INTERCEPT(DestroyShaderModule,                                                     kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CreatePipelineLayout,                                                    kEmulatingDevice),
    EXECGRAPH_INTERCEPT(DestroyPipelineLayout,                                                   kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CreateComputePipelines,                                                  kEmulatingDevice),
    EXECGRAPH_INTERCEPT(DestroyPipeline,                                                         kEmulatingDevice),
    EXECGRAPH_INTERCEPT(SetDebugUtilsObjectNameEXT,                                              kEmulatingDevice),
    EXECGRAPH_INTERCEPT(AllocateCommandBuffers,                                                  kEmulatingDevice),
    EXECGRAPH_INTERCEPT(FreeCommandBuffers,                                                      kEmulatingDevice),
    EXECGRAPH_INTERCEPT(DestroyCommandPool,                                                      kEmulatingDevice),
    EXECGRAPH_INTERCEPT(BeginCommandBuffer,                                                      kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CmdBindPipeline,                                                         kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CmdBindDescriptorSets,                                                   kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CmdPushConstants,                                                        kEmulatingDevice),
    EXECGRAPH_INTERCEPT(QueueSubmit,                                                             kEmulatingDevice),
    EXECGRAPH_INTERCEPT(QueueSubmit2,                                                            kEmulatingDevice),
    EXECGRAPH_INTERCEPT_ALIAS("vkQueueSubmit2KHR", QueueSubmit2,                                 kEmulatingDevice),
    EXECGRAPH_INTERCEPT(QueueWaitIdle,                                                           kEmulatingDevice),
    EXECGRAPH_INTERCEPT(DeviceWaitIdle,                                                          kEmulatingDevice),
    EXECGRAPH_INTERCEPT(WaitForFences,                                                           kEmulatingDevice),
    EXECGRAPH_INTERCEPT(GetFenceStatus,                                                          kEmulatingDevice),
    EXECGRAPH_INTERCEPT(WaitSemaphores,                                                          kEmulatingDevice),
    EXECGRAPH_INTERCEPT_ALIAS("vkWaitSemaphoresKHR", WaitSemaphores,                             kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CreateExecutionGraphPipelinesAMDX,                                       kEmulatingDevice),
    EXECGRAPH_INTERCEPT(GetExecutionGraphPipelineScratchSizeAMDX,                                kEmulatingDevice),
    EXECGRAPH_INTERCEPT(GetExecutionGraphPipelineNodeIndexAMDX,                                  kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CmdInitializeGraphScratchMemoryAMDX,                                     kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CmdDispatchGraphAMDX,                                                    kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CmdDispatchGraphIndirectAMDX,                                            kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CmdDispatchGraphIndirectCountAMDX,                                       kEmulatingDevice),
    EXECGRAPH_INTERCEPT(CreateCommandPool,                                                       kPreparedLevels),
    EXECGRAPH_INTERCEPT(UpdateDescriptorSets,                                                    kPreparedLevels),
    EXECGRAPH_INTERCEPT(UpdateDescriptorSetWithTemplate,                                         kPreparedLevels),
    EXECGRAPH_INTERCEPT_ALIAS("vkUpdateDescriptorSetWithTemplateKHR", UpdateDescriptorSetWithTemplate, kPreparedLevels),
    EXECGRAPH_INTERCEPT(FreeDescriptorSets,                                                      kPreparedLevels),
    EXECGRAPH_INTERCEPT(ResetDescriptorPool,                                                     kPreparedLevels),
    EXECGRAPH_INTERCEPT(DestroyDescriptorPool,                                                   kPreparedLevels),
    EXECGRAPH_INTERCEPT(CmdBeginQuery,                                                           kPreparedLevels),
    EXECGRAPH_INTERCEPT(CmdEndQuery,                                                             kPreparedLevels),
    EXECGRAPH_INTERCEPT(CmdBeginQueryIndexedEXT,                                                 kPreparedLevels),
    EXECGRAPH_INTERCEPT(CmdEndQueryIndexedEXT,                                                   kPreparedLevels),
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

PFN_vkVoidFunction FindDeviceIntercept(const char* name, bool device_emulates_shader_enqueue, bool device_prepares_levels) {
    const Intercept* intercept = FindIntercept(name);
    if (intercept == nullptr) return nullptr;
    switch (intercept->scope) {
        case InterceptScope::kInstance:
            return nullptr;
        case InterceptScope::kEveryDevice:
            return intercept->function;
        case InterceptScope::kEmulatingDevice:
            return device_emulates_shader_enqueue ? intercept->function : nullptr;
        case InterceptScope::kPreparedLevels:
            return device_emulates_shader_enqueue && device_prepares_levels ? intercept->function : nullptr;
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
    return EXECGRAPH_GUARDED(GetInstanceProcAddr)(instance, pName);
}

VK_LAYER_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char* pName) {
    return EXECGRAPH_GUARDED(GetDeviceProcAddr)(device, pName);
}

// Interface-version-0 introspection entry points; harmless on Linux and used by some tools.
VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateInstanceLayerProperties(uint32_t* pPropertyCount,
                                                                                  VkLayerProperties* pProperties) {
    return EXECGRAPH_GUARDED(EnumerateInstanceLayerProperties)(pPropertyCount, pProperties);
}

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateInstanceExtensionProperties(const char* pLayerName,
                                                                                      uint32_t* pPropertyCount,
                                                                                      VkExtensionProperties* pProperties) {
    return EXECGRAPH_GUARDED(EnumerateInstanceExtensionProperties)(pLayerName, pPropertyCount, pProperties);
}

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateDeviceLayerProperties(VkPhysicalDevice physicalDevice,
                                                                                uint32_t* pPropertyCount,
                                                                                VkLayerProperties* pProperties) {
    return EXECGRAPH_GUARDED(EnumerateDeviceLayerProperties)(physicalDevice, pPropertyCount, pProperties);
}

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateDeviceExtensionProperties(VkPhysicalDevice physicalDevice,
                                                                                    const char* pLayerName,
                                                                                    uint32_t* pPropertyCount,
                                                                                    VkExtensionProperties* pProperties) {
    return EXECGRAPH_GUARDED(EnumerateDeviceExtensionProperties)(physicalDevice, pLayerName, pPropertyCount, pProperties);
}

// Loader-layer interface version 2 (LoaderLayerInterface.md, "Layer Version Negotiation"). AMDX adds no
// physical-device commands, so there is no vk_layerGetPhysicalDeviceProcAddr.
VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* pVersionStruct) {
    if (pVersionStruct == nullptr || pVersionStruct->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT) return VK_ERROR_INITIALIZATION_FAILED;
    if (pVersionStruct->loaderLayerInterfaceVersion < 2) return VK_ERROR_INITIALIZATION_FAILED;
    pVersionStruct->loaderLayerInterfaceVersion = 2;
    pVersionStruct->pfnGetInstanceProcAddr = EXECGRAPH_GUARDED(GetInstanceProcAddr);
    pVersionStruct->pfnGetDeviceProcAddr = EXECGRAPH_GUARDED(GetDeviceProcAddr);
    pVersionStruct->pfnGetPhysicalDeviceProcAddr = nullptr;
    return VK_SUCCESS;
}

}  // extern "C"
