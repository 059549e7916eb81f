/* SPDX-License-Identifier: Apache-2.0
 * Compiled against the stand-in newer headers next to it: the compat header must defer to them. */
#include <execgraph/vk_amdx_compat.h>

int ProbeCompatHeaderDefersToNewerHeaders(void) {
    VkPhysicalDeviceShaderEnqueueFeaturesAMDX features = {0};
    VkPipelineCreateFlags2CreateInfoKHR flags2 = {0};
    VkLayerSettingEXT setting = {0};
    return (int)sizeof(features) + (int)sizeof(flags2) + (int)sizeof(setting) + (int)sizeof(VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME);
}
