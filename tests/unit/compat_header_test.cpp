// SPDX-License-Identifier: Apache-2.0
//
// Checks vk_amdx_compat.h against the facts sheet (amdx-facts.md sections 2, 3, 5, 6): every struct size and
// member offset, the alignments, every constant, the command signatures, and that C sees the same as C++.
// The include order here is the "after vulkan.h" case; compat_header_c_test.c covers the "instead of" case.
#include <execgraph/vk_amdx_compat.h>
#include <gtest/gtest.h>
#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>

#include "compat_header_facts.h"

namespace {

// Layout facts are compile-time properties: fail the build, not just the test, if one is wrong.
#define EXECGRAPH_STATIC_SIZE(type, bytes) static_assert(sizeof(type) == (bytes), "sizeof(" #type ")");
#define EXECGRAPH_STATIC_OFFSET(type, member, bytes) \
    static_assert(offsetof(type, member) == (bytes), "offsetof(" #type ", " #member ")");
EXECGRAPH_COMPAT_LAYOUT_FACTS(EXECGRAPH_STATIC_SIZE, EXECGRAPH_STATIC_OFFSET)

// The expected value of every fact, keyed by the same textual name the C translation unit reports.
std::map<std::string, uint64_t> ExpectedFacts() {
    std::map<std::string, uint64_t> facts;
#define EXECGRAPH_EXPECT_SIZE(type, bytes) facts["sizeof(" #type ")"] = (bytes);
#define EXECGRAPH_EXPECT_OFFSET(type, member, bytes) facts["offsetof(" #type ", " #member ")"] = (bytes);
#define EXECGRAPH_EXPECT_VALUE(name, expected) facts[#name] = (expected);
    EXECGRAPH_COMPAT_LAYOUT_FACTS(EXECGRAPH_EXPECT_SIZE, EXECGRAPH_EXPECT_OFFSET)
    EXECGRAPH_COMPAT_VALUE_FACTS(EXECGRAPH_EXPECT_VALUE)
    return facts;
}

TEST(CompatHeader, ConstantsMatchFacts) {
#define EXECGRAPH_CHECK_VALUE(name, expected) EXPECT_EQ(static_cast<uint64_t>(name), static_cast<uint64_t>(expected)) << #name;
    EXECGRAPH_COMPAT_VALUE_FACTS(EXECGRAPH_CHECK_VALUE)
}

TEST(CompatHeader, ConstantsHaveTheirEnumTypes) {
    // The enum-typed constants must be usable wherever the official enumerants are (assignment to sType etc.).
    static_assert(std::is_same_v<decltype(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX), const VkStructureType>);
    static_assert(std::is_same_v<decltype(VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX), const VkPipelineBindPoint>);
    static_assert(std::is_same_v<decltype(VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX), const VkBufferUsageFlagBits>);
    static_assert(std::is_same_v<decltype(VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT), const VkStructureType>);
    static_assert(std::is_same_v<VkPipelineCreateFlags2KHR, uint64_t>);
    static_assert(std::is_same_v<VkPipelineCreateFlagBits2KHR, uint64_t>);
    static_assert(std::is_same_v<VkBufferUsageFlags2KHR, uint64_t>);
    static_assert(std::is_same_v<VkBufferUsageFlagBits2KHR, uint64_t>);
    static_assert(sizeof(VkLayerSettingTypeEXT) == 4);
    // They are constant expressions in C++, so they work as case labels (the layer's pNext walkers need that).
    constexpr VkStructureType kFeatures = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX;
    static_assert(static_cast<uint32_t>(kFeatures) == 1000134000u);
    // Same bit in the 32-bit and 64-bit scratch flags; the graph create bit has no 32-bit equivalent (facts 2).
    EXPECT_EQ(static_cast<uint64_t>(VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX),
              VK_BUFFER_USAGE_2_EXECUTION_GRAPH_SCRATCH_BIT_AMDX);
    EXPECT_EQ(static_cast<uint64_t>(VK_PIPELINE_CREATE_LIBRARY_BIT_KHR), VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR);
    EXPECT_EQ(static_cast<uint64_t>(VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT), VK_BUFFER_USAGE_2_INDIRECT_BUFFER_BIT_KHR);
    EXPECT_EQ(static_cast<uint64_t>(VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT), VK_BUFFER_USAGE_2_SHADER_DEVICE_ADDRESS_BIT_KHR);
}

TEST(CompatHeader, NamesAndGuards) {
    EXPECT_STREQ(VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME, "VK_AMDX_shader_enqueue");
    EXPECT_STREQ(VK_EXT_LAYER_SETTINGS_EXTENSION_NAME, "VK_EXT_layer_settings");
    EXPECT_EQ(VK_AMDX_shader_enqueue, 1);
    EXPECT_EQ(VK_EXT_layer_settings, 1);
#if !defined(VK_ENABLE_BETA_EXTENSIONS)
    ADD_FAILURE() << "the compat header must enable beta extensions so that newer official headers win";
#endif
}

TEST(CompatHeader, Alignments) {
    EXPECT_EQ(alignof(VkDeviceOrHostAddressConstAMDX), 8u);  // facts 3.6
    EXPECT_EQ(alignof(VkDispatchGraphInfoAMDX), 8u);
    EXPECT_EQ(alignof(VkDispatchGraphCountInfoAMDX), 8u);
    EXPECT_EQ(alignof(VkPhysicalDeviceShaderEnqueueFeaturesAMDX), 8u);
    EXPECT_EQ(alignof(VkPhysicalDeviceShaderEnqueuePropertiesAMDX), 8u);
    EXPECT_EQ(alignof(VkExecutionGraphPipelineScratchSizeAMDX), 8u);
    EXPECT_EQ(alignof(VkExecutionGraphPipelineCreateInfoAMDX), 8u);
    EXPECT_EQ(alignof(VkPipelineShaderStageNodeCreateInfoAMDX), 8u);
    EXPECT_EQ(alignof(VkLayerSettingEXT), 8u);
    EXPECT_EQ(alignof(VkLayerSettingsCreateInfoEXT), 8u);
}

TEST(CompatHeader, MemberTypes) {
    // facts 3: member types, where a wrong one could keep the same offset.
    static_assert(std::is_same_v<decltype(VkPhysicalDeviceShaderEnqueueFeaturesAMDX::pNext), void*>);
    static_assert(
        std::is_same_v<decltype(VkPhysicalDeviceShaderEnqueuePropertiesAMDX::maxExecutionGraphWorkgroupCount), uint32_t[3]>);
    static_assert(std::is_same_v<decltype(VkExecutionGraphPipelineScratchSizeAMDX::pNext), void*>);
    static_assert(std::is_same_v<decltype(VkExecutionGraphPipelineCreateInfoAMDX::pNext), const void*>);
    static_assert(std::is_same_v<decltype(VkExecutionGraphPipelineCreateInfoAMDX::flags), VkPipelineCreateFlags>);
    static_assert(
        std::is_same_v<decltype(VkExecutionGraphPipelineCreateInfoAMDX::pStages), const VkPipelineShaderStageCreateInfo*>);
    static_assert(
        std::is_same_v<decltype(VkExecutionGraphPipelineCreateInfoAMDX::pLibraryInfo), const VkPipelineLibraryCreateInfoKHR*>);
    static_assert(std::is_same_v<decltype(VkExecutionGraphPipelineCreateInfoAMDX::basePipelineIndex), int32_t>);
    static_assert(std::is_same_v<decltype(VkPipelineShaderStageNodeCreateInfoAMDX::pName), const char*>);
    static_assert(std::is_same_v<decltype(VkDeviceOrHostAddressConstAMDX::deviceAddress), VkDeviceAddress>);
    static_assert(std::is_same_v<decltype(VkDeviceOrHostAddressConstAMDX::hostAddress), const void*>);
    static_assert(std::is_union_v<VkDeviceOrHostAddressConstAMDX>);
    static_assert(!std::is_same_v<VkDeviceOrHostAddressConstAMDX, VkDeviceOrHostAddressConstKHR>);  // distinct type
    static_assert(std::is_same_v<decltype(VkDispatchGraphInfoAMDX::payloads), VkDeviceOrHostAddressConstAMDX>);
    static_assert(std::is_same_v<decltype(VkDispatchGraphInfoAMDX::payloadStride), uint64_t>);
    static_assert(std::is_same_v<decltype(VkDispatchGraphCountInfoAMDX::stride), uint64_t>);
    static_assert(std::is_same_v<decltype(VkPipelineCreateFlags2CreateInfoKHR::flags), VkPipelineCreateFlags2KHR>);
    static_assert(std::is_same_v<decltype(VkBufferUsageFlags2CreateInfoKHR::usage), VkBufferUsageFlags2KHR>);
    static_assert(std::is_same_v<decltype(VkLayerSettingEXT::type), VkLayerSettingTypeEXT>);
    static_assert(std::is_same_v<decltype(VkLayerSettingsCreateInfoEXT::pSettings), const VkLayerSettingEXT*>);
    SUCCEED();
}

TEST(CompatHeader, CommandSignaturesAreVersion2) {
    // facts 5: exact v2 signatures (the v1 ones lacked executionGraph / scratchSize, facts 7.1).
    static_assert(
        std::is_same_v<PFN_vkCreateExecutionGraphPipelinesAMDX,
                       VkResult(VKAPI_PTR*)(VkDevice, VkPipelineCache, uint32_t, const VkExecutionGraphPipelineCreateInfoAMDX*,
                                            const VkAllocationCallbacks*, VkPipeline*)>);
    static_assert(std::is_same_v<PFN_vkGetExecutionGraphPipelineScratchSizeAMDX,
                                 VkResult(VKAPI_PTR*)(VkDevice, VkPipeline, VkExecutionGraphPipelineScratchSizeAMDX*)>);
    static_assert(
        std::is_same_v<PFN_vkGetExecutionGraphPipelineNodeIndexAMDX,
                       VkResult(VKAPI_PTR*)(VkDevice, VkPipeline, const VkPipelineShaderStageNodeCreateInfoAMDX*, uint32_t*)>);
    static_assert(std::is_same_v<PFN_vkCmdInitializeGraphScratchMemoryAMDX,
                                 void(VKAPI_PTR*)(VkCommandBuffer, VkPipeline, VkDeviceAddress, VkDeviceSize)>);
    static_assert(std::is_same_v<PFN_vkCmdDispatchGraphAMDX, void(VKAPI_PTR*)(VkCommandBuffer, VkDeviceAddress, VkDeviceSize,
                                                                              const VkDispatchGraphCountInfoAMDX*)>);
    static_assert(
        std::is_same_v<PFN_vkCmdDispatchGraphIndirectAMDX,
                       void(VKAPI_PTR*)(VkCommandBuffer, VkDeviceAddress, VkDeviceSize, const VkDispatchGraphCountInfoAMDX*)>);
    static_assert(std::is_same_v<PFN_vkCmdDispatchGraphIndirectCountAMDX,
                                 void(VKAPI_PTR*)(VkCommandBuffer, VkDeviceAddress, VkDeviceSize, VkDeviceAddress)>);
    SUCCEED();
}

TEST(CompatHeader, CSeesTheSameFacts) {
    size_t count = 0;
    const ExecgraphCompatFactFromC* from_c = ExecgraphCompatFactsFromC(&count);
    const std::map<std::string, uint64_t> expected = ExpectedFacts();
    ASSERT_EQ(count, expected.size());
    for (size_t i = 0; i < count; ++i) {
        auto it = expected.find(from_c[i].name);
        ASSERT_NE(it, expected.end()) << from_c[i].name;
        EXPECT_EQ(from_c[i].value, it->second) << "C sees a different " << from_c[i].name;
    }
    EXPECT_STREQ(ExecgraphCompatAmdxExtensionNameFromC(), "VK_AMDX_shader_enqueue");
    EXPECT_STREQ(ExecgraphCompatLayerSettingsExtensionNameFromC(), "VK_EXT_layer_settings");
}

TEST(CompatHeader, StructsChainAsDocumented) {
    // A usage smoke test: the declarations compose the way the layer will use them.
    VkPhysicalDeviceShaderEnqueueFeaturesAMDX features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX};
    VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &features};
    const auto* base = static_cast<const VkBaseInStructure*>(features2.pNext);
    EXPECT_EQ(base->sType, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX);

    VkPipelineCreateFlags2CreateInfoKHR flags2{
        VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR, nullptr,
        VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX | VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR};
    EXPECT_EQ(flags2.flags >> 32, 1u);

    VkDispatchGraphInfoAMDX info{};
    info.payloads.deviceAddress = 0x1234;
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    EXPECT_EQ(static_cast<const VkDispatchGraphInfoAMDX*>(count_info.infos.hostAddress)->payloads.deviceAddress, 0x1234u);
    EXPECT_EQ(VK_SHADER_INDEX_UNUSED_AMDX, UINT32_MAX);
}

}  // namespace
