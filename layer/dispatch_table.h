// The functions of the next layer that execgraph calls, loaded once per instance and per device.
//
// Each list below is the single place a next-layer function is named; the tables and their loaders are generated from
// it, so adding a call down the chain is a one-line change.
#pragma once

#include <vulkan/vulkan.h>

#include "execgraph/vk_amdx_compat.h"

namespace execgraph {

// Instance-level (and physical-device-level) functions of the next layer.
#define EXECGRAPH_NEXT_INSTANCE_FUNCTIONS(X)      \
    X(DestroyInstance)                            \
    X(EnumeratePhysicalDevices)                   \
    X(EnumerateDeviceExtensionProperties)         \
    X(GetPhysicalDeviceProperties)                \
    X(GetPhysicalDeviceProperties2)               \
    X(GetPhysicalDeviceFeatures)                  \
    X(GetPhysicalDeviceFeatures2)                 \
    X(GetPhysicalDeviceQueueFamilyProperties)     \
    X(GetPhysicalDeviceMemoryProperties)          \
    X(CreateDebugUtilsMessengerEXT)               \
    X(DestroyDebugUtilsMessengerEXT)

// Device-level functions of the next layer. Loaded for every device the layer sees; the ones the emulation needs later
// (command recording, pipelines) are listed here too so that a device carries one complete table.
#define EXECGRAPH_NEXT_DEVICE_FUNCTIONS(X) \
    X(GetDeviceProcAddr)                   \
    X(DestroyDevice)                       \
    X(CreateBuffer)                        \
    X(DestroyBuffer)                       \
    X(GetBufferDeviceAddress)              \
    X(CreateShaderModule)                  \
    X(DestroyShaderModule)                 \
    X(CreateComputePipelines)              \
    X(DestroyPipeline)                     \
    X(CreatePipelineLayout)                \
    X(DestroyPipelineLayout)               \
    X(CmdBindPipeline)                     \
    X(CmdBindDescriptorSets)               \
    X(CmdPushConstants)                    \
    X(CmdDispatch)                         \
    X(CmdDispatchIndirect)                 \
    X(CmdPipelineBarrier)                  \
    X(CmdPipelineBarrier2)                 \
    X(CmdFillBuffer)                       \
    X(CmdUpdateBuffer)                     \
    X(CmdResetQueryPool)                   \
    X(CmdWriteTimestamp2)                  \
    X(CreateQueryPool)                     \
    X(DestroyQueryPool)                    \
    X(GetQueryPoolResults)                 \
    X(CmdBeginDebugUtilsLabelEXT)          \
    X(CmdEndDebugUtilsLabelEXT)            \
    X(SetDebugUtilsObjectNameEXT)          \
    X(AllocateCommandBuffers)              \
    X(FreeCommandBuffers)                  \
    X(BeginCommandBuffer)                  \
    X(EndCommandBuffer)                    \
    X(CreateCommandPool)                   \
    X(CmdExecuteCommands)                  \
    X(UpdateDescriptorSets)                \
    X(UpdateDescriptorSetWithTemplate)     \
    X(FreeDescriptorSets)                  \
    X(ResetDescriptorPool)                 \
    X(DestroyDescriptorPool)               \
    X(CmdBeginQuery)                       \
    X(CmdEndQuery)                         \
    X(CmdBeginQueryIndexedEXT)             \
    X(CmdEndQueryIndexedEXT)               \
    X(ResetCommandBuffer)                  \
    X(ResetCommandPool)                    \
    X(DestroyCommandPool)                  \
    X(GetBufferDeviceAddressKHR)           \
    X(GetBufferDeviceAddressEXT)           \
    X(GetBufferMemoryRequirements)         \
    X(AllocateMemory)                      \
    X(FreeMemory)                          \
    X(MapMemory)                           \
    X(BindBufferMemory)                    \
    X(CmdCopyBuffer)                       \
    X(QueueSubmit)                         \
    X(QueueSubmit2)                        \
    X(QueueWaitIdle)                       \
    X(DeviceWaitIdle)                      \
    X(WaitForFences)                       \
    X(GetFenceStatus)                      \
    X(WaitSemaphores)

struct InstanceDispatchTable {
    PFN_vkGetInstanceProcAddr GetInstanceProcAddr = nullptr;
#define EXECGRAPH_DECLARE_MEMBER(name) PFN_vk##name name = nullptr;
    EXECGRAPH_NEXT_INSTANCE_FUNCTIONS(EXECGRAPH_DECLARE_MEMBER)
};

struct DeviceDispatchTable {
    EXECGRAPH_NEXT_DEVICE_FUNCTIONS(EXECGRAPH_DECLARE_MEMBER)
#undef EXECGRAPH_DECLARE_MEMBER
};

// Fills the table from the next layer. Functions the next layer does not provide (extensions that were not enabled)
// stay null; callers check before use.
void LoadInstanceDispatchTable(VkInstance instance, PFN_vkGetInstanceProcAddr next_get_instance_proc_addr,
                               InstanceDispatchTable* table);
void LoadDeviceDispatchTable(VkDevice device, PFN_vkGetDeviceProcAddr next_get_device_proc_addr, DeviceDispatchTable* table);

// Dispatchable handles (instance, physical device, device, queue, command buffer) start with the loader's dispatch
// table pointer. Every handle of one device shares it, so it keys per-device state for command buffers and queues too.
using DispatchKey = void*;
template <typename DispatchableHandle>
DispatchKey GetDispatchKey(DispatchableHandle handle) {
    return *reinterpret_cast<DispatchKey*>(handle);
}

}  // namespace execgraph
