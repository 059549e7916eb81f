// Per-instance, per-physical-device and per-device state of the layer, in concurrent maps keyed by dispatch key.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <string>

#include "concurrent_map.h"
#include "device_objects.h"
#include "dispatch_reports.h"
#include "dispatch_table.h"
#include "emulation_support.h"
#include "messages.h"
#include "meta_pipelines.h"
#include "prepared_levels.h"
#include "scheduler.h"
#include "settings.h"

namespace execgraph {

struct InstanceState {
    VkInstance instance = VK_NULL_HANDLE;
    uint32_t api_version = VK_API_VERSION_1_0;  // VkApplicationInfo::apiVersion the application asked for
    InstanceDispatchTable dispatch;
    LayerSettings settings;
    MessageSink messages;
    // The application enabled VK_EXT_debug_utils on this instance. The label commands belong to that extension, so the
    // layer records labels only then; their function pointers can be non-null without it (the loader's trampolines).
    bool debug_utils_enabled = false;

    // What each physical device can do, computed on first use: the answer never changes for a physical device.
    ConcurrentMap<VkPhysicalDevice, std::shared_ptr<const PhysicalDeviceSupport>> physical_device_support;

    const PhysicalDeviceSupport& SupportOf(VkPhysicalDevice physical_device);

    // True where the layer provides VK_AMDX_shader_enqueue itself on this physical device.
    bool EmulatesOn(VkPhysicalDevice physical_device) {
        const PhysicalDeviceSupport& support = SupportOf(physical_device);
        return support.CanEmulate() && (!support.native_shader_enqueue || settings.force_enable);
    }
};

struct DeviceState {
    VkDevice device = VK_NULL_HANDLE;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    std::shared_ptr<InstanceState> instance;
    DeviceDispatchTable dispatch;
    // The application enabled VK_AMDX_shader_enqueue and the layer implements it (the driver never sees it).
    bool emulates_shader_enqueue = false;
    // VkPhysicalDeviceShaderEnqueueFeaturesAMDX::shaderEnqueue as the application enabled it (VUID-...-shaderEnqueue-09124).
    bool shader_enqueue_feature_enabled = false;
    // VK_KHR_maintenance5 enabled by the application: only then may VkBufferUsageFlags2CreateInfoKHR reach the driver.
    bool maintenance5_enabled = false;

    // Objects of emulating devices (device_objects.h).
    ScratchBufferRegistry scratch_buffers;
    ConcurrentMap<VkShaderModule, std::shared_ptr<const AmdxShaderModule>> amdx_shader_modules;
    ConcurrentMap<VkPipelineLayout, std::shared_ptr<const PipelineLayoutInfo>> pipeline_layouts;
    ConcurrentMap<VkPipeline, std::shared_ptr<GraphPipeline>> graph_pipelines;  // execution graphs and node libraries
    ConcurrentMap<VkCommandBuffer, std::shared_ptr<CommandBufferState>> command_buffers;
    std::unique_ptr<MetaPipelines> meta_pipelines;  // the scheduler's pipelines, created on first use
    uint32_t level_pass_records_per_workgroup = kLevelPassRecordsPerWorkgroupGpu;  // LevelPassRecordsPerWorkgroupFor(the device's type)
    bool indirect_level_pass = false;  // LevelPassDispatchedIndirectlyFor(the device's type)
    // The `fixed_level_max_workgroups` setting, or FixedLevelMaxWorkgroupsFor(the device's type).
    uint32_t fixed_level_max_workgroups = kFixedLevelMaxWorkgroupsGpu;
    bool finish_pass_reports = true;   // the `report_pass` setting, or FinishPassReportsFor(the device's type)
    // The `direct_levels_max_producer_invocations` setting, or HandOffMaxInvocationsPerRecordFor(the device's type).
    std::optional<uint64_t> hand_off_max_invocations_per_record;
    // The `allocation_reservation` setting, or ReservesPerWorkgroupFor(the device's type).
    bool reserve_per_workgroup = true;
    // The `record_store_coalescing` setting, or CoalescesRecordStoresFor(the device's type).
    bool coalesce_record_stores = true;
    uint32_t thread_batch_size = kThreadBatchSizeGpu;  // the `thread_batch_size` setting, or ThreadBatchSizeFor(the device's type)
    uint32_t leaf_thread_batch_size = kLeafThreadBatchSize;  // the `thread_batch_size` setting, or kLeafThreadBatchSize
    std::unique_ptr<DispatchReporter> reporter;     // reports dropped work at the application's synchronisation points
    // The loader's vkSetDeviceLoaderData, for command buffers the layer allocates (prepared levels).
    PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
    // The `prepared_levels` setting on an emulating device (prepared_levels.h): the table that captures the levels'
    // commands, the cache of prepared secondaries, and the queue family of each of the application's command pools.
    // Null where the setting is off.
    std::unique_ptr<DeviceDispatchTable> capture_dispatch;
    std::unique_ptr<PreparedLevelCache> prepared_levels;
    ConcurrentMap<VkCommandPool, uint32_t> command_pool_families;
    // Numbers this device's execution graph pipelines 1, 2, ... in creation order: the "graph N" of shader dump file names
    // and debug labels (docs/debugging.md), stable across runs of a deterministic application.
    std::atomic<uint32_t> next_graph_number{1};

    const MessageSink& messages() const { return instance->messages; }
};

// Physical devices share their instance's dispatch key, so instance state is found from either handle.
std::shared_ptr<InstanceState> FindInstanceState(DispatchKey key);
void RegisterInstanceState(DispatchKey key, std::shared_ptr<InstanceState> state);
std::shared_ptr<InstanceState> UnregisterInstanceState(DispatchKey key);

// Devices, their queues and command buffers share the device's dispatch key.
std::shared_ptr<DeviceState> FindDeviceState(DispatchKey key);
void RegisterDeviceState(DispatchKey key, std::shared_ptr<DeviceState> state);
std::shared_ptr<DeviceState> UnregisterDeviceState(DispatchKey key);

// For the intercepts of commands recorded into a command buffer (vkCmd*, vkBeginCommandBuffer), which an application on
// an emulating device calls thousands of times per frame: the device's state without taking a reference, answered
// from a per-thread cache while nothing has changed. The device exists for the whole call, since destroying it while
// one of its command buffers is being recorded is invalid usage. A lookup through the map takes a shard's lock and a
// reference (four atomic read-modify-writes); the cache hit is one atomic load.
DeviceState* FindRecordingDeviceState(DispatchKey key);
// The generation the per-thread recording caches (FindRecordingDeviceState, and command_tracking.cpp's for command
// buffer states) are checked against, and its advance: called whenever a device is registered or unregistered, and
// whenever a command buffer's state is replaced or removed, after the change.
uint64_t RecordingCacheGeneration();
void InvalidateRecordingCaches();

}  // namespace execgraph
