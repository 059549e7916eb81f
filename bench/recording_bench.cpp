// Host (CPU) time to record single Vulkan commands, command kind by command kind, to find which one a driver records
// slowly: recording one 32-level x 8-node vkCmdDispatchGraphAMDX through the layer costs 3.2 ms on the H100 machine
// against 0.26 ms for the baseline's 256 indirect dispatches (docs/performance.md, "Recording cost").
//
// Runs on the plain driver; with VK_INSTANCE_LAYERS naming VK_LAYER_EXECGRAPH_shader_enqueue the device enables the
// emulated VK_AMDX_shader_enqueue, so the driver sees the device the layer creates (its extra features on) and the
// layer's device-level intercepts are active. Nothing is submitted: each row records `count` commands into one command
// buffer, `iterations` times (reset, begin, record, end), and reports the median of the recording alone.
//
// Usage: execgraph_recording_bench [--json PATH] [--count N] [--iterations N] [--shader SPV] [--smoke]
//   EXECGRAPH_BENCH_SMOKE=1  few iterations (CTest on lavapipe)
// Exit status 1 when there is no device, a debug-utils error arrived (validation layer below), or a figure is not
// positive.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <functional>
#include <string>
#include <vector>

#include "bench_json.h"
#include "vulkan_test_support.h"

namespace execgraph::bench {
namespace {

const uint32_t kNoopShader[] = {
#include "recording_noop.inc"
};

constexpr uint32_t kPushRangeBytes = 128;
constexpr VkDeviceSize kLargeBufferBytes = 256ull << 20;  // like the layer's scratch at maxSize
constexpr VkDeviceSize kSmallBufferBytes = 64ull << 10;

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double Microseconds(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::micro>(to - from).count();
}

// The objects the recorded commands refer to. Buffers have device addresses, as the layer's scratch does.
struct Objects {
    VkDevice device = VK_NULL_HANDLE;
    VkDeviceMemory memory[2] = {};
    VkBuffer large = VK_NULL_HANDLE, small = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
    VkDescriptorSet sets[2] = {};
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipelines[2] = {};
    // --shader: the SPIR-V the dispatch rows' pipelines run instead of the no-op shader (entry point "main", set 0
    // binding 0 a storage buffer, push constants within 128 bytes), e.g. a lowered node from dump_shaders_path, to see
    // whether what a pipeline contains changes what its dispatches cost to record.
    std::vector<uint32_t> shader_words;
    // A secondary command buffer holding 32 mixed levels (Cases), recorded once with SIMULTANEOUS_USE: what a layer
    // that prepared a graph's level sequence ahead of time would execute per graph dispatch.
    VkCommandPool secondary_pool = VK_NULL_HANDLE;
    VkCommandBuffer secondary = VK_NULL_HANDLE;

