// The VK_AMDX_shader_enqueue commands on emulating devices, and the core pipeline commands that see graph objects.
#include <cstring>
#include <string>

#include "graph_dispatch.h"
#include "graph_pipeline_builder.h"
#include "intercepts.h"
#include "layer_state.h"

namespace execgraph::intercept {
namespace {

void ReportError(const DeviceState& state, const char* id, const std::string& text, MessageObject object) {
    state.messages().Emit(MessageSeverity::kError, id, text, {object});
}

VkPipeline HandleOf(const std::shared_ptr<GraphPipeline>& pipeline) { return reinterpret_cast<VkPipeline>(pipeline.get()); }

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateExecutionGraphPipelinesAMDX(VkDevice device, VkPipelineCache pipelineCache,
                                                                 uint32_t createInfoCount,
                                                                 const VkExecutionGraphPipelineCreateInfoAMDX* pCreateInfos,
                                                                 const VkAllocationCallbacks* pAllocator, VkPipeline* pPipelines) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult first_error = VK_SUCCESS;
    for (uint32_t i = 0; i < createInfoCount; ++i) {
        pPipelines[i] = VK_NULL_HANDLE;
        if (!state->shader_enqueue_feature_enabled) {
            ReportError(*state, message_id::kInvalidUsage,
                        "vkCreateExecutionGraphPipelinesAMDX: the shaderEnqueue feature was not enabled "
                        "(VUID-vkCreateExecutionGraphPipelinesAMDX-shaderEnqueue-09124)",
                        ObjectOf(VK_OBJECT_TYPE_DEVICE, device));
            first_error = VK_ERROR_UNKNOWN;
            break;
        }
        GraphBuildResult built = BuildExecutionGraphPipeline(*state, pipelineCache, pCreateInfos[i], pAllocator);
        if (built.result != VK_SUCCESS) {
            ReportError(*state, message_id::kPipelineCreation,
                        "vkCreateExecutionGraphPipelinesAMDX: pCreateInfos[" + std::to_string(i) + "]: " + built.error,
                        ObjectOf(VK_OBJECT_TYPE_DEVICE, device));
            if (first_error == VK_SUCCESS) first_error = built.result;
            if (pCreateInfos[i].flags & VK_PIPELINE_CREATE_EARLY_RETURN_ON_FAILURE_BIT) break;
            continue;
        }
        pPipelines[i] = HandleOf(built.pipeline);
        state->graph_pipelines.InsertOrAssign(pPipelines[i], std::move(built.pipeline));
    }
    return first_error;
}

// Compute pipelines flagged VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX are node libraries: they stay in the layer.
// Everything else goes to the driver in one call, keeping the application's batching and pipeline cache use.
VKAPI_ATTR VkResult VKAPI_CALL CreateComputePipelines(VkDevice device, VkPipelineCache pipelineCache, uint32_t createInfoCount,
                                                      const VkComputePipelineCreateInfo* pCreateInfos,
                                                      const VkAllocationCallbacks* pAllocator, VkPipeline* pPipelines) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    std::vector<VkComputePipelineCreateInfo> driver_infos;
    std::vector<uint32_t> driver_indices;
    VkResult first_error = VK_SUCCESS;
    for (uint32_t i = 0; i < createInfoCount; ++i) {
        pPipelines[i] = VK_NULL_HANDLE;
        const VkPipelineCreateFlags2KHR flags = EffectivePipelineFlags(pCreateInfos[i].pNext, pCreateInfos[i].flags);
        if (!(flags & VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX)) {
            if (state->amdx_shader_modules.Contains(pCreateInfos[i].stage.module)) {
                ReportError(*state, message_id::kInvalidUsage,
                            "vkCreateComputePipelines: pCreateInfos[" + std::to_string(i) +
                                "] uses a node shader (ShaderEnqueueAMDX) without VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX "
                                "(VUID-VkComputePipelineCreateInfo-flags-09178)",
                            ObjectOf(VK_OBJECT_TYPE_DEVICE, device));
                if (first_error == VK_SUCCESS) first_error = VK_ERROR_UNKNOWN;
                continue;
            }
            driver_infos.push_back(pCreateInfos[i]);
            driver_indices.push_back(i);
            continue;
        }
        if (!(flags & VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR)) {
            ReportError(*state, message_id::kInvalidUsage,
                        "vkCreateComputePipelines: pCreateInfos[" + std::to_string(i) +
                            "] has VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX without VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR",
                        ObjectOf(VK_OBJECT_TYPE_DEVICE, device));
            if (first_error == VK_SUCCESS) first_error = VK_ERROR_UNKNOWN;
            continue;
        }
        GraphBuildResult built = BuildNodeLibrary(*state, pCreateInfos[i]);
        if (built.result != VK_SUCCESS) {
            ReportError(*state, message_id::kPipelineCreation, "vkCreateComputePipelines: pCreateInfos[" + std::to_string(i) + "]: " + built.error,
                        ObjectOf(VK_OBJECT_TYPE_DEVICE, device));
            if (first_error == VK_SUCCESS) first_error = built.result;
            continue;
        }
        pPipelines[i] = HandleOf(built.pipeline);
        state->graph_pipelines.InsertOrAssign(pPipelines[i], std::move(built.pipeline));
    }
    if (!driver_infos.empty()) {
        std::vector<VkPipeline> created(driver_infos.size(), VK_NULL_HANDLE);
        VkResult result = state->dispatch.CreateComputePipelines(device, pipelineCache, static_cast<uint32_t>(driver_infos.size()),
                                                                 driver_infos.data(), pAllocator, created.data());
        for (size_t j = 0; j < created.size(); ++j) pPipelines[driver_indices[j]] = created[j];
        if (result != VK_SUCCESS && first_error == VK_SUCCESS) first_error = result;
    }
    return first_error;
}

