// SPDX-License-Identifier: Apache-2.0
//
// vk_amdx_compat.h: declarations of VK_AMDX_shader_enqueue (spec version 2) and VK_EXT_layer_settings for
// Vulkan-Headers that predate them (Debian bookworm ships 1.3.239; AMDX first appeared in 1.3.260, spec
// version 2 in 1.3.298, VK_EXT_layer_settings in 1.3.272).
//
// Include it instead of, or after, <vulkan/vulkan.h>. It is valid C (C99 and later) and C++.
//
// Every value, member order and signature below comes from the project's AMDX facts sheet (amdx-facts.md in
// the shared references; cited as "facts N" below), which records them from KhronosGroup/Vulkan-Headers:
//   facts 1: extension identity, 2: constants and enum values, 3: struct layouts, 5: commands,
//   6: what 1.3.239 lacks (the maintenance5 subset declared here).
//
// Newer official headers always win. Each group is declared only when its official preprocessor guard is
// absent:
//   - VK_AMDX_shader_enqueue: official headers declare it in vulkan_beta.h, which vulkan.h includes only when
//     VK_ENABLE_BETA_EXTENSIONS is defined (facts 1). This header therefore defines VK_ENABLE_BETA_EXTENSIONS
//     before including vulkan.h, so that on new headers the official declarations are used.
//   - VK_KHR_maintenance5: the 64-bit flag types and the two *Flags2CreateInfoKHR structs.
//   - VK_EXT_layer_settings: the settings structs (the extension has no commands).
// Headers from 1.3.260 to 1.3.297 declare spec version 1, whose struct layouts and command signatures differ
// (facts 7.1); they cannot be patched from here, so that combination is rejected with #error.
#ifndef EXECGRAPH_VK_AMDX_COMPAT_H_
#define EXECGRAPH_VK_AMDX_COMPAT_H_ 1

// Needed on new headers: both vulkan_beta.h and the AMDX values inside vulkan_core.h's core enums are guarded
// by it (facts 1 "Flags", facts 6 last paragraph). Harmless on 1.3.239, whose beta extensions are unrelated.
// If the includer already included vulkan.h without it, vulkan.h's include guard makes the include below a
// no-op and the fallback declarations below are used; they do not collide, because the official ones were
// skipped for the same reason.
#ifndef VK_ENABLE_BETA_EXTENSIONS
#define VK_ENABLE_BETA_EXTENSIONS 1
#endif
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------------------------------
// VK_KHR_maintenance5 subset (facts 6). Only what VK_AMDX_shader_enqueue v2 needs: its 64-bit flag bits are of
// these types, and VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX can only be passed through
// VkPipelineCreateFlags2CreateInfoKHR (facts 2). VK_KHR_maintenance5 itself is deliberately *not* defined:
// this is not the whole extension (no commands, no other structs), and code testing that macro must not
// believe otherwise.
// ---------------------------------------------------------------------------------------------------------------------
#ifndef VK_KHR_maintenance5

typedef VkFlags64 VkPipelineCreateFlags2KHR;
typedef VkFlags64 VkPipelineCreateFlagBits2KHR;
typedef VkFlags64 VkBufferUsageFlags2KHR;
typedef VkFlags64 VkBufferUsageFlagBits2KHR;

// 1.3.239's VkStructureType has no such enumerants: integer constants cast to the enum type (facts 6).
static const VkStructureType VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR = (VkStructureType)1000470005;
static const VkStructureType VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR = (VkStructureType)1000470006;

// Same bit as the 32-bit VK_PIPELINE_CREATE_LIBRARY_BIT_KHR, which 1.3.239 has (facts 6).
static const VkPipelineCreateFlagBits2KHR VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR = 0x00000800ULL;
static const VkBufferUsageFlagBits2KHR VK_BUFFER_USAGE_2_INDIRECT_BUFFER_BIT_KHR = 0x00000100ULL;
static const VkBufferUsageFlagBits2KHR VK_BUFFER_USAGE_2_SHADER_DEVICE_ADDRESS_BIT_KHR = 0x00020000ULL;

typedef struct VkPipelineCreateFlags2CreateInfoKHR {
    VkStructureType sType;
    const void* pNext;
    VkPipelineCreateFlags2KHR flags;
} VkPipelineCreateFlags2CreateInfoKHR;

typedef struct VkBufferUsageFlags2CreateInfoKHR {
    VkStructureType sType;
    const void* pNext;
    VkBufferUsageFlags2KHR usage;
} VkBufferUsageFlags2CreateInfoKHR;

#endif  // VK_KHR_maintenance5

// ---------------------------------------------------------------------------------------------------------------------
// VK_AMDX_shader_enqueue, spec version 2 (facts 1, 2, 3, 5).
// ---------------------------------------------------------------------------------------------------------------------
#if defined(VK_AMDX_shader_enqueue) && (!defined(VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION) || VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION < 2)
#error "Vulkan-Headers 1.3.260-1.3.297 declare VK_AMDX_shader_enqueue v1; execgraph needs v2 (use >= 1.3.298 or < 1.3.260)"
#endif