    bool Create(VkPhysicalDevice physical_device, VkDevice device_handle);
    ~Objects();
};

VkBuffer CreateBuffer(VkPhysicalDevice physical_device, VkDevice device, VkDeviceSize size, VkDeviceMemory* memory) {
    VkBufferCreateInfo create_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create_info.size = size;
    create_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
                        VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                        VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    VkBuffer buffer = VK_NULL_HANDLE;
    if (vkCreateBuffer(device, &create_info, nullptr, &buffer) != VK_SUCCESS) return VK_NULL_HANDLE;
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(device, buffer, &requirements);
    VkPhysicalDeviceMemoryProperties properties;
    vkGetPhysicalDeviceMemoryProperties(physical_device, &properties);
    uint32_t type = UINT32_MAX;  // device-local if there is one
    for (uint32_t i = 0; i < properties.memoryTypeCount; ++i) {
        if (!(requirements.memoryTypeBits & (1u << i))) continue;
        if (type == UINT32_MAX || (properties.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) type = i;
        if (properties.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) break;
    }
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = type;
    if (vkAllocateMemory(device, &allocate, nullptr, memory) != VK_SUCCESS) return buffer;
    vkBindBufferMemory(device, buffer, *memory, 0);
    return buffer;
}

bool Objects::Create(VkPhysicalDevice physical_device, VkDevice device_handle) {
    device = device_handle;
    large = CreateBuffer(physical_device, device, kLargeBufferBytes, &memory[0]);
    small = CreateBuffer(physical_device, device, kSmallBufferBytes, &memory[1]);
    const VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 1;
    set_info.pBindings = &binding;
    vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout);
    const VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 2;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &pool_size;
    vkCreateDescriptorPool(device, &pool_info, nullptr, &descriptor_pool);
    const VkDescriptorSetLayout set_layouts[2] = {set_layout, set_layout};
    VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = descriptor_pool;
    allocate.descriptorSetCount = 2;
    allocate.pSetLayouts = set_layouts;
    if (vkAllocateDescriptorSets(device, &allocate, sets) != VK_SUCCESS) return false;
    for (VkDescriptorSet set : sets) {
        const VkDescriptorBufferInfo buffer_info{small, 0, VK_WHOLE_SIZE};
        VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.dstSet = set;
        write.descriptorCount = 1;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        write.pBufferInfo = &buffer_info;
        vkUpdateDescriptorSets(device, 1, &write, 0, nullptr);
    }
    const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushRangeBytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    vkCreatePipelineLayout(device, &layout_info, nullptr, &layout);
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = shader_words.empty() ? sizeof(kNoopShader) : shader_words.size() * sizeof(uint32_t);
    module_info.pCode = shader_words.empty() ? kNoopShader : shader_words.data();
    VkShaderModule module = VK_NULL_HANDLE;
    vkCreateShaderModule(device, &module_info, nullptr, &module);
    for (uint32_t variant = 0; variant < 2; ++variant) {
        const VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
        const VkSpecializationInfo specialization{1, &entry, sizeof(variant), &variant};
        VkComputePipelineCreateInfo create_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        create_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        create_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        create_info.stage.module = module;
        create_info.stage.pName = "main";
        create_info.stage.pSpecializationInfo = &specialization;
        create_info.layout = layout;
        vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &create_info, nullptr, &pipelines[variant]);
    }
    vkDestroyShaderModule(device, module, nullptr);
    return large && small && memory[0] && memory[1] && layout && pipelines[0] && pipelines[1];
}

Objects::~Objects() {
    if (device == VK_NULL_HANDLE) return;
    if (secondary_pool != VK_NULL_HANDLE) vkDestroyCommandPool(device, secondary_pool, nullptr);
    for (VkPipeline pipeline : pipelines) vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
    vkDestroyDescriptorPool(device, descriptor_pool, nullptr);
    vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
    for (VkBuffer buffer : {large, small}) vkDestroyBuffer(device, buffer, nullptr);
    for (VkDeviceMemory allocation : memory) vkFreeMemory(device, allocation, nullptr);
}

// A global memory barrier between compute passes, as the layer's scheduler records them (layer/scheduler.cpp):
// sync2 with `indirect` adds the indirect-argument read of the level's node dispatches.
void Barrier2(VkCommandBuffer cmd, bool indirect) {
    VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    barrier.srcStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
    barrier.srcAccessMask = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
    barrier.dstStageMask = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | (indirect ? VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT : 0);
    barrier.dstAccessMask = VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT |
                            (indirect ? VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT : 0);
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &barrier;
    vkCmdPipelineBarrier2(cmd, &dependency);
}

// The same with the legacy command, which SchedulerRecorder can record instead (layer/scheduler.cpp, Barrier): on the
// H200 host it took 0.19 µs against 0.32 to 0.35, on the H100 host 0.41 to 0.45 against 0.33 to 0.38 (docs/performance.md).
void Barrier1(VkCommandBuffer cmd, bool indirect) {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    barrier.dstAccessMask =
        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | (indirect ? VK_ACCESS_INDIRECT_COMMAND_READ_BIT : 0);
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | (indirect ? VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT : 0), 0, 1,
                         &barrier, 0, nullptr, 0, nullptr);
}

