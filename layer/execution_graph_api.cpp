// The seven VK_AMDX_shader_enqueue commands on emulating devices.
//
// Pipelines, scratch and dispatch are built on the SPIR-V lowering and the scheduler. Until those are wired in, every
// command fails cleanly: an error VkResult where the command returns one, a skipped command otherwise, and always a
// debug-utils message naming the command, so nothing is silently dropped.
#include <string>

#include "intercepts.h"
#include "layer_state.h"

namespace execgraph::intercept {
namespace {

void ReportNotImplemented(const DeviceState& state, const char* command, MessageObject object) {
    state.messages().Emit(MessageSeverity::kError, message_id::kNotImplemented,
                          std::string(command) + " is not implemented yet by this version of the emulation layer", {object});
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateExecutionGraphPipelinesAMDX(VkDevice device, VkPipelineCache pipelineCache,
                                                                 uint32_t createInfoCount,
                                                                 const VkExecutionGraphPipelineCreateInfoAMDX* pCreateInfos,
                                                                 const VkAllocationCallbacks* pAllocator, VkPipeline* pPipelines) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    // Failed creation leaves every element VK_NULL_HANDLE (Vulkan spec, "Multiple Pipeline Creation").
    for (uint32_t i = 0; i < createInfoCount; ++i) pPipelines[i] = VK_NULL_HANDLE;
    ReportNotImplemented(*state, "vkCreateExecutionGraphPipelinesAMDX", ObjectOf(VK_OBJECT_TYPE_DEVICE, device));
    return VK_ERROR_UNKNOWN;
}

VKAPI_ATTR VkResult VKAPI_CALL GetExecutionGraphPipelineScratchSizeAMDX(VkDevice device, VkPipeline executionGraph,
                                                                        VkExecutionGraphPipelineScratchSizeAMDX* pSizeInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    ReportNotImplemented(*state, "vkGetExecutionGraphPipelineScratchSizeAMDX", ObjectOf(VK_OBJECT_TYPE_PIPELINE, executionGraph));
    return VK_ERROR_UNKNOWN;
}

VKAPI_ATTR VkResult VKAPI_CALL GetExecutionGraphPipelineNodeIndexAMDX(VkDevice device, VkPipeline executionGraph,
                                                                      const VkPipelineShaderStageNodeCreateInfoAMDX* pNodeInfo,
                                                                      uint32_t* pNodeIndex) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    ReportNotImplemented(*state, "vkGetExecutionGraphPipelineNodeIndexAMDX", ObjectOf(VK_OBJECT_TYPE_PIPELINE, executionGraph));
    return VK_ERROR_UNKNOWN;
}

VKAPI_ATTR void VKAPI_CALL CmdInitializeGraphScratchMemoryAMDX(VkCommandBuffer commandBuffer, VkPipeline executionGraph,
                                                               VkDeviceAddress scratch, VkDeviceSize scratchSize) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(commandBuffer));
    if (!state) return;
    ReportNotImplemented(*state, "vkCmdInitializeGraphScratchMemoryAMDX", ObjectOf(VK_OBJECT_TYPE_COMMAND_BUFFER, commandBuffer));
}

VKAPI_ATTR void VKAPI_CALL CmdDispatchGraphAMDX(VkCommandBuffer commandBuffer, VkDeviceAddress scratch, VkDeviceSize scratchSize,
                                                const VkDispatchGraphCountInfoAMDX* pCountInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(commandBuffer));
    if (!state) return;
    ReportNotImplemented(*state, "vkCmdDispatchGraphAMDX", ObjectOf(VK_OBJECT_TYPE_COMMAND_BUFFER, commandBuffer));
}

VKAPI_ATTR void VKAPI_CALL CmdDispatchGraphIndirectAMDX(VkCommandBuffer commandBuffer, VkDeviceAddress scratch,
                                                        VkDeviceSize scratchSize, const VkDispatchGraphCountInfoAMDX* pCountInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(commandBuffer));
    if (!state) return;
    ReportNotImplemented(*state, "vkCmdDispatchGraphIndirectAMDX", ObjectOf(VK_OBJECT_TYPE_COMMAND_BUFFER, commandBuffer));
}

VKAPI_ATTR void VKAPI_CALL CmdDispatchGraphIndirectCountAMDX(VkCommandBuffer commandBuffer, VkDeviceAddress scratch,
                                                             VkDeviceSize scratchSize, VkDeviceAddress countInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(commandBuffer));
    if (!state) return;
    ReportNotImplemented(*state, "vkCmdDispatchGraphIndirectCountAMDX", ObjectOf(VK_OBJECT_TYPE_COMMAND_BUFFER, commandBuffer));
}

}  // namespace execgraph::intercept