VKAPI_ATTR void VKAPI_CALL DestroyPipeline(VkDevice device, VkPipeline pipeline, const VkAllocationCallbacks* pAllocator) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state || pipeline == VK_NULL_HANDLE) return;
    if (auto graph = state->graph_pipelines.Pop(pipeline)) {
        // Prepared secondaries bind its node pipelines, whose handles new pipelines may get.
        if (state->prepared_levels) state->prepared_levels->DropAll();
        (*graph)->Destroy(*state, pAllocator);
        return;
    }
    state->dispatch.DestroyPipeline(device, pipeline, pAllocator);
}

// Graph pipelines, node libraries and AMDX shader modules are layer objects: their handles must not reach the driver.
// A name given to a graph pipeline is kept and passed on to its lowered node pipelines as "<name>/<node>[<index>]" (with
// " and N more nodes" for a pipeline that nodes of an array share), so debuggers show which node a dispatch belongs to.
VKAPI_ATTR VkResult VKAPI_CALL SetDebugUtilsObjectNameEXT(VkDevice device, const VkDebugUtilsObjectNameInfoEXT* pNameInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state || state->dispatch.SetDebugUtilsObjectNameEXT == nullptr) return VK_ERROR_EXTENSION_NOT_PRESENT;
    if (pNameInfo->objectType == VK_OBJECT_TYPE_SHADER_MODULE &&
        state->amdx_shader_modules.Contains(reinterpret_cast<VkShaderModule>(pNameInfo->objectHandle))) {
        return VK_SUCCESS;
    }
    if (pNameInfo->objectType == VK_OBJECT_TYPE_PIPELINE) {
        if (auto graph = state->graph_pipelines.Find(reinterpret_cast<VkPipeline>(pNameInfo->objectHandle))) {
            (*graph)->debug_name = pNameInfo->pObjectName != nullptr ? pNameInfo->pObjectName : "";
            // Nodes lowered from the same source share a pipeline: it is named after the first, with the count of the rest.
            for (VkPipeline pipeline : (*graph)->lowered_pipelines) {
                const GraphNode* first = nullptr;
                size_t users = 0;
                for (const GraphNode& node : (*graph)->nodes) {
                    if (node.pipeline != pipeline) continue;
                    if (first == nullptr) first = &node;
                    ++users;
                }
                if (first == nullptr) continue;
                std::string node_name = (*graph)->debug_name + "/" + first->name + "[" + std::to_string(first->shader_index) + "]";
                if (users > 1) node_name += " and " + std::to_string(users - 1) + " more nodes";
                VkDebugUtilsObjectNameInfoEXT node_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
                node_info.objectType = VK_OBJECT_TYPE_PIPELINE;
                node_info.objectHandle = reinterpret_cast<uint64_t>(pipeline);
                node_info.pObjectName = node_name.c_str();
                state->dispatch.SetDebugUtilsObjectNameEXT(device, &node_info);
            }
            return VK_SUCCESS;
        }
    }
    return state->dispatch.SetDebugUtilsObjectNameEXT(device, pNameInfo);
}

