// The meta passes (enqueue_entries, then the fused level pass or the split prepare, scatter and write_args passes) on
// synthetic graphs, without node shaders: the graph plan has one level that dispatches no node, and the test reads
// scratch back and compares it with a CPU reference. Every test runs with both level-pass structures.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "graph_reference.h"

namespace execgraph::test {
namespace {

using runtime::GraphHeader;
using runtime::HalfHeader;
using runtime::kInvalidNode;
using runtime::NodeState;

constexpr uint32_t kGraphTag = 0x600DF00Du;
constexpr uint32_t kLaunchCoalescing = 2, kLaunchThread = 3;

enum class Source { kHost, kHostCountDeviceInfos, kDeviceCount };
const char* SourceName(Source source) {
    switch (source) {
        case Source::kHost: return "host infos";
        case Source::kHostCountDeviceInfos: return "host count, device infos";
        case Source::kDeviceCount: return "device count info";
    }
    return "";
}

struct Outcome {
    std::vector<uint8_t> scratch;  // snapshot after the dispatch
    ScratchLayout layout;
    RecordResult result;
    const GraphHeader& header() const { return *reinterpret_cast<const GraphHeader*>(scratch.data()); }
    const HalfHeader& half(uint32_t h) const { return *reinterpret_cast<const HalfHeader*>(scratch.data() + layout.half_offset[h]); }
    const NodeState& state(uint32_t h, uint32_t n) const {
        return reinterpret_cast<const NodeState*>(scratch.data() + layout.NodeStatesOffset(h))[n];
    }
    const runtime::NodeStats& stats(uint32_t n) const {
        return reinterpret_cast<const runtime::NodeStats*>(scratch.data() + layout.node_stats_offset)[n];
    }
};

class MetaPassBase : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_EQ(gpu_.error(), ""); }

    // Initializes scratch for `graph` (tag kGraphTag), dispatches `infos` from `source` with `levels` (default: one
    // level, no node dispatched) and returns the scratch contents.
    Outcome Dispatch(const TestGraph& graph, const std::vector<TestInfo>& infos, Source source,
                     std::vector<std::vector<uint32_t>> levels = {{}}, uint32_t dispatch_tag = kGraphTag, VkDeviceSize extra = 0) {
        Outcome outcome;
        const uint32_t node_count = static_cast<uint32_t>(graph.nodes.size());
        GraphPlan plan;
        plan.graph_tag = dispatch_tag;
        plan.scratch_plan = ScratchPlan(node_count, 2, 64);
        plan.levels = std::move(levels);
        plan.force_split_level_passes = split_level_passes_;
        plan.has_dispatch_groups = dispatch_groups_;
        for (uint32_t n = 0; n < node_count; ++n) {
            NodeDispatchPlan node;
            node.payload_size = graph.payload_sizes[n];
            node.shares_input_with = graph.nodes[n].shares_input_with;
            node.is_api_entry = graph.nodes[n].is_api_entry != 0;
            plan.nodes.push_back(node);
        }
        const VkDeviceSize size = plan.scratch_plan.MinSize() + extra;
        outcome.layout = *plan.scratch_plan.LayoutFor(size);
        GpuBuffer scratch = gpu_.CreateBuffer(size);
        // Garbage everywhere: nothing may depend on scratch being zero beyond what initialization writes.
        std::memset(scratch.mapped, 0xA5, size);
        const ScratchBinding binding{scratch.buffer, 0, scratch.address, size};
        const std::vector<uint32_t> output_table = {kInvalidNode, 0};

        DeviceInfos device_infos;
        HostInfos host_infos;
        EntrySource entries;
        if (source == Source::kHost) {
            host_infos = MakeHostInfos(graph, infos);
            entries = EntrySource::HostInfos(host_infos.count_info);
        } else {
            device_infos = UploadInfos(&gpu_, graph, infos);
            entries = source == Source::kDeviceCount ? EntrySource::DeviceCountInfo(device_infos.count_info)
                                                     : EntrySource::HostCountInfo(device_infos.host_count_info);
        }
        gpu_.Run([&](VkCommandBuffer cmd) {
            RecordResult init = gpu_.recorder().RecordInitialize(cmd, binding, plan.scratch_plan, kGraphTag, graph.nodes, output_table);
            EXPECT_EQ(init.result, VK_SUCCESS) << init.error;
            if (!earlier_infos_.empty()) {
                // The host's entries are copied into the command buffer while recording.
                const HostInfos earlier = MakeHostInfos(graph, earlier_infos_);
                const RecordResult earlier_result =
                    gpu_.recorder().RecordDispatch(cmd, binding, plan, EntrySource::HostInfos(earlier.count_info), options_);
                EXPECT_EQ(earlier_result.result, VK_SUCCESS) << earlier_result.error;
            }
            outcome.result = gpu_.recorder().RecordDispatch(cmd, binding, plan, entries, options_);
            EXPECT_EQ(outcome.result.result, VK_SUCCESS) << outcome.result.error;
        });
        outcome.scratch.assign(scratch.mapped, scratch.mapped + size);
        gpu_.DestroyBuffer(&scratch);
        gpu_.DestroyBuffer(&device_infos.buffer);
        return outcome;
    }

    GpuHarness gpu_;
    bool split_level_passes_ = false;
    bool dispatch_groups_ = false;  // GraphPlan::has_dispatch_groups (the groups themselves are in the graph's NodeStaticInfo)
    DispatchOptions options_;  // what Dispatch() records with
    // Dispatched from the host on the same scratch before the dispatch Dispatch() returns, leaving its states behind.
    std::vector<TestInfo> earlier_infos_;
};

std::string LevelPassesName(bool split) { return split ? "SplitLevelPasses" : "FusedLevelPass"; }

// Parameter: force the split level passes.
class MetaPassTest : public MetaPassBase, public ::testing::WithParamInterface<bool> {
  protected:
    void SetUp() override {
        MetaPassBase::SetUp();
        split_level_passes_ = GetParam();
    }
};

// A payload whose first word is a unique id, then `words - 1` words from `fill`.
std::vector<uint32_t> Payload(uint32_t id, uint32_t words, std::vector<uint32_t> fill = {}) {
    std::vector<uint32_t> payload(words, 0);
    payload[0] = id;
    for (size_t i = 0; i < fill.size() && i + 1 < words; ++i) payload[i + 1] = fill[i];
    return payload;
}

