#include "graph_test_context.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "amdx_assembler.h"

namespace execgraph::test {

namespace {

std::string ReadText(const char* environment_override, const char* built_in_folder, const std::string& name) {
    // The environment may point elsewhere when the binaries run on another machine than the one that built them.
    const char* folder = std::getenv(environment_override);
    const std::string path = std::string(folder != nullptr ? folder : built_in_folder) + "/" + name + ".spvasm";
    std::ifstream file(path);
    EXPECT_TRUE(file.good()) << "cannot read " << path;
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

}  // namespace

std::string ReadCorpus(const std::string& name) { return ReadText("EXECGRAPH_SPIRV_CORPUS_DIR", EXECGRAPH_SPIRV_CORPUS_DIR, name); }

std::string ReadModule(const std::string& name) { return ReadText("EXECGRAPH_E2E_MODULES_DIR", EXECGRAPH_E2E_MODULES_DIR, name); }

std::string WithUintConstant(std::string text, const std::string& name, uint32_t value) {
    const std::string definition = name + " = OpConstant %uint ";
    const size_t at = text.find(definition);
    if (at == std::string::npos) return text;  // the module fails to match its sink, and the test says so
    const size_t end = text.find('\n', at);
    text.replace(at, end - at, definition + std::to_string(value));
    return text;
}

std::vector<NodeStage> ArrayChainStages(uint32_t width, uint32_t levels, uint32_t chains, std::vector<std::string>* names) {
    names->clear();
    for (uint32_t level = 0; level < levels; ++level) names->push_back("L" + std::to_string(level));
    std::vector<NodeStage> stages;
    for (uint32_t level = 0; level < levels; ++level) {
        std::string text = ReadModule("array_chain_step");
        auto replace_all = [&text](const std::string& from, const std::string& to) {
            for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
                text.replace(at, from.size(), to);
        };
        replace_all("@NEXT@", "L" + std::to_string(level + 1));
        replace_all("@WIDTH@", std::to_string(width));
        replace_all("@CHAINS@", std::to_string(chains));
        std::istringstream lines(text);
        std::string line, kept;
        while (std::getline(lines, line)) {
            if (line.rfind("@O@", 0) == 0) {
                if (level + 1 == levels) continue;
                line.erase(0, 3);
            }
            kept += line + "\n";
        }
        for (uint32_t member = 0; member < width; ++member) stages.push_back({kept, "main", (*names)[level].c_str(), member});
    }
    return stages;
}

std::vector<std::vector<ArrayChainRecord>> ArrayChainEntryRecords(uint32_t width, uint32_t chains) {
    std::vector<std::vector<ArrayChainRecord>> records(width);
    for (uint32_t chain = 0; chain < chains; ++chain) records[chain % width].push_back({chain, 0});
    return records;
}

std::vector<uint32_t> ArrayChainExpectedUav(uint32_t width, uint32_t levels, uint32_t chains) {
    std::vector<uint32_t> uav(levels * chains);
    for (uint32_t level = 0; level < levels; ++level) {
        for (uint32_t chain = 0; chain < chains; ++chain) uav[level * chains + chain] = (chain + level) % width + 1;
    }
    return uav;
}

std::vector<NodeStage> UniformAllocateArrayStages(uint32_t pad_words) {
    const std::string sink = WithUintConstant(ReadModule("big_sink"), "%uint_255", pad_words);
    const std::string entry = WithUintConstant(ReadModule("uniform_allocate_array"), "%uint_31", pad_words);
    std::vector<NodeStage> stages{{entry, "main", "Entry"}};
    for (uint32_t member = 0; member < 4; ++member) stages.push_back({sink, "main", "B", member});
    return stages;
}

std::vector<NodeStage> ClassificationStages(uint32_t sinks, const char* sink_module) {
    // %uint_4 is the corpus module's PayloadNodeArraySizeAMDX, and only that.
    std::vector<NodeStage> stages{
        {WithUintConstant(ReadCorpus("output_node_array_runtime_index"), "%uint_4", sinks), "main", "Entry"}};
    const std::string sink = ReadModule(sink_module);
    for (uint32_t member = 0; member < sinks; ++member) stages.push_back({sink, "main", "B", member});
    return stages;
}

void AddStaticSinkRecord(std::vector<uint32_t>& expected, uint32_t member, uint32_t value) {
    expected[4 * member] += 6 * value;
    expected[4 * member + 1] += 6;
    expected[4 * member + 2] += 0x020202u;
}

GraphTestContext::GraphTestContext(const GraphTestOptions& test_options) {
    InstanceOptions options;
    options.layers = {kLayerName};
    options.layers.insert(options.layers.end(), test_options.layers_below.begin(), test_options.layers_below.end());
    if (!test_options.debug_utils) options.extensions.clear();
    // Synchronization validation checks every barrier the layer records between its meta passes and node dispatches:
    // a missing or too weak one is reported as a hazard and fails the test like any other message.
    VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT validation_features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    validation_features.enabledValidationFeatureCount = 1;
    validation_features.pEnabledValidationFeatures = enables;
    if (test_options.with_validation) {
        options.layers.push_back(kValidationLayerName);
        if (test_options.synchronization_validation) {
            options.extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
            options.extra_pnext = &validation_features;
        }
    }
    instance_ = std::make_unique<TestInstance>(options, &log_);
    if (instance_->result() != VK_SUCCESS) return;
    // DXC records with 16- or 64-bit members put Int16 / Int64 into the node modules the application creates, so the
    // application enables the matching core features, as a real one would (the validation layer checks it).
    VkPhysicalDeviceFeatures supported{};
    vkGetPhysicalDeviceFeatures(instance_->PhysicalDevice(), &supported);
    VkPhysicalDeviceFeatures features{};
    features.shaderInt16 = supported.shaderInt16;
    features.shaderInt64 = supported.shaderInt64;
    // LocalSizeId (DXC's [NumThreads] with spec constants) needs maintenance4, which the application must enable.
    VkPhysicalDeviceVulkan13Features supported13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceFeatures2 supported2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &supported13};
    vkGetPhysicalDeviceFeatures2(instance_->PhysicalDevice(), &supported2);
    VkPhysicalDeviceVulkan13Features features13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    features13.maintenance4 = supported13.maintenance4;
    DeviceOptions device_options;
    device_options.enabled_features = &features;
    device_options.extra_pnext = &features13;
    device_ = std::make_unique<TestDevice>(*instance_, device_options);
    if (device_->result() != VK_SUCCESS) return;
    vkGetDeviceQueue(device(), device_->queue_family(), 0, &queue_);
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = device_->queue_family();
    vkCreateCommandPool(device(), &pool_info, nullptr, &command_pool_);
#define EXECGRAPH_LOAD(name) name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device(), #name));
    EXECGRAPH_LOAD(vkCreateExecutionGraphPipelinesAMDX)
    EXECGRAPH_LOAD(vkGetExecutionGraphPipelineScratchSizeAMDX)
    EXECGRAPH_LOAD(vkGetExecutionGraphPipelineNodeIndexAMDX)
    EXECGRAPH_LOAD(vkCmdInitializeGraphScratchMemoryAMDX)
    EXECGRAPH_LOAD(vkCmdDispatchGraphAMDX)
    EXECGRAPH_LOAD(vkCmdDispatchGraphIndirectAMDX)
    EXECGRAPH_LOAD(vkCmdDispatchGraphIndirectCountAMDX)
#undef EXECGRAPH_LOAD
}

GraphTestContext::~GraphTestContext() {
    DestroyDevice();
    instance_.reset();
}

void GraphTestContext::DestroyDevice() {
    if (ok()) {
        vkDeviceWaitIdle(device());
        for (VkPipeline pipeline : pipelines_) vkDestroyPipeline(device(), pipeline, nullptr);
        for (VkShaderModule module : modules_) vkDestroyShaderModule(device(), module, nullptr);
        for (VkPipelineLayout layout : pipeline_layouts_) vkDestroyPipelineLayout(device(), layout, nullptr);
        for (VkDescriptorPool pool : descriptor_pools_) vkDestroyDescriptorPool(device(), pool, nullptr);
        for (VkDescriptorSetLayout set_layout : set_layouts_) vkDestroyDescriptorSetLayout(device(), set_layout, nullptr);
        if (command_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device(), command_pool_, nullptr);
    }
    pipelines_.clear();
    modules_.clear();
    pipeline_layouts_.clear();
    descriptor_pools_.clear();
    set_layouts_.clear();
    command_pool_ = VK_NULL_HANDLE;
    device_.reset();
}

uint32_t GraphTestContext::FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags flags) const {
    VkPhysicalDeviceMemoryProperties properties;
    vkGetPhysicalDeviceMemoryProperties(instance_->PhysicalDevice(), &properties);
    for (uint32_t i = 0; i < properties.memoryTypeCount; ++i) {
        if ((type_bits & (1u << i)) && (properties.memoryTypes[i].propertyFlags & flags) == flags) return i;
    }
    ADD_FAILURE() << "no memory type with flags " << flags;
    return 0;
}

