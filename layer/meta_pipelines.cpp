#include "meta_pipelines.h"

#include "execgraph/meta_shaders.h"
#include "scheduler.h"  // kFusedLevelMaxNodes, kFusedLevelSmallGraphMaxNodes

namespace execgraph {
namespace {

struct ShaderCode {
    const uint32_t* words;
    const size_t* word_count;
};

ShaderCode CodeOf(MetaShader shader) {
    switch (shader) {
        case MetaShader::kEnqueueEntries:
            return {meta_shaders::kEnqueueEntriesSpv, &meta_shaders::kEnqueueEntriesSpvWords};
        case MetaShader::kPrepare:
            return {meta_shaders::kPrepareSpv, &meta_shaders::kPrepareSpvWords};
        case MetaShader::kScatter:
            return {meta_shaders::kScatterSpv, &meta_shaders::kScatterSpvWords};
        case MetaShader::kLevel:
        case MetaShader::kLevelCheckingInitialization:
        case MetaShader::kLevelSmallGraph:
        case MetaShader::kLevelCheckingInitializationSmallGraph:
        case MetaShader::kLevelListDirectoryGroup:
        case MetaShader::kLevelListDirectoryGroupSmallGraph:
            return {meta_shaders::kLevelSpv, &meta_shaders::kLevelSpvWords};
        case MetaShader::kFinish:
            return {meta_shaders::kFinishSpv, &meta_shaders::kFinishSpvWords};
        case MetaShader::kWriteArgs:
        case MetaShader::kCount:
            break;
    }
    return {meta_shaders::kWriteArgsSpv, &meta_shaders::kWriteArgsSpvWords};
}

}  // namespace

MetaPipelines::MetaPipelines(VkDevice device, const DeviceDispatchTable* dispatch, uint32_t level_workgroup_size)
    : device_(device), dispatch_(dispatch), level_workgroup_size_(level_workgroup_size) {}

MetaPipelines::~MetaPipelines() { Destroy(); }

VkPipelineLayout MetaPipelines::layout() const { return layout_.load(std::memory_order_acquire); }

// No lock is held while the next layer runs (a driver may take its own locks, or call back into the application's
// allocator and debug messengers): each object is created outside any lock and published with a compare-and-swap. Two
// threads that miss the cache at once both create it; the loser destroys its copy and uses the winner's.
VkResult MetaPipelines::GetLayout(VkPipelineLayout* layout) {
    *layout = layout_.load(std::memory_order_acquire);
    if (*layout != VK_NULL_HANDLE) return VK_SUCCESS;
    // Push constants only: meta shaders reach scratch and dispatch data through buffer device addresses, so the layer
    // allocates no descriptor sets behind the application's back.
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kMetaPushConstantSize};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    VkPipelineLayout created = VK_NULL_HANDLE;
    VkResult result = dispatch_->CreatePipelineLayout(device_, &layout_info, nullptr, &created);
    if (result != VK_SUCCESS) return result;
    VkPipelineLayout expected = VK_NULL_HANDLE;
    if (layout_.compare_exchange_strong(expected, created, std::memory_order_acq_rel)) {
        *layout = created;
    } else {
        dispatch_->DestroyPipelineLayout(device_, created, nullptr);
        *layout = expected;
    }
    return VK_SUCCESS;
}

VkResult MetaPipelines::Get(MetaShader shader, VkPipeline* pipeline) {
    *pipeline = VK_NULL_HANDLE;
    if (shader == MetaShader::kCount) return VK_ERROR_INITIALIZATION_FAILED;
    std::atomic<VkPipeline>& cached = pipelines_[static_cast<size_t>(shader)];
    *pipeline = cached.load(std::memory_order_acquire);
    if (*pipeline != VK_NULL_HANDLE) return VK_SUCCESS;

    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkResult result = GetLayout(&layout);
    if (result != VK_SUCCESS) return result;
    const ShaderCode code = CodeOf(shader);
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = *code.word_count * sizeof(uint32_t);
    module_info.pCode = code.words;
    VkShaderModule module = VK_NULL_HANDLE;
    result = dispatch_->CreateShaderModule(device_, &module_info, nullptr, &module);
    if (result != VK_SUCCESS) return result;

    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = "main";
    // level.comp's workgroup size is its specialization constant 0 (local_size_x_id), constant 1 switches on the
    // initialization check of a host-written level 0, constant 2 bounds its per-node shared arrays, and constant 3 makes
    // the variant of list-directory levels; the other meta shaders have none.
    const bool small_graph = shader == MetaShader::kLevelSmallGraph ||
                             shader == MetaShader::kLevelCheckingInitializationSmallGraph ||
                             shader == MetaShader::kLevelListDirectoryGroupSmallGraph;
    const bool checks_initialization =
        shader == MetaShader::kLevelCheckingInitialization || shader == MetaShader::kLevelCheckingInitializationSmallGraph;
    const bool list_directory_group =
        shader == MetaShader::kLevelListDirectoryGroup || shader == MetaShader::kLevelListDirectoryGroupSmallGraph;
    const struct {
        uint32_t workgroup_size;
        VkBool32 checks_initialization;
        uint32_t max_nodes;
        VkBool32 list_directory_group;
    } level_constants{level_workgroup_size_, checks_initialization ? VK_TRUE : VK_FALSE,
                      small_graph ? kFusedLevelSmallGraphMaxNodes : kFusedLevelMaxNodes, list_directory_group ? VK_TRUE : VK_FALSE};
    const VkSpecializationMapEntry level_entries[] = {
        {0, offsetof(decltype(level_constants), workgroup_size), sizeof(uint32_t)},
        {1, offsetof(decltype(level_constants), checks_initialization), sizeof(VkBool32)},
        {2, offsetof(decltype(level_constants), max_nodes), sizeof(uint32_t)},
        {3, offsetof(decltype(level_constants), list_directory_group), sizeof(VkBool32)}};
    const VkSpecializationInfo level_specialization{4, level_entries, sizeof(level_constants), &level_constants};
    if (shader == MetaShader::kLevel || shader == MetaShader::kLevelCheckingInitialization || small_graph || list_directory_group) {
        pipeline_info.stage.pSpecializationInfo = &level_specialization;
    }
    pipeline_info.layout = layout;
    VkPipeline created = VK_NULL_HANDLE;
    result = dispatch_->CreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &created);
    dispatch_->DestroyShaderModule(device_, module, nullptr);
    if (result != VK_SUCCESS) return result;
    VkPipeline expected = VK_NULL_HANDLE;
    if (cached.compare_exchange_strong(expected, created, std::memory_order_acq_rel)) {
        *pipeline = created;
    } else {
        dispatch_->DestroyPipeline(device_, created, nullptr);
        *pipeline = expected;
    }
    return VK_SUCCESS;
}

// Runs only while the device is being destroyed, when the application may not use it from any other thread.
void MetaPipelines::Destroy() {
    for (std::atomic<VkPipeline>& pipeline : pipelines_) {
        VkPipeline destroyed = pipeline.exchange(VK_NULL_HANDLE, std::memory_order_acq_rel);
        if (destroyed != VK_NULL_HANDLE) dispatch_->DestroyPipeline(device_, destroyed, nullptr);
    }
    VkPipelineLayout layout = layout_.exchange(VK_NULL_HANDLE, std::memory_order_acq_rel);
    if (layout != VK_NULL_HANDLE) dispatch_->DestroyPipelineLayout(device_, layout, nullptr);
}

}  // namespace execgraph