// Nodes of every launch kind, a > 65535-workgroup node, a sharing node and a node that receives nothing.
TestGraph MixedGraph() {
    TestGraph graph;
    graph.Add(TestGraph::Static(2, 3, 4), 8);                       // 0: 24 workgroups per record
    graph.Add(TestGraph::Dynamic(4, 3, 32, 10, 10, 10), 16);        // 1: uint3 grid at offset 4
    graph.Add(TestGraph::Dynamic(6, 2, 16, 300, 300, 1), 12);       // 2: u16vec2 grid at offset 6 (straddles a word)
    graph.Add(TestGraph::Batched(kLaunchCoalescing, 4), 4);         // 3
    graph.Add(TestGraph::Batched(kLaunchThread, 32), 6);            // 4: payload size not a multiple of 4
    graph.Add(TestGraph::Static(300, 300, 1), 4);                   // 5: 90000 workgroups per record: y split
    runtime::NodeStaticInfo sharer = TestGraph::Static(1, 2, 1);
    sharer.shares_input_with = 0;
    sharer.is_api_entry = 0;
    graph.Add(sharer, 8);                                           // 6: consumes node 0's records
    graph.Add(TestGraph::Dynamic(0, 1, 32, 0, 0, 0), 4);            // 7: receives nothing
    return graph;
}

std::vector<TestInfo> MixedInfos(uint32_t seed) {
    std::mt19937 random(seed);
    auto uniform = [&random](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(random); };
    std::vector<TestInfo> infos;
    uint32_t id = 1;
    for (uint32_t round = 0; round < 3; ++round) {
        TestInfo n0{0, {}}, n1{1, {}}, n2{2, {}}, n3{3, {}}, n4{4, {}}, n5{5, {}};
        for (uint32_t i = uniform(1, 40); i > 0; --i) n0.payloads.push_back(Payload(id++, 2, {uniform(0, 1000)}));
        for (uint32_t i = uniform(1, 90); i > 0; --i) {
            n1.payloads.push_back(Payload(id++, 4, {uniform(0, 10), uniform(1, 10), uniform(1, 10)}));
        }
        for (uint32_t i = uniform(1, 30); i > 0; --i) {
            // u16 x at byte 6 (high half of word 1), u16 y at byte 8 (low half of word 2).
            const uint32_t x = uniform(1, 300), y = uniform(1, 300);
            n2.payloads.push_back({id++, x << 16 | 0xBEEF, 0xCAFE0000u | y});
        }
        for (uint32_t i = uniform(1, 70); i > 0; --i) n3.payloads.push_back(Payload(id++, 1));
        for (uint32_t i = uniform(1, 200); i > 0; --i) n4.payloads.push_back(Payload(id++, 2, {uniform(0, 0xFFFF)}));
        n5.payloads.push_back(Payload(id++, 1));
        infos.insert(infos.end(), {n0, n1, n2, n3, n4, n5});
        infos.push_back({3, {}});  // payloadCount 0 enqueues nothing (facts 12.4)
    }
    return infos;
}

class MetaPassSources : public MetaPassBase, public ::testing::WithParamInterface<std::tuple<Source, bool>> {
  protected:
    void SetUp() override {
        MetaPassBase::SetUp();
        split_level_passes_ = std::get<1>(GetParam());
    }
};

TEST_P(MetaPassSources, MixedGraphMatchesCpuReference) {
    const TestGraph graph = MixedGraph();
    const std::vector<TestInfo> infos = MixedInfos(7);
    const Outcome outcome = Dispatch(graph, infos, std::get<0>(GetParam()));
    EXPECT_EQ(outcome.result.host_dropped_records, 0u);
    // Host infos with the fused level pass: the begin transfers write level 0, so the comparison below checks that.
    EXPECT_EQ(outcome.result.host_wrote_level_zero, std::get<0>(GetParam()) == Source::kHost && !split_level_passes_);
    EXPECT_EQ(outcome.header().status_flags, 0u);
    EXPECT_EQ(outcome.header().dropped_records, 0u);
    EXPECT_EQ(outcome.header().input_half, 0u);
    EXPECT_EQ(outcome.header().level, 0u);
    EXPECT_EQ(outcome.header().magic, runtime::kScratchMagic);
    EXPECT_EQ(outcome.header().record_capacity, outcome.layout.record_capacity);
    EXPECT_EQ(outcome.header().half_offset[1], outcome.layout.half_offset[1]);
    EXPECT_EQ(CheckLevel(outcome.scratch.data(), outcome.layout, graph, 0, ExpectedRecords(graph, infos)), "");
    // The 90000-workgroup records of node 5 need a y split.
    EXPECT_EQ(outcome.state(0, 5).workgroup_count, 3u * 90000u);
    EXPECT_EQ(outcome.state(0, 5).dispatch[0], 65535u);
    EXPECT_EQ(outcome.state(0, 5).dispatch[1], 5u);
    EXPECT_EQ(outcome.state(0, 7).dispatch[0], 0u);
    uint32_t total = 0;
    for (const TestInfo& info : infos) total += static_cast<uint32_t>(info.payloads.size());
    EXPECT_EQ(outcome.half(0).record_count, total);
    EXPECT_GE(outcome.header().heap_high_water, outcome.half(0).heap_top);
    EXPECT_EQ(outcome.half(1).record_count, 0u) << "the level pass clears the output half";
}

INSTANTIATE_TEST_SUITE_P(AllEntrySources, MetaPassSources,
                         ::testing::Combine(::testing::Values(Source::kHost, Source::kHostCountDeviceInfos, Source::kDeviceCount),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<Source, bool>>& info) {
                             std::string name = SourceName(std::get<0>(info.param));
                             std::erase_if(name, [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); });
                             return name + LevelPassesName(std::get<1>(info.param));
                         });

