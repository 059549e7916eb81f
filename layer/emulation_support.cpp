#include "emulation_support.h"

#include <cstring>
#include <vector>

namespace execgraph {
namespace {

// Lowered nodes aggregate their allocations per subgroup: scans, a ballot for the highest active lane and a shuffle of its
// scan value as the subgroup's total (spirv_lowering/src/lowering/lowering_context.h says why not a reduce).
constexpr VkSubgroupFeatureFlags kRequiredSubgroupOperations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT |
                                                               VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                                                               VK_SUBGROUP_FEATURE_SHUFFLE_BIT;

std::string VersionString(uint32_t version) {
    return std::to_string(VK_API_VERSION_MAJOR(version)) + "." + std::to_string(VK_API_VERSION_MINOR(version)) + "." +
           std::to_string(VK_API_VERSION_PATCH(version));
}

void ReadDeviceExtensions(const InstanceDispatchTable& dispatch, VkPhysicalDevice physical_device, PhysicalDeviceSupport* support) {
    uint32_t count = 0;
    if (dispatch.EnumerateDeviceExtensionProperties(physical_device, nullptr, &count, nullptr) != VK_SUCCESS) return;
    std::vector<VkExtensionProperties> extensions(count);
    if (dispatch.EnumerateDeviceExtensionProperties(physical_device, nullptr, &count, extensions.data()) < VK_SUCCESS) return;
    extensions.resize(count);
    for (const VkExtensionProperties& extension : extensions) {
        if (std::strcmp(extension.extensionName, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) == 0) support->native_shader_enqueue = true;
    }
}

}  // namespace

PhysicalDeviceSupport QueryPhysicalDeviceSupport(const InstanceDispatchTable& dispatch, uint32_t instance_api_version,
                                                 VkPhysicalDevice physical_device) {
    PhysicalDeviceSupport support;
    ReadDeviceExtensions(dispatch, physical_device, &support);

    VkPhysicalDeviceProperties properties{};
    dispatch.GetPhysicalDeviceProperties(physical_device, &properties);
    support.limits = properties.limits;
    support.device_type = properties.deviceType;

    // Vulkan 1.3 core commands are only callable when both the instance (as the app created it) and the device are 1.3.
    if (VK_API_VERSION_MINOR(instance_api_version) < 3 && VK_API_VERSION_MAJOR(instance_api_version) == 1) {
        support.missing_requirement = "the instance was created with apiVersion " + VersionString(instance_api_version) +
                                      "; the emulation needs VkApplicationInfo::apiVersion 1.3 or later";
        return support;
    }
    if (properties.apiVersion < VK_API_VERSION_1_3) {
        support.missing_requirement =
            "the device supports Vulkan " + VersionString(properties.apiVersion) + "; the emulation needs Vulkan 1.3";
        return support;
    }
    if (dispatch.GetPhysicalDeviceFeatures2 == nullptr || dispatch.GetPhysicalDeviceProperties2 == nullptr) {
        support.missing_requirement = "vkGetPhysicalDeviceFeatures2/Properties2 are unavailable";
        return support;
    }
    if (support.native_shader_enqueue) {
        // When this layer is installed as an implicit layer, the loader itself appends the device extensions of implicit
        // layers' manifests to the driver's list, so seeing the name below does not prove the driver has it. Ask for the
        // feature: only a real implementation fills the structure.
        VkPhysicalDeviceShaderEnqueueFeaturesAMDX probe{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX};
        VkPhysicalDeviceFeatures2 probe_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &probe};
        dispatch.GetPhysicalDeviceFeatures2(physical_device, &probe_features);
        support.native_shader_enqueue = probe.shaderEnqueue == VK_TRUE;
    }

    VkPhysicalDeviceVulkan11Features vulkan11_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features vulkan12_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &vulkan11_features};
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vulkan12_features};
    dispatch.GetPhysicalDeviceFeatures2(physical_device, &features);

    VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 properties2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &subgroup};
    dispatch.GetPhysicalDeviceProperties2(physical_device, &properties2);
    support.subgroup_size = subgroup.subgroupSize;
    support.storage_buffer_16bit_access = vulkan11_features.storageBuffer16BitAccess == VK_TRUE;
    support.storage_buffer_8bit_access = vulkan12_features.storageBuffer8BitAccess == VK_TRUE;

    if (!vulkan12_features.bufferDeviceAddress) {
        support.missing_requirement = "the device lacks the bufferDeviceAddress feature";
    } else if (!vulkan12_features.scalarBlockLayout) {
        support.missing_requirement = "the device lacks the scalarBlockLayout feature";
    } else if (!vulkan12_features.shaderBufferInt64Atomics) {
        support.missing_requirement = "the device lacks the shaderBufferInt64Atomics feature";
    } else if (!features.features.shaderInt64) {
        support.missing_requirement = "the device lacks the shaderInt64 feature";
    } else if (!(subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
               (subgroup.supportedOperations & kRequiredSubgroupOperations) != kRequiredSubgroupOperations) {
        support.missing_requirement =
            "the device lacks subgroup basic/vote/ballot/arithmetic/shuffle operations in compute shaders";
    }
    return support;
}

void FillAdvertisedProperties(const PhysicalDeviceSupport& support, VkPhysicalDeviceShaderEnqueuePropertiesAMDX* properties) {
    properties->maxExecutionGraphDepth = kAdvertisedMaxGraphDepth;
    properties->maxExecutionGraphShaderOutputNodes = kAdvertisedMaxShaderOutputNodes;
    properties->maxExecutionGraphShaderPayloadSize = kAdvertisedMaxShaderPayloadSize;
    properties->maxExecutionGraphShaderPayloadCount = kAdvertisedMaxShaderPayloadCount;
    properties->executionGraphDispatchAddressAlignment = kAdvertisedDispatchAddressAlignment;
    for (uint32_t& count : properties->maxExecutionGraphWorkgroupCount) count = kAdvertisedMaxWorkgroupCountPerDimension;
    properties->maxExecutionGraphWorkgroups = kAdvertisedMaxWorkgroups;
}

void FillAdvertisedFeatures(VkPhysicalDeviceShaderEnqueueFeaturesAMDX* features) {
    features->shaderEnqueue = VK_TRUE;
    features->shaderMeshEnqueue = VK_FALSE;
}

}  // namespace execgraph
