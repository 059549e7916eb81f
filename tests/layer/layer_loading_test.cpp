// The layer loads through the Vulkan loader, negotiates interface version 2, advertises VK_AMDX_shader_enqueue on
// lavapipe and passes everything else through.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <vulkan/vk_layer.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "vulkan_test_support.h"

namespace execgraph::test {
namespace {

bool Contains(const std::vector<VkExtensionProperties>& extensions, const char* name, uint32_t* spec_version = nullptr) {
    for (const VkExtensionProperties& extension : extensions) {
        if (std::strcmp(extension.extensionName, name) == 0) {
            if (spec_version) *spec_version = extension.specVersion;
            return true;
        }
    }
    return false;
}

InstanceOptions WithLayer() {
    InstanceOptions options;
    options.layers = {kLayerName};
    return options;
}

// A test suite that silently passes without a device would prove nothing: this one fails instead.
TEST(LayerLoading, LavapipeDeviceIsPresent) {
    MessageLog log;
    TestInstance instance(InstanceOptions{}, &log);
    ASSERT_EQ(instance.result(), VK_SUCCESS);
    ASSERT_NE(instance.PhysicalDevice(), VK_NULL_HANDLE) << "no Vulkan device: is mesa-vulkan-drivers installed?";
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(instance.PhysicalDevice(), &properties);
    EXPECT_GE(properties.apiVersion, VK_API_VERSION_1_3);
}

TEST(LayerLoading, NegotiatesInterfaceVersion2) {
    // EXECGRAPH_LAYER_LIBRARY overrides the build tree's path when the binary runs on another machine.
    const char* path = std::getenv("EXECGRAPH_LAYER_LIBRARY") != nullptr ? std::getenv("EXECGRAPH_LAYER_LIBRARY") : EXECGRAPH_LAYER_LIBRARY_PATH;
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
    auto negotiate = reinterpret_cast<PFN_vkNegotiateLoaderLayerInterfaceVersion>(
        dlsym(library, "vkNegotiateLoaderLayerInterfaceVersion"));
    ASSERT_NE(negotiate, nullptr);

    VkNegotiateLayerInterface interface{LAYER_NEGOTIATE_INTERFACE_STRUCT};
    interface.loaderLayerInterfaceVersion = 5;  // a newer loader: the layer answers with the version it implements
    ASSERT_EQ(negotiate(&interface), VK_SUCCESS);
    EXPECT_EQ(interface.loaderLayerInterfaceVersion, 2u);
    EXPECT_NE(interface.pfnGetInstanceProcAddr, nullptr);
    EXPECT_NE(interface.pfnGetDeviceProcAddr, nullptr);
    // The pointers handed to the loader are the layer's own, even though this process also has libvulkan's functions of
    // the same names: the layer's vkGetInstanceProcAddr answers with itself and with its own vkCreateInstance.
    EXPECT_EQ(reinterpret_cast<void*>(interface.pfnGetInstanceProcAddr(VK_NULL_HANDLE, "vkGetInstanceProcAddr")),
              reinterpret_cast<void*>(interface.pfnGetInstanceProcAddr));
    PFN_vkVoidFunction create_instance = interface.pfnGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance");
    EXPECT_NE(create_instance, nullptr);
    EXPECT_NE(reinterpret_cast<void*>(create_instance), dlsym(RTLD_DEFAULT, "vkCreateInstance"));

    VkNegotiateLayerInterface old_loader{LAYER_NEGOTIATE_INTERFACE_STRUCT};
    old_loader.loaderLayerInterfaceVersion = 1;
    EXPECT_EQ(negotiate(&old_loader), VK_ERROR_INITIALIZATION_FAILED);

    // Only loader-facing symbols are exported.
    EXPECT_EQ(dlsym(library, "_ZN9execgraph9intercept12CreateDeviceEP16VkPhysicalDevice_TPK18VkDeviceCreateInfoPK21VkAllocationCallbacksPP10VkDevice_T"), nullptr);
    dlclose(library);
}

TEST(LayerLoading, LayerIsEnumerated) {
    uint32_t count = 0;
    ASSERT_EQ(vkEnumerateInstanceLayerProperties(&count, nullptr), VK_SUCCESS);
    std::vector<VkLayerProperties> layers(count);
    ASSERT_EQ(vkEnumerateInstanceLayerProperties(&count, layers.data()), VK_SUCCESS);
    bool found = false;
    for (const VkLayerProperties& layer : layers) found |= std::strcmp(layer.layerName, kLayerName) == 0;
    ASSERT_TRUE(found) << "the explicit manifest in the build tree was not found through VK_ADD_LAYER_PATH";

    // VkLayerSettingsCreateInfoEXT is read without VK_EXT_layer_settings being enabled (bookworm's loader refuses the
    // name), so the layer lists no instance extension.
    uint32_t extension_count = 7;
    ASSERT_EQ(vkEnumerateInstanceExtensionProperties(kLayerName, &extension_count, nullptr), VK_SUCCESS);
    EXPECT_EQ(extension_count, 0u);
}

TEST(Advertising, NotAdvertisedWithoutTheLayer) {
    MessageLog log;
    TestInstance instance(InstanceOptions{}, &log);
    ASSERT_EQ(instance.result(), VK_SUCCESS);
    EXPECT_FALSE(instance.AdvertisesShaderEnqueue()) << "lavapipe should not implement AMDX itself";
}

TEST(Advertising, AdvertisedAtSpecVersion2WithTheLayer) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    ASSERT_EQ(instance.result(), VK_SUCCESS);
    uint32_t spec_version = 0;
    ASSERT_TRUE(Contains(instance.DeviceExtensions(), VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME, &spec_version));
    EXPECT_EQ(spec_version, 2u);