TEST_P(MetaPassTest, DynamicGridsAreClampedAndOversizedRecordsDropped) {
    TestGraph graph;
    graph.Add(TestGraph::Dynamic(4, 3, 32, 10, 10, 10), 16);  // 0: MaxNumWorkgroups (10, 10, 10)
    graph.Add(TestGraph::Dynamic(0, 3, 32, 0, 0, 0), 12);     // 1: no maximum: maxExecutionGraphWorkgroupCount applies
    {
        // Within the limits: no flag.
        const std::vector<TestInfo> infos = {{0, {Payload(1, 4, {10, 10, 10}), Payload(2, 4, {0, 5, 5})}}};
        const Outcome outcome = Dispatch(graph, infos, Source::kDeviceCount);
        EXPECT_EQ(outcome.header().status_flags, 0u);
        EXPECT_EQ(outcome.state(0, 0).workgroup_count, 1000u);
        EXPECT_EQ(CheckLevel(outcome.scratch.data(), outcome.layout, graph, 0, ExpectedRecords(graph, infos)), "");
    }
    {
        const std::vector<TestInfo> infos = {
            {0, {Payload(1, 4, {50, 1, 1}), Payload(2, 4, {3, 3, 3})}},
            {1, {{70000, 2, 1}, {65535, 65535, 1}, {4, 4, 4}}},  // clamped to 65535; over 2^24-1: dropped; fine
        };
        const Outcome outcome = Dispatch(graph, infos, Source::kHost);
        EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusGridClamped});
        EXPECT_EQ(outcome.header().dropped_records, 1u) << "the record over maxExecutionGraphWorkgroups";
        EXPECT_EQ(outcome.state(0, 0).workgroup_count, 10u + 27u);
        EXPECT_EQ(outcome.state(0, 1).workgroup_count, 65535u * 2 + 64);
        EXPECT_EQ(CheckLevel(outcome.scratch.data(), outcome.layout, graph, 0, ExpectedRecords(graph, infos)), "");
    }
}

TEST_P(MetaPassTest, InvalidNodeIndexIsFlaggedAndCounted) {
    const TestGraph graph = MixedGraph();
    std::vector<TestInfo> infos = MixedInfos(11);
    for (Source source : {Source::kHost, Source::kDeviceCount}) {
        std::vector<TestInfo> with_invalid = infos;
        with_invalid.insert(with_invalid.begin() + 2, TestInfo{99, std::vector<std::vector<uint32_t>>(7, {5, 5})});
        with_invalid.push_back(TestInfo{kInvalidNode, std::vector<std::vector<uint32_t>>(2, {5, 5})});
        const Outcome outcome = Dispatch(graph, with_invalid, source);
        EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusInvalidNodeIndex}) << SourceName(source);
        EXPECT_EQ(outcome.header().dropped_records, 9u) << SourceName(source);
        EXPECT_EQ(CheckLevel(outcome.scratch.data(), outcome.layout, graph, 0, ExpectedRecords(graph, infos)), "") << SourceName(source);
    }
}

TEST_P(MetaPassTest, HeapOverflowDropsAndCountsRecords) {
    TestGraph graph;
    graph.Add(TestGraph::Batched(kLaunchThread, 64), 1024);
    std::vector<TestInfo> infos;
    uint32_t id = 1;
    for (int i = 0; i < 3; ++i) {
        TestInfo info{0, {}};
        for (int p = 0; p < 200; ++p, ++id) info.payloads.push_back(Payload(id, 256, {id * 3, id * 5}));
        infos.push_back(info);
    }
    const Outcome outcome = Dispatch(graph, infos, Source::kDeviceCount);
    const uint32_t fits = outcome.layout.heap_capacity / 1024;
    ASSERT_LT(fits, 600u);
    EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusHeapOverflow});
    EXPECT_EQ(outcome.header().dropped_records, 600u - fits);
    EXPECT_EQ(outcome.state(0, 0).record_count, fits);
    EXPECT_EQ(outcome.state(0, 0).workgroup_count, (fits + 63) / 64);
    EXPECT_GT(outcome.header().heap_high_water, outcome.layout.heap_capacity) << "high water shows the demand";
    // The kept records are intact, distinct payloads of the input.
    std::set<uint32_t> ids;
    for (uint32_t k = 0; k < fits; ++k) {
        const runtime::DirectoryEntry& entry = InputEntry(outcome.scratch.data(), outcome.layout, 0, outcome.state(0, 0), k);
        const auto* words = reinterpret_cast<const uint32_t*>(outcome.scratch.data() + outcome.layout.HeapOffset(0) + entry.payload_offset);
        EXPECT_EQ(words[1], words[0] * 3) << "payload " << words[0];
        EXPECT_EQ(words[2], words[0] * 5) << "payload " << words[0];
        ids.insert(words[0]);
    }
    EXPECT_EQ(ids.size(), fits);
}

TEST_P(MetaPassTest, RecordListOverflowDropsAndCountsRecords) {
    TestGraph graph;
    graph.Add(TestGraph::Batched(kLaunchCoalescing, 8), 4);
    std::vector<TestInfo> infos;
    uint32_t id = 1;
    for (int i = 0; i < 20; ++i) {
        TestInfo info{0, {}};
        for (int p = 0; p < 250; ++p) info.payloads.push_back({id++});
        infos.push_back(info);
    }
    const Outcome outcome = Dispatch(graph, infos, Source::kDeviceCount);
    const uint32_t capacity = outcome.layout.record_capacity;
    ASSERT_EQ(capacity, ScratchPlan::kMinRecordsPerHalf);
    EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusRecordListOverflow});
    EXPECT_EQ(outcome.header().dropped_records, 5000u - capacity);
    EXPECT_EQ(outcome.state(0, 0).record_count, capacity);
    EXPECT_EQ(outcome.state(0, 0).workgroup_count, capacity / 8);
    // One coalescing consumer: the fused level pass makes the record list its directory and scatters nothing.
    if (!GetParam()) {
        EXPECT_EQ(outcome.state(0, 0).directory_base, 0u - capacity);
    }
    std::set<uint32_t> ids;
    for (uint32_t k = 0; k < capacity; ++k) {
        const runtime::DirectoryEntry& entry = InputEntry(outcome.scratch.data(), outcome.layout, 0, outcome.state(0, 0), k);
        ids.insert(*reinterpret_cast<const uint32_t*>(outcome.scratch.data() + outcome.layout.HeapOffset(0) + entry.payload_offset));
    }
    EXPECT_EQ(ids.size(), capacity);
    EXPECT_GE(*ids.begin(), 1u);
    EXPECT_LE(*ids.rbegin(), 5000u);
}

