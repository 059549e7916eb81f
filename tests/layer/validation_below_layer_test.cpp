// With VK_LAYER_KHRONOS_validation below execgraph, everything the layer does on the application's behalf must be
// valid Vulkan: any validation message fails the test. This is how the suite proves nothing AMDX leaks down the chain.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "vulkan_test_support.h"

namespace execgraph::test {
namespace {

class ValidationBelowLayer : public ::testing::Test {
  protected:
    void SetUp() override {
        options_.layers = {kLayerName, kValidationLayerName};  // first listed = closest to the application
        instance_ = std::make_unique<TestInstance>(options_, &log_);
        ASSERT_EQ(instance_->result(), VK_SUCCESS);
        ASSERT_NE(instance_->PhysicalDevice(), VK_NULL_HANDLE);
    }
    void TearDown() override {
        instance_.reset();  // destroying the instance is validated too
        EXPECT_EQ(log_.Problems(), "") << "validation or layer messages were reported";
    }

    InstanceOptions options_;
    MessageLog log_;
    std::unique_ptr<TestInstance> instance_;
};

TEST_F(ValidationBelowLayer, ValidationLayerIsReallyActive) {
    // A deliberately invalid call must produce a validation error, or the other tests here would prove nothing.
    VkBufferCreateInfo create_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create_info.size = 0;  // VUID-VkBufferCreateInfo-size-00912
    create_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    DeviceOptions device_options;
    device_options.enable_shader_enqueue = false;
    device_options.chain_shader_enqueue_features = false;
    TestDevice device(*instance_, device_options);
    ASSERT_EQ(device.result(), VK_SUCCESS);
    VkBuffer buffer = VK_NULL_HANDLE;
    vkCreateBuffer(device.handle(), &create_info, nullptr, &buffer);
    if (buffer != VK_NULL_HANDLE) vkDestroyBuffer(device.handle(), buffer, nullptr);
    bool saw_error = false;
    for (const MessageLog::Message& message : log_.Messages()) {
        saw_error |= message.severity == VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT &&
                     message.text.find("size") != std::string::npos;
    }
    EXPECT_TRUE(saw_error) << "VK_LAYER_KHRONOS_validation did not report an invalid buffer size";
    log_.Clear();
}

TEST_F(ValidationBelowLayer, EnumerationFeaturesPropertiesAndDevices) {
    EXPECT_TRUE(instance_->AdvertisesShaderEnqueue());
    VkPhysicalDevice physical_device = instance_->PhysicalDevice();

    VkPhysicalDeviceShaderEnqueueFeaturesAMDX features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX};
    VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &features};
    vkGetPhysicalDeviceFeatures2(physical_device, &features2);
    EXPECT_EQ(features.shaderEnqueue, VK_TRUE);

    VkPhysicalDeviceShaderEnqueuePropertiesAMDX properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX};
    VkPhysicalDeviceProperties2 properties2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &properties};
    vkGetPhysicalDeviceProperties2(physical_device, &properties2);
    EXPECT_GE(properties.maxExecutionGraphDepth, 32u);

    {
        TestDevice with(*instance_, DeviceOptions{});
        ASSERT_EQ(with.result(), VK_SUCCESS);
        for (const char* command : kShaderEnqueueCommands) EXPECT_NE(with.ProcAddr(command), nullptr) << command;
    }
    {
        // The application's own Vulkan 1.2 features struct is where the layer turns on bufferDeviceAddress.
        VkPhysicalDeviceVulkan12Features vulkan12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        VkPhysicalDeviceFeatures2 enabled{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vulkan12};
        DeviceOptions options;
        options.extra_pnext = &enabled;
        TestDevice with(*instance_, options);
        ASSERT_EQ(with.result(), VK_SUCCESS);
    }
    {
        DeviceOptions options;
        options.enable_shader_enqueue = false;
        options.chain_shader_enqueue_features = false;
        TestDevice without(*instance_, options);
        ASSERT_EQ(without.result(), VK_SUCCESS);
        for (const char* command : kShaderEnqueueCommands) EXPECT_EQ(without.ProcAddr(command), nullptr) << command;
    }
}

TEST_F(ValidationBelowLayer, IncompleteEnumeration) {
    // The two-call idiom, with the layer adding an extension the driver does not have, must stay valid under validation.
    VkPhysicalDevice physical_device = instance_->PhysicalDevice();
    uint32_t total = 0;
    ASSERT_EQ(vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &total, nullptr), VK_SUCCESS);
    ASSERT_GT(total, 1u);
    std::vector<VkExtensionProperties> extensions(total);
    uint32_t count = total - 1;
    EXPECT_EQ(vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, extensions.data()), VK_INCOMPLETE);
    EXPECT_EQ(count, total - 1);
    count = total;
    EXPECT_EQ(vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, extensions.data()), VK_SUCCESS);
    bool found = false;
    for (const VkExtensionProperties& extension : extensions) found |= std::strcmp(extension.extensionName, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME) == 0;
    EXPECT_TRUE(found);
}

TEST_F(ValidationBelowLayer, SecondInstanceAndTwoDevicesAtOnce) {
    // Per-instance and per-device state is keyed by dispatch key: a second instance, and devices with and without the
    // extension alive at the same time, must each see exactly their own state, with nothing invalid sent down.
    MessageLog second_log;
    TestInstance second(options_, &second_log);
    ASSERT_EQ(second.result(), VK_SUCCESS);
    DeviceOptions without;
    without.enable_shader_enqueue = false;
    without.chain_shader_enqueue_features = false;
    auto with_a = std::make_unique<TestDevice>(*instance_, DeviceOptions{});
    TestDevice without_a(*instance_, without);
    TestDevice with_b(second, DeviceOptions{});
    ASSERT_EQ(with_a->result(), VK_SUCCESS);
    ASSERT_EQ(without_a.result(), VK_SUCCESS);
    ASSERT_EQ(with_b.result(), VK_SUCCESS);
    EXPECT_NE(with_a->ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    EXPECT_EQ(without_a.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    EXPECT_NE(with_b.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    with_a.reset();
    EXPECT_NE(with_b.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    EXPECT_EQ(second_log.Problems(), "") << "validation or layer messages on the second instance";
}

TEST_F(ValidationBelowLayer, ScratchBufferUsageNeverReachesTheDriver) {
    TestDevice device(*instance_, DeviceOptions{});
    ASSERT_EQ(device.result(), VK_SUCCESS);
    VkBufferCreateInfo create_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create_info.size = 1 << 20;
    create_info.usage = VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    VkBuffer buffer = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateBuffer(device.handle(), &create_info, nullptr, &buffer), VK_SUCCESS);
    vkDestroyBuffer(device.handle(), buffer, nullptr);

    // The maintenance5 form of the same usage, on a driver that may not know maintenance5.
    VkBufferUsageFlags2CreateInfoKHR usage2{VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR};
    usage2.usage = VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX | VK_BUFFER_USAGE_2_SHADER_DEVICE_ADDRESS_BIT_KHR;
    create_info.pNext = &usage2;
    create_info.usage = 0;
    ASSERT_EQ(vkCreateBuffer(device.handle(), &create_info, nullptr, &buffer), VK_SUCCESS);
    vkDestroyBuffer(device.handle(), buffer, nullptr);
    EXPECT_EQ(create_info.pNext, &usage2);
    EXPECT_EQ(usage2.usage, VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX | VK_BUFFER_USAGE_2_SHADER_DEVICE_ADDRESS_BIT_KHR);
}

}  // namespace
}  // namespace execgraph::test
