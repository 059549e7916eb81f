#include "meta_pipelines.h"

#include "execgraph/meta_shaders.h"

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
            return {meta_shaders::kLevelSpv, &meta_shaders::kLevelSpvWords};
        case MetaShader::kWriteArgs:
        case MetaShader::kCount:
            break;
    }
    return {meta_shaders::kWriteArgsSpv, &meta_shaders::kWriteArgsSpvWords};
}

}  // namespace

MetaPipelines::MetaPipelines(VkDevice device, const DeviceDispatchTable* dispatch) : device_(device), dispatch_(dispatch) {}

MetaPipelines::~MetaPipelines() { Destroy(); }

VkPipelineLayout MetaPipelines::layout() const {
    std::lock_guard lock(mutex_);
    return layout_;
}

VkResult MetaPipelines::Get(MetaShader shader, VkPipeline* pipeline) {
    *pipeline = VK_NULL_HANDLE;
    if (shader == MetaShader::kCount) return VK_ERROR_INITIALIZATION_FAILED;
    // One lock for creation and lookup: creation happens a handful of times per device, and holding the lock while
    // the driver compiles keeps two threads from compiling the same shader.
    std::lock_guard lock(mutex_);
    VkPipeline& cached = pipelines_[static_cast<size_t>(shader)];
    if (cached != VK_NULL_HANDLE) {
        *pipeline = cached;
        return VK_SUCCESS;
    }
    if (layout_ == VK_NULL_HANDLE) {
        // Push constants only: meta shaders reach scratch and dispatch data through buffer device addresses, so the
        // layer allocates no descriptor sets behind the application's back.
        VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kMetaPushConstantSize};
        VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout_info.pushConstantRangeCount = 1;
        layout_info.pPushConstantRanges = &range;
        VkResult result = dispatch_->CreatePipelineLayout(device_, &layout_info, nullptr, &layout_);
        if (result != VK_SUCCESS) {
            layout_ = VK_NULL_HANDLE;
            return result;
        }
    }
    const ShaderCode code = CodeOf(shader);
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = *code.word_count * sizeof(uint32_t);
    module_info.pCode = code.words;
    VkShaderModule module = VK_NULL_HANDLE;
    VkResult result = dispatch_->CreateShaderModule(device_, &module_info, nullptr, &module);
    if (result != VK_SUCCESS) return result;

    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = "main";
    pipeline_info.layout = layout_;
    result = dispatch_->CreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &cached);
    dispatch_->DestroyShaderModule(device_, module, nullptr);
    if (result != VK_SUCCESS) {
        cached = VK_NULL_HANDLE;
        return result;
    }
    *pipeline = cached;
    return VK_SUCCESS;
}

void MetaPipelines::Destroy() {
    std::lock_guard lock(mutex_);
    for (VkPipeline& pipeline : pipelines_) {
        if (pipeline != VK_NULL_HANDLE) dispatch_->DestroyPipeline(device_, pipeline, nullptr);
        pipeline = VK_NULL_HANDLE;
    }
    if (layout_ != VK_NULL_HANDLE) dispatch_->DestroyPipelineLayout(device_, layout_, nullptr);
    layout_ = VK_NULL_HANDLE;
}

}  // namespace execgraph
