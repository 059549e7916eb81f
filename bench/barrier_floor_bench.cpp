// The driver's floor for one dependent step of a depth-by-depth scheduler: K dispatches, each reading what the one
// before it wrote, separated by barriers of different scopes, timed on the GPU. It answers which barrier a level with a
// known, small workgroup count should use: the layer's direct levels dispatch indirectly, which puts DRAW_INDIRECT
// (INDIRECT_COMMAND_READ) in the destination scope of every level's barrier, and an earlier A/B measured that bit at
// about 2.5 µs per level on an H100 (docs/performance.md, "What each change bought (2026-11-22)").
//
// Usage: execgraph_barrier_floor_bench [--json PATH] [--steps N] [--runs N]
//   EXECGRAPH_BENCH_SMOKE=1  few steps and runs (CTest on lavapipe)
// Each row is checked: the counter the steps increment must read steps after every run. Exit status 1 when a row's
// counter is wrong or there is no device.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_device.h"
#include "bench_json.h"

namespace execgraph::bench {
namespace {

const uint32_t kStepShader[] = {
#include "barrier_step.inc"
};

enum class Dispatch { kDirect, kIndirect };

struct Variant {
    const char* name;
    const char* description;
    Dispatch dispatch;
    uint32_t workgroups;              // direct dispatches: how many (only workgroup 0 works)
    bool barrier;                     // false: no barrier between steps (not dependent; the issue rate)
    VkPipelineStageFlags src_stages;  // the barrier's scopes
    VkPipelineStageFlags dst_stages;
    VkAccessFlags dst_access;
};

constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
constexpr VkPipelineStageFlags kIndirect = VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT;
constexpr VkAccessFlags kShaderAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;

const Variant kVariants[] = {
    {"direct_no_barrier", "vkCmdDispatch(1), no barrier", Dispatch::kDirect, 1, false, 0, 0, 0},
    {"direct_compute_barrier", "vkCmdDispatch(1) + barrier COMPUTE -> COMPUTE", Dispatch::kDirect, 1, true, kCompute, kCompute,
     kShaderAccess},
    {"direct_indirect_barrier", "vkCmdDispatch(1) + barrier COMPUTE -> COMPUTE|DRAW_INDIRECT", Dispatch::kDirect, 1, true, kCompute,
     kCompute | kIndirect, kShaderAccess | VK_ACCESS_INDIRECT_COMMAND_READ_BIT},
    {"indirect_layer_barrier",
     "vkCmdDispatchIndirect(1) + barrier COMPUTE|DRAW_INDIRECT -> COMPUTE|DRAW_INDIRECT (the layer's direct level)",
     Dispatch::kIndirect, 1, true, kCompute | kIndirect, kCompute | kIndirect, kShaderAccess | VK_ACCESS_INDIRECT_COMMAND_READ_BIT},
    {"direct_64_compute_barrier", "vkCmdDispatch(64), 63 returning at once, + barrier COMPUTE -> COMPUTE", Dispatch::kDirect, 64,
     true, kCompute, kCompute, kShaderAccess},
    {"direct_1024_compute_barrier", "vkCmdDispatch(1024), 1023 returning at once, + barrier COMPUTE -> COMPUTE", Dispatch::kDirect,
     1024, true, kCompute, kCompute, kShaderAccess},
};

int Run(int argc, char** argv) {
    const bool smoke = std::getenv("EXECGRAPH_BENCH_SMOKE") != nullptr;
    std::string json_path;
    uint32_t steps = smoke ? 16 : 250;
    int runs = smoke ? 3 : 21;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json_path = argv[++i];
        } else if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = static_cast<uint32_t>(std::max(1, std::atoi(argv[++i])));
        } else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: execgraph_barrier_floor_bench [--json PATH] [--steps N] [--runs N]\n");
            return 64;
        }
    }
    BenchDevice device;
    if (!device.ok()) return 1;
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(VkDeviceAddress)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    if (vkCreatePipelineLayout(device.device(), &layout_info, nullptr, &layout) != VK_SUCCESS) return 1;
    const VkPipeline pipeline = device.ComputePipeline(kStepShader, sizeof(kStepShader), layout);
    if (pipeline == VK_NULL_HANDLE) return 1;
    TestBuffer& data = device.Buffer(64);

    const DeviceDescription& description = device.description();
    std::string json = "{\"device\": " + JsonString(description.device_name) +
                       ", \"driver\": " + JsonString(description.driver_info) + ", \"steps\": " + std::to_string(steps) +
                       ", \"rows\": [";
    std::printf("%s (%s), %u dependent steps per row, median of %d runs\n", description.device_name.c_str(),
                description.driver_info.c_str(), steps, runs);
    bool all_right = true;
    for (size_t v = 0; v < std::size(kVariants); ++v) {
        const Variant& variant = kVariants[v];
        auto prepare = [&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, data.buffer, 0, 64, 0); };
        auto work = [&](VkCommandBuffer cmd) {
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(VkDeviceAddress), &data.address);
            for (uint32_t step = 0; step < steps; ++step) {
                // The first step's arguments: the preparation zeroed them, so write (1, 1, 1) before it as a step would.
                if (step == 0 && variant.dispatch == Dispatch::kIndirect) {
                    const uint32_t args[3] = {1, 1, 1};
                    vkCmdUpdateBuffer(cmd, data.buffer, 0, sizeof(args), args);
                    FullBarrier(cmd);
                }
                if (variant.dispatch == Dispatch::kIndirect) {
                    vkCmdDispatchIndirect(cmd, data.buffer, 0);
                } else {
                    vkCmdDispatch(cmd, variant.workgroups, 1, 1);
                }
                if (variant.barrier && step + 1 < steps) {
                    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
                    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
                    barrier.dstAccessMask = variant.dst_access;
                    vkCmdPipelineBarrier(cmd, variant.src_stages, variant.dst_stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
                }
            }
        };
        const Timing timing = device.Time(prepare, work, 2, runs);
        const uint32_t counter = device.Read(data, 32)[4];
        // Without barriers the steps race, so their count is only checked to be at least 1.
        const bool right = variant.barrier ? counter == steps : counter >= 1 && counter <= steps;
        all_right &= right;
        const double per_step = timing.median_us / steps;
        std::printf("  %-30s %8.3f us/step  (%s)%s\n", variant.name, per_step, variant.description, right ? "" : "  WRONG COUNTER");
        if (!right) std::fprintf(stderr, "%s: counter %u after %u steps\n", variant.name, counter, steps);
        json += std::string(v == 0 ? "" : ", ") + "{\"name\": " + JsonString(variant.name) +
                ", \"description\": " + JsonString(variant.description) + ", \"us_per_step\": " + std::to_string(per_step) +
                ", \"median_us\": " + std::to_string(timing.median_us) + ", \"min_us\": " + std::to_string(timing.min_us) +
                ", \"counter\": " + std::to_string(counter) + "}";
    }
    json += "]}\n";
    if (!json_path.empty()) std::ofstream(json_path) << json;
    vkDestroyPipelineLayout(device.device(), layout, nullptr);
    return all_right ? 0 : 1;
}

}  // namespace
}  // namespace execgraph::bench

int main(int argc, char** argv) { return execgraph::bench::Run(argc, argv); }