TEST_P(MetaPassTest, HostPayloadsThatDoNotFitTheStagingAreaAreCounted) {
    TestGraph graph;
    graph.Add(TestGraph::Static(1, 1, 1), 1024);
    std::vector<TestInfo> infos;
    uint32_t id = 1;
    for (int i = 0; i < 3; ++i) {
        TestInfo info{0, {}};
        for (int p = 0; p < 256; ++p) info.payloads.push_back(Payload(id++, 256));
        infos.push_back(info);
    }
    const Outcome outcome = Dispatch(graph, infos, Source::kHost);
    // CPU model of the staging area: count info, three infos, then payloads while they fit, info by info.
    uint64_t used = 24 + 3 * 24;
    uint32_t kept = 0;
    std::vector<TestInfo> kept_infos;
    for (const TestInfo& info : infos) {
        const uint32_t fits = static_cast<uint32_t>(std::min<uint64_t>(info.payloads.size(), (outcome.layout.heap_capacity - used) / 1024));
        used += fits * 1024;
        kept += fits;
        kept_infos.push_back({0, {info.payloads.begin(), info.payloads.begin() + fits}});
    }
    ASSERT_LT(kept, 768u);
    EXPECT_EQ(outcome.result.host_dropped_records, 768u - kept);
    EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusHeapOverflow});
    EXPECT_EQ(outcome.header().dropped_records, 768u - kept);
    EXPECT_EQ(CheckLevel(outcome.scratch.data(), outcome.layout, graph, 0, ExpectedRecords(graph, kept_infos)), "");
}

// The entry pass checks the scratch's graph; where the host wrote level 0 (host infos, fused level pass) level 0's pass
// does, with the same result: every record dropped and charged to its node, nothing dispatched, half 0 empty.
TEST_P(MetaPassTest, ScratchInitializedForAnotherGraphEnqueuesNothing) {
    const TestGraph graph = MixedGraph();
    const std::vector<TestInfo> infos = MixedInfos(3);
    uint32_t total = 0;
    std::vector<uint32_t> per_node(graph.nodes.size(), 0);
    for (const TestInfo& info : infos) {
        total += static_cast<uint32_t>(info.payloads.size());
        per_node[info.node] += static_cast<uint32_t>(info.payloads.size());
    }
    for (Source source : {Source::kDeviceCount, Source::kHost}) {
        const Outcome outcome = Dispatch(graph, infos, source, {{}}, kGraphTag + 1);
        EXPECT_EQ(outcome.result.host_wrote_level_zero, source == Source::kHost && !split_level_passes_) << SourceName(source);
        EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusUninitialized}) << SourceName(source);
        EXPECT_EQ(outcome.header().dropped_records, total) << SourceName(source);
        EXPECT_EQ(outcome.half(0).record_count, 0u) << SourceName(source);
        for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
            EXPECT_EQ(outcome.state(0, n).dispatch[0], 0u) << SourceName(source) << " node " << n;
            EXPECT_EQ(outcome.stats(n).dropped_records, per_node[n]) << SourceName(source) << " node " << n;
            EXPECT_EQ(outcome.stats(n).records, 0u) << SourceName(source) << " node " << n;
        }
    }
}

TEST_P(MetaPassTest, RecordsLeftAfterTheLastLevelAreReported) {
    const TestGraph graph = MixedGraph();
    const std::vector<TestInfo> infos = MixedInfos(5);
    uint32_t total = 0;
    for (const TestInfo& info : infos) total += static_cast<uint32_t>(info.payloads.size());
    // No level at all: every entry record is left over.
    const Outcome outcome = Dispatch(graph, infos, Source::kHostCountDeviceInfos, {});
    EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusDepthLimit});
    EXPECT_EQ(outcome.header().dropped_records, total);
    EXPECT_EQ(outcome.header().levels_run, 0u);
    // Each node is charged its own leftovers, at level 0 (the level count: one past the last level, of which there are none).
    std::vector<uint32_t> per_node(graph.nodes.size(), 0);
    for (const TestInfo& info : infos) per_node[info.node] += static_cast<uint32_t>(info.payloads.size());
    for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
        EXPECT_EQ(outcome.stats(n).dropped_records, per_node[n]) << n;
        EXPECT_EQ(outcome.stats(n).drop_flags, per_node[n] != 0 ? uint32_t{runtime::kStatusDepthLimit} : 0u) << n;
        EXPECT_EQ(outcome.stats(n).first_drop_level_complement, per_node[n] != 0 ? ~0u : 0u) << n;
        EXPECT_EQ(outcome.stats(n).records, 0u) << n;
    }
}

TEST_P(MetaPassTest, SharingNodesBeyondTheDirectoryCapacityAreDropped) {
    // Node 1 shares node 0's input: the directory needs twice the records the list holds.
    TestGraph graph;
    graph.Add(TestGraph::Static(1, 1, 1), 4);
    runtime::NodeStaticInfo sharer = TestGraph::Static(2, 1, 1);
    sharer.shares_input_with = 0;
    graph.Add(sharer, 4);
    std::vector<TestInfo> infos;
    uint32_t id = 1;
    for (int i = 0; i < 12; ++i) {
        TestInfo info{0, {}};
        for (int p = 0; p < 256; ++p) info.payloads.push_back({id++});
        infos.push_back(info);
    }
    const Outcome outcome = Dispatch(graph, infos, Source::kDeviceCount);
    const uint32_t capacity = outcome.layout.record_capacity;
    const uint32_t records = 12 * 256;
    ASSERT_LT(records, capacity);
    const uint32_t sharer_kept = capacity - records;
    EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusRecordListOverflow});
    EXPECT_EQ(outcome.header().dropped_records, records - sharer_kept);
    // Charged to the sharer at level 0; statistics count what each node consumed.
    EXPECT_EQ(outcome.stats(0).dropped_records, 0u);
    EXPECT_EQ(outcome.stats(1).dropped_records, records - sharer_kept);
    EXPECT_EQ(outcome.stats(1).drop_flags, uint32_t{runtime::kStatusRecordListOverflow});
    EXPECT_EQ(outcome.stats(1).first_drop_level_complement, ~0u);
    EXPECT_EQ(outcome.stats(0).records, records);
    EXPECT_EQ(outcome.stats(1).records, sharer_kept);
    EXPECT_EQ(outcome.stats(1).dispatches, 1u);
    EXPECT_EQ(outcome.stats(1).workgroups, 2 * sharer_kept);
    EXPECT_EQ(outcome.header().levels_run, 1u);
    EXPECT_EQ(outcome.header().record_high_water, records);
    EXPECT_EQ(outcome.state(0, 0).record_count, records);
    EXPECT_EQ(outcome.state(0, 1).record_count, sharer_kept);
    EXPECT_EQ(outcome.state(0, 1).directory_base, records);
    // The sharer's dispatch stops at the end of its last kept record.
    EXPECT_EQ(outcome.state(0, 1).workgroup_count, 2 * sharer_kept);
    const auto* directory = reinterpret_cast<const runtime::DirectoryEntry*>(outcome.scratch.data() + outcome.layout.DirectoryOffset(0));
    for (uint32_t k = 0; k < sharer_kept; ++k) {
        EXPECT_EQ(directory[records + k].first_workgroup_or_node, 1u);  // a static broadcast node's entries name it
        EXPECT_EQ(directory[records + k].finish_counter, 2u);
    }
}