TestBuffer GraphTestContext::CreateBuffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags memory) {
    TestBuffer result;
    result.size = size;
    VkBufferCreateInfo create_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create_info.size = size;
    create_info.usage =
        usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    EXPECT_EQ(vkCreateBuffer(device(), &create_info, nullptr, &result.buffer), VK_SUCCESS);
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(device(), result.buffer, &requirements);
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = FindMemoryType(requirements.memoryTypeBits, memory);
    EXPECT_EQ(vkAllocateMemory(device(), &allocate, nullptr, &result.memory), VK_SUCCESS);
    EXPECT_EQ(vkBindBufferMemory(device(), result.buffer, result.memory, 0), VK_SUCCESS);
    if (memory & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        EXPECT_EQ(vkMapMemory(device(), result.memory, 0, VK_WHOLE_SIZE, 0, &result.mapped), VK_SUCCESS);
        std::memset(result.mapped, 0, size);
    }
    VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address.buffer = result.buffer;
    result.address = vkGetBufferDeviceAddress(device(), &address);
    return result;
}

TestBuffer GraphTestContext::CreateScratch(VkDeviceSize size) {
    return CreateBuffer(size, VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX);
}

void GraphTestContext::Destroy(TestBuffer& buffer) {
    if (buffer.buffer == VK_NULL_HANDLE) return;
    vkDeviceWaitIdle(device());
    vkDestroyBuffer(device(), buffer.buffer, nullptr);
    vkFreeMemory(device(), buffer.memory, nullptr);
    buffer = {};
}

