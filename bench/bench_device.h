// What every workload of bench/workload_bench.cpp needs from the device: one Vulkan device with the layer (no
// validation: the NVIDIA driver stops loading after a few dozen instances per process, and validation would distort
// the timings), device-local buffers, host read-back, scratch for a graph, and GPU timing with timestamp queries.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "execgraph/runtime/scratch_layout.h"
#include "graph_test_context.h"

namespace execgraph::bench {

using test::GraphTestContext;
using test::TestBuffer;

struct DeviceDescription {
    std::string device_name;
    std::string driver_name;
    std::string driver_info;
    uint32_t vendor_id = 0;
    uint32_t device_id = 0;
    uint32_t driver_version = 0;
    uint32_t api_version = 0;
    double timestamp_period_ns = 1.0;
};

// Median GPU time of the timed part of a command buffer, over `runs` submissions after `warmup` ones.
struct Timing {
    double median_us = 0;
    double min_us = 0;
    double max_us = 0;
};

class BenchDevice {
  public:
    BenchDevice();
    ~BenchDevice();
    BenchDevice(const BenchDevice&) = delete;
    BenchDevice& operator=(const BenchDevice&) = delete;

    bool ok() const { return ok_; }
    GraphTestContext& context() { return context_; }
    VkDevice device() const { return context_.device(); }
    const DeviceDescription& description() const { return description_; }

    // Device-local storage + indirect buffer with a device address; destroyed with the device or by Release.
    TestBuffer& Buffer(VkDeviceSize size);
    // Scratch for `graph`: maxSize from vkGetExecutionGraphPipelineScratchSizeAMDX (the most the layer uses), initialized.
    TestBuffer& Scratch(VkPipeline graph);
    void Release(TestBuffer& buffer);

    // Copies `bytes` from the start of `buffer` to the host.
    std::vector<uint32_t> Read(const TestBuffer& buffer, VkDeviceSize bytes);
    runtime::GraphHeader ReadHeader(const TestBuffer& scratch);

    // A compute pipeline from GLSL-compiled SPIR-V words.
    VkPipeline ComputePipeline(const uint32_t* code, size_t bytes, VkPipelineLayout layout);

    // Records `prepare` (untimed: clearing outputs), then `work` between two timestamps into one command buffer, and
    // submits it warmup + runs times, waiting for each.
    Timing Time(const std::function<void(VkCommandBuffer)>& prepare, const std::function<void(VkCommandBuffer)>& work, int warmup,
                int runs);
    // Records once and submits once (setup work).
    void RunOnce(const std::function<void(VkCommandBuffer)>& record);

    // Host time to record `record` into a command buffer after `prepare` (untimed), median of `runs` in microseconds.
    double HostRecordMicroseconds(const std::function<void(VkCommandBuffer)>& prepare,
                                  const std::function<void(VkCommandBuffer)>& record, int runs);

  private:
    VkCommandBuffer Allocate();
    void SubmitAndWait(VkCommandBuffer cmd);

    GraphTestContext context_{/*with_validation=*/false};
    bool ok_ = false;
    DeviceDescription description_;
    uint64_t timestamp_mask_ = ~0ull;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    TestBuffer readback_;
    std::vector<VkPipeline> pipelines_;
    std::vector<TestBuffer*> buffers_;
};

// A full memory dependency between everything recorded before and after (compute, transfer, indirect reads).
void FullBarrier(VkCommandBuffer cmd);

}  // namespace execgraph::bench