TEST_P(MetaPassTest, RecordFailsCleanlyOnTooSmallScratchOrBadPlan) {
    GraphPlan plan;
    plan.scratch_plan = ScratchPlan(2, 0, 0);
    plan.nodes.resize(2);
    plan.levels = {{0}};
    GpuBuffer scratch = gpu_.CreateBuffer(plan.scratch_plan.MinSize());
    gpu_.Run([&](VkCommandBuffer cmd) {
        const RecordResult small =
            gpu_.recorder().RecordDispatch(cmd, {scratch.buffer, 0, scratch.address, plan.scratch_plan.MinSize() - 64}, plan,
                                           EntrySource::DeviceCountInfo(0));
        EXPECT_NE(small.result, VK_SUCCESS);
        EXPECT_NE(small.error.find("minSize"), std::string::npos) << small.error;
        const RecordResult no_pipeline = gpu_.recorder().RecordDispatch(
            cmd, {scratch.buffer, 0, scratch.address, plan.scratch_plan.MinSize()}, plan, EntrySource::DeviceCountInfo(0));
        EXPECT_NE(no_pipeline.result, VK_SUCCESS);
        EXPECT_NE(no_pipeline.error.find("no pipeline"), std::string::npos) << no_pipeline.error;
    });
    gpu_.DestroyBuffer(&scratch);
}

// Hundreds of nodes (several 256-node prefix-sum chunks in every workgroup of the fused pass), many sharing nodes, and
// enough records that the level pass runs several workgroups, so the last-workgroup hand-off is exercised.
TEST_P(MetaPassTest, ManyNodesAndSharersMatchCpuReference) {
    constexpr uint32_t kSources = 600, kSharers = 40;
    TestGraph graph;
    for (uint32_t n = 0; n < kSources; ++n) {
        graph.Add(
            n % 3 == 0 ? TestGraph::Static(1 + n % 5, 2, 1) : TestGraph::Batched(n % 3 == 1 ? kLaunchCoalescing : kLaunchThread, 4),
            4);
    }
    for (uint32_t s = 0; s < kSharers; ++s) {
        runtime::NodeStaticInfo sharer = TestGraph::Static(3, 1, 1);
        sharer.shares_input_with = (s * 37) % kSources;
        sharer.is_api_entry = 0;
        graph.Add(sharer, 4);
    }
    std::mt19937 random(99);
    std::vector<TestInfo> infos;
    uint32_t id = 1;
    for (uint32_t i = 0; i < 400; ++i) {
        TestInfo info{std::uniform_int_distribution<uint32_t>(0, kSources - 1)(random), {}};
        for (uint32_t p = std::uniform_int_distribution<uint32_t>(1, 8)(random); p > 0; --p) info.payloads.push_back({id++});
        infos.push_back(info);
    }
    ASSERT_GT(id - 1, 1024u) << "several level-pass workgroups";
    // From the host, with the fused level pass, the begin transfers write the 640 NodeStates (30 KiB) and the list.
    for (Source source : {Source::kDeviceCount, Source::kHost}) {
        const Outcome outcome = Dispatch(graph, infos, source);
        EXPECT_EQ(outcome.result.host_wrote_level_zero, source == Source::kHost && !split_level_passes_) << SourceName(source);
        EXPECT_EQ(outcome.header().status_flags, 0u) << SourceName(source);
        EXPECT_EQ(CheckLevel(outcome.scratch.data(), outcome.layout, graph, 0, ExpectedRecords(graph, infos)), "") << SourceName(source);
        EXPECT_EQ(outcome.half(0).level_pass_done, 0u) << "the last workgroup resets the counter for the half's next use";
        EXPECT_EQ(outcome.header().levels_run, 1u) << SourceName(source);
    }
}

// The level pass of graphs of up to kFusedLevelSmallGraphMaxNodes nodes has shared arrays for that many nodes only
// (specialization constant 2 of level.comp): a graph of exactly that size, with records for its last node, and one node
// more, which takes the full-size pipeline, both match the CPU reference, from the device and from the host.
TEST_P(MetaPassTest, GraphsAtTheSmallGraphBoundMatchCpuReference) {
    for (uint32_t node_count : {kFusedLevelSmallGraphMaxNodes, kFusedLevelSmallGraphMaxNodes + 1}) {
        TestGraph graph;
        for (uint32_t n = 0; n < node_count; ++n) {
            graph.Add(n % 2 == 0 ? TestGraph::Static(1 + n % 4, 1, 1) : TestGraph::Batched(kLaunchCoalescing, 4), 4);
        }
        std::vector<TestInfo> infos;
        uint32_t id = 1;
        for (uint32_t node : {node_count - 1, 0u, node_count / 2, node_count - 2, node_count - 1}) {
            TestInfo info{node, {}};
            for (uint32_t p = 0; p < 5; ++p) info.payloads.push_back({id++});
            infos.push_back(info);
        }
        for (Source source : {Source::kDeviceCount, Source::kHost}) {
            const Outcome outcome = Dispatch(graph, infos, source);
            EXPECT_EQ(outcome.header().status_flags, 0u) << node_count << " nodes, " << SourceName(source);
            EXPECT_EQ(CheckLevel(outcome.scratch.data(), outcome.layout, graph, 0, ExpectedRecords(graph, infos)), "")
                << node_count << " nodes, " << SourceName(source);
            EXPECT_EQ(outcome.state(0, node_count - 1).record_count, 10u) << node_count << " nodes, " << SourceName(source);
        }
    }
}

