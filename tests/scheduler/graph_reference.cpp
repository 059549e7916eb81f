#include "graph_reference.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace execgraph::test {

using runtime::DirectoryEntry;
using runtime::kInvalidNode;
using runtime::NodeStaticInfo;
using runtime::NodeState;

namespace {
constexpr uint32_t kLaunchStatic = 0, kLaunchDynamic = 1;
uint32_t Words(uint32_t bytes) { return (bytes + 3) / 4; }
}  // namespace

uint32_t TestGraph::Add(NodeStaticInfo info, uint32_t payload_size) {
    info.record_stride = (payload_size + 3) & ~3u;
    nodes.push_back(info);
    payload_sizes.push_back(payload_size);
    return static_cast<uint32_t>(nodes.size() - 1);
}

NodeStaticInfo TestGraph::Static(uint32_t x, uint32_t y, uint32_t z) {
    NodeStaticInfo info{};
    info.launch = kLaunchStatic;
    info.static_grid[0] = x;
    info.static_grid[1] = y;
    info.static_grid[2] = z;
    info.shares_input_with = kInvalidNode;
    info.is_api_entry = 1;
    return info;
}

NodeStaticInfo TestGraph::Dynamic(uint32_t grid_offset, uint32_t components, uint32_t bits, uint32_t max_x, uint32_t max_y,
                                  uint32_t max_z) {
    NodeStaticInfo info = Static(max_x, max_y, max_z);
    info.launch = kLaunchDynamic;
    info.grid_offset = grid_offset;
    info.grid_components = components;
    info.grid_component_bits = bits;
    return info;
}

NodeStaticInfo TestGraph::Batched(uint32_t launch, uint32_t records_per_workgroup) {
    NodeStaticInfo info = Static(1, 1, 1);
    info.launch = launch;
    info.records_per_workgroup = records_per_workgroup;
    return info;
}

DeviceInfos UploadInfos(GpuHarness* gpu, const TestGraph& graph, const std::vector<TestInfo>& infos) {
    // count info at +4, infos at +28 with a 28-byte stride, payloads after with stride record_stride + 8.
    size_t payload_bytes = 0;
    for (const TestInfo& info : infos) payload_bytes += info.payloads.size() * (graph.nodes[std::min<size_t>(info.node, graph.nodes.size() - 1)].record_stride + 8);
    const uint32_t info_stride = 28;
    const size_t infos_at = 28;
    size_t payloads_at = infos_at + infos.size() * info_stride + 4;
    DeviceInfos result;
    result.buffer = gpu->CreateBuffer(payloads_at + payload_bytes + 64);
    uint8_t* base = result.buffer.mapped;
    result.count_info = result.buffer.address + 4;
    result.host_count_info.count = static_cast<uint32_t>(infos.size());
    result.host_count_info.infos.deviceAddress = result.buffer.address + infos_at;
    result.host_count_info.stride = info_stride;
    std::memcpy(base + 4, &result.host_count_info, sizeof(result.host_count_info));
    for (size_t i = 0; i < infos.size(); ++i) {
        const TestInfo& test_info = infos[i];
        VkDispatchGraphInfoAMDX info{};
        info.nodeIndex = test_info.node;
        info.payloadCount = static_cast<uint32_t>(test_info.payloads.size());
        const uint32_t stride =
            test_info.node < graph.nodes.size() ? graph.nodes[test_info.node].record_stride + 8 : 8;
        info.payloads.deviceAddress = result.buffer.address + payloads_at;
        info.payloadStride = stride;
        for (const std::vector<uint32_t>& payload : test_info.payloads) {
            std::memcpy(base + payloads_at, payload.data(), payload.size() * 4);
            payloads_at += stride;
        }
        std::memcpy(base + infos_at + i * info_stride, &info, sizeof(info));
    }
    return result;
}

