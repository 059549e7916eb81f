// Creates a device with VK_AMDX_shader_enqueue through the execgraph layer and prints what the application gets:
// the extension, its features, its limits and its seven entry points.
//
// Run it with the layer enabled, e.g.
//   VK_ADD_LAYER_PATH=build/layer VK_INSTANCE_LAYERS=VK_LAYER_EXECGRAPH_shader_enqueue build/examples/query_device/execgraph_query_device
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "execgraph/vk_amdx_compat.h"

namespace {

const char* const kCommands[] = {
    "vkCreateExecutionGraphPipelinesAMDX",   "vkGetExecutionGraphPipelineScratchSizeAMDX", "vkGetExecutionGraphPipelineNodeIndexAMDX",
    "vkCmdInitializeGraphScratchMemoryAMDX", "vkCmdDispatchGraphAMDX",                     "vkCmdDispatchGraphIndirectAMDX",
    "vkCmdDispatchGraphIndirectCountAMDX",
};

bool FindShaderEnqueue(VkPhysicalDevice physical_device, uint32_t* spec_version) {
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, extensions.data());
    for (const VkExtensionProperties& extension : extensions) {
        if (std::strcmp(extension.extensionName, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) == 0) {
            *spec_version = extension.specVersion;
            return true;
        }
    }
    return false;
}

}  // namespace

int main() {
    // AMDX needs Vulkan 1.3 (or its extensions); the emulation needs an instance created for 1.3.
    VkApplicationInfo application{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    application.pApplicationName = "execgraph-query-device";
    application.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instance_info.pApplicationInfo = &application;
    VkInstance instance = VK_NULL_HANDLE;
    if (vkCreateInstance(&instance_info, nullptr, &instance) != VK_SUCCESS) {
        std::fprintf(stderr, "vkCreateInstance failed\n");
        return 1;
    }

    uint32_t device_count = 1;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    vkEnumeratePhysicalDevices(instance, &device_count, &physical_device);
    if (device_count == 0) {
        std::fprintf(stderr, "no Vulkan device found\n");
        return 1;
    }
    VkPhysicalDeviceProperties device_properties;
    vkGetPhysicalDeviceProperties(physical_device, &device_properties);
    std::printf("device: %s (Vulkan %u.%u.%u)\n", device_properties.deviceName, VK_API_VERSION_MAJOR(device_properties.apiVersion),
                VK_API_VERSION_MINOR(device_properties.apiVersion), VK_API_VERSION_PATCH(device_properties.apiVersion));

    uint32_t spec_version = 0;
    if (!FindShaderEnqueue(physical_device, &spec_version)) {
        std::fprintf(stderr, "VK_AMDX_shader_enqueue is not advertised: is VK_LAYER_EXECGRAPH_shader_enqueue enabled?\n");
        return 1;
    }
    std::printf("extension: %s, spec version %u\n", VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME, spec_version);

    // Features and limits come through the usual *2 queries with the AMDX structures chained.
    VkPhysicalDeviceShaderEnqueueFeaturesAMDX features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX};
    VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &features};
    vkGetPhysicalDeviceFeatures2(physical_device, &features2);
    std::printf("features: shaderEnqueue=%u shaderMeshEnqueue=%u\n", features.shaderEnqueue, features.shaderMeshEnqueue);

    VkPhysicalDeviceShaderEnqueuePropertiesAMDX limits{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX};
    VkPhysicalDeviceProperties2 properties2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &limits};
    vkGetPhysicalDeviceProperties2(physical_device, &properties2);
    std::printf("limits:\n");
    std::printf("  maxExecutionGraphDepth                 %u\n", limits.maxExecutionGraphDepth);
    std::printf("  maxExecutionGraphShaderOutputNodes     %u\n", limits.maxExecutionGraphShaderOutputNodes);
    std::printf("  maxExecutionGraphShaderPayloadSize     %u\n", limits.maxExecutionGraphShaderPayloadSize);
    std::printf("  maxExecutionGraphShaderPayloadCount    %u\n", limits.maxExecutionGraphShaderPayloadCount);
    std::printf("  executionGraphDispatchAddressAlignment %u\n", limits.executionGraphDispatchAddressAlignment);
    std::printf("  maxExecutionGraphWorkgroupCount        %u x %u x %u\n", limits.maxExecutionGraphWorkgroupCount[0],
                limits.maxExecutionGraphWorkgroupCount[1], limits.maxExecutionGraphWorkgroupCount[2]);
    std::printf("  maxExecutionGraphWorkgroups            %u\n", limits.maxExecutionGraphWorkgroups);

    // Enable the extension and the feature; the entry points come from vkGetDeviceProcAddr.
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    features.pNext = nullptr;
    const char* extensions[] = {VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME};
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    device_info.enabledExtensionCount = 1;
    device_info.ppEnabledExtensionNames = extensions;
    VkDevice device = VK_NULL_HANDLE;
    if (vkCreateDevice(physical_device, &device_info, nullptr, &device) != VK_SUCCESS) {
        std::fprintf(stderr, "vkCreateDevice with VK_AMDX_shader_enqueue failed\n");
        return 1;
    }
    int resolved = 0;
    std::printf("entry points:\n");
    for (const char* command : kCommands) {
        const bool found = vkGetDeviceProcAddr(device, command) != nullptr;
        resolved += found;
        std::printf("  %-44s %s\n", command, found ? "resolved" : "MISSING");
    }
    vkDestroyDevice(device, nullptr);
    vkDestroyInstance(instance, nullptr);
    std::printf("%s: %d of 7 VK_AMDX_shader_enqueue entry points resolved\n", resolved == 7 ? "OK" : "FAILED", resolved);
    return resolved == 7 ? 0 : 1;
}
