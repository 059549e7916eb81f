// Helpers for tests that drive Vulkan through the loader, the layer and lavapipe.
#pragma once

#include <vulkan/vulkan.h>

#include <mutex>
#include <string>
#include <vector>

#include "execgraph/vk_amdx_compat.h"

namespace execgraph::test {

inline constexpr char kLayerName[] = "VK_LAYER_EXECGRAPH_shader_enqueue";
inline constexpr char kValidationLayerName[] = "VK_LAYER_KHRONOS_validation";

// Collects every debug-utils message delivered to the application.
class MessageLog {
  public:
    struct Message {
        VkDebugUtilsMessageSeverityFlagBitsEXT severity;
        std::string id;
        std::string text;
    };

    // A messenger create info to chain into VkInstanceCreateInfo::pNext (it also sees vkCreateInstance's messages).
    VkDebugUtilsMessengerCreateInfoEXT MessengerCreateInfo();

    std::vector<Message> Messages() const;
    // Warnings and errors, formatted one per line, for test failure output.
    std::string Problems() const;
    size_t CountWithId(const std::string& id) const;
    void Clear();

  private:
    static VKAPI_ATTR VkBool32 VKAPI_CALL Callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user_data);
    mutable std::mutex mutex_;
    std::vector<Message> messages_;
};

struct InstanceOptions {
    std::vector<const char*> layers;  // first = closest to the application
    std::vector<const char*> extensions{VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    uint32_t api_version = VK_API_VERSION_1_3;
    const void* extra_pnext = nullptr;  // chained after the messenger create info
};

// Owns an instance with a debug messenger that records into `log`.
class TestInstance {
  public:
    TestInstance(const InstanceOptions& options, MessageLog* log);
    ~TestInstance();
    TestInstance(const TestInstance&) = delete;
    TestInstance& operator=(const TestInstance&) = delete;

    VkResult result() const { return result_; }
    VkInstance handle() const { return instance_; }
    // The first physical device (lavapipe in tests); VK_NULL_HANDLE when there is none.
    VkPhysicalDevice PhysicalDevice() const;
    std::vector<VkExtensionProperties> DeviceExtensions(const char* layer_name = nullptr) const;
    bool AdvertisesShaderEnqueue() const;

  private:
    VkResult result_ = VK_ERROR_INITIALIZATION_FAILED;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

struct DeviceOptions {
    bool enable_shader_enqueue = true;
    bool chain_shader_enqueue_features = true;
    const void* extra_pnext = nullptr;
    const VkPhysicalDeviceFeatures* enabled_features = nullptr;
};

class TestDevice {
  public:
    TestDevice(const TestInstance& instance, const DeviceOptions& options);
    ~TestDevice();
    TestDevice(const TestDevice&) = delete;
    TestDevice& operator=(const TestDevice&) = delete;

    VkResult result() const { return result_; }
    VkDevice handle() const { return device_; }
    uint32_t queue_family() const { return queue_family_; }
    PFN_vkVoidFunction ProcAddr(const char* name) const { return vkGetDeviceProcAddr(device_, name); }

  private:
    VkResult result_ = VK_ERROR_INITIALIZATION_FAILED;
    VkDevice device_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
};

// The seven commands of VK_AMDX_shader_enqueue, in spec order.
extern const char* const kShaderEnqueueCommands[7];

}  // namespace execgraph::test