// One scheduler level of the layer (layer/scheduler.cpp, fused level pass) with 8 nodes: 22 commands.
void RecordMixedLevel(const Objects& o, VkCommandBuffer cmd) {
    static const uint32_t kPush[4] = {1, 2, 3, 4};
    auto push = [&o, cmd](uint32_t offset) { vkCmdPushConstants(cmd, o.layout, VK_SHADER_STAGE_COMPUTE_BIT, offset, 16, kPush); };
    Barrier2(cmd, false);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, o.pipelines[0]);
    push(0);
    vkCmdDispatch(cmd, 32, 1, 1);
    Barrier2(cmd, true);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, o.pipelines[1]);
    push(0);
    for (uint32_t node = 0; node < 8; ++node) {
        push(kPushRangeBytes - 16);
        vkCmdDispatchIndirect(cmd, o.large, node * sizeof(VkDispatchIndirectCommand));
    }
}

// Records Objects::secondary: 32 mixed levels, with the state they need bound first.
bool RecordSecondary(Objects& objects, uint32_t queue_family) {
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = queue_family;
    if (vkCreateCommandPool(objects.device, &pool_info, nullptr, &objects.secondary_pool) != VK_SUCCESS) return false;
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = objects.secondary_pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    allocate.commandBufferCount = 1;
    if (vkAllocateCommandBuffers(objects.device, &allocate, &objects.secondary) != VK_SUCCESS) return false;
    const VkCommandBufferInheritanceInfo inheritance{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    begin.pInheritanceInfo = &inheritance;
    vkBeginCommandBuffer(objects.secondary, &begin);
    const std::array<uint32_t, 32> push_all{};
    vkCmdBindPipeline(objects.secondary, VK_PIPELINE_BIND_POINT_COMPUTE, objects.pipelines[0]);
    vkCmdBindDescriptorSets(objects.secondary, VK_PIPELINE_BIND_POINT_COMPUTE, objects.layout, 0, 1, &objects.sets[0], 0, nullptr);
    vkCmdPushConstants(objects.secondary, objects.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 128, push_all.data());
    for (uint32_t l = 0; l < 32; ++l) RecordMixedLevel(objects, objects.secondary);
    return vkEndCommandBuffer(objects.secondary) == VK_SUCCESS;
}

struct Case {
    std::string name;
    uint32_t commands_per_unit;  // Vulkan commands one call of `record` records
    uint32_t units;
    std::function<void(VkCommandBuffer, uint32_t)> record;
    bool pool_reset = false;  // pool without RESET_COMMAND_BUFFER_BIT, reset by vkResetCommandPool
};

struct Row {
    std::string name;
    uint32_t commands = 0;
    double record_us = 0;           // median host time of the commands alone
    double reset_begin_end_us = 0;  // median host time of reset + begin + end around them
    double PerCommand() const { return record_us / commands; }
};

Row Measure(const Objects& objects, uint32_t queue_family, const Case& c, int iterations) {
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = c.pool_reset ? 0 : VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = queue_family;
    VkCommandPool pool = VK_NULL_HANDLE;
    vkCreateCommandPool(objects.device, &pool_info, nullptr, &pool);
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vkAllocateCommandBuffers(objects.device, &allocate, &cmd);
    const std::array<uint32_t, kPushRangeBytes / 4> push_all{};
    std::vector<double> record_samples, overhead_samples;
    for (int iteration = 0; iteration < iterations; ++iteration) {
        const auto reset = Clock::now();
        if (c.pool_reset) {
            vkResetCommandPool(objects.device, pool, 0);
        } else {
            vkResetCommandBuffer(cmd, 0);
        }
        const VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        vkBeginCommandBuffer(cmd, &begin);
        const auto begun = Clock::now();
        // Untimed: the state every dispatch needs (pipeline, set, all push constants), so that all rows are valid usage.
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, objects.pipelines[0]);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, objects.layout, 0, 1, &objects.sets[0], 0, nullptr);
        vkCmdPushConstants(cmd, objects.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushRangeBytes, push_all.data());
        const auto start = Clock::now();
        for (uint32_t unit = 0; unit < c.units; ++unit) c.record(cmd, unit);
        const auto end = Clock::now();
        vkEndCommandBuffer(cmd);
        const auto ended = Clock::now();
        record_samples.push_back(Microseconds(start, end));
        overhead_samples.push_back(Microseconds(reset, begun) + Microseconds(end, ended));
    }
    vkDestroyCommandPool(objects.device, pool, nullptr);
    return {c.name, c.commands_per_unit * c.units, Median(record_samples), Median(overhead_samples)};
}

