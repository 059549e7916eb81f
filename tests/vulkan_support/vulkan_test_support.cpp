#include "vulkan_test_support.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace execgraph::test {

const char* const kShaderEnqueueCommands[7] = {
    "vkCreateExecutionGraphPipelinesAMDX",   "vkGetExecutionGraphPipelineScratchSizeAMDX", "vkGetExecutionGraphPipelineNodeIndexAMDX",
    "vkCmdInitializeGraphScratchMemoryAMDX", "vkCmdDispatchGraphAMDX",                     "vkCmdDispatchGraphIndirectAMDX",
    "vkCmdDispatchGraphIndirectCountAMDX",
};

VkDebugUtilsMessengerCreateInfoEXT MessageLog::MessengerCreateInfo() {
    VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    info.pfnUserCallback = &MessageLog::Callback;
    info.pUserData = this;
    return info;
}

VKAPI_ATTR VkBool32 VKAPI_CALL MessageLog::Callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                                                    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user_data) {
    auto* log = static_cast<MessageLog*>(user_data);
    std::lock_guard lock(log->mutex_);
    log->messages_.push_back({severity, data->pMessageIdName ? data->pMessageIdName : "", data->pMessage ? data->pMessage : ""});
    return VK_FALSE;
}

std::vector<MessageLog::Message> MessageLog::Messages() const {
    std::lock_guard lock(mutex_);
    return messages_;
}

std::string MessageLog::Problems() const {
    // The first few in full and a count of the rest: one bad barrier in a loop can otherwise bury the output.
    constexpr size_t kShown = 5;
    std::ostringstream out;
    size_t problems = 0;
    for (const Message& message : Messages()) {
        if (message.severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) continue;
        if (problems++ < kShown) out << message.id << ": " << message.text << "\n";
    }
    if (problems > kShown) out << "... and " << problems - kShown << " more\n";
    return out.str();
}

size_t MessageLog::CountWithId(const std::string& id) const {
    size_t count = 0;
    for (const Message& message : Messages()) count += message.id == id;
    return count;
}

void MessageLog::Clear() {
    std::lock_guard lock(mutex_);
    messages_.clear();
}

TestInstance::TestInstance(const InstanceOptions& options, MessageLog* log) {
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = log->MessengerCreateInfo();
    messenger_info.pNext = options.extra_pnext;
    VkApplicationInfo application{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    application.pApplicationName = "execgraph-tests";
    application.apiVersion = options.api_version;
    // The messenger needs VK_EXT_debug_utils; tests of an instance without it get no messages.
    const bool debug_utils = std::any_of(options.extensions.begin(), options.extensions.end(), [](const char* name) {
        return std::strcmp(name, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0;
    });
    VkInstanceCreateInfo create_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    create_info.pNext = debug_utils ? static_cast<const void*>(&messenger_info) : options.extra_pnext;
    create_info.pApplicationInfo = &application;
    create_info.enabledLayerCount = static_cast<uint32_t>(options.layers.size());
    create_info.ppEnabledLayerNames = options.layers.data();
    create_info.enabledExtensionCount = static_cast<uint32_t>(options.extensions.size());
    create_info.ppEnabledExtensionNames = options.extensions.data();
    result_ = vkCreateInstance(&create_info, nullptr, &instance_);
    if (result_ != VK_SUCCESS) {
        instance_ = VK_NULL_HANDLE;
        return;
    }
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    messenger_info.pNext = nullptr;
    if (debug_utils && create_messenger != nullptr) create_messenger(instance_, &messenger_info, nullptr, &messenger_);
}

TestInstance::~TestInstance() {
    if (instance_ == VK_NULL_HANDLE) return;
    if (messenger_ != VK_NULL_HANDLE) {
        auto destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
        destroy_messenger(instance_, messenger_, nullptr);
    }
    vkDestroyInstance(instance_, nullptr);
}

VkPhysicalDevice TestInstance::PhysicalDevice() const {
    uint32_t count = 1;
    VkPhysicalDevice physical_device = VK_NULL_HANDLE;
    if (instance_ == VK_NULL_HANDLE) return VK_NULL_HANDLE;
    VkResult result = vkEnumeratePhysicalDevices(instance_, &count, &physical_device);
    return (result == VK_SUCCESS || result == VK_INCOMPLETE) && count > 0 ? physical_device : VK_NULL_HANDLE;
}

std::vector<VkExtensionProperties> TestInstance::DeviceExtensions(const char* layer_name) const {
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(PhysicalDevice(), layer_name, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    vkEnumerateDeviceExtensionProperties(PhysicalDevice(), layer_name, &count, extensions.data());
    extensions.resize(count);
    return extensions;
}

bool TestInstance::AdvertisesShaderEnqueue() const {
    for (const VkExtensionProperties& extension : DeviceExtensions()) {
        if (std::strcmp(extension.extensionName, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) == 0) return true;
    }
    return false;
}

TestDevice::TestDevice(const TestInstance& instance, const DeviceOptions& options) {
    VkPhysicalDevice physical_device = instance.PhysicalDevice();
    if (physical_device == VK_NULL_HANDLE) return;
    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_device, &family_count, families.data());
    for (uint32_t i = 0; i < family_count; ++i) {
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            queue_family_ = i;
            break;
        }
    }
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = queue_family_;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;

    VkPhysicalDeviceShaderEnqueueFeaturesAMDX shader_enqueue{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX};
    shader_enqueue.pNext = const_cast<void*>(options.extra_pnext);
    shader_enqueue.shaderEnqueue = VK_TRUE;
    std::vector<const char*> extensions;
    if (options.enable_shader_enqueue) extensions.push_back(VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME);

    VkDeviceCreateInfo create_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    create_info.pNext = options.chain_shader_enqueue_features ? static_cast<const void*>(&shader_enqueue) : options.extra_pnext;
    create_info.queueCreateInfoCount = 1;
    create_info.pQueueCreateInfos = &queue_info;
    create_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    create_info.ppEnabledExtensionNames = extensions.data();
    create_info.pEnabledFeatures = options.enabled_features;
    result_ = vkCreateDevice(physical_device, &create_info, nullptr, &device_);
    if (result_ != VK_SUCCESS) device_ = VK_NULL_HANDLE;
}

TestDevice::~TestDevice() {
    if (device_ != VK_NULL_HANDLE) vkDestroyDevice(device_, nullptr);
}

}  // namespace execgraph::test
