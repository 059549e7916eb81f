// A Vulkan 1.3 device on lavapipe WITHOUT the execgraph layer (the scheduler is tested on its own, through a
// DeviceDispatchTable filled from the loader), with VK_LAYER_KHRONOS_validation and synchronization validation below it:
// every validation message fails the test.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dispatch_table.h"
#include "meta_pipelines.h"
#include "scheduler.h"
#include "vulkan_test_support.h"

namespace execgraph::test {

struct GpuBuffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceAddress address = 0;
    VkDeviceSize size = 0;
    uint8_t* mapped = nullptr;

    template <typename T>
    T* As(VkDeviceSize offset = 0) const {
        return reinterpret_cast<T*>(mapped + offset);
    }
};

class GpuHarness {
  public:
    GpuHarness();
    ~GpuHarness();
    GpuHarness(const GpuHarness&) = delete;
    GpuHarness& operator=(const GpuHarness&) = delete;

    // Empty when the device is usable; otherwise why not.
    const std::string& error() const { return error_; }
    VkDevice device() const { return device_; }
    const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_properties_; }
    const DeviceDispatchTable& table() const { return table_; }
    MetaPipelines& pipelines() { return *pipelines_; }
    SchedulerRecorder& recorder() { return *recorder_; }
    MessageLog& log() { return log_; }

    // Host-visible, coherent, zero-filled; usable as storage, indirect, transfer source/destination, by device address.
    GpuBuffer CreateBuffer(VkDeviceSize size);
    void DestroyBuffer(GpuBuffer* buffer);

    // Records with `record`, submits, and waits.
    void Run(const std::function<void(VkCommandBuffer)>& record);

    // A compute pipeline with a push-constant-only layout of `push_size` bytes.
    struct Pipeline {
        VkPipeline pipeline = VK_NULL_HANDLE;
        VkPipelineLayout layout = VK_NULL_HANDLE;
    };
    Pipeline CreatePipeline(const uint32_t* words, size_t word_count, uint32_t push_size);

  private:
    MessageLog log_;
    std::unique_ptr<TestInstance> instance_;
    std::string error_;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    uint32_t memory_type_ = 0;
    VkPhysicalDeviceMemoryProperties memory_properties_{};
    DeviceDispatchTable table_;
    std::unique_ptr<MetaPipelines> pipelines_;
    std::unique_ptr<SchedulerRecorder> recorder_;
    std::vector<Pipeline> created_pipelines_;
};

}  // namespace execgraph::test