VKAPI_ATTR VkResult VKAPI_CALL GetExecutionGraphPipelineScratchSizeAMDX(VkDevice device, VkPipeline executionGraph,
                                                                        VkExecutionGraphPipelineScratchSizeAMDX* pSizeInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    auto graph = state->graph_pipelines.Find(executionGraph);
    if (!graph || (*graph)->is_library) {
        ReportError(*state, message_id::kInvalidUsage, "vkGetExecutionGraphPipelineScratchSizeAMDX: executionGraph is not an execution graph pipeline",
                    ObjectOf(VK_OBJECT_TYPE_PIPELINE, executionGraph));
        return VK_ERROR_UNKNOWN;
    }
    pSizeInfo->minSize = (*graph)->scratch_size.minSize;
    pSizeInfo->maxSize = (*graph)->scratch_size.maxSize;
    pSizeInfo->sizeGranularity = (*graph)->scratch_size.sizeGranularity;
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL GetExecutionGraphPipelineNodeIndexAMDX(VkDevice device, VkPipeline executionGraph,
                                                                      const VkPipelineShaderStageNodeCreateInfoAMDX* pNodeInfo,
                                                                      uint32_t* pNodeIndex) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    auto graph = state->graph_pipelines.Find(executionGraph);
    if (!graph || (*graph)->is_library) {
        ReportError(*state, message_id::kInvalidUsage, "vkGetExecutionGraphPipelineNodeIndexAMDX: executionGraph is not an execution graph pipeline",
                    ObjectOf(VK_OBJECT_TYPE_PIPELINE, executionGraph));
        return VK_ERROR_UNKNOWN;
    }
    if (pNodeInfo == nullptr || pNodeInfo->pName == nullptr || pNodeInfo->index == VK_SHADER_INDEX_UNUSED_AMDX) {
        ReportError(*state, message_id::kInvalidUsage,
                    "vkGetExecutionGraphPipelineNodeIndexAMDX: pNodeInfo must name a node and give its index "
                    "(VUID-vkGetExecutionGraphPipelineNodeIndexAMDX-pNodeInfo-09140/09141)",
                    ObjectOf(VK_OBJECT_TYPE_PIPELINE, executionGraph));
        return VK_ERROR_UNKNOWN;
    }
    const std::vector<GraphNode>& nodes = (*graph)->nodes;
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        if (nodes[n].name == pNodeInfo->pName && nodes[n].shader_index == pNodeInfo->index) {
            *pNodeIndex = n;
            return VK_SUCCESS;
        }
    }
    ReportError(*state, message_id::kInvalidUsage,
                "vkGetExecutionGraphPipelineNodeIndexAMDX: the graph has no node \"" + std::string(pNodeInfo->pName) + "\"[" +
                    std::to_string(pNodeInfo->index) + "] (VUID-vkGetExecutionGraphPipelineNodeIndexAMDX-executionGraph-09142)",
                ObjectOf(VK_OBJECT_TYPE_PIPELINE, executionGraph));
    return VK_ERROR_UNKNOWN;
}

VKAPI_ATTR void VKAPI_CALL CmdInitializeGraphScratchMemoryAMDX(VkCommandBuffer commandBuffer, VkPipeline executionGraph,
                                                               VkDeviceAddress scratch, VkDeviceSize scratchSize) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(commandBuffer));
    if (!state) return;
    RecordInitializeScratch(*state, commandBuffer, executionGraph, scratch, scratchSize);
}

VKAPI_ATTR void VKAPI_CALL CmdDispatchGraphAMDX(VkCommandBuffer commandBuffer, VkDeviceAddress scratch, VkDeviceSize scratchSize,
                                                const VkDispatchGraphCountInfoAMDX* pCountInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(commandBuffer));
    if (!state) return;
    GraphEntries entries;
    entries.kind = GraphEntries::Kind::kHost;
    entries.host_count_info = pCountInfo;
    RecordGraphDispatch(*state, commandBuffer, scratch, scratchSize, entries, "vkCmdDispatchGraphAMDX");
}

VKAPI_ATTR void VKAPI_CALL CmdDispatchGraphIndirectAMDX(VkCommandBuffer commandBuffer, VkDeviceAddress scratch,
                                                        VkDeviceSize scratchSize, const VkDispatchGraphCountInfoAMDX* pCountInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(commandBuffer));
    if (!state) return;
    GraphEntries entries;
    entries.kind = GraphEntries::Kind::kDeviceInfos;
    entries.host_count_info = pCountInfo;
    RecordGraphDispatch(*state, commandBuffer, scratch, scratchSize, entries, "vkCmdDispatchGraphIndirectAMDX");
}

VKAPI_ATTR void VKAPI_CALL CmdDispatchGraphIndirectCountAMDX(VkCommandBuffer commandBuffer, VkDeviceAddress scratch,
                                                             VkDeviceSize scratchSize, VkDeviceAddress countInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(commandBuffer));
    if (!state) return;
    GraphEntries entries;
    entries.kind = GraphEntries::Kind::kDeviceCountInfo;
    entries.device_count_info = countInfo;
    RecordGraphDispatch(*state, commandBuffer, scratch, scratchSize, entries, "vkCmdDispatchGraphIndirectCountAMDX");
}

}  // namespace execgraph::intercept
