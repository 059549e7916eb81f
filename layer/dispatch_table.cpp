#include "dispatch_table.h"

namespace execgraph {

void LoadInstanceDispatchTable(VkInstance instance, PFN_vkGetInstanceProcAddr next_get_instance_proc_addr,
                               InstanceDispatchTable* table) {
    table->GetInstanceProcAddr = next_get_instance_proc_addr;
#define EXECGRAPH_LOAD_INSTANCE(name) \
    table->name = reinterpret_cast<PFN_vk##name>(next_get_instance_proc_addr(instance, "vk" #name));
    EXECGRAPH_NEXT_INSTANCE_FUNCTIONS(EXECGRAPH_LOAD_INSTANCE)
#undef EXECGRAPH_LOAD_INSTANCE
}

void LoadDeviceDispatchTable(VkDevice device, PFN_vkGetDeviceProcAddr next_get_device_proc_addr, DeviceDispatchTable* table) {
#define EXECGRAPH_LOAD_DEVICE(name) table->name = reinterpret_cast<PFN_vk##name>(next_get_device_proc_addr(device, "vk" #name));
    EXECGRAPH_NEXT_DEVICE_FUNCTIONS(EXECGRAPH_LOAD_DEVICE)
#undef EXECGRAPH_LOAD_DEVICE
    // The device table's own GetDeviceProcAddr must be the next layer's, whatever it answers for its own name.
    table->GetDeviceProcAddr = next_get_device_proc_addr;
}

}  // namespace execgraph
