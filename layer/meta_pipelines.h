// The scheduler's meta-shader compute pipelines for one device (docs/design.md, "One graph dispatch"). Created on first
// use, cached for the device's lifetime, and destroyed with it (Destroy() from the layer's vkDestroyDevice, or the
// destructor). Safe to use from several threads recording command buffers at once, without a lock: see Get().
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "dispatch_table.h"

namespace execgraph {

// kLevelCheckingInitialization is level.comp specialized to check, as the entry pass does, that scratch was initialized
// for the graph: the first level pass of a dispatch whose level 0 the host wrote (layer/scheduler.cpp, HostLevelZero),
// level 0's or, where the host also prepared level 0 and rewrote only the tables it reads, level 1's. Every other level
// pass is kLevel, without the check's code. The *SmallGraph pair is the same two passes with shared arrays for
// kFusedLevelSmallGraphMaxNodes nodes (scheduler.h), for graphs of up to that many. kLevelListDirectoryGroup (and its
// *SmallGraph) is kLevel for levels whose record list is a dispatch group's directory (GraphPlan::list_directory_group),
// compiled without the scatter those levels never run.
enum class MetaShader : uint32_t {
    kEnqueueEntries,
    kPrepare,
    kScatter,
    kWriteArgs,
    kLevel,
    kFinish,
    kLevelCheckingInitialization,
    kLevelSmallGraph,
    kLevelCheckingInitializationSmallGraph,
    kLevelListDirectoryGroup,
    kLevelListDirectoryGroupSmallGraph,
    kCount
};

// Bytes of the one push-constant range every meta pipeline layout has (the largest meta shader block, 8-byte aligned;
// within the 128 bytes every device supports).
inline constexpr uint32_t kMetaPushConstantSize = 32;

class MetaPipelines {
  public:
    // `dispatch` must outlive this object (it is the device's own table). `level_workgroup_size` specializes the fused
    // level pass (LevelPassWorkgroupSizeFor in scheduler.h): at least 1, at most 256 (its shared arrays' bound).
    MetaPipelines(VkDevice device, const DeviceDispatchTable* dispatch, uint32_t level_workgroup_size = 256);
    ~MetaPipelines();
    MetaPipelines(const MetaPipelines&) = delete;
    MetaPipelines& operator=(const MetaPipelines&) = delete;

    // The pipeline for `shader`, creating the shared layout and the pipeline on first use. On failure returns the
    // VkResult of the failed creation and leaves *pipeline VK_NULL_HANDLE; a later call tries again.
    VkResult Get(MetaShader shader, VkPipeline* pipeline);
    // The push-constant-only layout shared by all meta pipelines (VK_NULL_HANDLE until the first successful Get).
    VkPipelineLayout layout() const;
    // Destroys everything created so far; Get() after Destroy() creates again. Not concurrent with Get().
    void Destroy();

  private:
    VkResult GetLayout(VkPipelineLayout* layout);

    VkDevice device_;
    const DeviceDispatchTable* dispatch_;
    uint32_t level_workgroup_size_;
    std::atomic<VkPipelineLayout> layout_{VK_NULL_HANDLE};
    std::array<std::atomic<VkPipeline>, static_cast<size_t>(MetaShader::kCount)> pipelines_{};
};

}  // namespace execgraph
