// Test helpers shared by the scheduler tests: synthetic node tables, entry infos in host or device memory, and the CPU
// reference for what the meta passes must leave in scratch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "execgraph/runtime/scratch_layout.h"
#include "gpu_harness.h"
#include "scratch_plan.h"

namespace execgraph::test {

// A graph's static description as RecordInitialize and GraphPlan receive it.
struct TestGraph {
    std::vector<runtime::NodeStaticInfo> nodes;
    std::vector<uint32_t> payload_sizes;  // exact payload bytes per node

    uint32_t Add(runtime::NodeStaticInfo info, uint32_t payload_size);
    static runtime::NodeStaticInfo Static(uint32_t x, uint32_t y, uint32_t z);
    static runtime::NodeStaticInfo Dynamic(uint32_t grid_offset, uint32_t components, uint32_t bits, uint32_t max_x, uint32_t max_y,
                                           uint32_t max_z);
    static runtime::NodeStaticInfo Batched(uint32_t launch, uint32_t records_per_workgroup);
};

// One VkDispatchGraphInfoAMDX: payloads as 32-bit words (each payload_sizes[node] bytes, rounded up to words).
struct TestInfo {
    uint32_t node;
    std::vector<std::vector<uint32_t>> payloads;
};

// The infos in device memory, as vkCmdDispatchGraphIndirect(Count)AMDX read them. Everything sits at addresses that are
// 4- but not 8-byte aligned, and payloads use a stride larger than the payload, to exercise the entry pass's reads.
struct DeviceInfos {
    GpuBuffer buffer;
    VkDeviceAddress count_info = 0;  // VkDispatchGraphCountInfoAMDX
    VkDispatchGraphCountInfoAMDX host_count_info{};  // the same count info, for kHostCountInfo
};
DeviceInfos UploadInfos(GpuHarness* gpu, const TestGraph& graph, const std::vector<TestInfo>& infos);

// Host-side VkDispatchGraphInfoAMDX array for kHostInfos; `storage` keeps the pointed-to payloads alive.
struct HostInfos {
    std::vector<VkDispatchGraphInfoAMDX> infos;
    std::vector<std::vector<uint8_t>> storage;
    VkDispatchGraphCountInfoAMDX count_info{};
};
HostInfos MakeHostInfos(const TestGraph& graph, const std::vector<TestInfo>& infos);

// Workgroups one record launches on a node, as the scatter pass must compute them.
struct RecordGrid {
    uint32_t workgroups = 0;
    bool clamped = false;
    bool dropped = false;  // over maxExecutionGraphWorkgroups
};
RecordGrid CpuRecordWorkgroups(const runtime::NodeStaticInfo& info, const std::vector<uint32_t>& payload);

// Entry k of a node's input, where the lowered node reads it: NodeState::directory_base indexes the directory and wraps
// in 32 bits, so that the record list (record_capacity entries before the directory) serves as the directory of a
// level's sole thread or coalescing consumer (meta_shaders/level.comp, SoleConsumer).
const runtime::DirectoryEntry& InputEntry(const uint8_t* scratch, const ScratchLayout& layout, uint32_t half,
                                          const runtime::NodeState& state, uint32_t k);

// Compares half `half` of a scratch snapshot after prepare/scatter/write_args with the records each node should have
// received (`expected[n]`: payload words of every record node n consumes, its source's included). Returns a
// description of every mismatch, empty when all agree.
std::string CheckLevel(const uint8_t* scratch, const ScratchLayout& layout, const TestGraph& graph, uint32_t half,
                       const std::vector<std::vector<std::vector<uint32_t>>>& expected);

// What each node consumes when every payload of `infos` was enqueued (sharing nodes get their source's too).
std::vector<std::vector<std::vector<uint32_t>>> ExpectedRecords(const TestGraph& graph, const std::vector<TestInfo>& infos);

}  // namespace execgraph::test
