// A small program that CTest scripts run in environments they control (tests/layer/*.cmake). It prints nothing to
// stdout itself, so the scripts can tell whether the layer or the loader did; its exit code is its answer.
//
//   layer_probe shader-enqueue [--named]  exit 0 if the first device advertises VK_AMDX_shader_enqueue. --named
//                                         enables VK_LAYER_EXECGRAPH_shader_enqueue by name (explicit manifest);
//                                         without it the layer must come from an implicit manifest.
//   layer_probe messages                  makes the layer emit a warning and an error with no debug-utils messenger
//                                         (VK_EXT_debug_utils not enabled): an invalid value of the debug_labels setting
//                                         (set by the caller's environment) and vkCmdDispatchGraphAMDX with no graph
//                                         bound. Exit 0 if every call behaved.
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "vulkan_test_support.h"

namespace execgraph::test {
namespace {

int ProbeShaderEnqueue(bool named) {
    MessageLog log;
    InstanceOptions options;
    if (named) options.layers = {kLayerName};
    TestInstance instance(options, &log);
    if (instance.result() != VK_SUCCESS) {
        std::fprintf(stderr, "layer_probe: vkCreateInstance failed (%d)\n", instance.result());
        return 2;
    }
    if (!instance.AdvertisesShaderEnqueue()) {
        std::fprintf(stderr, "layer_probe: VK_AMDX_shader_enqueue is not advertised\n");
        return 1;
    }
    return 0;
}

int ProbeMessages() {
    MessageLog log;
    InstanceOptions options;
    options.layers = {kLayerName};
    options.extensions.clear();  // no VK_EXT_debug_utils, so no messenger: messages can only go to stderr
    TestInstance instance(options, &log);
    if (instance.result() != VK_SUCCESS) return 2;
    TestDevice device(instance, DeviceOptions{});
    if (device.result() != VK_SUCCESS) return 3;
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = device.queue_family();
    VkCommandPool pool = VK_NULL_HANDLE;
    if (vkCreateCommandPool(device.handle(), &pool_info, nullptr, &pool) != VK_SUCCESS) return 4;
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, pool,
                                         VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    if (vkAllocateCommandBuffers(device.handle(), &allocate, &cmd) != VK_SUCCESS) return 5;
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cmd, &begin);
    auto dispatch_graph = reinterpret_cast<PFN_vkCmdDispatchGraphAMDX>(device.ProcAddr("vkCmdDispatchGraphAMDX"));
    if (dispatch_graph == nullptr) return 6;
    VkDispatchGraphCountInfoAMDX count_info{0, {}, sizeof(VkDispatchGraphInfoAMDX)};
    dispatch_graph(cmd, 0, 0, &count_info);  // no execution graph bound: the layer skips it with an error message
    vkEndCommandBuffer(cmd);
    vkDestroyCommandPool(device.handle(), pool, nullptr);
    return 0;
}

}  // namespace
}  // namespace execgraph::test

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "shader-enqueue") return execgraph::test::ProbeShaderEnqueue(argc > 2 && std::strcmp(argv[2], "--named") == 0);
    if (mode == "messages") return execgraph::test::ProbeMessages();
    std::fprintf(stderr, "usage: layer_probe shader-enqueue [--named] | layer_probe messages\n");
    return 64;
}