// A graph whose NodeStates (2000 x 48 bytes) exceed what one vkCmdUpdateBuffer carries: where the host writes level 0,
// long runs of states without entries are filled with zero between the writes of the entry nodes' states, the header
// and the list (layer/scheduler.cpp, LayOutHostLevelZero). Each dispatch follows one with entries in every node on the
// same scratch, whose level 0 leaves every state of half 0 nonzero, so a state left unwritten shows. Entries in every
// node would take more than 64 KiB of writes: those keep the entry pass, with the same result.
TEST_P(MetaPassTest, LargeGraphEntriesWrittenByTheHostMatchCpuReference) {
    constexpr uint32_t kNodes = 2000;
    TestGraph graph;
    for (uint32_t n = 0; n < kNodes; ++n) {
        graph.Add(n % 2 == 0 ? TestGraph::Static(1 + n % 3, 1, 1) : TestGraph::Batched(kLaunchThread, 32), 8);
    }
    uint32_t id = 1;
    auto info_for = [&id](uint32_t node, uint32_t records) {
        TestInfo info{node, {}};
        for (uint32_t p = 0; p < records; ++p, ++id) info.payloads.push_back(Payload(id, 2, {id * 7}));
        return info;
    };
    // Node 0 (next to the header), neighbours, nodes far apart, one named twice, the last node (next to the list).
    const std::vector<TestInfo> sparse = {info_for(1001, 3), info_for(0, 5),  info_for(2, 1),   info_for(1001, 4),
                                          info_for(1000, 2), info_for(77, 9), info_for(1999, 6), info_for(1500, 0)};
    std::vector<TestInfo> dense;
    for (uint32_t n = 0; n < kNodes; ++n) dense.push_back(info_for(n, 1 + n % 2));
    earlier_infos_ = dense;
    for (const auto& [infos, host_writes] : {std::pair{sparse, true}, std::pair{dense, false}}) {
        const char* name = host_writes ? "sparse entries" : "an entry in every node";
        const Outcome outcome = Dispatch(graph, infos, Source::kHost);
        EXPECT_EQ(outcome.result.host_wrote_level_zero, host_writes && !split_level_passes_) << name;
        EXPECT_EQ(outcome.header().status_flags, 0u) << name;
        EXPECT_EQ(CheckLevel(outcome.scratch.data(), outcome.layout, graph, 0, ExpectedRecords(graph, infos)), "") << name;
        uint32_t total = 0;
        for (const TestInfo& info : infos) total += static_cast<uint32_t>(info.payloads.size());
        EXPECT_EQ(outcome.half(0).record_count, total) << name;
        EXPECT_EQ(outcome.header().levels_run, 1u) << name;
    }
    // Uninitialized for this graph: level 0's check charges every node its host-written records, read from those states.
    const Outcome outcome = Dispatch(graph, sparse, Source::kHost, {{}}, kGraphTag + 1);
    EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusUninitialized});
    std::vector<uint32_t> per_node(kNodes, 0);
    for (const TestInfo& info : sparse) per_node[info.node] += static_cast<uint32_t>(info.payloads.size());
    for (uint32_t n = 0; n < kNodes; ++n) {
        EXPECT_EQ(outcome.stats(n).dropped_records, per_node[n]) << "node " << n;
        EXPECT_EQ(outcome.state(0, n).dispatch[0], 0u) << "node " << n;
    }
}

// Dispatch groups (docs/design.md, "Dispatch groups") whose level totals come near 2^32 workgroups: the fused level pass
// (the only one that has groups) places each member's workgroups after the previous members' and gives the first
// member the group's total, exactly as long as the level's total stays below 2^32; from 2^32 on the group cannot be
// dispatched (its members' first workgroups would wrap), so its records are dropped and reported, never run wrongly.
TEST_F(MetaPassBase, DispatchGroupTotalsAreExactBelowTwoToThe32AndDroppedFromIt) {
    TestGraph graph;
    graph.Add(TestGraph::Dynamic(4, 3, 32, 0, 0, 0), 16);  // 0 and 1: a group of two dynamic-grid nodes
    graph.Add(TestGraph::Dynamic(4, 3, 32, 0, 0, 0), 16);
    graph.Add(TestGraph::Static(3, 1, 1), 8);  // 2: on its own, after the group in node order
    for (uint32_t n : {0u, 1u}) {
        graph.nodes[n].dispatch_group_first = 0;
        graph.nodes[n].dispatch_group_size = 2;
    }
    dispatch_groups_ = true;
    // 65535 x 256 = 16 776 960 workgroups per record, just within maxExecutionGraphWorkgroups (2^24 - 1).
    constexpr uint64_t kRecordWorkgroups = 65535u * 256u;
    auto infos_with = [](uint32_t first_records, uint32_t second_records) {
        std::vector<TestInfo> infos = {{0, {}}, {1, {}}, {2, {Payload(9000, 2)}}};
        for (uint32_t i = 0; i < first_records; ++i) infos[0].payloads.push_back(Payload(i, 4, {65535, 256, 1}));
        for (uint32_t i = 0; i < second_records; ++i) infos[1].payloads.push_back(Payload(1000 + i, 4, {65535, 256, 1}));
        return infos;
    };
    {
        // 255 records: 4 278 124 800 workgroups, 16 776 495 below 2^32.
        const std::vector<TestInfo> infos = infos_with(128, 127);
        const Outcome outcome = Dispatch(graph, infos, Source::kHost, {{}}, kGraphTag, 1u << 20);
        EXPECT_EQ(outcome.header().status_flags, 0u);
        EXPECT_EQ(outcome.header().dropped_records, 0u);
        EXPECT_EQ(outcome.state(0, 0).group_first_workgroup, 0u);
        EXPECT_EQ(outcome.state(0, 1).group_first_workgroup, 128u * kRecordWorkgroups);
        EXPECT_EQ(outcome.state(0, 0).group_workgroups, 255u * kRecordWorkgroups);
        EXPECT_EQ(outcome.state(0, 0).dispatch[0], 65535u);
        EXPECT_EQ(outcome.state(0, 0).dispatch[1], 255u * 256u) << "x times y is the group's total";
        EXPECT_EQ(outcome.state(0, 0).record_count, 128u);
        EXPECT_EQ(outcome.state(0, 1).record_count, 127u);
        EXPECT_EQ(outcome.state(0, 2).workgroup_count, 3u);
    }
    {
        // 257 records: 4 311 678 720 workgroups, past 2^32.
        const std::vector<TestInfo> infos = infos_with(129, 128);
        const Outcome outcome = Dispatch(graph, infos, Source::kHost, {{}}, kGraphTag, 1u << 20);
        EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusGridClamped});
        EXPECT_EQ(outcome.header().dropped_records, 257u);
        EXPECT_EQ(outcome.stats(0).dropped_records, 129u);
        EXPECT_EQ(outcome.stats(1).dropped_records, 128u);
        EXPECT_EQ(outcome.state(0, 0).group_workgroups, 0u);
        EXPECT_EQ(outcome.state(0, 0).dispatch[0], 0u) << "the group is not dispatched";
        EXPECT_EQ(outcome.state(0, 2).workgroup_count, 3u) << "a node outside the group runs as usual";
        EXPECT_EQ(outcome.state(0, 2).dispatch[0], 3u);
    }
}

