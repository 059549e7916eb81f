// Every launch kind alone and chained, end to end on lavapipe: static and dynamic broadcast (the grid member at
// different offsets and of different types), grids with a zero dimension, more than 65535 workgroups in one node
// dispatch, coalescing with batches of 1..3 records, and thread nodes. Each test compares the whole UAV with a CPU
// reference (vkd3d-proton's test_workgraph_broadcast_input / coalesced_input / thread_input data where they exist).
#include <gtest/gtest.h>
#include <stdlib.h>  // setenv, unsetenv

#include <algorithm>
#include <string>
#include <numeric>
#include <vector>

#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

using LaunchKinds = GraphTest;

// The level pass's width (setting level_pass_records_per_workgroup) set before the fixture's instance reads the
// settings: base classes are constructed in declaration order.
// Scheduler settings these tests vary: the level pass's records per workgroup and the thread-node batch size (0: the
// device default), and whether a level's records placed by index are read oldest first instead of newest first (the
// `records_newest_first` setting), set through the environment before the fixture's instance is created.
struct SchedulerSettings {
    uint32_t level_pass_records_per_workgroup = 0;
    uint32_t thread_batch_size = 0;
    bool oldest_first = false;
};

struct SchedulerSettingsEnvironment {
    static constexpr const char* kLevelPassWidth = "VK_EXECGRAPH_SHADER_ENQUEUE_LEVEL_PASS_RECORDS_PER_WORKGROUP";
    static constexpr const char* kThreadBatch = "VK_EXECGRAPH_SHADER_ENQUEUE_THREAD_BATCH_SIZE";
    static constexpr const char* kNewestFirst = "VK_EXECGRAPH_SHADER_ENQUEUE_RECORDS_NEWEST_FIRST";
    explicit SchedulerSettingsEnvironment(const SchedulerSettings& settings) {
        setenv(kLevelPassWidth, std::to_string(settings.level_pass_records_per_workgroup).c_str(), 1);
        setenv(kThreadBatch, std::to_string(settings.thread_batch_size).c_str(), 1);
        setenv(kNewestFirst, settings.oldest_first ? "false" : "true", 1);
    }
    ~SchedulerSettingsEnvironment() {
        unsetenv(kLevelPassWidth);
        unsetenv(kThreadBatch);
        unsetenv(kNewestFirst);
    }
};

// Tests whose levels have tens to hundreds of records, with the level pass lavapipe runs (one workgroup: the CPU
// default) and with three records per workgroup, so that the producers' sizing of the pass (HalfHeader::
// level_pass_workgroups: entry pass and lowered allocations) and the hand-off between its workgroups run on lavapipe too;
// and with thread-node batches of 1 and 7 records (partial batches everywhere, a subgroup split across batches); and with
// records placed by index read oldest first, as before the `records_newest_first` setting.
class LaunchKindsBySchedulerSettings : private SchedulerSettingsEnvironment,
                                       public GraphTest,
                                       public ::testing::WithParamInterface<SchedulerSettings> {
  protected:
    LaunchKindsBySchedulerSettings() : SchedulerSettingsEnvironment(GetParam()) {}
};
INSTANTIATE_TEST_SUITE_P(Settings, LaunchKindsBySchedulerSettings,
                         ::testing::Values(SchedulerSettings{0, 0}, SchedulerSettings{3, 0}, SchedulerSettings{0, 1},
                                           SchedulerSettings{3, 7}, SchedulerSettings{0, 0, true}),
                         [](const ::testing::TestParamInfo<SchedulerSettings>& info) {
                             const SchedulerSettings& s = info.param;
                             if (s.oldest_first) return std::string("OldestFirst");
                             if (s.level_pass_records_per_workgroup == 0 && s.thread_batch_size == 0)
                                 return std::string("DeviceDefault");
                             std::string name;
                             if (s.level_pass_records_per_workgroup != 0)
                                 name += "Records" + std::to_string(s.level_pass_records_per_workgroup);
                             if (s.thread_batch_size != 0) name += "ThreadBatch" + std::to_string(s.thread_batch_size);
                             return name;
                         });

