// What the emulation needs from a physical device, and the VK_AMDX_shader_enqueue limits the layer advertises there.
//
// Requirements (docs/design.md, "Requirements"): the lowered node shaders reach payloads through buffer device
// addresses (PhysicalStorageBuffer64, so 64-bit integers for address arithmetic), the scheduler's meta shaders
// aggregate ring allocations with subgroup ballot/arithmetic operations, and the layer records with Vulkan 1.3 core
// commands (synchronization2 barriers), and the scatter pass orders records with one 64-bit atomic. So: instance and
// device API version 1.3, bufferDeviceAddress, shaderBufferInt64Atomics, scalarBlockLayout (DXC's record layout),
// shaderInt64, and subgroup basic+vote+ballot+arithmetic in the compute stage. Every Vulkan 1.3 desktop driver and lavapipe meet this.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

#include "dispatch_table.h"
#include "execgraph/vk_amdx_compat.h"

namespace execgraph {

struct PhysicalDeviceSupport {
    bool native_shader_enqueue = false;  // the driver below already exposes VK_AMDX_shader_enqueue
    std::string missing_requirement;     // empty when the emulation can run on this device
    bool storage_buffer_16bit_access = false;  // optional: records with 16-bit members need it
    bool storage_buffer_8bit_access = false;   // optional: records with 8-bit members need it
    VkPhysicalDeviceLimits limits{};
    uint32_t subgroup_size = 0;
    VkPhysicalDeviceType device_type = VK_PHYSICAL_DEVICE_TYPE_OTHER;

    bool CanEmulate() const { return missing_requirement.empty(); }
};

PhysicalDeviceSupport QueryPhysicalDeviceSupport(const InstanceDispatchTable& dispatch, uint32_t instance_api_version,
                                                 VkPhysicalDevice physical_device);

// The limits the layer honours (docs/design.md, "Advertised limits"): the spec's required minimums (facts §13), which the
// scheduler and lowering guarantee on every supported device. Leaves sType and pNext alone.
void FillAdvertisedProperties(const PhysicalDeviceSupport& support, VkPhysicalDeviceShaderEnqueuePropertiesAMDX* properties);

// The features struct as the layer reports it: shaderEnqueue yes, shaderMeshEnqueue no (mesh nodes are not emulated).
void FillAdvertisedFeatures(VkPhysicalDeviceShaderEnqueueFeaturesAMDX* features);

inline constexpr uint32_t kAdvertisedMaxGraphDepth = 32;
inline constexpr uint32_t kAdvertisedMaxShaderOutputNodes = 256;
inline constexpr uint32_t kAdvertisedMaxShaderPayloadSize = 32768;
inline constexpr uint32_t kAdvertisedMaxShaderPayloadCount = 256;
inline constexpr uint32_t kAdvertisedDispatchAddressAlignment = 4;
inline constexpr uint32_t kAdvertisedMaxWorkgroupCountPerDimension = 65535;
inline constexpr uint32_t kAdvertisedMaxWorkgroups = (1u << 24) - 1;

}  // namespace execgraph