HostInfos MakeHostInfos(const TestGraph& graph, const std::vector<TestInfo>& infos) {
    HostInfos result;
    result.storage.resize(infos.size());
    for (size_t i = 0; i < infos.size(); ++i) {
        const TestInfo& test_info = infos[i];
        // The host stride is larger than the payload and not a multiple of 4 bytes of it (payloads are packed by
        // the staging code, whatever the stride).
        const uint32_t size = test_info.node < graph.nodes.size() ? graph.payload_sizes[test_info.node] : 4;
        const uint32_t stride = size + 12;
        std::vector<uint8_t>& bytes = result.storage[i];
        bytes.assign(test_info.payloads.size() * stride + 4, 0xEE);
        for (size_t p = 0; p < test_info.payloads.size(); ++p) {
            std::memcpy(bytes.data() + p * stride, test_info.payloads[p].data(), std::min<size_t>(size, test_info.payloads[p].size() * 4));
        }
        VkDispatchGraphInfoAMDX info{};
        info.nodeIndex = test_info.node;
        info.payloadCount = static_cast<uint32_t>(test_info.payloads.size());
        info.payloads.hostAddress = bytes.data();
        info.payloadStride = stride;
        result.infos.push_back(info);
    }
    result.count_info.count = static_cast<uint32_t>(result.infos.size());
    result.count_info.infos.hostAddress = result.infos.data();
    result.count_info.stride = sizeof(VkDispatchGraphInfoAMDX);
    return result;
}

RecordGrid CpuRecordWorkgroups(const NodeStaticInfo& info, const std::vector<uint32_t>& payload) {
    RecordGrid grid;
    if (info.launch == kLaunchStatic) {
        grid.workgroups = info.static_grid[0] * info.static_grid[1] * info.static_grid[2];
        return grid;
    }
    if (info.launch != kLaunchDynamic) return grid;
    std::vector<uint8_t> bytes(payload.size() * 4);
    std::memcpy(bytes.data(), payload.data(), bytes.size());
    uint64_t product = 1;
    for (uint32_t i = 0; i < 3; ++i) {
        uint32_t value = 1;
        if (i < info.grid_components) {
            if (info.grid_component_bits == 16) {
                uint16_t v16;
                std::memcpy(&v16, bytes.data() + info.grid_offset + 2 * i, 2);
                value = v16;
            } else {
                std::memcpy(&value, bytes.data() + info.grid_offset + 4 * i, 4);
            }
        }
        const uint32_t maximum = info.static_grid[i] == 0 ? 65535 : info.static_grid[i];
        if (value > maximum) {
            value = maximum;
            grid.clamped = true;
        }
        product *= value;
    }
    if (product > 16777215) {
        grid.dropped = true;
        return grid;
    }
    grid.workgroups = static_cast<uint32_t>(product);
    return grid;
}

std::vector<std::vector<std::vector<uint32_t>>> ExpectedRecords(const TestGraph& graph, const std::vector<TestInfo>& infos) {
    std::vector<std::vector<std::vector<uint32_t>>> own(graph.nodes.size());
    for (const TestInfo& info : infos) {
        if (info.node >= graph.nodes.size()) continue;
        for (std::vector<uint32_t> payload : info.payloads) {
            payload.resize(Words(graph.nodes[info.node].record_stride));
            own[info.node].push_back(payload);
        }
    }
    std::vector<std::vector<std::vector<uint32_t>>> expected = own;
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
        const uint32_t source = graph.nodes[n].shares_input_with;
        if (source != kInvalidNode) expected[n].insert(expected[n].end(), own[source].begin(), own[source].end());
    }
    return expected;
}

const DirectoryEntry& InputEntry(const uint8_t* scratch, const ScratchLayout& layout, uint32_t half, const NodeState& state,
                                 uint32_t k) {
    const uint32_t offset = static_cast<uint32_t>(layout.DirectoryOffset(half)) + (state.directory_base + k) * uint32_t{sizeof(DirectoryEntry)};
    return *reinterpret_cast<const DirectoryEntry*>(scratch + offset);
}