uint64_t Sum(const std::vector<uint32_t>& values) { return std::accumulate(values.begin(), values.end(), uint64_t{0}); }
size_t NonZero(const std::vector<uint32_t>& values) {
    return std::count_if(values.begin(), values.end(), [](uint32_t v) { return v != 0; });
}

TEST_F(LaunchKinds, StaticBroadcastIgnoresNothingButTheGrid) {
    struct Rec {
        uint32_t v, w;
    };
    const std::vector<Rec> records = {{19, 800}, {400, 90}};
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadModule("static_broadcast_xor"), "main"}}, uav, {{"main", 0, 2, records.data(), sizeof(Rec)}});
    std::vector<uint32_t> expected;
    for (const Rec& r : records) AddGridCells(expected, 3, 3, 2, r.v ^ r.w);
    ASSERT_EQ(NonZero(expected), 432u);
    ExpectUav(uav, expected);
}

TEST_F(LaunchKinds, DynamicGridUintAtOffset4) {
    struct Rec {
        uint32_t v, grid, w;
    };
    // The third record has a zero grid: nothing of it may run.
    const std::vector<Rec> records = {{19, 3, 800}, {400, 2, 90}, {1, 0, 2}};
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadCorpus("broadcast_dynamic_grid_uint_offset4"), "main"}}, uav, {{"main", 0, 3, records.data(), sizeof(Rec)}});
    std::vector<uint32_t> expected;
    for (const Rec& r : records) AddGridCells(expected, r.grid, 1, 1, r.v ^ r.w);
    ASSERT_EQ(NonZero(expected), 72u);
    ASSERT_EQ(Sum(expected), 80952u);
    ExpectUav(uav, expected);
}

// 300 records whose grids run from 0 to 4 workgroups (a fifth of them 0). Each workgroup finds its record with the
// prologue's binary search over the node's directory; a workgroup that took a neighbouring record would add that
// record's value to the cells instead.
TEST_P(LaunchKindsBySchedulerSettings, DynamicGridOfManyRecordsFindsEachWorkgroupsRecord) {
    struct Rec {
        uint32_t v, grid, w;
    };
    std::vector<Rec> records;
    for (uint32_t i = 0; i < 300; ++i) records.push_back({7 * i + 1, i % 5, 131 * i});
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadCorpus("broadcast_dynamic_grid_uint_offset4"), "main"}}, uav,
             {{"main", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
    std::vector<uint32_t> expected;
    for (const Rec& r : records) AddGridCells(expected, r.grid, 1, 1, r.v ^ r.w);
    ExpectUav(uav, expected);
}

struct Uint2Rec {
    uint32_t v, gx, gy, w;
};
const std::vector<Uint2Rec> kUint2Records = {{19, 3, 2, 800}, {400, 2, 1, 90}, {5, 0, 3, 6}, {7, 2, 0, 8}};

std::vector<uint32_t> Uint2Expected() {
    std::vector<uint32_t> expected;
    for (const Uint2Rec& r : kUint2Records) AddGridCells(expected, r.gx, r.gy, 1, r.v ^ r.w);
    return expected;
}

TEST_F(LaunchKinds, DynamicGridUint2AtOffset4) {
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadCorpus("broadcast_dynamic_grid_uint2_offset4"), "main"}}, uav,
             {{"main", 0, static_cast<uint32_t>(kUint2Records.size()), kUint2Records.data(), sizeof(Uint2Rec)}});
    const std::vector<uint32_t> expected = Uint2Expected();
    ASSERT_EQ(NonZero(expected), 144u);
    ASSERT_EQ(Sum(expected), 139920u);
    ExpectUav(uav, expected);
}