// The finish pass (layer/scheduler.h, ReportSlot) writing a report slot in a plain buffer, as DispatchReporter's ring.
class FinishPassTest : public MetaPassBase {
  protected:
    static constexpr uint32_t kSerial = 0x5E41A1u;
    static constexpr VkDeviceSize kSlotAt = 64;  // bytes before the slot, which must stay untouched
    static constexpr uint8_t kFill = 0xA5;

    // A buffer filled with kFill holding a slot for `stats_count` NodeStats at kSlotAt.
    GpuBuffer SlotBuffer(uint32_t stats_count) {
        GpuBuffer buffer = gpu_.CreateBuffer(kSlotAt + ReportSlotSize(stats_count) + 64);
        std::memset(buffer.mapped, kFill, buffer.size);
        return buffer;
    }
    static bool Untouched(const GpuBuffer& buffer, VkDeviceSize begin, VkDeviceSize end) {
        for (VkDeviceSize i = begin; i < end; ++i) {
            if (buffer.mapped[i] != kFill) return false;
        }
        return true;
    }
};

// More nodes than one finish workgroup covers (1100 nodes: five workgroups of 256), no level, so every entry record
// is left over: each node is charged its own leftovers at level 0, and the slot holds the header (with the totals every
// workgroup added) and all 1100 NodeStats exactly as scratch has them, and the serial.
TEST_F(FinishPassTest, LeftoversOfOverAThousandNodesAreCheckedAndReported) {
    constexpr uint32_t kNodes = 1100;
    TestGraph graph;
    for (uint32_t n = 0; n < kNodes; ++n) {
        graph.Add(n % 2 == 0 ? TestGraph::Static(1, 1, 1) : TestGraph::Batched(kLaunchThread, 4), 4);
    }
    std::mt19937 random(5);
    std::vector<TestInfo> infos;
    std::vector<uint32_t> per_node(kNodes, 0);
    uint32_t id = 1;
    for (uint32_t i = 0; i < 500; ++i) {
        TestInfo info{std::uniform_int_distribution<uint32_t>(0, kNodes - 1)(random), {}};
        for (uint32_t p = std::uniform_int_distribution<uint32_t>(1, 3)(random); p > 0; --p) info.payloads.push_back({id++});
        per_node[info.node] += static_cast<uint32_t>(info.payloads.size());
        infos.push_back(info);
    }
    const uint32_t total = id - 1;
    GpuBuffer slot = SlotBuffer(kNodes);
    options_.report = {slot.address + kSlotAt, kSerial, kNodes};
    const Outcome outcome = Dispatch(graph, infos, Source::kDeviceCount, {});
    EXPECT_EQ(outcome.header().status_flags, uint32_t{runtime::kStatusDepthLimit});
    EXPECT_EQ(outcome.header().dropped_records, total);
    EXPECT_EQ(outcome.header().record_high_water, total) << "the finish pass folds in the written half's high-water marks";
    uint32_t nodes_with_drops = 0;
    for (uint32_t n = 0; n < kNodes; ++n) {
        EXPECT_EQ(outcome.stats(n).dropped_records, per_node[n]) << n;
        EXPECT_EQ(outcome.stats(n).first_drop_level_complement, per_node[n] != 0 ? ~0u : 0u) << n;
        nodes_with_drops += per_node[n] != 0 && n >= 256;
    }
    ASSERT_GT(nodes_with_drops, 0u) << "workgroups past the first have leftovers";
    EXPECT_EQ(outcome.half(0).level_pass_done, 0u) << "the last workgroup resets the counter for the half's next use";

    EXPECT_EQ(*slot.As<uint32_t>(kSlotAt), kSerial);
    EXPECT_EQ(std::memcmp(slot.mapped + kSlotAt + kReportSlotHeaderOffset, outcome.scratch.data(), sizeof(GraphHeader)), 0);
    EXPECT_EQ(std::memcmp(slot.mapped + kSlotAt + kReportSlotStatsOffset, outcome.scratch.data() + outcome.layout.node_stats_offset,
                          kNodes * sizeof(runtime::NodeStats)),
              0);
    EXPECT_TRUE(Untouched(slot, 0, kSlotAt)) << "nothing before the slot";
    const VkDeviceSize slot_end = kSlotAt + kReportSlotStatsOffset + kNodes * sizeof(runtime::NodeStats);
    EXPECT_TRUE(Untouched(slot, slot_end, slot.size)) << "nor after it";
    gpu_.DestroyBuffer(&slot);
}

