// SPDX-License-Identifier: Apache-2.0
//
// The layout facts of vk_amdx_compat.h as one X-macro list, expanded both by the C translation unit
// (compat_header_c_test.c) and by the C++ test, so that C and C++ are checked against the same numbers.
// Sizes and offsets are those of amdx-facts.md section 3 (x86_64 / LP64); enum values are from sections 2 and 6
// and from VK_EXT_layer_settings.
#ifndef EXECGRAPH_TESTS_UNIT_COMPAT_HEADER_FACTS_H_
#define EXECGRAPH_TESTS_UNIT_COMPAT_HEADER_FACTS_H_

#include <stddef.h>
#include <stdint.h>

// SIZE(type, bytes), OFFSET(type, member, bytes)
#define EXECGRAPH_COMPAT_LAYOUT_FACTS(SIZE, OFFSET)                                                 \
    /* facts 3.1 */                                                                                 \
    SIZE(VkPhysicalDeviceShaderEnqueueFeaturesAMDX, 24)                                             \
    OFFSET(VkPhysicalDeviceShaderEnqueueFeaturesAMDX, sType, 0)                                     \
    OFFSET(VkPhysicalDeviceShaderEnqueueFeaturesAMDX, pNext, 8)                                     \
    OFFSET(VkPhysicalDeviceShaderEnqueueFeaturesAMDX, shaderEnqueue, 16)                            \
    OFFSET(VkPhysicalDeviceShaderEnqueueFeaturesAMDX, shaderMeshEnqueue, 20)                        \
    /* facts 3.2 */                                                                                 \
    SIZE(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, 56)                                           \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, sType, 0)                                   \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, pNext, 8)                                   \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, maxExecutionGraphDepth, 16)                 \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, maxExecutionGraphShaderOutputNodes, 20)     \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, maxExecutionGraphShaderPayloadSize, 24)     \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, maxExecutionGraphShaderPayloadCount, 28)    \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, executionGraphDispatchAddressAlignment, 32) \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, maxExecutionGraphWorkgroupCount, 36)        \
    OFFSET(VkPhysicalDeviceShaderEnqueuePropertiesAMDX, maxExecutionGraphWorkgroups, 48)            \
    /* facts 3.3 */                                                                                 \
    SIZE(VkExecutionGraphPipelineScratchSizeAMDX, 40)                                               \
    OFFSET(VkExecutionGraphPipelineScratchSizeAMDX, sType, 0)                                       \
    OFFSET(VkExecutionGraphPipelineScratchSizeAMDX, pNext, 8)                                       \
    OFFSET(VkExecutionGraphPipelineScratchSizeAMDX, minSize, 16)                                    \
    OFFSET(VkExecutionGraphPipelineScratchSizeAMDX, maxSize, 24)                                    \
    OFFSET(VkExecutionGraphPipelineScratchSizeAMDX, sizeGranularity, 32)                            \
    /* facts 3.4 */                                                                                 \
    SIZE(VkExecutionGraphPipelineCreateInfoAMDX, 64)                                                \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, sType, 0)                                        \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, pNext, 8)                                        \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, flags, 16)                                       \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, stageCount, 20)                                  \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, pStages, 24)                                     \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, pLibraryInfo, 32)                                \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, layout, 40)                                      \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, basePipelineHandle, 48)                          \
    OFFSET(VkExecutionGraphPipelineCreateInfoAMDX, basePipelineIndex, 56)                           \
    /* facts 3.5 */                                                                                 \
    SIZE(VkPipelineShaderStageNodeCreateInfoAMDX, 32)                                               \
    OFFSET(VkPipelineShaderStageNodeCreateInfoAMDX, sType, 0)                                       \
    OFFSET(VkPipelineShaderStageNodeCreateInfoAMDX, pNext, 8)                                       \
    OFFSET(VkPipelineShaderStageNodeCreateInfoAMDX, pName, 16)                                      \
    OFFSET(VkPipelineShaderStageNodeCreateInfoAMDX, index, 24)                                      \
    /* facts 3.6 */                                                                                 \
    SIZE(VkDeviceOrHostAddressConstAMDX, 8)                                                         \
    OFFSET(VkDeviceOrHostAddressConstAMDX, deviceAddress, 0)                                        \
    OFFSET(VkDeviceOrHostAddressConstAMDX, hostAddress, 0)                                          \
    /* facts 3.7 */                                                                                 \
    SIZE(VkDispatchGraphInfoAMDX, 24)                                                               \
    OFFSET(VkDispatchGraphInfoAMDX, nodeIndex, 0)                                                   \
    OFFSET(VkDispatchGraphInfoAMDX, payloadCount, 4)                                                \
    OFFSET(VkDispatchGraphInfoAMDX, payloads, 8)                                                    \
    OFFSET(VkDispatchGraphInfoAMDX, payloadStride, 16)                                              \
    /* facts 3.8 */                                                                                 \
    SIZE(VkDispatchGraphCountInfoAMDX, 24)                                                          \
    OFFSET(VkDispatchGraphCountInfoAMDX, count, 0)                                                  \
    OFFSET(VkDispatchGraphCountInfoAMDX, infos, 8)                                                  \
    OFFSET(VkDispatchGraphCountInfoAMDX, stride, 16)                                                \
    /* facts 6: maintenance5 structs */                                                             \
    SIZE(VkPipelineCreateFlags2CreateInfoKHR, 24)                                                   \
    OFFSET(VkPipelineCreateFlags2CreateInfoKHR, flags, 16)                                          \
    SIZE(VkBufferUsageFlags2CreateInfoKHR, 24)                                                      \
    OFFSET(VkBufferUsageFlags2CreateInfoKHR, usage, 16)                                             \
    /* VK_EXT_layer_settings */                                                                     \
    SIZE(VkLayerSettingEXT, 32)                                                                     \
    OFFSET(VkLayerSettingEXT, pLayerName, 0)                                                        \
    OFFSET(VkLayerSettingEXT, pSettingName, 8)                                                      \
    OFFSET(VkLayerSettingEXT, type, 16)                                                             \
    OFFSET(VkLayerSettingEXT, valueCount, 20)                                                       \
    OFFSET(VkLayerSettingEXT, pValues, 24)                                                          \
    SIZE(VkLayerSettingsCreateInfoEXT, 32)                                                          \
    OFFSET(VkLayerSettingsCreateInfoEXT, sType, 0)                                                  \
    OFFSET(VkLayerSettingsCreateInfoEXT, pNext, 8)                                                  \
    OFFSET(VkLayerSettingsCreateInfoEXT, settingCount, 16)                                          \
    OFFSET(VkLayerSettingsCreateInfoEXT, pSettings, 24)

