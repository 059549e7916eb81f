#include "bench_device.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace execgraph::bench {

namespace {

constexpr VkBufferUsageFlags kWorkUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

double Median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

void FullBarrier(VkCommandBuffer cmd) {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_INDIRECT_COMMAND_READ_BIT |
                            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(
        cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier,
        0, nullptr, 0, nullptr);
}

BenchDevice::BenchDevice() {
    if (!context_.ok()) {
        std::fprintf(stderr, "no Vulkan device with VK_AMDX_shader_enqueue through the layer: %s\n",
                     context_.log().Problems().c_str());
        return;
    }
    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &driver};
    vkGetPhysicalDeviceProperties2(context_.physical_device(), &properties);
    description_.device_name = properties.properties.deviceName;
    description_.driver_name = driver.driverName;
    description_.driver_info = driver.driverInfo;
    description_.vendor_id = properties.properties.vendorID;
    description_.device_id = properties.properties.deviceID;
    description_.driver_version = properties.properties.driverVersion;
    description_.api_version = properties.properties.apiVersion;
    description_.timestamp_period_ns = properties.properties.limits.timestampPeriod;

    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(context_.physical_device(), &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(context_.physical_device(), &family_count, families.data());
    const uint32_t valid_bits = families[context_.queue_family()].timestampValidBits;
    if (valid_bits == 0) {
        std::fprintf(stderr, "the queue family has no timestamps (timestampValidBits = 0)\n");
        return;
    }
    timestamp_mask_ = valid_bits >= 64 ? ~0ull : (1ull << valid_bits) - 1;

    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = context_.queue_family();
    vkCreateCommandPool(device(), &pool_info, nullptr, &pool_);
    VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = 2;
    vkCreateQueryPool(device(), &query_info, nullptr, &queries_);
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vkCreateFence(device(), &fence_info, nullptr, &fence_);
    ok_ = pool_ != VK_NULL_HANDLE && queries_ != VK_NULL_HANDLE && fence_ != VK_NULL_HANDLE;
}

BenchDevice::~BenchDevice() {
    if (!context_.ok()) return;
    vkDeviceWaitIdle(device());
    for (TestBuffer* buffer : buffers_) {
        context_.Destroy(*buffer);
        delete buffer;
    }
    context_.Destroy(readback_);
    for (VkPipeline pipeline : pipelines_) vkDestroyPipeline(device(), pipeline, nullptr);
    if (fence_) vkDestroyFence(device(), fence_, nullptr);
    if (queries_) vkDestroyQueryPool(device(), queries_, nullptr);
    if (pool_) vkDestroyCommandPool(device(), pool_, nullptr);
}

TestBuffer& BenchDevice::Buffer(VkDeviceSize size) {
    buffers_.push_back(
        new TestBuffer(context_.CreateBuffer(std::max<VkDeviceSize>(size, 16), kWorkUsage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)));
    return *buffers_.back();
}

TestBuffer& BenchDevice::Scratch(VkPipeline graph) {
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    context_.vkGetExecutionGraphPipelineScratchSizeAMDX(device(), graph, &size);
    buffers_.push_back(new TestBuffer(context_.CreateBuffer(size.maxSize, VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX,
                                                            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)));
    TestBuffer& scratch = *buffers_.back();
    RunOnce(
        [&](VkCommandBuffer cmd) { context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size); });
    return scratch;
}

void BenchDevice::Release(TestBuffer& buffer) {
    auto found = std::find(buffers_.begin(), buffers_.end(), &buffer);
    if (found == buffers_.end()) return;
    context_.Destroy(buffer);
    delete *found;
    buffers_.erase(found);
}

VkCommandBuffer BenchDevice::Allocate() {
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vkAllocateCommandBuffers(device(), &allocate, &cmd);
    return cmd;
}

void BenchDevice::SubmitAndWait(VkCommandBuffer cmd) {
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    vkResetFences(device(), 1, &fence_);
    VkResult result = vkQueueSubmit(context_.queue(), 1, &submit, fence_);
    if (result == VK_SUCCESS) result = vkWaitForFences(device(), 1, &fence_, VK_TRUE, UINT64_MAX);
    if (result != VK_SUCCESS) {
        // Nothing after a lost device can be trusted; stop rather than report numbers.
        std::fprintf(stderr, "queue submission failed (VkResult %d): %s\n", result, context_.log().Problems().c_str());
        std::exit(1);
    }
}