// A report from the header alone (a graph too large for the ring's NodeStats), with no leftover check to make (the
// last level dispatches no node with outputs): the finish pass runs for the report only and copies no NodeStats.
TEST_F(FinishPassTest, HeaderOnlyReportWithoutLeftoverCheck) {
    const TestGraph graph = MixedGraph();
    const std::vector<TestInfo> infos = MixedInfos(3);
    GpuBuffer slot = SlotBuffer(0);
    options_.report = {slot.address + kSlotAt, kSerial, 0};
    const Outcome outcome = Dispatch(graph, infos, Source::kHost);
    EXPECT_EQ(outcome.header().levels_run, 1u);
    EXPECT_EQ(*slot.As<uint32_t>(kSlotAt), kSerial);
    EXPECT_EQ(std::memcmp(slot.mapped + kSlotAt + kReportSlotHeaderOffset, outcome.scratch.data(), sizeof(GraphHeader)), 0);
    EXPECT_TRUE(Untouched(slot, kSlotAt + kReportSlotStatsOffset, slot.size)) << "no NodeStats";
    EXPECT_TRUE(Untouched(slot, 0, kSlotAt));
    gpu_.DestroyBuffer(&slot);
}

// Without the `statistics` setting the reporter asks for NodeStats only on drops (ReportSlot::stats_only_on_drops): a
// dispatch that drops nothing leaves the slot's statistics untouched (header and serial still come), one that drops
// copies them all.
TEST_F(FinishPassTest, StatisticsOnlyOnDropsAreCopiedOnlyWhenWorkWasDropped) {
    const TestGraph graph = MixedGraph();
    const uint32_t nodes = static_cast<uint32_t>(graph.nodes.size());
    GpuBuffer clean = SlotBuffer(nodes);
    options_.report = {clean.address + kSlotAt, kSerial, nodes, true};
    const Outcome without_drops = Dispatch(graph, MixedInfos(3), Source::kHost);
    EXPECT_EQ(without_drops.header().status_flags, 0u);
    EXPECT_EQ(*clean.As<uint32_t>(kSlotAt), kSerial);
    EXPECT_EQ(std::memcmp(clean.mapped + kSlotAt + kReportSlotHeaderOffset, without_drops.scratch.data(), sizeof(GraphHeader)), 0);
    EXPECT_TRUE(Untouched(clean, kSlotAt + kReportSlotStatsOffset, clean.size)) << "no NodeStats without drops";
    gpu_.DestroyBuffer(&clean);

    // No level: every entry record is left over and dropped.
    TestGraph leaf_only;
    for (uint32_t n = 0; n < 3; ++n) leaf_only.Add(TestGraph::Batched(kLaunchThread, 4), 4);
    const std::vector<TestInfo> infos = {{0, {{1}, {2}}}, {2, {{3}}}};
    GpuBuffer dropped = SlotBuffer(3);
    options_.report = {dropped.address + kSlotAt, kSerial, 3, true};
    const Outcome with_drops = Dispatch(leaf_only, infos, Source::kDeviceCount, {});
    EXPECT_EQ(with_drops.header().dropped_records, 3u);
    EXPECT_EQ(*dropped.As<uint32_t>(kSlotAt), kSerial);
    EXPECT_EQ(std::memcmp(dropped.mapped + kSlotAt + kReportSlotStatsOffset, with_drops.scratch.data() + with_drops.layout.node_stats_offset,
                          3 * sizeof(runtime::NodeStats)),
              0);
    EXPECT_EQ(with_drops.stats(0).dropped_records, 2u);
    EXPECT_EQ(with_drops.stats(2).dropped_records, 1u);
    gpu_.DestroyBuffer(&dropped);
}

// A slot RecordDispatch cannot use is refused before anything is recorded.
TEST_F(FinishPassTest, BadReportSlotsAreRefused) {
    GraphPlan plan;
    plan.scratch_plan = ScratchPlan(2, 0, 0);
    plan.nodes.resize(2);
    GpuBuffer scratch = gpu_.CreateBuffer(plan.scratch_plan.MinSize());
    const ScratchBinding binding{scratch.buffer, 0, scratch.address, plan.scratch_plan.MinSize()};
    gpu_.Run([&](VkCommandBuffer cmd) {
        for (const ReportSlot& bad : {ReportSlot{scratch.address + 4, 1, 2}, ReportSlot{scratch.address, 0, 2},
                                      ReportSlot{scratch.address, 1, 1}}) {
            DispatchOptions options;
            options.report = bad;
            const RecordResult result =
                gpu_.recorder().RecordDispatch(cmd, binding, plan, EntrySource::DeviceCountInfo(0), options);
            EXPECT_NE(result.result, VK_SUCCESS);
            EXPECT_NE(result.error.find("report slot"), std::string::npos) << result.error;
        }
    });
    gpu_.DestroyBuffer(&scratch);
}

TEST(LevelPassChoice, FusedWithinItsLimitsSplitBeyond) {
    GraphPlan plan;
    plan.nodes.resize(kFusedLevelMaxNodes);
    EXPECT_TRUE(plan.UsesFusedLevelPass());
    plan.force_split_level_passes = true;
    EXPECT_FALSE(plan.UsesFusedLevelPass());
    plan.force_split_level_passes = false;
    plan.nodes.resize(kFusedLevelMaxNodes + 1);
    EXPECT_FALSE(plan.UsesFusedLevelPass()) << "more nodes than level.comp keeps in shared memory";
    plan.nodes.resize(kFusedLevelMaxSharingNodes + 2);
    for (uint32_t n = 1; n < plan.nodes.size(); ++n) plan.nodes[n].shares_input_with = 0;
    EXPECT_FALSE(plan.UsesFusedLevelPass()) << "more sharing nodes than level.comp's list holds";
    plan.nodes.pop_back();
    EXPECT_TRUE(plan.UsesFusedLevelPass());
}

TEST(LeftoverCheck, RecordedOnlyWhenRecordsCanBeLeft) {
    GraphPlan plan;
    plan.nodes.resize(2);
    plan.nodes[1].has_outputs = false;
    EXPECT_TRUE(plan.NeedsLeftoverCheck()) << "no level: every entry is left over";
    plan.levels = {{0}, {1}};
    EXPECT_FALSE(plan.NeedsLeftoverCheck()) << "the last level's node enqueues nothing";
    plan.levels = {{1}, {0, 1}};
    EXPECT_TRUE(plan.NeedsLeftoverCheck()) << "node 0 at the last level can enqueue";
}

INSTANTIATE_TEST_SUITE_P(LevelPasses, MetaPassTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return LevelPassesName(info.param); });

}  // namespace
}  // namespace execgraph::test