TEST_F(LaunchKinds, DynamicGridUint16x2AtOffset4) {
    struct Rec {
        uint32_t v;
        uint16_t gx, gy;
        uint32_t w;
    };
    static_assert(sizeof(Rec) == 12);
    std::vector<Rec> records;
    for (const Uint2Rec& r : kUint2Records) records.push_back({r.v, static_cast<uint16_t>(r.gx), static_cast<uint16_t>(r.gy), r.w});
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadCorpus("broadcast_dynamic_grid_u16x2"), "main"}}, uav,
             {{"main", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
    ExpectUav(uav, Uint2Expected());
}

TEST_F(LaunchKinds, DynamicGridUint3AtOffset0) {
    struct Rec {
        uint32_t gx, gy, gz, texture_index;
    };
    // UAV[dtid.x] = texture_index for every thread of the grid; the records with a zero dimension must not store 99.
    // (Every grid stays within MaxNumWorkgroupsAMDX(2,3,4): larger ones are clamped and reported as dropped work.)
    const std::vector<Rec> records = {{2, 0, 1, 99}, {2, 3, 4, 7}, {1, 1, 0, 99}, {0, 3, 4, 99}};
    TestBuffer& uav = Uav(256);
    RunGraph({{ReadCorpus("broadcast_dynamic_grid_uint3"), "main"}}, uav, {{"main", 0, 4, records.data(), sizeof(Rec)}});
    ExpectUav(uav, std::vector<uint32_t>(16, 7));
}

struct Grid3Data {
    uint32_t grid[3];
    uint32_t v, w;
};
const std::vector<Grid3Data> kGrid3Records = {{{1, 2, 3}, 19, 800}, {{4, 1, 2}, 400, 90}, {{2, 0, 2}, 1, 2}, {{4, 4, 4}, 3, 5}};

std::vector<uint32_t> Grid3Expected() {
    std::vector<uint32_t> expected;
    for (const Grid3Data& r : kGrid3Records) AddGridCells(expected, r.grid[0], r.grid[1], r.grid[2], r.v ^ r.w);
    return expected;
}

TEST_F(LaunchKinds, DynamicGridUintArray3) {
    struct Rec {
        uint32_t grid[3];
        uint32_t v, w;
    };
    std::vector<Rec> records;
    for (const Grid3Data& r : kGrid3Records) records.push_back({{r.grid[0], r.grid[1], r.grid[2]}, r.v, r.w});
    TestBuffer& uav = Uav(2048);
    RunGraph({{ReadCorpus("broadcast_dynamic_grid_uint_array3"), "main"}}, uav,
             {{"main", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
    ExpectUav(uav, Grid3Expected());
}

TEST_F(LaunchKinds, DynamicGridInNestedStruct) {
    struct Rec {
        uint32_t v;
        uint32_t grid[3];
        uint32_t w;
    };
    std::vector<Rec> records;
    for (const Grid3Data& r : kGrid3Records) records.push_back({r.v, {r.grid[0], r.grid[1], r.grid[2]}, r.w});
    TestBuffer& uav = Uav(2048);
    RunGraph({{ReadCorpus("broadcast_dynamic_grid_nested"), "main"}}, uav,
             {{"main", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
    ExpectUav(uav, Grid3Expected());
}

TEST_F(LaunchKinds, OnlyZeroGridsRunNothing) {
    struct Rec {
        uint32_t v, gx, gy, w;
    };
    const std::vector<Rec> records = {{1, 0, 0, 2}, {3, 0, 4, 5}, {6, 4, 0, 7}};
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadCorpus("broadcast_dynamic_grid_uint2_offset4"), "main"}}, uav, {{"main", 0, 3, records.data(), sizeof(Rec)}});
    ExpectUav(uav, {});
}

TEST_F(LaunchKinds, MoreThan65535WorkgroupsInOneNodeDispatch) {
    // Two records of 40000 x 2 workgroups each: 160000 workgroups in one node dispatch; every workgroup sets one bit.
    const std::vector<uint32_t> records = {0, 2500};
    TestBuffer& uav = Uav(5000 + 64);
    RunGraph({{ReadModule("wide_static_grid"), "main"}}, uav, {{"main", 0, 2, records.data(), sizeof(uint32_t)}});
    ExpectUav(uav, std::vector<uint32_t>(5000, 0xFFFFFFFFu));
}

// Nodes of one module that share a pipeline are dispatched as one dispatch group (docs/design.md, "Dispatch groups"):
// main[0] and main[2] each get one record of 80000 workgroups and main[1] none, so the group's one dispatch has 160000
// workgroups, more than one dimension holds, and the member boundary falls inside a row of the split. Every workgroup
// must find its member and its workgroup within the member's record.
TEST_F(LaunchKinds, DispatchGroupSpansTheSplitWidthAndSkipsAnEmptyMember) {
    const uint32_t first_base = 0, second_base = 2500;
    TestBuffer& uav = Uav(5000 + 64);
    std::vector<NodeStage> stages;
    for (uint32_t i = 0; i < 3; ++i) stages.push_back({ReadModule("wide_static_grid"), "main", nullptr, i});
    RunGraph(stages, uav, {{"main", 0, 1, &first_base, sizeof(uint32_t)}, {"main", 2, 1, &second_base, sizeof(uint32_t)}});
    std::vector<uint32_t> expected(5000, 0xFFFFFFFFu);
    expected.resize(5000 + 64, 0);
    ExpectUav(uav, expected);
}

// A dispatch group of sixteen coalescing sinks B[0..15] with uneven work: the entry sends 8 records per entry record to
// B[node_idx] (output_node_array_runtime_index, whose output array has 4 nodes), here 24 to B[1], 16 to B[3] and none
// to the others: the first member and the twelve last ones (never reachable) have no work. Each sink adds what it received at UAV[2 * ShaderIndexAMDX] and counts it at the
// next word, so a workgroup that ran as the wrong member, or twice, shows up.
TEST_P(LaunchKindsBySchedulerSettings, DispatchGroupMembersWithUnevenAndNoWork) {
    struct Rec {
        uint32_t node_idx, value;
    };
    const std::vector<Rec> records = {{1, 10}, {3, 200}, {1, 30}, {1, 50000}, {3, 600000}};
    TestBuffer& uav = Uav(32);
    std::vector<NodeStage> stages = {{ReadCorpus("output_node_array_runtime_index"), "main", "Entry", 0}};
    for (uint32_t i = 0; i < 16; ++i) stages.push_back({ReadModule("array_sink"), "main", "B", i});
    RunGraph(stages, uav, {{"Entry", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
    std::vector<uint32_t> expected(32, 0);
    for (const Rec& r : records) {
        for (uint32_t thread = 0; thread < 8; ++thread) {
            expected[2 * r.node_idx] += r.value + thread;
            expected[2 * r.node_idx + 1] += 1;
        }
    }
    ExpectUav(uav, expected);
}

struct IdxValue {
    uint32_t idx, v;
};

// The same classify-to-array shape with static broadcast members (AMD's classify/compose): a group of static broadcast
// nodes runs its members' records in directory order, and each workgroup reads its member from its directory entry
// (docs/design.md, "Dispatch groups"). A workgroup that ran as the wrong member, as the wrong workgroup of its record's
// grid, or twice, shows up in the member's words. Level 1 gets 8 records per entry record, and the group reads the
// record list in the producers' order (GraphPlan::list_directory_group): with one entry record, 8 records; with six, 48
// (more than a level-pass workgroup's worth on CPU devices, 8 invocations); with 400, 3200 records and 9600 workgroups
// (more than one on GPUs, 256), which the level pass's one workgroup prepares without scattering any.
TEST_P(LaunchKindsBySchedulerSettings, DispatchGroupOfStaticBroadcastMembersFindsEachWorkgroupsMember) {
    struct Rec {
        uint32_t node_idx, value;
    };
    std::vector<Rec> all_records = {{1, 10}, {3, 200}, {1, 30}, {2, 7}, {3, 600}, {1, 50000}};
    while (all_records.size() < 400) {
        const uint32_t i = static_cast<uint32_t>(all_records.size());
        all_records.push_back({(i * 7) % 4, 1000 * i + 3});
    }
    for (size_t count : {size_t{1}, size_t{6}, all_records.size()}) {
        SCOPED_TRACE(std::to_string(count) + " entry records");
        const std::vector<Rec> records(all_records.begin(), all_records.begin() + count);
        TestBuffer& uav = Uav(64);
        std::vector<NodeStage> stages = {{ReadCorpus("output_node_array_runtime_index"), "main", "Entry", 0}};
        for (uint32_t i = 0; i < 16; ++i) stages.push_back({ReadModule("array_static_sink"), "main", "B", i});
        RunGraph(stages, uav, {{"Entry", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
        std::vector<uint32_t> expected(64, 0);
        for (const Rec& r : records) {
            for (uint32_t thread = 0; thread < 8; ++thread) AddStaticSinkRecord(expected, r.node_idx, r.value + thread);
        }
        ExpectUav(uav, expected);
    }
}

// A level whose record list is a static broadcast group's directory (GraphPlan::list_directory_group) with more workgroups
// than one row of the dispatch split holds. Entry sends eight records of bases value + 0..7 to B[node_idx]
// (wide_static_grid with its grid made 4800 x 1 x 1: 4800 workgroups per record, each setting the bit of its linear id
// from its record's base, 150 words). The second dispatch's 16 records take 76 800 workgroups in 2 rows of
// kDispatchSplitWidth, and its last row's 54 270 workgroups lie past them: they would run record list entries 16 to 27,
// and must return because the group's workgroup count (NodeState::group_workgroups) says they have no record. The first
// dispatch left 24 entries there, so entries 16 to 23 are stale records whose bases lie in 30000..30007: a workgroup
// that ran one would set bits there, which the second dispatch's UAV (cleared in between) must not have.
// (The grid is smaller than the module's 80 000 because B, a leaf, has no level hand-off on lavapipe, hence no workgroup
// barrier: llvmpipe then allocates each workgroup's 24-byte coroutine frame 4096-aligned, and under AddressSanitizer,
// whose quarantine counts the 24 bytes, 1.28 million such workgroups took more than 24 GiB.)
TEST_F(LaunchKinds, ListDirectoryGroupSpansRowsOfTheDispatchSplit) {
    struct Rec {
        uint32_t node_idx, value;
    };
    constexpr uint32_t kRecordWords = 4800 / 32 + 7;
    constexpr uint32_t kWords = 30000 + kRecordWords + 64;
    TestBuffer& uav = Uav(kWords);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    std::string narrow = ReadModule("wide_static_grid");
    const std::string grid = "StaticNumWorkgroupsAMDX %uint_40000 %uint_2 %uint_1";
    const std::string constant = "%uint_40000 = OpConstant %uint 40000\n";
    ASSERT_NE(narrow.find(grid), std::string::npos);
    ASSERT_NE(narrow.find(constant), std::string::npos);
    narrow.replace(narrow.find(grid), grid.size(), "StaticNumWorkgroupsAMDX %uint_4800 %uint_1 %uint_1");
    narrow.insert(narrow.find(constant) + constant.size(), "%uint_4800 = OpConstant %uint 4800\n");
    std::vector<NodeStage> stages = {{ReadCorpus("output_node_array_runtime_index"), "main", "Entry", 0}};
    for (uint32_t i = 0; i < 4; ++i) stages.push_back({narrow, "main", "B", i});
    VkResult result = VK_SUCCESS;
    VkPipeline graph = context_.CreateGraph(stages, layout, &result);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    const uint32_t entry = context_.NodeIndex(graph, "Entry", 0);
    auto run = [&](const std::vector<Rec>& records) {
        context_.Submit([&](VkCommandBuffer cmd) {
            vkCmdFillBuffer(cmd, uav.buffer, 0, VK_WHOLE_SIZE, 0);
            VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
            barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
            barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
            vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0,
                                 nullptr, 0, nullptr);
            BindGraph(cmd, graph, layout, context_.descriptor_set());
            DispatchHost(cmd, scratch, {{entry, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
        });
        std::vector<uint32_t> expected(kWords, 0);
        for (const Rec& r : records) std::fill(expected.begin() + r.value, expected.begin() + r.value + kRecordWords, 0xFFFFFFFFu);
        ExpectUav(uav, expected);
    };
    {
        SCOPED_TRACE("24 records");
        run({{3, 10000}, {3, 20000}, {0, 30000}});
    }
    {
        SCOPED_TRACE("16 records after 24");
        run({{2, 0}, {1, 5000}});
    }
}

// Entries for a node T (graph node 0) and for two members of a static broadcast group in one dispatch: level 0 runs
// both, so the group's directory range starts after T's records (NodeState::group_directory_base), and its members
// B[0..4] have 0, 37, 0, 90 and 0 records. T writes nothing itself (two dispatches of one level writing the UAV would be
// a hazard to synchronization validation): each of its records reaches Sink[0] (array_sink, UAV words 0 and 1, which
// B[0] never writes) one level later.
TEST_P(LaunchKindsBySchedulerSettings, DispatchGroupOfStaticBroadcastMembersAfterAnotherNodesRecords) {
    std::vector<uint32_t> thread_records, second, fourth;
    for (uint32_t i = 0; i < 50; ++i) thread_records.push_back(900 + i);
    for (uint32_t i = 0; i < 37; ++i) second.push_back(3 * i + 1);
    for (uint32_t i = 0; i < 90; ++i) fourth.push_back(1000 + i);
    TestBuffer& uav = Uav(64);
    std::vector<NodeStage> stages = {{ReadModule("unenqueued_allocation"), "main", "T", 0}};
    for (uint32_t i = 0; i < 5; ++i) stages.push_back({ReadModule("array_static_sink"), "main", "B", i});
    stages.push_back({ReadModule("array_sink"), "main", "Sink", 0});
    RunGraph(stages, uav,
             {{"T", 0, static_cast<uint32_t>(thread_records.size()), thread_records.data(), sizeof(uint32_t)},
              {"B", 1, static_cast<uint32_t>(second.size()), second.data(), sizeof(uint32_t)},
              {"B", 3, static_cast<uint32_t>(fourth.size()), fourth.data(), sizeof(uint32_t)}});
    std::vector<uint32_t> expected(64, 0);
    for (uint32_t value : second) AddStaticSinkRecord(expected, 1, value);
    for (uint32_t value : fourth) AddStaticSinkRecord(expected, 3, value);
    for (uint32_t value : thread_records) {
        expected[0] += 3 * value;
        expected[1] += 1;
    }
    ExpectUav(uav, expected);
}

const std::vector<IdxValue> kCoalescedRecords = {{100, 50}, {150, 40}, {200, 79}, {300, 40},
                                                 {400, 30}, {490, 20}, {530, 10}, {32, 32}};

std::vector<uint32_t> CoalescedExpected() {
    std::vector<uint32_t> expected(1024, 0);
    for (const IdxValue& r : kCoalescedRecords) {
        for (uint32_t t = 0; t < 24; ++t) expected[r.idx + t] = r.v;
    }
    return expected;
}

TEST_F(LaunchKinds, CoalescingAllRecordsInOneDispatch) {
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadCorpus("coalescing_max_records"), "main"}}, uav, {{"main", 0, 8, kCoalescedRecords.data(), sizeof(IdxValue)}});
    const std::vector<uint32_t> expected = CoalescedExpected();
    ASSERT_EQ(NonZero(expected), 192u);
    ASSERT_EQ(Sum(expected), 7224u);
    ExpectUav(uav, expected);
}

TEST_F(LaunchKinds, CoalescingBatchesOfOneTwoAndThree) {
    // Four dispatches of 1, 2, 3 and 2 records: workgroups see every batch size up to MaxRecords(3).
    TestBuffer& uav = Uav(1024);
    const IdxValue* r = kCoalescedRecords.data();
    RunGraph({{ReadCorpus("coalescing_max_records"), "main"}}, uav,
             {{"main", 0, 1, r, sizeof(IdxValue)},
              {"main", 0, 2, r + 1, sizeof(IdxValue)},
              {"main", 0, 3, r + 3, sizeof(IdxValue)},
              {"main", 0, 2, r + 6, sizeof(IdxValue)}});
    ExpectUav(uav, CoalescedExpected());
}

TEST_P(LaunchKindsBySchedulerSettings, ThreadNode256Records) {
    std::vector<IdxValue> records;
    std::vector<uint32_t> expected(1024, 0);
    for (uint32_t i = 0; i < 256; ++i) {
        records.push_back({(i ^ 7) * 3, i ^ 0xabcd});
        expected[(i ^ 7) * 3] = i ^ 0xabcd;
    }
    ASSERT_EQ(Sum(expected), 11239296u);
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadCorpus("thread_node"), "main"}}, uav, {{"main", 0, 256, records.data(), sizeof(IdxValue)}});
    ExpectUav(uav, expected);
}

// A dispatch group of three thread nodes (one module, main[0..2]) whose records come in batches of 32 per workgroup:
// main[0] gets 40 records (two workgroups, the second partial), main[1] none, main[2] 100 (four). Each workgroup of the
// group's one dispatch must find its member, and each invocation its record within the member's batches.
TEST_P(LaunchKindsBySchedulerSettings, DispatchGroupOfThreadNodesWithPartialBatches) {
    std::vector<IdxValue> first, third;
    std::vector<uint32_t> expected(1024, 0);
    for (uint32_t i = 0; i < 40; ++i) first.push_back({i * 7, 1000 + i});
    for (uint32_t i = 0; i < 100; ++i) third.push_back({i * 7 + 3, 5000 + i});
    for (const IdxValue& r : first) expected[r.idx] = r.v;
    for (const IdxValue& r : third) expected[r.idx] = r.v;
    TestBuffer& uav = Uav(1024);
    std::vector<NodeStage> stages;
    for (uint32_t i = 0; i < 3; ++i) stages.push_back({ReadCorpus("thread_node"), "main", nullptr, i});
    RunGraph(stages, uav,
             {{"main", 0, static_cast<uint32_t>(first.size()), first.data(), sizeof(IdxValue)},
              {"main", 2, static_cast<uint32_t>(third.size()), third.data(), sizeof(IdxValue)}});
    ExpectUav(uav, expected);
}

// The same group with records for main[1] only: the level's sole consumer reads the record list as its directory
// (level.comp, SoleConsumer) while it runs inside the group's dispatch.
TEST_P(LaunchKindsBySchedulerSettings, DispatchGroupWhoseMiddleMemberIsTheLevelsSoleConsumer) {
    std::vector<IdxValue> records;
    std::vector<uint32_t> expected(1024, 0);
    for (uint32_t i = 0; i < 70; ++i) {
        records.push_back({(i * 13) % 1024, 77 + i});
        expected[(i * 13) % 1024] = 77 + i;
    }
    TestBuffer& uav = Uav(1024);
    std::vector<NodeStage> stages;
    for (uint32_t i = 0; i < 3; ++i) stages.push_back({ReadCorpus("thread_node"), "main", nullptr, i});
    RunGraph(stages, uav, {{"main", 1, static_cast<uint32_t>(records.size()), records.data(), sizeof(IdxValue)}});
    ExpectUav(uav, expected);
}

TEST_P(LaunchKindsBySchedulerSettings, ThreadFeedsDynamicBroadcast) {
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadModule("thread_forward_grid"), "main", "Entry"},
              {ReadCorpus("broadcast_dynamic_grid_uint2_offset4"), "main", "Grid"}},
             uav, {{"Entry", 0, static_cast<uint32_t>(kUint2Records.size()), kUint2Records.data(), sizeof(Uint2Rec)}});
    ExpectUav(uav, Uint2Expected());
}

// A coalescing node at level 1, which its one producer feeds by index (docs/design.md, "Records by index"): 11 records
// in batches of up to 3, so three full batches and one of two, which newest first is the first batch read. Both
// invocations of batch_sink add each batch's values and count and count the batches of each size: a batch that reads
// past the level's records, repeats or skips one, or runs with the wrong count changes a word.
TEST_P(LaunchKindsBySchedulerSettings, CoalescingBatchesAtALevelOfRecordsByIndex) {
    std::vector<uint32_t> values;
    std::vector<uint32_t> expected{0, 2 * 11, 0, 0, 2 * 1, 2 * 3};
    for (uint32_t i = 0; i < 11; ++i) {
        values.push_back(i * i + 5);
        expected[0] += 2 * (i * i + 5 + 100);  // coalescing_forward adds 100
    }
    TestBuffer& uav = Uav(6);
    RunGraph({{ReadModule("coalescing_forward"), "main", "Entry"}, {ReadModule("batch_sink"), "main", "Sink", 0}}, uav,
             {{"Entry", 0, static_cast<uint32_t>(values.size()), values.data(), sizeof(uint32_t)}});
    ExpectUav(uav, expected);
}

TEST_F(LaunchKinds, StaticBroadcastFeedsCoalescing) {
    const uint32_t v0 = 1000;
    TestBuffer& uav = Uav(512);
    RunGraph(
        {{ReadModule("chain_static_to_coalescing"), "main", "Entry"}, {ReadCorpus("coalescing_max_records"), "main", "Coalesce"}},
        uav, {{"Entry", 0, 1, &v0, sizeof(v0)}});
    std::vector<uint32_t> expected(12 * 24);
    for (uint32_t d = 0; d < 12; ++d) {
        for (uint32_t t = 0; t < 24; ++t) expected[24 * d + t] = v0 + d;
    }
    ExpectUav(uav, expected);
}

TEST_P(LaunchKindsBySchedulerSettings, DivergentInvocationsAllocateToOneThreadNode) {
    // Issue 7: allocations are aggregated per subgroup. Two input records x 7 workgroups x 36 invocations (partial
    // subgroups at any subgroup size up to 32); a fifth of the invocations never reach the allocation, another fifth
    // allocates zero records, the rest one record each for the thread node "Sink" (UAV[idx] = v).
    const std::vector<uint32_t> bases = {0, 256};
    constexpr uint32_t kInvocationsPerRecord = 7 * 36;
    std::vector<uint32_t> expected(512, 0);
    for (uint32_t base : bases) {
        for (uint32_t dtid = 0; dtid < kInvocationsPerRecord; ++dtid) {
            if (dtid % 5 != 2 && dtid % 5 != 4) expected[base + dtid] = (base + dtid) * 3 + 1;
        }
    }
    ASSERT_EQ(NonZero(expected), 2u * 152u);
    TestBuffer& uav = Uav(512);
    RunGraph({{ReadCorpus("divergent_allocate"), "main", "Entry"}, {ReadCorpus("thread_node"), "main", "Sink"}}, uav,
             {{"Entry", 0, static_cast<uint32_t>(bases.size()), bases.data(), sizeof(uint32_t)}});
    ExpectUav(uav, expected);
}

// Issue 7: an allocation every invocation of the workgroup reaches is reserved once per workgroup (heap, record list and
// each array member's record count). uniform_allocate_array: 2 input records x 7 workgroups x 36 invocations (partial
// subgroups at any subgroup size up to 32), invocation dtid asking for dtid % 3 records for member dtid % 4 of B[0..3],
// whose sinks add the values at UAV[2 * member] and count them at the next word. A record listed for the wrong member,
// a count charged to the wrong one, or a lost or repeated record changes a sum or a count.
TEST_F(LaunchKinds, UniformInvocationsAllocateToANodeArrayOncePerWorkgroup) {
    const std::vector<uint32_t> bases = {0, 100000};
    constexpr uint32_t kInvocationsPerRecord = 7 * 36;
    std::vector<uint32_t> expected(8, 0);
    for (uint32_t base : bases) {
        for (uint32_t dtid = 0; dtid < kInvocationsPerRecord; ++dtid) {
            for (uint32_t r = 0; r < dtid % 3; ++r) {
                expected[2 * (dtid % 4)] += base + 2 * dtid + r;
                expected[2 * (dtid % 4) + 1] += 1;
            }
        }
    }
    ASSERT_EQ(expected[1] + expected[3] + expected[5] + expected[7], 2u * 252u);
    TestBuffer& uav = Uav(8);
    RunGraph(UniformAllocateArrayStages(), uav, {{"Entry", 0, static_cast<uint32_t>(bases.size()), bases.data(), sizeof(uint32_t)}});
    ExpectUav(uav, expected);
}

}  // namespace
}  // namespace execgraph::test