VkPipelineLayout GraphTestContext::CreateStorageBufferLayout(const std::vector<TestBuffer*>& buffers,
                                                             uint32_t push_constant_bytes) {
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (uint32_t i = 0; i < buffers.size(); ++i) {
        bindings.push_back({i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    }
    VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = static_cast<uint32_t>(bindings.size());
    set_info.pBindings = bindings.data();
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    EXPECT_EQ(vkCreateDescriptorSetLayout(device(), &set_info, nullptr, &set_layout), VK_SUCCESS);
    set_layouts_.push_back(set_layout);
    const VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                         std::max<uint32_t>(1, static_cast<uint32_t>(buffers.size()))};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &pool_size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    EXPECT_EQ(vkCreateDescriptorPool(device(), &pool_info, nullptr, &pool), VK_SUCCESS);
    descriptor_pools_.push_back(pool);
    VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    EXPECT_EQ(vkAllocateDescriptorSets(device(), &allocate, &descriptor_set_), VK_SUCCESS);
    std::vector<VkDescriptorBufferInfo> infos;
    for (TestBuffer* buffer : buffers) infos.push_back({buffer->buffer, 0, VK_WHOLE_SIZE});
    std::vector<VkWriteDescriptorSet> writes;
    for (uint32_t i = 0; i < buffers.size(); ++i) {
        VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.dstSet = descriptor_set_;
        write.dstBinding = i;
        write.descriptorCount = 1;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        write.pBufferInfo = &infos[i];
        writes.push_back(write);
    }
    vkUpdateDescriptorSets(device(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);

    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = push_constant_bytes > 0 ? 1 : 0;
    layout_info.pPushConstantRanges = &push;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    EXPECT_EQ(vkCreatePipelineLayout(device(), &layout_info, nullptr, &layout), VK_SUCCESS);
    pipeline_layouts_.push_back(layout);
    return layout;
}

VkShaderModule GraphTestContext::CreateNodeModule(const std::string& assembly) {
    AssembleResult assembled = AssembleAmdx(assembly);
    EXPECT_TRUE(assembled.error.empty()) << assembled.error;
    VkShaderModuleCreateInfo create_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    create_info.codeSize = assembled.words.size() * sizeof(uint32_t);
    create_info.pCode = assembled.words.data();
    VkShaderModule module = VK_NULL_HANDLE;
    EXPECT_EQ(vkCreateShaderModule(device(), &create_info, nullptr, &module), VK_SUCCESS);
    modules_.push_back(module);
    return module;
}

VkPipeline GraphTestContext::CreateGraph(const std::vector<NodeStage>& stages, VkPipelineLayout layout, VkResult* result_out) {
    return CreateGraphWith(stages, GraphOptions{}, layout, result_out);
}

VkPipeline GraphTestContext::CreateComputePipeline(const NodeStage& stage, VkPipelineLayout layout, bool as_graph_library,
                                                   VkResult* result_out) {
    VkPipelineCreateFlags2CreateInfoKHR flags{VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR};
    flags.flags = VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR | VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX;
    VkPipelineShaderStageNodeCreateInfoAMDX node_info{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, nullptr,
                                                      stage.node_name, stage.node_index};
    VkComputePipelineCreateInfo create_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create_info.pNext = as_graph_library ? &flags : nullptr;
    create_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    create_info.stage.pNext = as_graph_library ? &node_info : nullptr;
    create_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create_info.stage.module = CreateNodeModule(stage.assembly);
    create_info.stage.pName = stage.entry_point.c_str();
    create_info.stage.pSpecializationInfo = stage.specialization;
    create_info.layout = layout;
    create_info.basePipelineIndex = -1;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkResult result = vkCreateComputePipelines(device(), VK_NULL_HANDLE, 1, &create_info, nullptr, &pipeline);
    if (result_out) *result_out = result;
    if (result == VK_SUCCESS) pipelines_.push_back(pipeline);
    return pipeline;
}

VkPipeline GraphTestContext::CreateGraph(const std::vector<NodeStage>& stages, const std::vector<VkPipeline>& libraries,
                                         VkPipelineLayout layout, VkResult* result_out) {
    GraphOptions options;
    options.libraries = libraries;
    return CreateGraphWith(stages, options, layout, result_out);
}

VkPipeline GraphTestContext::CreateGraphWith(const std::vector<NodeStage>& stages, const GraphOptions& options,
                                             VkPipelineLayout layout, VkResult* result_out) {
    const std::vector<VkPipeline>& libraries = options.libraries;
    std::vector<VkPipelineShaderStageNodeCreateInfoAMDX> node_infos(stages.size());
    std::vector<VkPipelineShaderStageCreateInfo> stage_infos(stages.size());
    std::vector<std::vector<uint32_t>> inline_words(stages.size());
    std::vector<VkShaderModuleCreateInfo> inline_modules(stages.size());
    for (size_t i = 0; i < stages.size(); ++i) {
        node_infos[i] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, nullptr, stages[i].node_name,
                         stages[i].node_index};
        stage_infos[i] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        stage_infos[i].pNext = &node_infos[i];
        stage_infos[i].stage = VK_SHADER_STAGE_COMPUTE_BIT;
        if (options.inline_modules) {
            AssembleResult assembled = AssembleAmdx(stages[i].assembly);
            EXPECT_TRUE(assembled.error.empty()) << assembled.error;
            inline_words[i] = std::move(assembled.words);
            inline_modules[i] = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
            inline_modules[i].codeSize = inline_words[i].size() * sizeof(uint32_t);
            inline_modules[i].pCode = inline_words[i].data();
            node_infos[i].pNext = &inline_modules[i];
        } else {
            stage_infos[i].module = CreateNodeModule(stages[i].assembly);
        }
        stage_infos[i].pName = stages[i].entry_point.c_str();
        stage_infos[i].pSpecializationInfo = stages[i].specialization;
    }
    VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
    create_info.stageCount = static_cast<uint32_t>(stage_infos.size());
    create_info.pStages = stage_infos.data();
    VkPipelineLibraryCreateInfoKHR library_info{VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR};
    library_info.libraryCount = static_cast<uint32_t>(libraries.size());
    library_info.pLibraries = libraries.data();
    create_info.pLibraryInfo = libraries.empty() ? nullptr : &library_info;
    create_info.layout = layout;
    create_info.basePipelineIndex = -1;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkResult result = vkCreateExecutionGraphPipelinesAMDX(device(), options.cache, 1, &create_info, nullptr, &pipeline);
    if (result_out) *result_out = result;
    if (result == VK_SUCCESS) pipelines_.push_back(pipeline);
    return pipeline;
}

uint32_t GraphTestContext::NodeIndex(VkPipeline graph, const char* name, uint32_t index) {
    VkPipelineShaderStageNodeCreateInfoAMDX info{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, nullptr, name,
                                                 index};
    uint32_t node_index = ~0u;
    EXPECT_EQ(vkGetExecutionGraphPipelineNodeIndexAMDX(device(), graph, &info, &node_index), VK_SUCCESS) << name;
    return node_index;
}

void GraphTestContext::RecordOnly(const std::function<void(VkCommandBuffer)>& record) {
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = command_pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer command_buffer = VK_NULL_HANDLE;
    ASSERT_EQ(vkAllocateCommandBuffers(device(), &allocate, &command_buffer), VK_SUCCESS);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(command_buffer, &begin);
    record(command_buffer);
    vkEndCommandBuffer(command_buffer);
    vkFreeCommandBuffers(device(), command_pool_, 1, &command_buffer);
}

void GraphTestContext::Submit(const std::function<void(VkCommandBuffer)>& record) {
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = command_pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer command_buffer = VK_NULL_HANDLE;
    ASSERT_EQ(vkAllocateCommandBuffers(device(), &allocate, &command_buffer), VK_SUCCESS);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(command_buffer, &begin);
    record(command_buffer);
    // Make shader writes visible to the host reads that follow the wait.
    // (Vulkan 1.0 barrier: the test application does not enable synchronization2 itself.)
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr,
                         0, nullptr);
    ASSERT_EQ(vkEndCommandBuffer(command_buffer), VK_SUCCESS);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &command_buffer;
    ASSERT_EQ(vkQueueSubmit(queue_, 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
    ASSERT_EQ(vkQueueWaitIdle(queue_), VK_SUCCESS);
    vkFreeCommandBuffers(device(), command_pool_, 1, &command_buffer);
}

}  // namespace execgraph::test
