// VK_LAYER_EXECGRAPH_test_capture: a pass-through layer for tests, placed below execgraph, that records the debug-utils
// label commands, compute pipeline binds, compute dispatches and pipeline barriers execgraph sends down, so a test can check what a
// debugger would see (RenderDoc and Nsight read the same command stream). The test process reads the record through
// CaptureEvents(), found with dlsym in the already-loaded library (capture_layer.h).
#include "capture_layer.h"

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

namespace {

using DispatchKey = void*;
template <typename Handle>
DispatchKey KeyOf(Handle handle) {
    return *reinterpret_cast<DispatchKey*>(handle);  // the loader's dispatch table pointer, shared by child objects
}

struct DeviceFunctions {
    PFN_vkGetDeviceProcAddr get_device_proc_addr = nullptr;
    PFN_vkDestroyDevice destroy_device = nullptr;
    PFN_vkCmdBeginDebugUtilsLabelEXT begin_label = nullptr;
    PFN_vkCmdEndDebugUtilsLabelEXT end_label = nullptr;
    PFN_vkCmdInsertDebugUtilsLabelEXT insert_label = nullptr;
    PFN_vkCmdBindPipeline bind_pipeline = nullptr;
    PFN_vkCmdDispatch dispatch = nullptr;
    PFN_vkCmdDispatchIndirect dispatch_indirect = nullptr;
    PFN_vkCmdPipelineBarrier pipeline_barrier = nullptr;
    PFN_vkCmdPipelineBarrier2 pipeline_barrier2 = nullptr;
    PFN_vkCmdPipelineBarrier2KHR pipeline_barrier2_khr = nullptr;
    PFN_vkCmdUpdateBuffer update_buffer = nullptr;
    PFN_vkCmdFillBuffer fill_buffer = nullptr;
};

std::mutex mutex;
std::map<DispatchKey, PFN_vkGetInstanceProcAddr> instances;  // next layer's vkGetInstanceProcAddr per instance
std::map<DispatchKey, DeviceFunctions> devices;
std::string events;
uint64_t update_buffer_bytes = 0;  // not an event: transfers inside a dispatch would change every structure test's list
uint64_t fill_buffer_commands = 0;  // the same
uint64_t indirect_barriers = 0;     // the same: barriers whose destination stages include DRAW_INDIRECT

void CountIndirectBarrier(bool indirect) {
    std::lock_guard lock(mutex);
    if (indirect) ++indirect_barriers;
}

bool DependencyWaitsInIndirect(const VkDependencyInfo* dependency) {
    for (uint32_t i = 0; i < dependency->memoryBarrierCount; ++i) {
        if (dependency->pMemoryBarriers[i].dstStageMask & VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT) return true;
    }
    for (uint32_t i = 0; i < dependency->bufferMemoryBarrierCount; ++i) {
        if (dependency->pBufferMemoryBarriers[i].dstStageMask & VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT) return true;
    }
    for (uint32_t i = 0; i < dependency->imageMemoryBarrierCount; ++i) {
        if (dependency->pImageMemoryBarriers[i].dstStageMask & VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT) return true;
    }
    return false;
}

DeviceFunctions DeviceOf(VkCommandBuffer command_buffer) {
    std::lock_guard lock(mutex);
    return devices[KeyOf(command_buffer)];
}

void Record(const std::string& event) {
    std::lock_guard lock(mutex);
    events += event + "\n";
}

template <typename CreateInfo>
auto* FindLink(const CreateInfo* create_info, VkStructureType type) {
    using Link =
        std::conditional_t<std::is_same_v<CreateInfo, VkInstanceCreateInfo>, VkLayerInstanceCreateInfo, VkLayerDeviceCreateInfo>;
    for (auto* node = static_cast<const VkBaseInStructure*>(create_info->pNext); node != nullptr; node = node->pNext) {
        auto* link = reinterpret_cast<Link*>(const_cast<VkBaseInStructure*>(node));
        if (node->sType == type && link->function == VK_LAYER_LINK_INFO) return link;
    }
    return static_cast<Link*>(nullptr);
}

VKAPI_ATTR VkResult VKAPI_CALL CreateInstance(const VkInstanceCreateInfo* create_info, const VkAllocationCallbacks* allocator,
                                              VkInstance* instance) {
    auto* link = FindLink(create_info, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
    if (link == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    auto create = reinterpret_cast<PFN_vkCreateInstance>(next(VK_NULL_HANDLE, "vkCreateInstance"));
    VkResult result = create(create_info, allocator, instance);
    if (result == VK_SUCCESS) {
        std::lock_guard lock(mutex);
        instances[KeyOf(*instance)] = next;
    }
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physical_device, const VkDeviceCreateInfo* create_info,
                                            const VkAllocationCallbacks* allocator, VkDevice* device) {
    auto* link = FindLink(create_info, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
    if (link == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_instance = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_device = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    auto create = reinterpret_cast<PFN_vkCreateDevice>(next_instance(VK_NULL_HANDLE, "vkCreateDevice"));
    VkResult result = create(physical_device, create_info, allocator, device);
    if (result != VK_SUCCESS) return result;
    DeviceFunctions functions;
    functions.get_device_proc_addr = next_device;
#define CAPTURE_LOAD(member, name) functions.member = reinterpret_cast<PFN_##name>(next_device(*device, #name));
    CAPTURE_LOAD(destroy_device, vkDestroyDevice)
    CAPTURE_LOAD(begin_label, vkCmdBeginDebugUtilsLabelEXT)
    CAPTURE_LOAD(end_label, vkCmdEndDebugUtilsLabelEXT)
    CAPTURE_LOAD(insert_label, vkCmdInsertDebugUtilsLabelEXT)
    CAPTURE_LOAD(bind_pipeline, vkCmdBindPipeline)
    CAPTURE_LOAD(dispatch, vkCmdDispatch)
    CAPTURE_LOAD(dispatch_indirect, vkCmdDispatchIndirect)
    CAPTURE_LOAD(pipeline_barrier, vkCmdPipelineBarrier)
    CAPTURE_LOAD(pipeline_barrier2, vkCmdPipelineBarrier2)
    CAPTURE_LOAD(pipeline_barrier2_khr, vkCmdPipelineBarrier2KHR)
    CAPTURE_LOAD(update_buffer, vkCmdUpdateBuffer)
    CAPTURE_LOAD(fill_buffer, vkCmdFillBuffer)
#undef CAPTURE_LOAD
    std::lock_guard lock(mutex);
    devices[KeyOf(*device)] = functions;
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* allocator) {
    if (device == VK_NULL_HANDLE) return;
    DeviceFunctions functions;
    {
        std::lock_guard lock(mutex);
        functions = devices[KeyOf(device)];
        devices.erase(KeyOf(device));
    }
    functions.destroy_device(device, allocator);
}

VKAPI_ATTR void VKAPI_CALL CmdBeginDebugUtilsLabelEXT(VkCommandBuffer command_buffer, const VkDebugUtilsLabelEXT* label) {
    Record(std::string("begin ") + label->pLabelName);
    DeviceOf(command_buffer).begin_label(command_buffer, label);
}

VKAPI_ATTR void VKAPI_CALL CmdEndDebugUtilsLabelEXT(VkCommandBuffer command_buffer) {
    Record("end");
    DeviceOf(command_buffer).end_label(command_buffer);
}

VKAPI_ATTR void VKAPI_CALL CmdInsertDebugUtilsLabelEXT(VkCommandBuffer command_buffer, const VkDebugUtilsLabelEXT* label) {
    Record(std::string("insert ") + label->pLabelName);
    DeviceOf(command_buffer).insert_label(command_buffer, label);
}

// "bind_pipeline <handle>" for compute binds, so a test can count binds and tell pipelines apart.
VKAPI_ATTR void VKAPI_CALL CmdBindPipeline(VkCommandBuffer command_buffer, VkPipelineBindPoint bind_point, VkPipeline pipeline) {
    if (bind_point == VK_PIPELINE_BIND_POINT_COMPUTE)
        Record("bind_pipeline " + std::to_string(reinterpret_cast<uint64_t>(pipeline)));
    DeviceOf(command_buffer).bind_pipeline(command_buffer, bind_point, pipeline);
}

VKAPI_ATTR void VKAPI_CALL CmdDispatch(VkCommandBuffer command_buffer, uint32_t x, uint32_t y, uint32_t z) {
    Record("dispatch");
    DeviceOf(command_buffer).dispatch(command_buffer, x, y, z);
}

VKAPI_ATTR void VKAPI_CALL CmdDispatchIndirect(VkCommandBuffer command_buffer, VkBuffer buffer, VkDeviceSize offset) {
    Record("dispatch_indirect");
    DeviceOf(command_buffer).dispatch_indirect(command_buffer, buffer, offset);
}

VKAPI_ATTR void VKAPI_CALL CmdPipelineBarrier(VkCommandBuffer command_buffer, VkPipelineStageFlags src_stages,
                                              VkPipelineStageFlags dst_stages, VkDependencyFlags flags,
                                              uint32_t memory_barrier_count, const VkMemoryBarrier* memory_barriers,
                                              uint32_t buffer_barrier_count, const VkBufferMemoryBarrier* buffer_barriers,
                                              uint32_t image_barrier_count, const VkImageMemoryBarrier* image_barriers) {
    Record("barrier");
    CountIndirectBarrier((dst_stages & VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT) != 0);
    DeviceOf(command_buffer)
        .pipeline_barrier(command_buffer, src_stages, dst_stages, flags, memory_barrier_count, memory_barriers,
                          buffer_barrier_count, buffer_barriers, image_barrier_count, image_barriers);
}

VKAPI_ATTR void VKAPI_CALL CmdPipelineBarrier2(VkCommandBuffer command_buffer, const VkDependencyInfo* dependency) {
    Record("barrier");
    CountIndirectBarrier(DependencyWaitsInIndirect(dependency));
    DeviceOf(command_buffer).pipeline_barrier2(command_buffer, dependency);
}

VKAPI_ATTR void VKAPI_CALL CmdPipelineBarrier2KHR(VkCommandBuffer command_buffer, const VkDependencyInfo* dependency) {
    Record("barrier");
    CountIndirectBarrier(DependencyWaitsInIndirect(dependency));
    DeviceOf(command_buffer).pipeline_barrier2_khr(command_buffer, dependency);
}

VKAPI_ATTR void VKAPI_CALL CmdUpdateBuffer(VkCommandBuffer command_buffer, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                                           const void* data) {
    {
        std::lock_guard lock(mutex);
        update_buffer_bytes += size;
    }
    DeviceOf(command_buffer).update_buffer(command_buffer, buffer, offset, size, data);
}

VKAPI_ATTR void VKAPI_CALL CmdFillBuffer(VkCommandBuffer command_buffer, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                                         uint32_t data) {
    {
        std::lock_guard lock(mutex);
        ++fill_buffer_commands;
    }
    DeviceOf(command_buffer).fill_buffer(command_buffer, buffer, offset, size, data);
}

PFN_vkVoidFunction DeviceIntercept(const char* name) {
#define CAPTURE_INTERCEPT(function) \
    if (std::strcmp(name, "vk" #function) == 0) return reinterpret_cast<PFN_vkVoidFunction>(&function);
    CAPTURE_INTERCEPT(DestroyDevice)
    CAPTURE_INTERCEPT(CmdBeginDebugUtilsLabelEXT)
    CAPTURE_INTERCEPT(CmdEndDebugUtilsLabelEXT)
    CAPTURE_INTERCEPT(CmdInsertDebugUtilsLabelEXT)
    CAPTURE_INTERCEPT(CmdBindPipeline)
    CAPTURE_INTERCEPT(CmdDispatch)
    CAPTURE_INTERCEPT(CmdDispatchIndirect)
    CAPTURE_INTERCEPT(CmdPipelineBarrier)
    CAPTURE_INTERCEPT(CmdPipelineBarrier2)
    CAPTURE_INTERCEPT(CmdPipelineBarrier2KHR)
    CAPTURE_INTERCEPT(CmdUpdateBuffer)
    CAPTURE_INTERCEPT(CmdFillBuffer)
#undef CAPTURE_INTERCEPT
    return nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* name) {
    if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&GetDeviceProcAddr);
    if (PFN_vkVoidFunction own = DeviceIntercept(name)) return own;
    std::lock_guard lock(mutex);
    auto found = devices.find(KeyOf(device));
    return found != devices.end() ? found->second.get_device_proc_addr(device, name) : nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetInstanceProcAddr(VkInstance instance, const char* name) {
    if (std::strcmp(name, "vkGetInstanceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&GetInstanceProcAddr);
    if (std::strcmp(name, "vkCreateInstance") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&CreateInstance);
    if (std::strcmp(name, "vkCreateDevice") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&CreateDevice);
    if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&GetDeviceProcAddr);
    if (PFN_vkVoidFunction own = DeviceIntercept(name)) return own;
    if (instance == VK_NULL_HANDLE) return nullptr;
    std::lock_guard lock(mutex);
    auto found = instances.find(KeyOf(instance));
    return found != instances.end() ? found->second(instance, name) : nullptr;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* interface) {
    if (interface == nullptr || interface->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT) return VK_ERROR_INITIALIZATION_FAILED;
    interface->pfnGetInstanceProcAddr = &GetInstanceProcAddr;
    interface->pfnGetDeviceProcAddr = &GetDeviceProcAddr;
    interface->pfnGetPhysicalDeviceProcAddr = nullptr;
    if (interface->loaderLayerInterfaceVersion > 2) interface->loaderLayerInterfaceVersion = 2;
    return VK_SUCCESS;
}

__attribute__((visibility("default"))) const char* ExecgraphCaptureEvents() {
    static std::string copy;
    std::lock_guard lock(mutex);
    copy = events;
    return copy.c_str();
}

__attribute__((visibility("default"))) void ExecgraphCaptureClear() {
    std::lock_guard lock(mutex);
    events.clear();
    update_buffer_bytes = 0;
    fill_buffer_commands = 0;
    indirect_barriers = 0;
}

__attribute__((visibility("default"))) uint64_t ExecgraphCaptureUpdateBufferBytes() {
    std::lock_guard lock(mutex);
    return update_buffer_bytes;
}

__attribute__((visibility("default"))) uint64_t ExecgraphCaptureFillBufferCommands() {
    std::lock_guard lock(mutex);
    return fill_buffer_commands;
}

__attribute__((visibility("default"))) uint64_t ExecgraphCaptureIndirectBarriers() {
    std::lock_guard lock(mutex);
    return indirect_barriers;
}

}  // extern "C"