std::vector<Case> Cases(const Objects& objects, uint32_t count) {
    static const uint32_t kPush[4] = {1, 2, 3, 4};
    const Objects* o = &objects;
    auto push = [o](VkCommandBuffer cmd, uint32_t offset) {
        vkCmdPushConstants(cmd, o->layout, VK_SHADER_STAGE_COMPUTE_BIT, offset, 16, kPush);
    };
    auto level = [o](VkCommandBuffer cmd, uint32_t) { RecordMixedLevel(*o, cmd); };
    const uint32_t levels = std::max(count / 8, 1u);  // 256 commands -> 32 levels, the graph of the 3.2 ms figure
    return {
        {"vkCmdPipelineBarrier (VkMemoryBarrier, compute->compute)", 1, count,
         [](VkCommandBuffer cmd, uint32_t) {
             VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
             barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
             barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
             vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier,
                                  0, nullptr, 0, nullptr);
         }},
        {"vkCmdPipelineBarrier2 (VkMemoryBarrier2, compute->compute)", 1, count,
         [](VkCommandBuffer cmd, uint32_t) { Barrier2(cmd, false); }},
        {"vkCmdPipelineBarrier2 (compute->compute|indirect)", 1, count, [](VkCommandBuffer cmd, uint32_t) { Barrier2(cmd, true); }},
        {"vkCmdPipelineBarrier (compute->compute|indirect)", 1, count, [](VkCommandBuffer cmd, uint32_t) { Barrier1(cmd, true); }},
        {"vkCmdBindPipeline (alternating two)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) { vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, o->pipelines[i % 2]); }},
        {"vkCmdPushConstants (16 B at offset 112 of 128)", 1, count, [push](VkCommandBuffer cmd, uint32_t) { push(cmd, 112); }},
        {"vkCmdPushConstants (16 B at offset 0)", 1, count, [push](VkCommandBuffer cmd, uint32_t) { push(cmd, 0); }},
        {"vkCmdDispatch (32x1x1)", 1, count, [](VkCommandBuffer cmd, uint32_t) { vkCmdDispatch(cmd, 32, 1, 1); }},
        {"vkCmdDispatchIndirect (256 MiB buffer)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) { vkCmdDispatchIndirect(cmd, o->large, (i % 4096) * 16); }},
        {"vkCmdDispatchIndirect (64 KiB buffer)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) { vkCmdDispatchIndirect(cmd, o->small, (i % 4096) * 16); }},
        {"vkCmdFillBuffer (16 B)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) { vkCmdFillBuffer(cmd, o->small, (i % 4096) * 16, 16, 0); }},
        {"vkCmdUpdateBuffer (256 B)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) {
             static const std::array<uint32_t, 64> data{};
             vkCmdUpdateBuffer(cmd, o->small, (i % 256) * 256, 256, data.data());
         }},
        // The begin transfers of a graph dispatch write up to 64 KiB of tables, node states and records through the
        // command buffer (layer/scheduler.cpp, HostLevelZero), where a fill or a copy would record a fixed-size command.
        {"vkCmdUpdateBuffer (4 KiB)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) {
             static const std::array<uint32_t, 1024> data{};
             vkCmdUpdateBuffer(cmd, o->small, (i % 16) * 4096, 4096, data.data());
         }},
        {"vkCmdUpdateBuffer (16 KiB)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) {
             static const std::array<uint32_t, 4096> data{};
             vkCmdUpdateBuffer(cmd, o->small, (i % 4) * 16384, 16384, data.data());
         }},
        {"vkCmdFillBuffer (16 KiB)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) { vkCmdFillBuffer(cmd, o->small, (i % 4) * 16384, 16384, 0); }},
        {"vkCmdCopyBuffer (16 KiB)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) {
             const VkBufferCopy region{0, (i % 4) * 16384, 16384};
             vkCmdCopyBuffer(cmd, o->large, o->small, 1, &region);
         }},
        {"vkCmdBindDescriptorSets (1 set, 1 storage buffer)", 1, count,
         [o](VkCommandBuffer cmd, uint32_t i) {
             vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, o->layout, 0, 1, &o->sets[i % 2], 0, nullptr);
         }},
        {"mixed level (22 commands, 8 indirect nodes)", 22, levels, level},
        {"vkCmdExecuteCommands (secondary: 32 mixed levels)", 1, 1,
         [o](VkCommandBuffer cmd, uint32_t) { vkCmdExecuteCommands(cmd, 1, &o->secondary); }},
        {"vkCmdExecuteCommands + rebind pipeline, set, 128 B push", 4, 1,
         [o](VkCommandBuffer cmd, uint32_t) {
             static const std::array<uint32_t, kPushRangeBytes / 4> all{};
             vkCmdExecuteCommands(cmd, 1, &o->secondary);
             vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, o->pipelines[0]);
             vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, o->layout, 0, 1, &o->sets[0], 0, nullptr);
             vkCmdPushConstants(cmd, o->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushRangeBytes, all.data());
         }},
        {"mixed level, vkResetCommandPool (no RESET_BUFFER_BIT)", 22, levels, level, true},
    };
}