// VALUE(name, expected): constants of facts 2 and 6, and VK_EXT_layer_settings.
#define EXECGRAPH_COMPAT_VALUE_FACTS(VALUE)                                              \
    VALUE(VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION, 2u)                                       \
    VALUE(VK_SHADER_INDEX_UNUSED_AMDX, 0xFFFFFFFFu)                                      \
    VALUE(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX, 1000134000u)   \
    VALUE(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX, 1000134001u) \
    VALUE(VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX, 1000134002u)     \
    VALUE(VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX, 1000134003u)      \
    VALUE(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, 1000134004u)    \
    VALUE(VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, 1000134000u)                      \
    VALUE(VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX, 0x02000000u)                 \
    VALUE(VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX, 0x02000000ull)             \
    VALUE(VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX, 0x100000000ull)                 \
    VALUE(VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR, 1000470005u)        \
    VALUE(VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR, 1000470006u)           \
    VALUE(VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR, 0x800ull)                                \
    VALUE(VK_BUFFER_USAGE_2_INDIRECT_BUFFER_BIT_KHR, 0x100ull)                           \
    VALUE(VK_BUFFER_USAGE_2_SHADER_DEVICE_ADDRESS_BIT_KHR, 0x20000ull)                   \
    VALUE(VK_EXT_LAYER_SETTINGS_SPEC_VERSION, 2u)                                        \
    VALUE(VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT, 1000496000u)                 \
    VALUE(VK_LAYER_SETTING_TYPE_BOOL32_EXT, 0u)                                          \
    VALUE(VK_LAYER_SETTING_TYPE_INT32_EXT, 1u)                                           \
    VALUE(VK_LAYER_SETTING_TYPE_INT64_EXT, 2u)                                           \
    VALUE(VK_LAYER_SETTING_TYPE_UINT32_EXT, 3u)                                          \
    VALUE(VK_LAYER_SETTING_TYPE_UINT64_EXT, 4u)                                          \
    VALUE(VK_LAYER_SETTING_TYPE_FLOAT32_EXT, 5u)                                         \
    VALUE(VK_LAYER_SETTING_TYPE_FLOAT64_EXT, 6u)                                         \
    VALUE(VK_LAYER_SETTING_TYPE_STRING_EXT, 7u)

#ifdef __cplusplus
extern "C" {
#endif

// One fact as seen by the C compiler: its textual name (e.g. "sizeof(VkDispatchGraphInfoAMDX)") and value.
typedef struct ExecgraphCompatFactFromC {
    const char* name;
    uint64_t value;
} ExecgraphCompatFactFromC;

// Implemented in C (compat_header_c_test.c). Returns every layout and value fact evaluated by the C compiler.
const ExecgraphCompatFactFromC* ExecgraphCompatFactsFromC(size_t* count);

// Implemented in C: the extension name strings, as the C compiler sees them.
const char* ExecgraphCompatAmdxExtensionNameFromC(void);
const char* ExecgraphCompatLayerSettingsExtensionNameFromC(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // EXECGRAPH_TESTS_UNIT_COMPAT_HEADER_FACTS_H_
