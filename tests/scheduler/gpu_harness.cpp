#include "gpu_harness.h"

#include <gtest/gtest.h>

#include <cstring>

namespace execgraph::test {

GpuHarness::GpuHarness() {
    VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT validation_features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    validation_features.enabledValidationFeatureCount = 1;
    validation_features.pEnabledValidationFeatures = enables;
    InstanceOptions options;
    options.layers = {kValidationLayerName};
    options.extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    options.extra_pnext = &validation_features;
    instance_ = std::make_unique<TestInstance>(options, &log_);
    if (instance_->result() != VK_SUCCESS) {
        error_ = "vkCreateInstance failed";
        return;
    }
    VkPhysicalDevice physical_device = instance_->PhysicalDevice();
    if (physical_device == VK_NULL_HANDLE) {
        error_ = "no physical device";
        return;
    }
    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, families.data());
    uint32_t family = 0;
    while (family < family_count && !(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;

    // What docs/design.md "Requirements" and scheduler.h ask of a device.
    VkPhysicalDeviceVulkan13Features vulkan13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    vulkan13.synchronization2 = VK_TRUE;
    VkPhysicalDeviceVulkan12Features vulkan12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &vulkan13};
    vulkan12.bufferDeviceAddress = VK_TRUE;
    vulkan12.shaderBufferInt64Atomics = VK_TRUE;
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vulkan12};
    features.features.shaderInt64 = VK_TRUE;
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    if (vkCreateDevice(physical_device, &device_info, nullptr, &device_) != VK_SUCCESS) {
        device_ = VK_NULL_HANDLE;
        error_ = "vkCreateDevice with bufferDeviceAddress, shaderInt64, shaderBufferInt64Atomics, synchronization2 failed";
        return;
    }
    // The table the scheduler records through: the loader's device functions stand in for the next layer's.
    LoadDeviceDispatchTable(device_, vkGetDeviceProcAddr, &table_);
    vkGetDeviceQueue(device_, family, 0, &queue_);
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = family;
    vkCreateCommandPool(device_, &pool_info, nullptr, &pool_);

    VkPhysicalDeviceMemoryProperties memory{};
    vkGetPhysicalDeviceMemoryProperties(physical_device, &memory);
    const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    memory_type_ = UINT32_MAX;
    for (uint32_t i = 0; i < memory.memoryTypeCount && memory_type_ == UINT32_MAX; ++i) {
        if ((memory.memoryTypes[i].propertyFlags & wanted) == wanted) memory_type_ = i;
    }
    if (memory_type_ == UINT32_MAX) error_ = "no host-visible coherent memory";
    memory_properties_ = memory;
    pipelines_ = std::make_unique<MetaPipelines>(device_, &table_);
    recorder_ = std::make_unique<SchedulerRecorder>(&table_, pipelines_.get());
}

GpuHarness::~GpuHarness() {
    if (device_ != VK_NULL_HANDLE) {
        vkDeviceWaitIdle(device_);
        pipelines_->Destroy();
        for (const Pipeline& pipeline : created_pipelines_) {
            vkDestroyPipeline(device_, pipeline.pipeline, nullptr);
            vkDestroyPipelineLayout(device_, pipeline.layout, nullptr);
        }
        vkDestroyCommandPool(device_, pool_, nullptr);
        vkDestroyDevice(device_, nullptr);
    }
    instance_.reset();
    EXPECT_EQ(log_.Problems(), "") << "validation messages were reported";
}

GpuBuffer GpuHarness::CreateBuffer(VkDeviceSize size) {
    GpuBuffer result;
    result.size = size;
    VkBufferCreateInfo buffer_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    buffer_info.size = size;
    buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                        VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    EXPECT_EQ(vkCreateBuffer(device_, &buffer_info, nullptr, &result.buffer), VK_SUCCESS);
    VkMemoryRequirements requirements{};
    vkGetBufferMemoryRequirements(device_, result.buffer, &requirements);
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = memory_type_;
    EXPECT_EQ(vkAllocateMemory(device_, &allocate, nullptr, &result.memory), VK_SUCCESS);
    vkBindBufferMemory(device_, result.buffer, result.memory, 0);
    void* mapped = nullptr;
    vkMapMemory(device_, result.memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    result.mapped = static_cast<uint8_t*>(mapped);
    std::memset(result.mapped, 0, size);
    VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address_info.buffer = result.buffer;
    result.address = vkGetBufferDeviceAddress(device_, &address_info);
    return result;
}

void GpuHarness::DestroyBuffer(GpuBuffer* buffer) {
    if (buffer->buffer == VK_NULL_HANDLE) return;
    vkDestroyBuffer(device_, buffer->buffer, nullptr);
    vkFreeMemory(device_, buffer->memory, nullptr);
    *buffer = GpuBuffer{};
}

void GpuHarness::Run(const std::function<void(VkCommandBuffer)>& record) {
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    ASSERT_EQ(vkAllocateCommandBuffers(device_, &allocate, &cmd), VK_SUCCESS);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &begin);
    record(cmd);
    // Host reads of the results.
    VkMemoryBarrier2 to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    to_host.srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    to_host.srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT;
    to_host.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
    to_host.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &to_host;
    vkCmdPipelineBarrier2(cmd, &dependency);
    ASSERT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    ASSERT_EQ(vkQueueSubmit(queue_, 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
    ASSERT_EQ(vkQueueWaitIdle(queue_), VK_SUCCESS);
    vkFreeCommandBuffers(device_, pool_, 1, &cmd);
}

GpuHarness::Pipeline GpuHarness::CreatePipeline(const uint32_t* words, size_t word_count, uint32_t push_size) {
    Pipeline result;
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    EXPECT_EQ(vkCreatePipelineLayout(device_, &layout_info, nullptr, &result.layout), VK_SUCCESS);
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = word_count * 4;
    module_info.pCode = words;
    VkShaderModule module = VK_NULL_HANDLE;
    EXPECT_EQ(vkCreateShaderModule(device_, &module_info, nullptr, &module), VK_SUCCESS);
    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = "main";
    pipeline_info.layout = result.layout;
    EXPECT_EQ(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &result.pipeline), VK_SUCCESS);
    vkDestroyShaderModule(device_, module, nullptr);
    created_pipelines_.push_back(result);
    return result;
}

}  // namespace execgraph::test