    // Asked for the layer's own device extensions: exactly the one it provides.
    std::vector<VkExtensionProperties> own = instance.DeviceExtensions(kLayerName);
    ASSERT_EQ(own.size(), 1u);
    EXPECT_STREQ(own[0].extensionName, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME);

    // Everything the driver lists is still listed, once.
    MessageLog plain_log;
    TestInstance plain(InstanceOptions{}, &plain_log);
    EXPECT_EQ(instance.DeviceExtensions().size(), plain.DeviceExtensions().size() + 1);
    EXPECT_EQ(log.Problems(), "");
}

TEST(Advertising, IncompleteEnumerationFollowsTheTwoCallIdiom) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    VkPhysicalDevice physical_device = instance.PhysicalDevice();
    ASSERT_NE(physical_device, VK_NULL_HANDLE);
    uint32_t total = 0;
    ASSERT_EQ(vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &total, nullptr), VK_SUCCESS);
    ASSERT_GT(total, 1u);

    std::vector<VkExtensionProperties> partial(total);
    uint32_t count = total - 1;
    EXPECT_EQ(vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, partial.data()), VK_INCOMPLETE);
    EXPECT_EQ(count, total - 1);

    count = total + 3;
    std::vector<VkExtensionProperties> roomy(total + 3);
    EXPECT_EQ(vkEnumerateDeviceExtensionProperties(physical_device, nullptr, &count, roomy.data()), VK_SUCCESS);
    EXPECT_EQ(count, total);
    roomy.resize(count);
    EXPECT_TRUE(Contains(roomy, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME));
    // The first total-1 entries of the partial read agree with the full read.
    for (uint32_t i = 0; i + 1 < total; ++i) EXPECT_STREQ(partial[i].extensionName, roomy[i].extensionName);

    count = 0;
    EXPECT_EQ(vkEnumerateDeviceExtensionProperties(physical_device, kLayerName, &count, partial.data()), VK_INCOMPLETE);
    EXPECT_EQ(count, 0u);
}