std::string DriverVersion(uint32_t vendor_id, uint32_t version) {
    char text[32];
    if (vendor_id == 0x10de) {  // NVIDIA packs 10.8.8.6 bits
        std::snprintf(text, sizeof(text), "%u.%u.%u.%u", version >> 22, (version >> 14) & 0xff, (version >> 6) & 0xff,
                      version & 0x3f);
    } else {
        std::snprintf(text, sizeof(text), "%u.%u.%u", VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version),
                      VK_API_VERSION_PATCH(version));
    }
    return text;
}

int Run(int argc, char** argv) {
    const char* smoke_env = std::getenv("EXECGRAPH_BENCH_SMOKE");
    bool smoke = smoke_env != nullptr && std::strcmp(smoke_env, "0") != 0;
    std::string json_path, shader_path;
    int count = 0, iterations = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (arg == "--smoke") {
            smoke = true;
        } else if (value != nullptr && (arg == "--json" || arg == "--count" || arg == "--iterations" || arg == "--shader")) {
            ++i;
            if (arg == "--json") json_path = value;
            if (arg == "--shader") shader_path = value;
            if (arg == "--count") count = std::atoi(value);
            if (arg == "--iterations") iterations = std::atoi(value);
        } else {
            std::fprintf(stderr, "usage: %s [--json PATH] [--count N] [--iterations N] [--shader SPV] [--smoke]\n", argv[0]);
            return 2;
        }
    }
    if (count <= 0) count = smoke ? 32 : 256;
    if (iterations <= 0) iterations = smoke ? 5 : 50;

    test::MessageLog log;
    test::TestInstance instance(test::InstanceOptions{}, &log);
    const bool through_layer = instance.result() == VK_SUCCESS && instance.AdvertisesShaderEnqueue();
    // What the layer turns on for its own passes (layer/device_intercepts.cpp), so both modes create the same device.
    VkPhysicalDeviceVulkan13Features vulkan13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    vulkan13.synchronization2 = VK_TRUE;
    vulkan13.maintenance4 = VK_TRUE;  // glslang's SPIR-V 1.6 declares the workgroup size with LocalSizeId
    VkPhysicalDeviceVulkan12Features vulkan12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &vulkan13};
    vulkan12.bufferDeviceAddress = VK_TRUE;
    std::vector<uint32_t> shader_words;
    if (!shader_path.empty()) {
        // What lowered nodes need besides (the layer requires these of emulating devices).
        vulkan12.shaderBufferInt64Atomics = VK_TRUE;
        vulkan12.scalarBlockLayout = VK_TRUE;
        std::ifstream file(shader_path, std::ios::binary);
        std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        if (bytes.empty() || bytes.size() % 4 != 0) {
            std::fprintf(stderr, "%s: not a SPIR-V file\n", shader_path.c_str());
            return 2;
        }
        shader_words.resize(bytes.size() / 4);
        std::memcpy(shader_words.data(), bytes.data(), bytes.size());
    }
    VkPhysicalDeviceFeatures features{};
    features.shaderInt64 = shader_path.empty() ? VK_FALSE : VK_TRUE;
    test::DeviceOptions device_options{through_layer, through_layer, &vulkan12, &features};
    test::TestDevice device(instance, device_options);
    Objects objects;  // after the device: destroyed before it
    objects.shader_words = std::move(shader_words);
    if (device.result() != VK_SUCCESS || !objects.Create(instance.PhysicalDevice(), device.handle()) ||
        !RecordSecondary(objects, device.queue_family())) {
        std::fprintf(stderr, "no Vulkan 1.3 device with synchronization2, maintenance4 and bufferDeviceAddress: %s\n",
                     log.Problems().c_str());
        return 1;
    }
    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &driver};
    vkGetPhysicalDeviceProperties2(instance.PhysicalDevice(), &properties);
    const std::string device_name = properties.properties.deviceName;
    const std::string driver_text = std::string(driver.driverName) + " " + driver.driverInfo + " (driverVersion " +
                                    DriverVersion(properties.properties.vendorID, properties.properties.driverVersion) + ")";
    const char* layers = std::getenv("VK_INSTANCE_LAYERS");
    std::printf("device: %s\ndriver: %s\nthrough the layer: %s (VK_INSTANCE_LAYERS=%s)\npipelines run: %s\n", device_name.c_str(),
                driver_text.c_str(), through_layer ? "yes" : "no", layers ? layers : "",
                shader_path.empty() ? "the no-op shader" : shader_path.c_str());
    std::printf("host time to record; median of %d command buffers\n\n%-58s %8s %11s %11s %18s\n", iterations, "command",
                "commands", "record us", "us/command", "reset+begin+end us");

    std::vector<Row> rows;
    bool positive = true;
    for (const Case& c : Cases(objects, static_cast<uint32_t>(count))) {
        rows.push_back(Measure(objects, device.queue_family(), c, iterations));
        const Row& r = rows.back();
        std::printf("%-58s %8u %11.2f %11.4f %18.2f\n", r.name.c_str(), r.commands, r.record_us, r.PerCommand(),
                    r.reset_begin_end_us);
        positive = positive && r.record_us > 0 && r.reset_begin_end_us > 0;
    }

    if (!json_path.empty()) {
        std::ofstream json(json_path);
        json << "{\n  \"device_name\": " << JsonString(device_name) << ",\n  \"driver\": " << JsonString(driver_text)
             << ",\n  \"driver_version\": " << properties.properties.driverVersion
             << ",\n  \"through_layer\": " << (through_layer ? "true" : "false")
             << ",\n  \"instance_layers\": " << JsonString(layers ? layers : "") << ",\n  \"shader\": " << JsonString(shader_path)
             << ",\n  \"iterations\": " << iterations
             << ",\n  \"rows\": [\n";
        for (size_t i = 0; i < rows.size(); ++i) {
            const Row& r = rows[i];
            json << "    {\"name\": " << JsonString(r.name) << ", \"commands\": " << r.commands
                 << ", \"record_us\": " << JsonNumber(r.record_us) << ", \"us_per_command\": " << JsonNumber(r.PerCommand())
                 << ", \"reset_begin_end_us\": " << JsonNumber(r.reset_begin_end_us) << "}" << (i + 1 < rows.size() ? "," : "")
                 << "\n";
        }
        json << "  ]\n}\n";
        if (!json) {
            std::fprintf(stderr, "could not write %s\n", json_path.c_str());
            return 1;
        }
    }
    // Errors only: the loader itself warns that VK_INSTANCE_LAYERS added layers.
    size_t errors = 0;
    for (const test::MessageLog::Message& message : log.Messages()) {
        if (message.severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) continue;
        std::fprintf(stderr, "%s: %s\n", message.id.c_str(), message.text.c_str());
        ++errors;
    }
    if (errors > 0) return 1;
    if (!positive) {
        std::fprintf(stderr, "a figure is not positive: the timer or the recording loop is broken\n");
        return 1;
    }
    return 0;
}

}  // namespace
}  // namespace execgraph::bench

int main(int argc, char** argv) { return execgraph::bench::Run(argc, argv); }
