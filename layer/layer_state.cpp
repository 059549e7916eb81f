#include "layer_state.h"

namespace execgraph {
namespace {

// Constructed on first use, so loading the library runs no constructors, and deliberately never destroyed: applications
// destroy devices and instances from their own static destructors, which may run after ours would have.
ConcurrentMap<DispatchKey, std::shared_ptr<InstanceState>>& Instances() {
    static auto* instances = new ConcurrentMap<DispatchKey, std::shared_ptr<InstanceState>>;
    return *instances;
}

ConcurrentMap<DispatchKey, std::shared_ptr<DeviceState>>& Devices() {
    static auto* devices = new ConcurrentMap<DispatchKey, std::shared_ptr<DeviceState>>;
    return *devices;
}

}  // namespace

const PhysicalDeviceSupport& InstanceState::SupportOf(VkPhysicalDevice physical_device) {
    if (auto cached = physical_device_support.Find(physical_device)) return **cached;
    // Two threads may both compute it; the answers are equal and the first one stored wins. The returned reference stays
    // valid because entries are never replaced or removed while the instance lives.
    auto support = std::make_shared<const PhysicalDeviceSupport>(QueryPhysicalDeviceSupport(dispatch, api_version, physical_device));
    return *physical_device_support.FindOrInsert(physical_device, std::move(support));
}

std::shared_ptr<InstanceState> FindInstanceState(DispatchKey key) { return Instances().Find(key).value_or(nullptr); }
void RegisterInstanceState(DispatchKey key, std::shared_ptr<InstanceState> state) { Instances().InsertOrAssign(key, std::move(state)); }
std::shared_ptr<InstanceState> UnregisterInstanceState(DispatchKey key) { return Instances().Pop(key).value_or(nullptr); }

std::shared_ptr<DeviceState> FindDeviceState(DispatchKey key) { return Devices().Find(key).value_or(nullptr); }
void RegisterDeviceState(DispatchKey key, std::shared_ptr<DeviceState> state) { Devices().InsertOrAssign(key, std::move(state)); }
std::shared_ptr<DeviceState> UnregisterDeviceState(DispatchKey key) { return Devices().Pop(key).value_or(nullptr); }

}  // namespace execgraph