std::string CheckLevel(const uint8_t* scratch, const ScratchLayout& layout, const TestGraph& graph, uint32_t half,
                       const std::vector<std::vector<std::vector<uint32_t>>>& expected) {
    std::ostringstream problems;
    const auto* states = reinterpret_cast<const NodeState*>(scratch + layout.NodeStatesOffset(half));
    const uint8_t* heap = scratch + layout.HeapOffset(half);
    uint32_t base = 0;
    for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
        const NodeStaticInfo& info = graph.nodes[n];
        const NodeState& state = states[n];
        const uint32_t count = static_cast<uint32_t>(expected[n].size());
        if (state.record_count != count) problems << "node " << n << ": record_count " << state.record_count << " != " << count << "\n";
        // A level's sole thread or coalescing consumer reads the record list as its directory (InputEntry).
        const bool batched = info.launch > kLaunchDynamic;
        const bool list_is_directory = batched && base == 0 && state.directory_base == 0u - layout.record_capacity;
        // A node without records has no range to point at; the fused level pass leaves its cleared state alone.
        if (state.directory_base != base && !list_is_directory && count != 0) {
            problems << "node " << n << ": directory_base " << state.directory_base << " != " << base << "\n";
        }
        // The node's directory range holds exactly its records (a dynamic broadcast node's in first-workgroup order).
        std::vector<std::vector<uint32_t>> got;
        uint32_t next_workgroup = 0;
        for (uint32_t k = 0; k < std::min(count, state.record_count); ++k) {
            const DirectoryEntry& entry = InputEntry(scratch, layout, half, state, k);
            std::vector<uint32_t> payload(Words(info.record_stride));
            if (entry.payload_offset + info.record_stride > layout.heap_capacity) {
                problems << "node " << n << ": payload offset " << entry.payload_offset << " out of the heap\n";
                continue;
            }
            std::memcpy(payload.data(), heap + entry.payload_offset, info.record_stride);
            const RecordGrid grid = CpuRecordWorkgroups(info, payload);
            // Only broadcast nodes read these two (thread and coalescing nodes get their records by batch).
            if (!batched && entry.finish_counter != grid.workgroups) {
                problems << "node " << n << " slot " << k << ": finish_counter " << entry.finish_counter << " != " << grid.workgroups << "\n";
            }
            // A dynamic broadcast node's entries hold their first workgroup (its workgroups search them); every other
            // node's name the node (a dispatch group's workgroups find their member there).
            const uint32_t want_word = info.launch == kLaunchDynamic ? next_workgroup : n;
            if (entry.first_workgroup_or_node != want_word) {
                problems << "node " << n << " slot " << k << ": first_workgroup_or_node " << entry.first_workgroup_or_node << " != " << want_word
                         << "\n";
            }
            if (entry.recursion_depth != 0) problems << "node " << n << ": entry recursion depth " << entry.recursion_depth << "\n";
            next_workgroup += grid.workgroups;
            got.push_back(payload);
        }
        std::vector<std::vector<uint32_t>> want = expected[n];
        std::sort(got.begin(), got.end());
        std::sort(want.begin(), want.end());
        if (got != want) problems << "node " << n << ": directory payloads differ from the reference (" << got.size() << " vs " << want.size() << ")\n";

        uint32_t total = next_workgroup;
        if (info.launch > kLaunchDynamic) {
            const uint32_t per = std::max(info.records_per_workgroup, 1u);
            total = (count + per - 1) / per;
        }
        if (state.workgroup_count != total) problems << "node " << n << ": workgroup_count " << state.workgroup_count << " != " << total << "\n";
        const uint32_t want_args[3] = {std::min(total, 65535u), (total + 65534) / 65535, total != 0 ? 1u : 0u};
        for (int i = 0; i < 3; ++i) {
            if (state.dispatch[i] != want_args[i]) {
                problems << "node " << n << ": dispatch[" << i << "] " << state.dispatch[i] << " != " << want_args[i] << "\n";
            }
        }
        base += count;
    }
    return problems.str();
}

}  // namespace execgraph::test