#ifndef VK_AMDX_shader_enqueue
#define VK_AMDX_shader_enqueue 1
#define VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION 2
#define VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME "VK_AMDX_shader_enqueue"
#define VK_SHADER_INDEX_UNUSED_AMDX (~0U)

// Extension number 135, so every enumerant is based on 1000134000 (facts 1). The official header puts these
// inside the core enums; with 1.3.239 enums they can only be integer constants cast to the enum type (facts 6).
static const VkStructureType VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX = (VkStructureType)1000134000;
static const VkStructureType VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX = (VkStructureType)1000134001;
static const VkStructureType VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX = (VkStructureType)1000134002;
static const VkStructureType VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX = (VkStructureType)1000134003;
static const VkStructureType VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX = (VkStructureType)1000134004;
static const VkPipelineBindPoint VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX = (VkPipelineBindPoint)1000134000;

// Bit 25 in both the 32-bit and the 64-bit buffer usage flags (facts 2).
static const VkBufferUsageFlagBits VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX = (VkBufferUsageFlagBits)0x02000000;
static const VkBufferUsageFlagBits2KHR VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX = 0x0000000002000000ULL;
// Bit 32: there is no 32-bit VkPipelineCreateFlagBits equivalent, so it can only be set through
// VkPipelineCreateFlags2CreateInfoKHR (facts 2).
static const VkPipelineCreateFlagBits2KHR VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX = 0x0000000100000000ULL;

// facts 3.1; extends VkPhysicalDeviceFeatures2 and VkDeviceCreateInfo.
typedef struct VkPhysicalDeviceShaderEnqueueFeaturesAMDX {
    VkStructureType sType;
    void* pNext;
    VkBool32 shaderEnqueue;
    VkBool32 shaderMeshEnqueue;
} VkPhysicalDeviceShaderEnqueueFeaturesAMDX;

// facts 3.2; extends VkPhysicalDeviceProperties2.
typedef struct VkPhysicalDeviceShaderEnqueuePropertiesAMDX {
    VkStructureType sType;
    void* pNext;
    uint32_t maxExecutionGraphDepth;
    uint32_t maxExecutionGraphShaderOutputNodes;
    uint32_t maxExecutionGraphShaderPayloadSize;
    uint32_t maxExecutionGraphShaderPayloadCount;
    uint32_t executionGraphDispatchAddressAlignment;
    uint32_t maxExecutionGraphWorkgroupCount[3];
    uint32_t maxExecutionGraphWorkgroups;
} VkPhysicalDeviceShaderEnqueuePropertiesAMDX;

// facts 3.3; output of vkGetExecutionGraphPipelineScratchSizeAMDX (v1 had a single `size` member).
typedef struct VkExecutionGraphPipelineScratchSizeAMDX {
    VkStructureType sType;
    void* pNext;
    VkDeviceSize minSize;
    VkDeviceSize maxSize;
    VkDeviceSize sizeGranularity;
} VkExecutionGraphPipelineScratchSizeAMDX;

// facts 3.4; pLibraryInfo is a direct member, not a pNext extension.
typedef struct VkExecutionGraphPipelineCreateInfoAMDX {
    VkStructureType sType;
    const void* pNext;
    VkPipelineCreateFlags flags;
    uint32_t stageCount;
    const VkPipelineShaderStageCreateInfo* pStages;
    const VkPipelineLibraryCreateInfoKHR* pLibraryInfo;
    VkPipelineLayout layout;
    VkPipeline basePipelineHandle;
    int32_t basePipelineIndex;
} VkExecutionGraphPipelineCreateInfoAMDX;

// facts 3.5; extends VkPipelineShaderStageCreateInfo, and is the input of vkGetExecutionGraphPipelineNodeIndexAMDX.
typedef struct VkPipelineShaderStageNodeCreateInfoAMDX {
    VkStructureType sType;
    const void* pNext;
    const char* pName;
    uint32_t index;
} VkPipelineShaderStageNodeCreateInfoAMDX;

// facts 3.6; same shape as VkDeviceOrHostAddressConstKHR but a distinct type.
typedef union VkDeviceOrHostAddressConstAMDX {
    VkDeviceAddress deviceAddress;
    const void* hostAddress;
} VkDeviceOrHostAddressConstAMDX;

// facts 3.7; 24 bytes, also the layout read from device memory by the indirect dispatches.
typedef struct VkDispatchGraphInfoAMDX {
    uint32_t nodeIndex;
    uint32_t payloadCount;
    VkDeviceOrHostAddressConstAMDX payloads;
    uint64_t payloadStride;
} VkDispatchGraphInfoAMDX;

