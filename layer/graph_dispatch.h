// Recording of vkCmdInitializeGraphScratchMemoryAMDX and the three graph dispatch commands: checks the application's
// arguments, hands the scheduler a plan, and restores the application's compute state afterwards.
#pragma once

#include <vulkan/vulkan.h>

#include "execgraph/vk_amdx_compat.h"

namespace execgraph {

struct DeviceState;

// Where a dispatch's entry records come from (facts §12.2).
struct GraphEntries {
    enum class Kind {
        kHost,             // vkCmdDispatchGraphAMDX: count info, infos and payloads on the host, copied at record time
        kDeviceInfos,      // vkCmdDispatchGraphIndirectAMDX: count and stride on the host, infos and payloads on the device
        kDeviceCountInfo,  // vkCmdDispatchGraphIndirectCountAMDX: everything on the device
    };
    Kind kind = Kind::kHost;
    const VkDispatchGraphCountInfoAMDX* host_count_info = nullptr;
    VkDeviceAddress device_count_info = 0;
};

void RecordInitializeScratch(DeviceState& device, VkCommandBuffer command_buffer, VkPipeline execution_graph,
                             VkDeviceAddress scratch, VkDeviceSize scratch_size);

void RecordGraphDispatch(DeviceState& device, VkCommandBuffer command_buffer, VkDeviceAddress scratch, VkDeviceSize scratch_size,
                         const GraphEntries& entries, const char* command_name);

}  // namespace execgraph
