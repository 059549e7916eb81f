// The implicit manifest, found through a test-private XDG data home (bookworm's loader predates
// VK_ADD_IMPLICIT_LAYER_PATH): the layer loads without being named, and its disable variable turns it off.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <vector>

#include "vulkan_test_support.h"

namespace execgraph::test {
namespace {

bool LayerIsListed() {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    for (uint32_t i = 0; i < count; ++i) {
        if (std::strcmp(layers[i].layerName, kLayerName) == 0) return true;
    }
    return false;
}

TEST(ImplicitLayer, LoadsWithoutBeingNamed) {
    unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DISABLE");
    EXPECT_TRUE(LayerIsListed());
    MessageLog log;
    TestInstance instance(InstanceOptions{}, &log);  // no layer named
    ASSERT_EQ(instance.result(), VK_SUCCESS);
    EXPECT_TRUE(instance.AdvertisesShaderEnqueue());
    TestDevice device(instance, DeviceOptions{});
    ASSERT_EQ(device.result(), VK_SUCCESS);
    EXPECT_NE(device.ProcAddr("vkCmdDispatchGraphAMDX"), nullptr);
}

TEST(ImplicitLayer, DisableVariableTurnsItOff) {
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_DISABLE", "1", 1);
    MessageLog log;
    TestInstance instance(InstanceOptions{}, &log);
    ASSERT_EQ(instance.result(), VK_SUCCESS);
    EXPECT_FALSE(instance.AdvertisesShaderEnqueue());
    unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DISABLE");
}

}  // namespace
}  // namespace execgraph::test
