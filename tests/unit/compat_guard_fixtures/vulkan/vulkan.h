/* SPDX-License-Identifier: Apache-2.0
 *
 * Stand-in for *newer* official Vulkan-Headers, used by the CompatHeaderGuards tests: it wraps the installed
 * 1.3.239 vulkan.h and then declares, the way official headers do, one piece of each group that
 * vk_amdx_compat.h also declares. If a guard in the compat header were missing, compiling probe.c would
 * fail with a struct redefinition. FAKE_AMDX_SPEC_VERSION selects spec version 2 (1.3.298+) or 1
 * (1.3.260-1.3.297, which the compat header must reject).
 */
#ifndef EXECGRAPH_FAKE_NEW_VULKAN_H_
#define EXECGRAPH_FAKE_NEW_VULKAN_H_
#include_next <vulkan/vulkan.h>

/* In vulkan_core.h, unguarded since 1.3.260. */
#define VK_KHR_maintenance5 1
typedef VkFlags64 VkPipelineCreateFlags2KHR;
typedef VkFlags64 VkPipelineCreateFlagBits2KHR;
typedef VkFlags64 VkBufferUsageFlags2KHR;
typedef VkFlags64 VkBufferUsageFlagBits2KHR;
typedef struct VkPipelineCreateFlags2CreateInfoKHR {
    VkStructureType sType;
    const void* pNext;
    VkPipelineCreateFlags2KHR flags;
} VkPipelineCreateFlags2CreateInfoKHR;

/* In vulkan_core.h since 1.3.272. */
#define VK_EXT_layer_settings 1
#define VK_EXT_LAYER_SETTINGS_EXTENSION_NAME "VK_EXT_layer_settings"
typedef struct VkLayerSettingEXT {
    const char* pLayerName;
    const char* pSettingName;
    int type;
    uint32_t valueCount;
    const void* pValues;
} VkLayerSettingEXT;

/* In vulkan_beta.h, only with VK_ENABLE_BETA_EXTENSIONS. */
#ifdef VK_ENABLE_BETA_EXTENSIONS
#define VK_AMDX_shader_enqueue 1
#define VK_AMDX_SHADER_ENQUEUE_SPEC_VERSION FAKE_AMDX_SPEC_VERSION
#define VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME "VK_AMDX_shader_enqueue"
typedef struct VkPhysicalDeviceShaderEnqueueFeaturesAMDX {
    VkStructureType sType;
    void* pNext;
    VkBool32 shaderEnqueue;
    VkBool32 shaderMeshEnqueue;
} VkPhysicalDeviceShaderEnqueueFeaturesAMDX;
#endif

#endif /* EXECGRAPH_FAKE_NEW_VULKAN_H_ */