void BenchDevice::RunOnce(const std::function<void(VkCommandBuffer)>& record) {
    VkCommandBuffer cmd = Allocate();
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &begin);
    record(cmd);
    VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0,
                         nullptr);
    vkEndCommandBuffer(cmd);
    SubmitAndWait(cmd);
    vkFreeCommandBuffers(device(), pool_, 1, &cmd);
}

std::vector<uint32_t> BenchDevice::Read(const TestBuffer& buffer, VkDeviceSize bytes) {
    if (readback_.size < bytes) {
        context_.Destroy(readback_);
        readback_ = context_.CreateBuffer(bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
    }
    RunOnce([&](VkCommandBuffer cmd) {
        FullBarrier(cmd);
        const VkBufferCopy copy{0, 0, bytes};
        vkCmdCopyBuffer(cmd, buffer.buffer, readback_.buffer, 1, &copy);
    });
    std::vector<uint32_t> words(bytes / sizeof(uint32_t));
    std::memcpy(words.data(), readback_.mapped, words.size() * sizeof(uint32_t));
    return words;
}

runtime::GraphHeader BenchDevice::ReadHeader(const TestBuffer& scratch) {
    std::vector<uint32_t> words = Read(scratch, sizeof(runtime::GraphHeader));
    runtime::GraphHeader header;
    std::memcpy(&header, words.data(), sizeof(header));
    return header;
}

VkPipeline BenchDevice::ComputePipeline(const uint32_t* code, size_t bytes, VkPipelineLayout layout) {
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = bytes;
    module_info.pCode = code;
    VkShaderModule module = VK_NULL_HANDLE;
    vkCreateShaderModule(device(), &module_info, nullptr, &module);
    VkComputePipelineCreateInfo create_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    create_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create_info.stage.module = module;
    create_info.stage.pName = "main";
    create_info.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    vkCreateComputePipelines(device(), VK_NULL_HANDLE, 1, &create_info, nullptr, &pipeline);
    vkDestroyShaderModule(device(), module, nullptr);
    if (pipeline != VK_NULL_HANDLE) pipelines_.push_back(pipeline);
    return pipeline;
}

Timing BenchDevice::Time(const std::function<void(VkCommandBuffer)>& prepare, const std::function<void(VkCommandBuffer)>& work,
                         int warmup, int runs) {
    VkCommandBuffer cmd = Allocate();
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cmd, &begin);
    vkCmdResetQueryPool(cmd, queries_, 0, 2);
    prepare(cmd);
    FullBarrier(cmd);
    // Bottom of pipe for both: the first is written once everything before it (the untimed preparation) has finished.
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 0);
    work(cmd);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
    VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                         0, 1, &to_host, 0, nullptr, 0, nullptr);
    vkEndCommandBuffer(cmd);
    std::vector<double> samples;
    for (int i = 0; i < warmup + runs; ++i) {
        SubmitAndWait(cmd);
        uint64_t stamps[2] = {};
        vkGetQueryPoolResults(device(), queries_, 0, 2, sizeof(stamps), stamps, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
        const uint64_t ticks = (stamps[1] - stamps[0]) & timestamp_mask_;
        if (i >= warmup) samples.push_back(ticks * description_.timestamp_period_ns * 1e-3);
    }
    vkFreeCommandBuffers(device(), pool_, 1, &cmd);
    Timing timing;
    if (samples.empty()) return timing;
    timing.median_us = Median(samples);
    timing.min_us = *std::min_element(samples.begin(), samples.end());
    timing.max_us = *std::max_element(samples.begin(), samples.end());
    return timing;
}

double BenchDevice::HostRecordMicroseconds(const std::function<void(VkCommandBuffer)>& prepare,
                                           const std::function<void(VkCommandBuffer)>& record, int runs) {
    VkCommandBuffer cmd = Allocate();
    std::vector<double> samples;
    for (int i = 0; i < runs; ++i) {
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        vkBeginCommandBuffer(cmd, &begin);
        prepare(cmd);
        const auto start = std::chrono::steady_clock::now();
        record(cmd);
        const auto end = std::chrono::steady_clock::now();
        vkEndCommandBuffer(cmd);
        vkResetCommandBuffer(cmd, 0);
        samples.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
    vkFreeCommandBuffers(device(), pool_, 1, &cmd);
    return Median(samples);
}

}  // namespace execgraph::bench
