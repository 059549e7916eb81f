#include "layer_state.h"

#include <atomic>

namespace execgraph {
namespace {

using InstanceMap = ConcurrentMap<DispatchKey, std::shared_ptr<InstanceState>>;
using DeviceMap = ConcurrentMap<DispatchKey, std::shared_ptr<DeviceState>>;

// The maps are created on first use (constant-initialised pointers: loading the library runs no constructors) and are
// freed when the library is unloaded or the process exits, but only while empty: applications destroy devices and
// instances from their own static destructors, which may run after ours, and those must still find their state.
// (A map left behind by a dlclose would otherwise be unreachable memory: LeakSanitizer reported exactly that.)
std::atomic<InstanceMap*> g_instances{nullptr};
std::atomic<DeviceMap*> g_devices{nullptr};

template <typename Map>
Map& CreatedOnFirstUse(std::atomic<Map*>& slot) {
    Map* map = slot.load(std::memory_order_acquire);
    if (map != nullptr) return *map;
    auto* created = new Map;
    if (slot.compare_exchange_strong(map, created, std::memory_order_acq_rel)) return *created;
    delete created;  // another thread won; `map` now holds its map
    return *map;
}

template <typename Map>
void FreeIfEmpty(std::atomic<Map*>& slot) {
    Map* map = slot.load(std::memory_order_acquire);
    if (map == nullptr || map->Size() != 0) return;
    slot.store(nullptr, std::memory_order_release);
    delete map;
}

__attribute__((destructor)) void FreeEmptyStateMaps() {
    FreeIfEmpty(g_devices);
    FreeIfEmpty(g_instances);
}

InstanceMap& Instances() { return CreatedOnFirstUse(g_instances); }
DeviceMap& Devices() { return CreatedOnFirstUse(g_devices); }

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
void RegisterDeviceState(DispatchKey key, std::shared_ptr<DeviceState> state) {
    Devices().InsertOrAssign(key, std::move(state));
    InvalidateRecordingCaches();
}
std::shared_ptr<DeviceState> UnregisterDeviceState(DispatchKey key) {
    std::shared_ptr<DeviceState> state = Devices().Pop(key).value_or(nullptr);
    InvalidateRecordingCaches();
    return state;
}

namespace {
// Starts at 1, so that a thread's zero-initialised cache never matches.
std::atomic<uint64_t> g_recording_generation{1};

struct RecordingDeviceCache {
    DispatchKey key;
    DeviceState* state;
    uint64_t generation;
};
// Trivial, so constant-initialised: no per-thread constructor or destructor runs.
thread_local RecordingDeviceCache t_recording_device{};
}  // namespace

uint64_t RecordingCacheGeneration() { return g_recording_generation.load(std::memory_order_acquire); }
void InvalidateRecordingCaches() { g_recording_generation.fetch_add(1, std::memory_order_acq_rel); }

DeviceState* FindRecordingDeviceState(DispatchKey key) {
    const uint64_t generation = RecordingCacheGeneration();
    RecordingDeviceCache& cache = t_recording_device;
    if (cache.generation == generation && cache.key == key) return cache.state;
    // The map's reference is dropped on return: the registered state outlives it until it is unregistered, which advances
    // the generation.
    DeviceState* state = FindDeviceState(key).get();
    cache = {key, state, generation};
    return state;
}

}  // namespace execgraph
