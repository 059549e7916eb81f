// Device creation and the core device commands that carry AMDX values on emulating devices.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph_pipeline.h"
#include "intercepts.h"
#include "layer_state.h"
#include "pnext_chain.h"

namespace execgraph::intercept {
namespace {

// A two-way enum setting with `auto` (layer/settings.h) as the flag it sets: true for `yes`, false for `no`, and what the
// device's type picks (`by_device`) for `auto`.
template <typename Setting>
bool SettingChoice(Setting value, Setting yes, Setting no, bool by_device) {
    if (value == yes) return true;
    if (value == no) return false;
    return by_device;
}

VkLayerDeviceCreateInfo* FindLayerDeviceCreateInfo(const VkDeviceCreateInfo* create_info, VkLayerFunction function) {
    for (auto* node = static_cast<const VkBaseInStructure*>(create_info->pNext); node != nullptr; node = node->pNext) {
        if (node->sType != VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO) continue;
        auto* layer_info = reinterpret_cast<VkLayerDeviceCreateInfo*>(const_cast<VkBaseInStructure*>(node));
        if (layer_info->function == function) return layer_info;
    }
    return nullptr;
}

VkLayerDeviceCreateInfo* FindLayerLinkInfo(const VkDeviceCreateInfo* create_info) {
    return FindLayerDeviceCreateInfo(create_info, VK_LAYER_LINK_INFO);
}

// A Vulkan 1.1/1.2 feature the emulation turns on. It lives either in the VkPhysicalDeviceVulkan1XFeatures structure or
// in its own narrow structure; chaining both forms is invalid (VUID-VkDeviceCreateInfo-pNext-02829/02830), so it is set
// where the application put it, else in a narrow structure the layer adds.
struct PromotedFeature {
    VkStructureType core_type;
    size_t core_offset;
    VkStructureType narrow_type;
    size_t narrow_offset;
    size_t narrow_size;
    bool PhysicalDeviceSupport::*supported;  // enabled only where the device has it (null: required, always there)
};

#define EXECGRAPH_PROMOTED_FEATURE(core, core_member, narrow, narrow_member, supported)                                    \
    PromotedFeature {                                                                                                     \
        core##_TYPE, offsetof(core##_STRUCT, core_member), narrow##_TYPE, offsetof(narrow##_STRUCT, narrow_member),       \
            sizeof(narrow##_STRUCT), supported                                                                            \
    }
#define VULKAN11_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES
#define VULKAN11_STRUCT VkPhysicalDeviceVulkan11Features
#define VULKAN12_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES
#define VULKAN12_STRUCT VkPhysicalDeviceVulkan12Features
#define VULKAN13_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES
#define VULKAN13_STRUCT VkPhysicalDeviceVulkan13Features
#define SYNC2_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES
#define SYNC2_STRUCT VkPhysicalDeviceSynchronization2Features
#define ADDRESS_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES
#define ADDRESS_STRUCT VkPhysicalDeviceBufferDeviceAddressFeatures
#define ATOMIC64_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES
#define ATOMIC64_STRUCT VkPhysicalDeviceShaderAtomicInt64Features
#define SCALAR_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SCALAR_BLOCK_LAYOUT_FEATURES
#define SCALAR_STRUCT VkPhysicalDeviceScalarBlockLayoutFeatures
#define STORAGE16_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES
#define STORAGE16_STRUCT VkPhysicalDevice16BitStorageFeatures
#define STORAGE8_TYPE VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES
#define STORAGE8_STRUCT VkPhysicalDevice8BitStorageFeatures

// Payloads are reached through buffer device addresses, records keep DXC's scalar layout (so scalarBlockLayout), the
// scheduler records synchronization2 barriers, and
// records with 16- or 8-bit members need the matching storage features (emulation_support.h).
const PromotedFeature kPromotedFeatures[] = {
    EXECGRAPH_PROMOTED_FEATURE(VULKAN12, bufferDeviceAddress, ADDRESS, bufferDeviceAddress, nullptr),
    EXECGRAPH_PROMOTED_FEATURE(VULKAN12, shaderBufferInt64Atomics, ATOMIC64, shaderBufferInt64Atomics, nullptr),
    EXECGRAPH_PROMOTED_FEATURE(VULKAN12, scalarBlockLayout, SCALAR, scalarBlockLayout, nullptr),
    EXECGRAPH_PROMOTED_FEATURE(VULKAN13, synchronization2, SYNC2, synchronization2, nullptr),
    EXECGRAPH_PROMOTED_FEATURE(VULKAN11, storageBuffer16BitAccess, STORAGE16, storageBuffer16BitAccess,
                               &PhysicalDeviceSupport::storage_buffer_16bit_access),
    EXECGRAPH_PROMOTED_FEATURE(VULKAN12, storageBuffer8BitAccess, STORAGE8, storageBuffer8BitAccess,
                               &PhysicalDeviceSupport::storage_buffer_8bit_access),
};
#undef EXECGRAPH_PROMOTED_FEATURE

// Everything the driver must see in place of what the application asked for, when the layer emulates AMDX on a device.
// Owns the copies; the in-place edits of the application's chain are undone when this goes out of scope.
struct EmulatedDeviceCreateInfo {
    VkDeviceCreateInfo create_info{};
    std::vector<const char*> extensions;
    VkPhysicalDeviceFeatures enabled_features{};
    std::vector<std::unique_ptr<uint8_t[]>> added_structures;  // narrow feature structures the layer chains in
    ScopedChainEdits edits;
};

// Removes the extension and its feature structure, and turns on the features the emulation itself uses
// (emulation_support.h). Turning a feature on changes nothing the application can observe: it only allows more.
void PrepareEmulatedDeviceCreateInfo(const VkDeviceCreateInfo& original, const PhysicalDeviceSupport& support,
                                     EmulatedDeviceCreateInfo* emulated) {
    emulated->create_info = original;
    for (uint32_t i = 0; i < original.enabledExtensionCount; ++i) {
        if (std::strcmp(original.ppEnabledExtensionNames[i], VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) != 0) {
            emulated->extensions.push_back(original.ppEnabledExtensionNames[i]);
        }
    }
    emulated->create_info.enabledExtensionCount = static_cast<uint32_t>(emulated->extensions.size());
    emulated->create_info.ppEnabledExtensionNames = emulated->extensions.data();

    ScopedChainEdits& edits = emulated->edits;
    const void** head = &emulated->create_info.pNext;
    edits.Unlink(head, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX);

    void* application_chain = const_cast<void*>(*head);
    for (const PromotedFeature& feature : kPromotedFeatures) {
        if (feature.supported != nullptr && !(support.*feature.supported)) continue;
        uint8_t* holder = nullptr;
        size_t offset = 0;
        if (auto* core = FindInChain<VkBaseOutStructure>(application_chain, feature.core_type)) {
            holder = reinterpret_cast<uint8_t*>(core);
            offset = feature.core_offset;
        } else if (auto* narrow = FindInChain<VkBaseOutStructure>(const_cast<void*>(*head), feature.narrow_type)) {
            holder = reinterpret_cast<uint8_t*>(narrow);
            offset = feature.narrow_offset;
        } else {
            emulated->added_structures.push_back(std::make_unique<uint8_t[]>(feature.narrow_size));
            holder = emulated->added_structures.back().get();
            std::memset(holder, 0, feature.narrow_size);
            reinterpret_cast<VkBaseOutStructure*>(holder)->sType = feature.narrow_type;
            edits.Prepend(head, reinterpret_cast<VkBaseOutStructure*>(holder));
            offset = feature.narrow_offset;
        }
        edits.Set<VkBool32>(reinterpret_cast<VkBool32*>(holder + offset), VK_TRUE);
    }

    // shaderInt64 lives in VkPhysicalDeviceFeatures2 if chained, else in pEnabledFeatures (VUID-VkDeviceCreateInfo-pNext-00373).
    if (auto* features2 = FindInChain<VkPhysicalDeviceFeatures2>(const_cast<void*>(*head), VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)) {
        edits.Set<VkBool32>(&features2->features.shaderInt64, VK_TRUE);
    } else {
        if (original.pEnabledFeatures != nullptr) emulated->enabled_features = *original.pEnabledFeatures;
        emulated->enabled_features.shaderInt64 = VK_TRUE;
        emulated->create_info.pEnabledFeatures = &emulated->enabled_features;
    }
}

bool RequestsShaderEnqueue(const VkDeviceCreateInfo& create_info) {
    for (uint32_t i = 0; i < create_info.enabledExtensionCount; ++i) {
        if (std::strcmp(create_info.ppEnabledExtensionNames[i], VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) == 0) return true;
    }
    return false;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreateDevice(VkPhysicalDevice physicalDevice, const VkDeviceCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkDevice* pDevice) {
    std::shared_ptr<InstanceState> instance = FindInstanceState(GetDispatchKey(physicalDevice));
    VkLayerDeviceCreateInfo* link_info = FindLayerLinkInfo(pCreateInfo);
    if (!instance || link_info == nullptr || link_info->u.pLayerInfo == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr next_get_instance_proc_addr = link_info->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_get_device_proc_addr = link_info->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    auto next_create_device =
        reinterpret_cast<PFN_vkCreateDevice>(next_get_instance_proc_addr(instance->instance, "vkCreateDevice"));
    if (next_create_device == nullptr) return VK_ERROR_INITIALIZATION_FAILED;

    const bool requested = RequestsShaderEnqueue(*pCreateInfo);
    const bool emulate = requested && instance->EmulatesOn(physicalDevice);
    if (requested && !emulate && !instance->SupportOf(physicalDevice).native_shader_enqueue) {
        // Only reachable when the application ignored vkEnumerateDeviceExtensionProperties, which did not list it.
        instance->messages.Emit(MessageSeverity::kError, message_id::kEmulationUnavailable,
                                "VK_AMDX_shader_enqueue cannot be emulated on this device: " +
                                    instance->SupportOf(physicalDevice).missing_requirement,
                                {ObjectOf(VK_OBJECT_TYPE_PHYSICAL_DEVICE, physicalDevice)});
        return VK_ERROR_EXTENSION_NOT_PRESENT;
    }

    bool shader_enqueue_feature = false;
    if (auto* features = FindInChain<VkPhysicalDeviceShaderEnqueueFeaturesAMDX>(
            pCreateInfo->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX)) {
        shader_enqueue_feature = features->shaderEnqueue == VK_TRUE;
    }

    link_info->u.pLayerInfo = link_info->u.pLayerInfo->pNext;  // LLP_LAYER_13: the next layer sees its own link
    VkResult result;
    if (emulate) {
        EmulatedDeviceCreateInfo emulated;
        PrepareEmulatedDeviceCreateInfo(*pCreateInfo, instance->SupportOf(physicalDevice), &emulated);
        result = next_create_device(physicalDevice, &emulated.create_info, pAllocator, pDevice);
    } else {
        result = next_create_device(physicalDevice, pCreateInfo, pAllocator, pDevice);
    }
    if (result != VK_SUCCESS) return result;

    auto state = std::make_shared<DeviceState>();
    state->device = *pDevice;
    state->physical_device = physicalDevice;
    state->instance = instance;
    state->emulates_shader_enqueue = emulate;
    state->shader_enqueue_feature_enabled = shader_enqueue_feature;
    for (uint32_t i = 0; i < pCreateInfo->enabledExtensionCount; ++i) {
        if (std::strcmp(pCreateInfo->ppEnabledExtensionNames[i], "VK_KHR_maintenance5") == 0) state->maintenance5_enabled = true;
    }
    LoadDeviceDispatchTable(*pDevice, next_get_device_proc_addr, &state->dispatch);
    if (emulate) {
        state->meta_pipelines = std::make_unique<MetaPipelines>(*pDevice, &state->dispatch,
                                                                LevelPassWorkgroupSizeFor(instance->SupportOf(physicalDevice).device_type));
        const uint32_t records_per_workgroup = instance->settings.level_pass_records_per_workgroup;
        state->level_pass_records_per_workgroup = records_per_workgroup != 0
                                                      ? records_per_workgroup
                                                      : LevelPassRecordsPerWorkgroupFor(instance->SupportOf(physicalDevice).device_type);
        state->indirect_level_pass = LevelPassDispatchedIndirectlyFor(instance->SupportOf(physicalDevice).device_type);
        const uint32_t fixed_level_max_workgroups = instance->settings.fixed_level_max_workgroups;
        state->fixed_level_max_workgroups = fixed_level_max_workgroups != 0
                                                ? fixed_level_max_workgroups
                                                : FixedLevelMaxWorkgroupsFor(instance->SupportOf(physicalDevice).device_type);
        const uint32_t max_producer_invocations = instance->settings.direct_levels_max_producer_invocations;
        if (max_producer_invocations == 0) {
            state->hand_off_max_invocations_per_record =
                HandOffMaxInvocationsPerRecordFor(instance->SupportOf(physicalDevice).device_type);
        } else {
            // UINT32_MAX: no limit (a dynamic grid without MaxNumWorkgroupsAMDX has none).
            state->hand_off_max_invocations_per_record =
                max_producer_invocations == UINT32_MAX ? UINT64_MAX : max_producer_invocations;
        }
        const VkPhysicalDeviceType device_type = instance->SupportOf(physicalDevice).device_type;
        state->finish_pass_reports = SettingChoice(instance->settings.report_pass, ReportPass::kFinish, ReportPass::kPreparer,
                                                   FinishPassReportsFor(device_type));
        state->reserve_per_workgroup = SettingChoice(instance->settings.allocation_reservation, AllocationReservation::kWorkgroup,
                                                     AllocationReservation::kSubgroup, ReservesPerWorkgroupFor(device_type));
        state->coalesce_record_stores = SettingChoice(instance->settings.record_store_coalescing, RecordStoreCoalescing::kOn,
                                                      RecordStoreCoalescing::kOff, CoalescesRecordStoresFor(device_type));
        VkPhysicalDeviceProperties properties;
        instance->dispatch.GetPhysicalDeviceProperties(physicalDevice, &properties);
        // The setting, where given, is the batch of every thread node; by default leaves get kLeafThreadBatchSize.
        const uint32_t set_batch = instance->settings.thread_batch_size;
        const uint32_t batch = set_batch != 0 ? set_batch : ThreadBatchSizeFor(instance->SupportOf(physicalDevice).device_type);
        const uint32_t leaf_batch = set_batch != 0 ? set_batch : kLeafThreadBatchSize;
        // A batch is one lowered workgroup: it must fit the device's workgroup limits.
        const uint32_t max_batch =
            std::min(properties.limits.maxComputeWorkGroupSize[0], properties.limits.maxComputeWorkGroupInvocations);
        state->thread_batch_size = std::clamp<uint32_t>(batch, 1u, max_batch);
        state->leaf_thread_batch_size = std::clamp<uint32_t>(leaf_batch, 1u, max_batch);
        VkPhysicalDeviceMemoryProperties memory;
        instance->dispatch.GetPhysicalDeviceMemoryProperties(physicalDevice, &memory);
        const LayerSettings& settings = state->instance->settings;
        ReportOptions report_options{settings.statistics || settings.level_timestamps, settings.statistics_file,
                                     settings.overflow_fatal};
        if (settings.level_timestamps) {
            // Graph dispatches may be recorded for any queue family the device has queues of that can run compute, so
            // every such family needs timestamps; differences are taken modulo the fewest valid bits among them.
            uint32_t family_count = 0;
            instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physicalDevice, &family_count, nullptr);
            std::vector<VkQueueFamilyProperties> families(family_count);
            instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(physicalDevice, &family_count, families.data());
            uint32_t valid_bits = 64;
            for (uint32_t i = 0; i < pCreateInfo->queueCreateInfoCount; ++i) {
                const uint32_t family = pCreateInfo->pQueueCreateInfos[i].queueFamilyIndex;
                if (family < family_count && (families[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
                    valid_bits = std::min(valid_bits, families[family].timestampValidBits);
                }
            }
            if (valid_bits == 0 || properties.limits.timestampPeriod <= 0.0f) {
                instance->messages.Emit(MessageSeverity::kWarning, message_id::kSettings,
                                        "level_timestamps: a queue family of this device that can run graph dispatches has no "
                                        "timestamps (timestampValidBits 0); statistics lines come without GPU times",
                                        {ObjectOf(VK_OBJECT_TYPE_DEVICE, *pDevice)});
            } else {
                report_options.level_timestamps = true;
                report_options.timestamp_period_ns = properties.limits.timestampPeriod;
                report_options.timestamp_valid_bits = valid_bits;
            }
        }
        state->reporter = std::make_unique<DispatchReporter>(*pDevice, &state->dispatch, memory, std::move(report_options));
        if (settings.prepared_levels) {
            if (VkLayerDeviceCreateInfo* callback = FindLayerDeviceCreateInfo(pCreateInfo, VK_LOADER_DATA_CALLBACK)) {
                state->set_loader_data = callback->u.pfnSetDeviceLoaderData;
            }
            state->capture_dispatch = std::make_unique<DeviceDispatchTable>(MakeCaptureDispatchTable(state->dispatch));
            state->prepared_levels = std::make_unique<PreparedLevelCache>(*pDevice, state->dispatch, state->set_loader_data);
        }
    }
    RegisterDeviceState(GetDispatchKey(*pDevice), state);
    if (emulate) {
        instance->messages.Emit(MessageSeverity::kInfo, message_id::kEmulationActive,
                                "VK_AMDX_shader_enqueue is emulated on this device with plain compute dispatches",
                                {ObjectOf(VK_OBJECT_TYPE_DEVICE, *pDevice)});
    }
    return VK_SUCCESS;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL GetDeviceProcAddr(VkDevice device, const char* pName) {
    if (device == VK_NULL_HANDLE) return nullptr;
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return nullptr;
    if (PFN_vkVoidFunction function =
            FindDeviceIntercept(pName, state->emulates_shader_enqueue, state->prepared_levels != nullptr)) {
        return function;
    }
    return state->dispatch.GetDeviceProcAddr(device, pName);
}

VKAPI_ATTR void VKAPI_CALL DestroyDevice(VkDevice device, const VkAllocationCallbacks* pAllocator) {
    if (device == VK_NULL_HANDLE) return;
    std::shared_ptr<DeviceState> state = UnregisterDeviceState(GetDispatchKey(device));
    if (!state) return;
    // Objects the layer made on the application's behalf go before the device (the application's own must already be
    // gone; graph pipelines it leaked are cleaned up rather than leaked a second time).
    for (const std::shared_ptr<GraphPipeline>& graph :
         state->graph_pipelines.PopIf([](VkPipeline, const std::shared_ptr<GraphPipeline>&) { return true; })) {
        graph->Destroy(*state, pAllocator);
    }
    // Prepared secondaries are held by the command buffers that executed them and by the cache; both go before the
    // device, and the layer's command pools with the last of them.
    state->command_buffers.PopIf([](VkCommandBuffer, const std::shared_ptr<CommandBufferState>&) { return true; });
    InvalidateRecordingCaches();
    state->prepared_levels.reset();
    if (state->meta_pipelines) state->meta_pipelines->Destroy();
    if (state->reporter) state->reporter->Destroy();
    state->dispatch.DestroyDevice(device, pAllocator);
}

// Scratch buffers carry VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX, unknown to the driver. The emulation reads
// and writes scratch from shaders, takes indirect dispatch arguments from it, and clears it with transfer commands, so
// it asks the driver for exactly those usages instead (facts §11: scratch is accessed as storage in compute shaders).
VKAPI_ATTR VkResult VKAPI_CALL CreateBuffer(VkDevice device, const VkBufferCreateInfo* pCreateInfo,
                                            const VkAllocationCallbacks* pAllocator, VkBuffer* pBuffer) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    constexpr VkBufferUsageFlags kScratchUsage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

    VkBufferCreateInfo create_info = *pCreateInfo;
    ScopedChainEdits edits;
    bool is_scratch = false;
    // With maintenance5, VkBufferUsageFlags2CreateInfoKHR replaces `usage` (VK_KHR_maintenance5). Where the application
    // did not enable maintenance5 (AMDX apps may use the struct for the scratch bit on any driver), the driver must not
    // see it: fold its low 32 bits (all that 1.3 usages use) into `usage` and unlink it.
    if (auto* usage2 = FindInChain<VkBufferUsageFlags2CreateInfoKHR>(pCreateInfo->pNext,
                                                                      VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR)) {
        VkBufferUsageFlags2KHR usage = usage2->usage;
        if (usage & VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) {
            usage = (usage & ~VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) | kScratchUsage;
        }
        if (state->maintenance5_enabled) {
            edits.Set(const_cast<VkBufferUsageFlags2KHR*>(&usage2->usage), usage);
        } else {
            edits.Unlink(&create_info.pNext, VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR);
            create_info.usage = static_cast<VkBufferUsageFlags>(usage);
        }
        is_scratch = (usage2->usage & VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) != 0;
    } else if (create_info.usage & VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) {
        create_info.usage = (create_info.usage & ~VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX) | kScratchUsage;
        is_scratch = true;
    }
    VkResult result = state->dispatch.CreateBuffer(device, &create_info, pAllocator, pBuffer);
    if (result == VK_SUCCESS && is_scratch) state->scratch_buffers.AddBuffer(*pBuffer, pCreateInfo->size);
    return result;
}

VKAPI_ATTR void VKAPI_CALL DestroyBuffer(VkDevice device, VkBuffer buffer, const VkAllocationCallbacks* pAllocator) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return;
    // Prepared secondaries dispatch indirectly from scratch buffers by handle, which a new buffer may get.
    if (buffer != VK_NULL_HANDLE && state->scratch_buffers.RemoveBuffer(buffer) && state->prepared_levels) {
        state->prepared_levels->DropAll();
    }
    state->dispatch.DestroyBuffer(device, buffer, pAllocator);
}

// Scratch arrives in the AMDX commands as an address; remember which buffer each scratch address belongs to. The core,
// KHR and EXT names are separate entry points in the loader's table, so all three are intercepted.
VKAPI_ATTR VkDeviceAddress VKAPI_CALL GetBufferDeviceAddress(VkDevice device, const VkBufferDeviceAddressInfo* pInfo) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return 0;
    PFN_vkGetBufferDeviceAddress next = state->dispatch.GetBufferDeviceAddress;
    if (next == nullptr) next = state->dispatch.GetBufferDeviceAddressKHR;
    if (next == nullptr) next = state->dispatch.GetBufferDeviceAddressEXT;
    const VkDeviceAddress address = next(device, pInfo);
    if (state->scratch_buffers.IsScratchBuffer(pInfo->buffer)) state->scratch_buffers.RecordAddress(pInfo->buffer, address);
    return address;
}

}  // namespace execgraph::intercept