TEST(Advertising, NotAdvertisedToApplicationsBelowVulkan13) {
    MessageLog log;
    InstanceOptions options = WithLayer();
    options.api_version = VK_API_VERSION_1_2;
    TestInstance instance(options, &log);
    ASSERT_EQ(instance.result(), VK_SUCCESS);
    EXPECT_FALSE(instance.AdvertisesShaderEnqueue());
}

TEST(Advertising, FeaturesAndProperties) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    VkPhysicalDevice physical_device = instance.PhysicalDevice();
    ASSERT_NE(physical_device, VK_NULL_HANDLE);

    VkPhysicalDeviceVulkan13Features vulkan13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceShaderEnqueueFeaturesAMDX features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX, &vulkan13};
    features.shaderEnqueue = VK_FALSE;
    features.shaderMeshEnqueue = VK_TRUE;  // must be overwritten
    VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &features};
    vkGetPhysicalDeviceFeatures2(physical_device, &features2);
    EXPECT_EQ(features.shaderEnqueue, VK_TRUE);
    EXPECT_EQ(features.shaderMeshEnqueue, VK_FALSE);
    // The chain the application passed is intact, and structures after ours were filled by the driver.
    EXPECT_EQ(features2.pNext, &features);
    EXPECT_EQ(features.pNext, &vulkan13);
    EXPECT_EQ(vulkan13.synchronization2, VK_TRUE);

    VkPhysicalDeviceShaderEnqueuePropertiesAMDX properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX};
    VkPhysicalDeviceVulkan11Properties vulkan11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
    vulkan11.pNext = &properties;
    VkPhysicalDeviceProperties2 properties2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &vulkan11};
    vkGetPhysicalDeviceProperties2(physical_device, &properties2);
    EXPECT_GT(vulkan11.subgroupSize, 0u);
    EXPECT_EQ(vulkan11.pNext, &properties);
    // At or above the spec's required limits (facts §13).
    EXPECT_GE(properties.maxExecutionGraphDepth, 32u);
    EXPECT_GE(properties.maxExecutionGraphShaderOutputNodes, 256u);
    EXPECT_GE(properties.maxExecutionGraphShaderPayloadSize, 32768u);
    EXPECT_GE(properties.maxExecutionGraphShaderPayloadCount, 256u);
    EXPECT_LE(properties.executionGraphDispatchAddressAlignment, 4u);
    EXPECT_GT(properties.executionGraphDispatchAddressAlignment, 0u);
    for (uint32_t count : properties.maxExecutionGraphWorkgroupCount) EXPECT_GE(count, 65535u);
    EXPECT_GE(properties.maxExecutionGraphWorkgroups, (1u << 24) - 1);

    // The KHR alias is answered the same way.
    auto features2_khr = reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2KHR>(
        vkGetInstanceProcAddr(instance.handle(), "vkGetPhysicalDeviceFeatures2KHR"));
    if (features2_khr != nullptr) {
        features.shaderEnqueue = VK_FALSE;
        features.pNext = nullptr;
        features2.pNext = &features;
        features2_khr(physical_device, &features2);
        EXPECT_EQ(features.shaderEnqueue, VK_TRUE);
    }
    EXPECT_EQ(log.Problems(), "");
}

TEST(DeviceCreation, WithShaderEnqueueExposesAllSevenCommands) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    TestDevice device(instance, DeviceOptions{});
    ASSERT_EQ(device.result(), VK_SUCCESS);
    for (const char* command : kShaderEnqueueCommands) EXPECT_NE(device.ProcAddr(command), nullptr) << command;
    EXPECT_EQ(log.Problems(), "");
}