// facts 3.8; 4 bytes of padding follow `count`.
typedef struct VkDispatchGraphCountInfoAMDX {
    uint32_t count;
    VkDeviceOrHostAddressConstAMDX infos;
    uint64_t stride;
} VkDispatchGraphCountInfoAMDX;

// Commands, v2 signatures (facts 5). Only PFN typedefs, no prototypes: the official header keeps the seven
// prototypes out of VK_ONLY_EXPORTED_PROTOTYPES builds because the loader does not export these symbols
// statically (facts 5, last paragraph). A prototype here would only invite undefined-symbol link errors;
// applications and the layer resolve the commands through vkGetDeviceProcAddr.
typedef VkResult(VKAPI_PTR* PFN_vkCreateExecutionGraphPipelinesAMDX)(VkDevice device, VkPipelineCache pipelineCache,
                                                                     uint32_t createInfoCount,
                                                                     const VkExecutionGraphPipelineCreateInfoAMDX* pCreateInfos,
                                                                     const VkAllocationCallbacks* pAllocator,
                                                                     VkPipeline* pPipelines);
typedef VkResult(VKAPI_PTR* PFN_vkGetExecutionGraphPipelineScratchSizeAMDX)(VkDevice device, VkPipeline executionGraph,
                                                                            VkExecutionGraphPipelineScratchSizeAMDX* pSizeInfo);
typedef VkResult(VKAPI_PTR* PFN_vkGetExecutionGraphPipelineNodeIndexAMDX)(VkDevice device, VkPipeline executionGraph,
                                                                          const VkPipelineShaderStageNodeCreateInfoAMDX* pNodeInfo,
                                                                          uint32_t* pNodeIndex);
typedef void(VKAPI_PTR* PFN_vkCmdInitializeGraphScratchMemoryAMDX)(VkCommandBuffer commandBuffer, VkPipeline executionGraph,
                                                                   VkDeviceAddress scratch, VkDeviceSize scratchSize);
typedef void(VKAPI_PTR* PFN_vkCmdDispatchGraphAMDX)(VkCommandBuffer commandBuffer, VkDeviceAddress scratch,
                                                    VkDeviceSize scratchSize, const VkDispatchGraphCountInfoAMDX* pCountInfo);
typedef void(VKAPI_PTR* PFN_vkCmdDispatchGraphIndirectAMDX)(VkCommandBuffer commandBuffer, VkDeviceAddress scratch,
                                                            VkDeviceSize scratchSize,
                                                            const VkDispatchGraphCountInfoAMDX* pCountInfo);
typedef void(VKAPI_PTR* PFN_vkCmdDispatchGraphIndirectCountAMDX)(VkCommandBuffer commandBuffer, VkDeviceAddress scratch,
                                                                 VkDeviceSize scratchSize, VkDeviceAddress countInfo);

#endif  // VK_AMDX_shader_enqueue

// ---------------------------------------------------------------------------------------------------------------------
// VK_EXT_layer_settings, spec version 2 (added to Vulkan-Headers in 1.3.272). Layers read their settings from
// VkLayerSettingsCreateInfoEXT structs chained to VkInstanceCreateInfo::pNext.
// ---------------------------------------------------------------------------------------------------------------------
#ifndef VK_EXT_layer_settings
#define VK_EXT_layer_settings 1
#define VK_EXT_LAYER_SETTINGS_SPEC_VERSION 2
#define VK_EXT_LAYER_SETTINGS_EXTENSION_NAME "VK_EXT_layer_settings"

static const VkStructureType VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT = (VkStructureType)1000496000;

// A new enum type, so unlike the values above it can be a real C enum.
typedef enum VkLayerSettingTypeEXT {
    VK_LAYER_SETTING_TYPE_BOOL32_EXT = 0,
    VK_LAYER_SETTING_TYPE_INT32_EXT = 1,
    VK_LAYER_SETTING_TYPE_INT64_EXT = 2,
    VK_LAYER_SETTING_TYPE_UINT32_EXT = 3,
    VK_LAYER_SETTING_TYPE_UINT64_EXT = 4,
    VK_LAYER_SETTING_TYPE_FLOAT32_EXT = 5,
    VK_LAYER_SETTING_TYPE_FLOAT64_EXT = 6,
    VK_LAYER_SETTING_TYPE_STRING_EXT = 7,
    VK_LAYER_SETTING_TYPE_MAX_ENUM_EXT = 0x7FFFFFFF
} VkLayerSettingTypeEXT;

typedef struct VkLayerSettingEXT {
    const char* pLayerName;
    const char* pSettingName;
    VkLayerSettingTypeEXT type;
    uint32_t valueCount;
    const void* pValues;
} VkLayerSettingEXT;

typedef struct VkLayerSettingsCreateInfoEXT {
    VkStructureType sType;
    const void* pNext;
    uint32_t settingCount;
    const VkLayerSettingEXT* pSettings;
} VkLayerSettingsCreateInfoEXT;

#endif  // VK_EXT_layer_settings

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // EXECGRAPH_VK_AMDX_COMPAT_H_
