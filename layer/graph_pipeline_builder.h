// Builds execution graph pipelines and node libraries from the application's create infos.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>

#include "graph_pipeline.h"

namespace execgraph {

struct GraphBuildResult {
    VkResult result = VK_SUCCESS;
    std::string error;  // why creation failed, naming the node: reported through debug utils by the caller
    std::shared_ptr<GraphPipeline> pipeline;
};

GraphBuildResult BuildExecutionGraphPipeline(DeviceState& device, VkPipelineCache cache,
                                             const VkExecutionGraphPipelineCreateInfoAMDX& create_info,
                                             const VkAllocationCallbacks* allocator);

// A compute pipeline created with VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR | VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX:
// one node kept for later linking (facts §9, VUID-VkExecutionGraphPipelineCreateInfoAMDX-pLibraryInfo-10181).
GraphBuildResult BuildNodeLibrary(DeviceState& device, const VkComputePipelineCreateInfo& create_info);

// The 64-bit create flags of a pipeline: VkPipelineCreateFlags2CreateInfoKHR's when chained (it then replaces `flags`,
// facts §9), else the 32-bit flags.
VkPipelineCreateFlags2KHR EffectivePipelineFlags(const void* pnext, VkPipelineCreateFlags flags);

}  // namespace execgraph