TEST(DeviceCreation, WithoutShaderEnqueueHandsOutTheDriversFunctions) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    DeviceOptions options;
    options.enable_shader_enqueue = false;
    options.chain_shader_enqueue_features = false;
    TestDevice device(instance, options);
    ASSERT_EQ(device.result(), VK_SUCCESS);
    for (const char* command : kShaderEnqueueCommands) EXPECT_EQ(device.ProcAddr(command), nullptr) << command;

    // Zero overhead: every command resolves to the same function as on a device created without the layer.
    MessageLog plain_log;
    TestInstance plain_instance(InstanceOptions{}, &plain_log);
    TestDevice plain_device(plain_instance, options);
    ASSERT_EQ(plain_device.result(), VK_SUCCESS);
    for (const char* command : {"vkCreateBuffer", "vkCmdDispatch", "vkCreateComputePipelines", "vkCreateShaderModule",
                                "vkCmdBindPipeline", "vkQueueSubmit", "vkCmdPipelineBarrier2"}) {
        EXPECT_EQ(device.ProcAddr(command), plain_device.ProcAddr(command)) << command;
    }
}

TEST(DeviceCreation, EmulatingDeviceInterceptsOnlyWhatItMust) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    TestDevice device(instance, DeviceOptions{});
    ASSERT_EQ(device.result(), VK_SUCCESS);
    MessageLog plain_log;
    TestInstance plain_instance(InstanceOptions{}, &plain_log);
    DeviceOptions plain_options;
    plain_options.enable_shader_enqueue = false;
    plain_options.chain_shader_enqueue_features = false;
    TestDevice plain_device(plain_instance, plain_options);
    for (const char* command : {"vkCmdDispatch", "vkCmdDispatchIndirect", "vkCmdCopyBuffer", "vkCmdDraw"}) {
        EXPECT_EQ(device.ProcAddr(command), plain_device.ProcAddr(command)) << command;
    }
    // Scratch buffers carry an AMDX usage bit, so buffer creation is the layer's on this device.
    EXPECT_NE(device.ProcAddr("vkCreateBuffer"), plain_device.ProcAddr("vkCreateBuffer"));
}

TEST(DeviceCreation, ExtensionWithoutFeatureStructAndWithCoreFeatures) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    VkPhysicalDeviceFeatures core{};
    core.shaderInt64 = VK_FALSE;  // the layer turns on what it needs without the application noticing
    DeviceOptions options;
    options.chain_shader_enqueue_features = false;
    options.enabled_features = &core;
    TestDevice device(instance, options);
    ASSERT_EQ(device.result(), VK_SUCCESS);
    EXPECT_EQ(core.shaderInt64, VK_FALSE);
    EXPECT_NE(device.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
}

TEST(DeviceCreation, ApplicationChainIsRestoredAfterCreation) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    VkPhysicalDeviceVulkan12Features vulkan12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vulkan12};
    DeviceOptions options;
    options.extra_pnext = &features2;  // chained after the AMDX feature struct, which the layer must unlink
    TestDevice device(instance, options);
    ASSERT_EQ(device.result(), VK_SUCCESS);
    EXPECT_EQ(features2.pNext, &vulkan12);
    EXPECT_EQ(vulkan12.bufferDeviceAddress, VK_FALSE);
    EXPECT_EQ(features2.features.shaderInt64, VK_FALSE);
}

TEST(DeviceCreation, RefusedWhereEmulationIsImpossible) {
    MessageLog log;
    InstanceOptions options = WithLayer();
    options.api_version = VK_API_VERSION_1_2;
    TestInstance instance(options, &log);
    TestDevice device(instance, DeviceOptions{});
    EXPECT_EQ(device.result(), VK_ERROR_EXTENSION_NOT_PRESENT);
    EXPECT_EQ(log.CountWithId("EXECGRAPH-EMULATION-UNAVAILABLE"), 1u) << log.Problems();
}

TEST(DeviceCreation, InvalidGraphCreateInfoFailsCleanlyWithAMessage) {
    MessageLog log;
    TestInstance instance(WithLayer(), &log);
    TestDevice device(instance, DeviceOptions{});
    ASSERT_EQ(device.result(), VK_SUCCESS);
    auto create = reinterpret_cast<PFN_vkCreateExecutionGraphPipelinesAMDX>(device.ProcAddr("vkCreateExecutionGraphPipelinesAMDX"));
    ASSERT_NE(create, nullptr);
    VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
    VkPipeline pipeline = reinterpret_cast<VkPipeline>(uint64_t{0xdead});
    VkResult result = create(device.handle(), VK_NULL_HANDLE, 1, &create_info, nullptr, &pipeline);
    EXPECT_LT(result, VK_SUCCESS);
    EXPECT_EQ(pipeline, VK_NULL_HANDLE);
    EXPECT_EQ(log.CountWithId("EXECGRAPH-PIPELINE-CREATION"), 1u) << log.Problems();
}

TEST(DeviceCreation, TwoInstancesAndTwoDevicesAtOnce) {
    MessageLog log_a, log_b;
    TestInstance instance_a(WithLayer(), &log_a);
    TestInstance instance_b(WithLayer(), &log_b);
    ASSERT_EQ(instance_a.result(), VK_SUCCESS);
    ASSERT_EQ(instance_b.result(), VK_SUCCESS);
    DeviceOptions without;
    without.enable_shader_enqueue = false;
    without.chain_shader_enqueue_features = false;
    auto a1 = std::make_unique<TestDevice>(instance_a, DeviceOptions{});
    TestDevice a2(instance_a, without);
    TestDevice b1(instance_b, DeviceOptions{});
    ASSERT_EQ(a1->result(), VK_SUCCESS);
    ASSERT_EQ(a2.result(), VK_SUCCESS);
    ASSERT_EQ(b1.result(), VK_SUCCESS);
    EXPECT_NE(a1->ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    EXPECT_EQ(a2.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    EXPECT_NE(b1.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    // Destroying one device leaves the others' state alone.
    a1.reset();
    EXPECT_NE(b1.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    EXPECT_EQ(a2.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
    EXPECT_TRUE(instance_b.AdvertisesShaderEnqueue());
}

TEST(DeviceCreation, ConcurrentInstancesAndDevicesFromManyThreads) {
    constexpr int kThreads = 8;
    std::vector<std::thread> threads;
    std::vector<int> successes(kThreads, 0);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &successes] {
            for (int round = 0; round < 3; ++round) {
                MessageLog log;
                TestInstance instance(WithLayer(), &log);
                DeviceOptions options;
                options.enable_shader_enqueue = (t + round) % 2 == 0;
                options.chain_shader_enqueue_features = options.enable_shader_enqueue;
                TestDevice device(instance, options);
                const bool exposed = device.ProcAddr("vkCmdDispatchGraphAMDX") != nullptr;
                if (device.result() == VK_SUCCESS && exposed == options.enable_shader_enqueue) ++successes[t];
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(successes[t], 3) << "thread " << t;
}

TEST(LayerSettings, ApiSettingsReachTheLayer) {
    MessageLog log;
    VkBool32 yes = VK_TRUE;
    const VkLayerSettingEXT settings[] = {
        {kLayerName, "no_such_setting", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 1, &yes},
        {"VK_LAYER_SOMEONE_else", "force_enable", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 1, &yes},
    };
    VkLayerSettingsCreateInfoEXT settings_info{VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT, nullptr, 2, settings};
    InstanceOptions options = WithLayer();
    options.extra_pnext = &settings_info;
    TestInstance instance(options, &log);
    ASSERT_EQ(instance.result(), VK_SUCCESS);
    // The unknown key is reported once, as a warning naming it; the other layer's entry is not ours to judge.
    std::string warnings;
    for (const MessageLog::Message& message : log.Messages()) {
        if (message.id == "EXECGRAPH-SETTINGS") warnings += message.text + "\n";
    }
    EXPECT_NE(warnings.find("no_such_setting"), std::string::npos) << warnings;
    EXPECT_EQ(warnings.find("VK_LAYER_SOMEONE_else"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace execgraph::test
