// GPU-side faults end to end (docs/reliability.md, "GPU-side faults and reports"): payload heap overflow, node indices
// that name no node, payload counts above NodeMaxPayloadsAMDX, clamped grids and runaway recursion are survived,
// never written outside scratch, and reported with the pipeline, node, level and count by the time the application's
// wait returns; the `statistics` line matches the records each node ran; `overflow_fatal` aborts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

// fault_emitter's input record: allocate `count` records on Sink[index], the i-th holding value + i.
struct EmitRecord {
    uint32_t index, count, value;
};

// Sink records are {uint value; uint pad[pad_words];}: 1 KiB by default, which fills the payload heap quickly.
std::vector<NodeStage> FaultGraphStages(uint32_t pad_words = 255) {
    const std::string sink = WithUintConstant(ReadModule("big_sink"), "%uint_255", pad_words);
    return {{WithUintConstant(ReadModule("fault_emitter"), "%uint_255", pad_words), "main", "Emitter"},
            {sink, "main", "Sink", 0},
            {sink, "main", "Sink", 1}};
}

std::vector<std::string> MessagesWithId(const MessageLog& log, const std::string& id) {
    std::vector<std::string> texts;
    for (const MessageLog::Message& message : log.Messages()) {
        if (message.id == id) texts.push_back(message.text);
    }
    return texts;
}

// Entry records (bases 0, 1000, 2000, ...) for uniform_allocate_array, and in `asked` the records their 7 x 36
// invocations ask for (dtid % 3 each).
std::vector<uint32_t> UniformAllocateEntries(uint32_t entries, uint32_t* asked) {
    std::vector<uint32_t> bases(entries);
    *asked = 0;
    for (uint32_t i = 0; i < entries; ++i) {
        bases[i] = 1000 * i;
        for (uint32_t dtid = 0; dtid < 7 * 36; ++dtid) *asked += dtid % 3;
    }
    return bases;
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "missing \"" << (part) << "\" in: " << (text)

class GpuFaults : public GraphTest {
  protected:
    // Builds the emitter graph, names it, and runs `records` through it in `scratch` (or fresh minSize scratch).
    VkPipeline RunEmitter(TestBuffer& uav, const std::vector<EmitRecord>& records, const char* name = "faults",
                          uint32_t pad_words = 255) {
        layout_ = context_.CreateStorageBufferLayout({&uav});
        std::vector<NodeStage> stages = FaultGraphStages(pad_words);
        if (only_first_sink_) {
            const std::string two = "PayloadNodeArraySizeAMDX %uint_2";
            std::string& emitter = stages[0].assembly;
            const size_t at = emitter.find(two);
            EXPECT_NE(at, std::string::npos);
            if (at != std::string::npos) emitter.replace(at, two.size(), "PayloadNodeArraySizeAMDX %uint_1");
            stages.pop_back();
        }
        VkPipeline graph = context_.CreateGraph(stages, layout_);
        EXPECT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
        if (graph == VK_NULL_HANDLE) return graph;
        auto set_name = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(
            vkGetDeviceProcAddr(context_.device(), "vkSetDebugUtilsObjectNameEXT"));
        VkDebugUtilsObjectNameInfoEXT name_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
        name_info.objectType = VK_OBJECT_TYPE_PIPELINE;
        name_info.objectHandle = reinterpret_cast<uint64_t>(graph);
        name_info.pObjectName = name;
        EXPECT_EQ(set_name(context_.device(), &name_info), VK_SUCCESS);
        scratch_ = &PrepareScratch(graph);
        set_ = context_.descriptor_set();
        context_.Submit([&](VkCommandBuffer cmd) { RecordEmitter(cmd, graph, records); });
        return graph;
    }

    // Another dispatch of RunEmitter's graph, in its scratch.
    void RecordEmitter(VkCommandBuffer cmd, VkPipeline graph, const std::vector<EmitRecord>& records) {
        const uint32_t entry = context_.NodeIndex(graph, "Emitter", 0);
        BindGraph(cmd, graph, layout_, set_);
        DispatchHost(cmd, *scratch_, {{entry, static_cast<uint32_t>(records.size()), records.data(), sizeof(EmitRecord)}});
    }

    std::vector<std::string> DroppedWork() { return MessagesWithId(context_.log(), "EXECGRAPH-DROPPED-WORK"); }
    // Records of 8 bytes (3 per entry) past a full record list: every listed record runs, the rest are reported dropped.
    void ExpectRecordListFilledExactly(const char* name);

    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    TestBuffer* scratch_ = nullptr;
    bool only_first_sink_ = false;  // Sink as an array of one node: level 1 is then a direct level (docs/design.md)
};

TEST_F(GpuFaults, InvalidNodeIndexIsReportedAgainstTheAllocatingNode) {
    TestBuffer& uav = Uav(8);
    RunEmitter(uav, {{0, 1, 10}, {5, 2, 20}, {7, 1, 30}});
    ExpectUav(uav, {10, 1});  // only the record for Sink[0] ran
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], "vkCmdDispatchGraphAMDX with execution graph faults: 3 records were dropped");
    EXPECT_CONTAINS(reports[0],
                    "Node Emitter[0]: 3 records dropped from level 0 (an allocation or entry named no node of the graph)");
    context_.log().Clear();
}

TEST_F(GpuFaults, PayloadCountAboveNodeMaxPayloadsIsClampedAndReported) {
    // Sink has NodeMaxPayloadsAMDX 4: six records become four, and the shader's writes to records 4 and 5 land on
    // record 3 (the clamped index), so record 3 holds the last value written.
    TestBuffer& uav = Uav(8);
    RunEmitter(uav, {{1, 6, 100}});
    ExpectUav(uav, {0, 0, 100 + 101 + 102 + 105, 4});
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], "faults: 2 records were dropped");
    EXPECT_CONTAINS(reports[0],
                    "Node Emitter[0]: 2 records dropped from level 0 (an allocation asked for more records than its output's "
                    "NodeMaxPayloadsAMDX");
    context_.log().Clear();
}

TEST_F(GpuFaults, HeapOverflowIsReportedAgainstTheTargetNodeWithTheExactCount) {
    // 200 allocations of four 1 KiB records: far more than a minSize heap half holds.
    constexpr uint32_t kEntries = 200;
    std::vector<EmitRecord> records(kEntries, EmitRecord{0, 4, 1});
    TestBuffer& uav = Uav(8);
    RunEmitter(uav, records);
    const uint32_t heap_capacity = scratch_->As<uint32_t>()[9];  // GraphHeader::heap_capacity
    const uint32_t fitting = heap_capacity / 4096;  // each allocation takes 4 KiB; the first failure fails all later ones
    ASSERT_LT(fitting, kEntries);
    EXPECT_EQ(uav.As<uint32_t>()[1], 4 * fitting) << "records that ran";
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    const std::string dropped = std::to_string(4 * (kEntries - fitting));
    EXPECT_CONTAINS(reports[0], "faults: " + dropped + " records were dropped");
    EXPECT_CONTAINS(reports[0],
                    "Node Sink[0]: " + dropped + " records dropped from level 0 (the payload heap of a scratch half was full)");
    EXPECT_CONTAINS(reports[0], "of " + std::to_string(heap_capacity) + " bytes per scratch half");
    context_.log().Clear();
}

// The same where the last level is direct (Sink is an array of one node, so level 1 has no level pass) and has no
// outputs: the finish pass then writes the report alongside that level's node dispatch, without a barrier of its own
// (layer/scheduler.cpp), and must still see every drop of level 0 and charge it to the right node.
TEST_F(GpuFaults, HeapOverflowBeforeADirectLastLevelIsReportedWithTheExactCount) {
    constexpr uint32_t kEntries = 200;
    only_first_sink_ = true;
    std::vector<EmitRecord> records(kEntries, EmitRecord{0, 4, 1});
    TestBuffer& uav = Uav(8);
    RunEmitter(uav, records, "direct-last-level");
    const uint32_t heap_capacity = scratch_->As<uint32_t>()[9];  // GraphHeader::heap_capacity
    const uint32_t fitting = heap_capacity / 4096;
    ASSERT_LT(fitting, kEntries);
    EXPECT_EQ(uav.As<uint32_t>()[0], (1 + 2 + 3 + 4) * fitting) << "sum of the values that ran (value + i)";
    EXPECT_EQ(uav.As<uint32_t>()[1], 4 * fitting) << "records that ran";
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    const std::string dropped = std::to_string(4 * (kEntries - fitting));
    EXPECT_CONTAINS(reports[0], "direct-last-level: " + dropped + " records were dropped");
    EXPECT_CONTAINS(reports[0],
                    "Node Sink[0]: " + dropped + " records dropped from level 0 (the payload heap of a scratch half was full)");
    context_.log().Clear();
}

// Records of at most 96 bytes (here 8) are reserved with one 64-bit atomic for heap bytes and record slots
// (spirv::LoweringOptions::heap_holds_record_list), in a heap that always holds a full record list. So a level that
// asks for more records than a half holds fills the list exactly and reports the rest as a full record list, never as
// a full heap, and every listed record carries its own payload: each entry's three records (values 1000, 1001, 1002)
// all run, except past the one entry whose records straddle the end of the list, which runs a prefix of them.
void GpuFaults::ExpectRecordListFilledExactly(const char* name) {
    constexpr uint32_t kEntries = 6000, kPerEntry = 3, kValue = 1000;
    TestBuffer& uav = Uav(8);
    RunEmitter(uav, std::vector<EmitRecord>(kEntries, EmitRecord{0, kPerEntry, kValue}), name, 1);
    const uint32_t capacity = scratch_->As<uint32_t>()[8];  // GraphHeader::record_capacity
    ASSERT_GE(capacity, kEntries) << "the entries themselves must fit";
    ASSERT_LT(capacity, kEntries * kPerEntry) << "the level must overflow";
    const uint32_t straddling = capacity % kPerEntry;
    const uint32_t sum =
        capacity / kPerEntry * (kPerEntry * kValue + 3) + (straddling >= 1 ? kValue : 0) + (straddling >= 2 ? kValue + 1 : 0);
    ExpectUav(uav, {sum, capacity});
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    const std::string dropped = std::to_string(kEntries * kPerEntry - capacity);
    EXPECT_CONTAINS(reports[0], std::string(name) + ": " + dropped + " records were dropped");
    EXPECT_CONTAINS(reports[0],
                    "Node Sink[0]: " + dropped + " records dropped from level 0 (the record list of a scratch half was full)");
    EXPECT_EQ(reports[0].find("payload heap of a scratch half was full"), std::string::npos) << reports[0];
    context_.log().Clear();
}

TEST_F(GpuFaults, RecordListOverflowOfOneAtomicReservationsFillsTheListExactly) { ExpectRecordListFilledExactly("faults"); }

// The same before a direct level (Sink an array of one node): the producers count no records for a single consumer, whose
// level hand-off takes its records from the half's record count, which counts every record reserved; only as many as the
// list holds may run (spirv_lowering's LevelHandOffPass), or the consumer would read entries past the list's end.
TEST_F(GpuFaults, RecordListOverflowBeforeADirectLevelRunsOnlyTheListedRecords) {
    only_first_sink_ = true;
    ExpectRecordListFilledExactly("direct-level");
}

// Uniform allocations of broadcast nodes reserve once per workgroup on GPUs and once per subgroup on CPU devices
// (layer/scheduler.h, ReservesPerWorkgroupFor): both ways run on lavapipe here, each with its own overflow path.
class GpuFaultsByReservation : private ScopedEnvironmentVariable,
                               public GpuFaults,
                               public ::testing::WithParamInterface<const char*> {
  protected:
    GpuFaultsByReservation() : ScopedEnvironmentVariable("VK_EXECGRAPH_SHADER_ENQUEUE_ALLOCATION_RESERVATION", GetParam()) {}
};
INSTANTIATE_TEST_SUITE_P(Reservation, GpuFaultsByReservation, ::testing::Values("workgroup", "subgroup"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// Prepared levels (the `prepared_levels` setting) with the GPUs' finish pass: the pass is recorded into the prepared
// secondary beside the last level and finds each dispatch's report slot and serial in the header that the dispatch's
// own begin transfers wrote (layer/scheduler.cpp). Three dispatches of the same commands execute one secondary and drop
// different numbers of records; each report must give its own dispatch's count, and the one that dropped nothing none.
struct PreparedLevelsWithFinishPassEnvironment {
    ScopedEnvironmentVariable prepared_levels{"VK_EXECGRAPH_SHADER_ENQUEUE_PREPARED_LEVELS", "1"};
    ScopedEnvironmentVariable report_pass{"VK_EXECGRAPH_SHADER_ENQUEUE_REPORT_PASS", "finish"};
};
class PreparedLevelsReportedByTheFinishPass : private PreparedLevelsWithFinishPassEnvironment, public GpuFaults {};

TEST_F(PreparedLevelsReportedByTheFinishPass, EachDispatchOfOneSecondaryReportsItsOwnDrops) {
    constexpr uint32_t kEntries = 200;  // allocations of 4, 0 and 2 records of 1 KiB
    TestBuffer& uav = Uav(8);
    const VkPipeline graph = RunEmitter(uav, std::vector<EmitRecord>(kEntries, EmitRecord{0, 4, 1}), "prepared");
    ASSERT_NE(graph, VK_NULL_HANDLE);
    const uint32_t heap_capacity = scratch_->As<uint32_t>()[9];  // GraphHeader::heap_capacity
    const uint32_t fitting_of_four = heap_capacity / 4096, fitting_of_two = heap_capacity / 2048;
    ASSERT_LT(fitting_of_two, kEntries) << "the third dispatch must overflow too";
    EXPECT_EQ(uav.As<uint32_t>()[1], 4 * fitting_of_four) << "records that ran";
    std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], "prepared: " + std::to_string(4 * (kEntries - fitting_of_four)) + " records were dropped");
    EXPECT_EQ(context_.log().CountWithId("EXECGRAPH-PREPARED-LEVELS"), 1u) << "the first dispatch records the secondary";
    context_.log().Clear();

    std::memset(uav.As<uint32_t>(), 0, uav.size);
    context_.Submit([&](VkCommandBuffer cmd) {
        RecordEmitter(cmd, graph, std::vector<EmitRecord>(kEntries, EmitRecord{0, 0, 1}));
        RecordEmitter(cmd, graph, std::vector<EmitRecord>(kEntries, EmitRecord{0, 2, 1}));
    });
    EXPECT_EQ(uav.As<uint32_t>()[1], 2 * fitting_of_two) << "records that ran";
    reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], "prepared: " + std::to_string(2 * (kEntries - fitting_of_two)) + " records were dropped");
    EXPECT_EQ(context_.log().CountWithId("EXECGRAPH-PREPARED-LEVELS"), 0u) << "a dispatch of the same commands prepared again";
    context_.log().Clear();
}

// The same for allocations that every invocation of a workgroup reaches (uniform_allocate_array, 128-byte records to
// B[0..3]), reserved once per workgroup or once per subgroup. Per workgroup, the workgroup whose range crosses the end of
// the heap reserves its record slots again for just the invocations whose own range fits, and every later one fails.
// Every record asked for either runs or is reported as dropped for the full heap, none twice.
TEST_P(GpuFaultsByReservation, HeapOverflowOfUniformAllocationsIsCountedExactly) {
    constexpr uint32_t kEntries = 32;  // 32 x 252 invocations asking for 0 to 2 records: about 1 MiB of records
    uint32_t asked = 0;
    const std::vector<uint32_t> bases = UniformAllocateEntries(kEntries, &asked);
    TestBuffer& uav = Uav(8);
    ASSERT_NE(RunGraph(UniformAllocateArrayStages(), uav, {{"Entry", 0, kEntries, bases.data(), sizeof(uint32_t)}}),
              VK_NULL_HANDLE);
    const uint32_t* counts = uav.As<uint32_t>();
    const uint32_t ran = counts[1] + counts[3] + counts[5] + counts[7];
    ASSERT_GT(ran, 0u);
    ASSERT_LT(ran, asked) << "the heap did not overflow";
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], ": " + std::to_string(asked - ran) + " records were dropped");
    EXPECT_CONTAINS(reports[0], "(the payload heap of a scratch half was full)");
    context_.log().Clear();
}

// The same for allocations that every invocation of a workgroup reaches (uniform_allocate_array with 8-byte records),
// reserved once per workgroup or once per subgroup: the record list fills exactly, and every record asked for either
// runs or is reported dropped for the full list.
TEST_P(GpuFaultsByReservation, RecordListOverflowOfOneAtomicUniformAllocationsFillsTheListExactly) {
    constexpr uint32_t kEntries = 80;  // 80 x 252 invocations asking for 0 to 2 records: 20160 records
    uint32_t asked = 0;
    const std::vector<uint32_t> bases = UniformAllocateEntries(kEntries, &asked);
    TestBuffer& uav = Uav(8);
    ASSERT_NE(RunGraph(UniformAllocateArrayStages(1), uav, {{"Entry", 0, kEntries, bases.data(), sizeof(uint32_t)}}),
              VK_NULL_HANDLE);
    const uint32_t capacity = last_scratch_->As<uint32_t>()[8];  // GraphHeader::record_capacity
    ASSERT_LT(capacity, asked) << "the level must overflow";
    const uint32_t* counts = uav.As<uint32_t>();
    EXPECT_EQ(counts[1] + counts[3] + counts[5] + counts[7], capacity) << "records that ran";
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], ": " + std::to_string(asked - capacity) + " records were dropped");
    EXPECT_CONTAINS(reports[0], "(the record list of a scratch half was full)");
    EXPECT_EQ(reports[0].find("payload heap of a scratch half was full"), std::string::npos) << reports[0];
    context_.log().Clear();
}

TEST_F(GpuFaults, RunawayRecursionIsCutAtTheLimitAndReported) {
    TestBuffer& uav = Uav(8);
    const uint32_t depth0 = 0;
    VkPipeline graph = RunGraph({{ReadModule("runaway_recursion"), "main", "Runaway"}}, uav, {{"Runaway", 0, 1, &depth0, 4}});
    ASSERT_NE(graph, VK_NULL_HANDLE);
    ExpectUav(uav, {1, 1, 1, 1});  // depths 0..3 ran once each (MaxNodeRecursionAMDX 3); depth 4 never did
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], "with execution graph 0x");  // unnamed: the handle
    EXPECT_CONTAINS(reports[0], ": 1 records were dropped");
    EXPECT_CONTAINS(reports[0], "Node Runaway[0]: 1 records dropped from level 3 (the recursion limit (MaxNodeRecursionAMDX)");
    context_.log().Clear();
}

TEST_F(GpuFaults, GridAboveMaxNumWorkgroupsIsClampedAndReported) {
    // basic_grid declares MaxNumWorkgroupsAMDX (2,2,2); a (5,1,2) grid runs as (2,1,2).
    TestBuffer& uav = Uav(512);
    const uint32_t grid[3] = {5, 1, 2};
    RunGraph({{ReadModule("basic_grid"), "main", "Grid"}}, uav, {{"Grid", 0, 1, grid, sizeof(grid)}});
    std::vector<uint32_t> expected;
    AddGridCells(expected, 2, 1, 2, 1);
    ExpectUav(uav, expected);
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], ": 0 records were dropped (a dynamic grid exceeded MaxNumWorkgroupsAMDX");
    EXPECT_CONTAINS(reports[0], "Node Grid[0]: 0 records dropped from level 0 (a dynamic grid exceeded MaxNumWorkgroupsAMDX");
    context_.log().Clear();
}

// Device-side entries (vkCmdDispatchGraphIndirectCountAMDX) are only read on the GPU: one naming no node is charged to
// no node, and the valid one still runs.
TEST_F(GpuFaults, DeviceEntryNamingNoNodeIsReportedAsAnEntry) {
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph(FaultGraphStages(), layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    TestBuffer& device_data =
        Own(context_.CreateBuffer(4096, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    auto* bytes = device_data.As<uint8_t>();
    const EmitRecord records[2] = {{1, 2, 7}, {0, 1, 1}};
    std::memcpy(bytes + 1024, records, sizeof(records));
    VkDispatchGraphInfoAMDX infos[2] = {{context_.NodeIndex(graph, "Emitter", 0), 1, {}, sizeof(EmitRecord)},
                                        {42, 5, {}, sizeof(EmitRecord)}};
    infos[0].payloads.deviceAddress = device_data.address + 1024;
    infos[1].payloads.deviceAddress = device_data.address + 1024 + sizeof(EmitRecord);
    std::memcpy(bytes + 256, infos, sizeof(infos));
    VkDispatchGraphCountInfoAMDX count_info{2, {}, sizeof(VkDispatchGraphInfoAMDX)};
    count_info.infos.deviceAddress = device_data.address + 256;
    std::memcpy(bytes, &count_info, sizeof(count_info));
    VkDescriptorSet set = context_.descriptor_set();
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, set);
        context_.vkCmdDispatchGraphIndirectCountAMDX(cmd, scratch.address, scratch.size, device_data.address);
    });
    ExpectUav(uav, {0, 0, 7 + 8, 2});
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], "vkCmdDispatchGraphIndirectCountAMDX with execution graph 0x");
    EXPECT_CONTAINS(reports[0], ": 5 records were dropped (an allocation or entry named no node of the graph)");
    EXPECT_CONTAINS(reports[0], "Entries that named no node of the graph: 5 records.");
    EXPECT_EQ(reports[0].find("Node "), std::string::npos) << reports[0];
    context_.log().Clear();
}

// Scratch in the middle of a larger buffer: an overflowing dispatch (heap overflow, unknown nodes, clamped counts whose
// writes go past the clamp) leaves every byte before and after [scratch, scratch + scratchSize) untouched.
TEST_F(GpuFaults, NothingOutsideScratchIsWritten) {
    TestBuffer& uav = Uav(8);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph(FaultGraphStages(), layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    ASSERT_EQ(context_.vkGetExecutionGraphPipelineScratchSizeAMDX(context_.device(), graph, &size), VK_SUCCESS);
    constexpr VkDeviceSize kGuard = 64 * 1024;
    constexpr uint8_t kSentinel = 0xC3;
    TestBuffer& buffer = Own(context_.CreateScratch(kGuard + size.minSize + kGuard));
    std::memset(buffer.mapped, kSentinel, buffer.size);
    const VkDeviceAddress scratch = buffer.address + kGuard;
    ASSERT_EQ(scratch % 64, 0u);
    std::vector<EmitRecord> records;
    // Sink[0], Sink[1] or no node; 60..68 records against a limit of 4, so unclamped writes would run 64 KiB past the
    // allocation that ends up last in the heap of half 1, which ends where scratch ends.
    for (uint32_t i = 0; i < 300; ++i) records.push_back({i % 3, 60 + i % 9, i});
    const uint32_t entry = context_.NodeIndex(graph, "Emitter", 0);
    VkDescriptorSet set = context_.descriptor_set();
    context_.Submit([&](VkCommandBuffer cmd) {
        context_.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch, size.minSize);
        BindGraph(cmd, graph, layout, set);
        VkDispatchGraphInfoAMDX info{entry, static_cast<uint32_t>(records.size()), {}, sizeof(EmitRecord)};
        info.payloads.hostAddress = records.data();
        VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
        count_info.infos.hostAddress = &info;
        context_.vkCmdDispatchGraphAMDX(cmd, scratch, size.minSize, &count_info);
    });
    const auto* bytes = static_cast<const uint8_t*>(buffer.mapped);
    size_t changed = 0;
    for (VkDeviceSize i = 0; i < kGuard; ++i) changed += bytes[i] != kSentinel;
    for (VkDeviceSize i = kGuard + size.minSize; i < buffer.size; ++i) changed += bytes[i] != kSentinel;
    EXPECT_EQ(changed, 0u) << "bytes outside the scratch range were written";
    const std::vector<std::string> reports = DroppedWork();
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_CONTAINS(reports[0], "the payload heap of a scratch half was full");
    EXPECT_CONTAINS(reports[0], "named no node");
    EXPECT_CONTAINS(reports[0], "NodeMaxPayloadsAMDX");
    context_.log().Clear();
}

// A flat JSON reader for the statistics line: "key" -> number text (integer or decimal), "key.sub" -> number for one nested object level,
// "key" -> "[...]" text for arrays. Fails the test on anything else.
std::map<std::string, std::string> ParseStatistics(const std::string& line) {
    std::map<std::string, std::string> values;
    size_t at = 0;
    auto skip = [&] {
        while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
    };
    auto expect = [&](char c) {
        skip();
        if (at >= line.size() || line[at] != c) {
            ADD_FAILURE() << "expected '" << c << "' at " << at << " in " << line;
            at = line.size();
            return false;
        }
        ++at;
        return true;
    };
    auto string = [&]() -> std::string {
        if (!expect('"')) return {};
        std::string text;
        while (at < line.size() && line[at] != '"') {
            if (line[at] == '\\') ++at;
            text += line[at++];
        }
        ++at;
        return text;
    };
    auto scalar = [&]() -> std::string {
        skip();
        if (line[at] == '"') return string();
        if (line[at] == '[') {
            const size_t end = line.find(']', at);
            std::string text = line.substr(at, end - at + 1);
            at = end + 1;
            return text;
        }
        const size_t begin = at;
        while (at < line.size() && (std::isdigit(static_cast<unsigned char>(line[at])) || line[at] == '-' || line[at] == '.')) ++at;
        return line.substr(begin, at - begin);
    };
    std::function<void(const std::string&)> object = [&](const std::string& prefix) {
        if (!expect('{')) return;
        skip();
        if (line[at] == '}') {
            ++at;
            return;
        }
        do {
            const std::string key = prefix + string();
            if (!expect(':')) return;
            skip();
            if (line[at] == '{') {
                values[key] = "{}";
                object(key + ".");
            } else {
                values[key] = scalar();
            }
            skip();
        } while (at < line.size() && line[at] == ',' && ++at);
        expect('}');
    };
    object("");
    return values;
}

// Initializes `scratch` for the fault graph `graph` and dispatches `records` to its Emitter in one submission, with
// `around` (may be empty) recorded before (true) and after (false) the dispatch.
void DispatchToEmitter(GraphTestContext& context, VkPipeline graph, VkPipelineLayout layout, const TestBuffer& scratch,
                       const std::vector<EmitRecord>& records,
                       const std::function<void(GraphTestContext&, VkCommandBuffer, bool before)>& around = {}) {
    VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, "Emitter", 0), static_cast<uint32_t>(records.size()), {},
                                 sizeof(EmitRecord)};
    info.payloads.hostAddress = records.data();
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    VkDescriptorSet set = context.descriptor_set();
    context.Submit([&](VkCommandBuffer cmd) {
        context.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        if (around) around(context, cmd, true);
        context.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
        if (around) around(context, cmd, false);
    });
}

// Dispatches three entry records of the fault graph (Emitter -> Sink[0..1]; levels 0 and 1) in a fresh context made
// with the layer settings in `environment`, with `around` (may be empty) recorded before (true) and after (false) the
// dispatch, checks what the sinks received, and returns the EXECGRAPH-STATISTICS messages without their prefix.
std::vector<std::string> DispatchEmitterRecords(const std::vector<std::pair<const char*, std::string>>& environment,
                                                const std::function<void(GraphTestContext&, VkCommandBuffer, bool before)>& around = {},
                                                const std::function<void(GraphTestContext&)>& after_submit = {}) {
    for (const auto& [name, value] : environment) setenv(name, value.c_str(), 1);
    std::vector<std::string> lines;
    GraphTestContext context;
    for (const auto& [name, value] : environment) unsetenv(name);
    EXPECT_TRUE(context.ok());
    if (!context.ok()) return lines;
    TestBuffer uav = context.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context.CreateGraph(FaultGraphStages(), layout);
    EXPECT_NE(graph, VK_NULL_HANDLE) << context.log().Problems();
    if (graph == VK_NULL_HANDLE) return lines;
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    EXPECT_EQ(context.vkGetExecutionGraphPipelineScratchSizeAMDX(context.device(), graph, &size), VK_SUCCESS);
    TestBuffer scratch = context.CreateScratch(size.minSize);
    DispatchToEmitter(context, graph, layout, scratch, {{0, 2, 1}, {1, 3, 10}, {0, 1, 100}}, around);
    // The records ran as the statistics will say.
    EXPECT_EQ(uav.As<uint32_t>()[0], 1u + 2u + 100u);
    EXPECT_EQ(uav.As<uint32_t>()[1], 3u);
    EXPECT_EQ(uav.As<uint32_t>()[2], 10u + 11u + 12u);
    EXPECT_EQ(uav.As<uint32_t>()[3], 3u);
    if (after_submit) after_submit(context);
    lines = MessagesWithId(context.log(), "EXECGRAPH-STATISTICS");
    EXPECT_EQ(context.log().Problems(), "");
    context.Destroy(scratch);
    context.Destroy(uav);
    // Debug-utils texts carry the layer's "execgraph: " prefix; the file holds the bare JSON line.
    const std::string prefix = "execgraph: ";
    for (std::string& line : lines) {
        EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
        if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    }
    return lines;
}

// A JSON array of numbers ("[1.5,2]") as doubles.
std::vector<double> ParseNumbers(const std::string& array) {
    std::vector<double> numbers;
    EXPECT_TRUE(array.size() >= 2 && array.front() == '[' && array.back() == ']') << array;
    std::stringstream stream(array.substr(1, array.size() - 2));
    std::string item;
    while (std::getline(stream, item, ',')) numbers.push_back(std::stod(item));
    return numbers;
}

TEST(Statistics, OneJsonLinePerDispatchWithRecordsPerNode) {
    const std::string file = ::testing::TempDir() + "execgraph_statistics_" + std::to_string(::getpid()) + ".jsonl";
    std::filesystem::remove(file);
    std::vector<std::string> lines =
        DispatchEmitterRecords({{"VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS", "1"}, {"VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS_FILE", file}});
    ASSERT_EQ(lines.size(), 1u);
    std::ifstream stream(file);
    std::string file_line;
    ASSERT_TRUE(std::getline(stream, file_line)) << file;
    EXPECT_EQ(file_line, lines[0]) << "the file gets the same line as debug utils";
    std::string extra;
    EXPECT_FALSE(std::getline(stream, extra)) << "one line per dispatch";
    std::filesystem::remove(file);

    std::map<std::string, std::string> stats = ParseStatistics(lines[0]);
    EXPECT_EQ(stats["command"], "vkCmdDispatchGraphAMDX");
    EXPECT_EQ(stats["pipeline"].rfind("0x", 0), 0u) << "unnamed graph: its handle";
    EXPECT_EQ(stats["levels"], "2");
    EXPECT_EQ(stats["node_dispatches"], "3");
    EXPECT_EQ(stats["records.Emitter[0]"], "3");
    EXPECT_EQ(stats["records.Sink[0]"], "3");
    EXPECT_EQ(stats["records.Sink[1]"], "3");
    EXPECT_EQ(stats["workgroups.Emitter[0]"], "1");  // a thread node: one batch of up to 32 records per workgroup
    EXPECT_EQ(stats["record_high_water"], "6");
    EXPECT_EQ(stats["heap_high_water"], std::to_string((2 + 3 + 1) * 1024));
    EXPECT_NE(stats["record_capacity"], "");
    EXPECT_NE(stats["heap_capacity"], "");
    EXPECT_EQ(stats["dropped"], "0");
    EXPECT_EQ(stats["dropped_by_node"], "{}");
    EXPECT_EQ(stats["overflow"], "[]");
    EXPECT_EQ(stats.count("gpu_us"), 0u) << "GPU times only with level_timestamps";
}

// `level_timestamps` (which turns `statistics` on) adds GPU times: they must lie inside the application's own timestamps
// around the dispatch, and add up: setup plus the levels is the whole dispatch, and a level's pass is part of it.
// Level 0 (the host-prepared thread node) has no level pass; level 1 (two sinks) has one.
TEST(Statistics, LevelTimestampsTimeTheDispatchAndEachLevel) {
    VkQueryPool pool = VK_NULL_HANDLE;
    double application_us = 0;
    const std::vector<std::string> lines = DispatchEmitterRecords(
        {{"VK_EXECGRAPH_SHADER_ENQUEUE_LEVEL_TIMESTAMPS", "1"}},
        [&](GraphTestContext& context, VkCommandBuffer cmd, bool before) {
            if (before) {
                VkQueryPoolCreateInfo create_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
                create_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
                create_info.queryCount = 2;
                ASSERT_EQ(vkCreateQueryPool(context.device(), &create_info, nullptr, &pool), VK_SUCCESS);
                vkCmdResetQueryPool(cmd, pool, 0, 2);
            }
            vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool, before ? 0 : 1);
        },
        [&](GraphTestContext& context) {
            uint64_t ticks[2] = {};
            ASSERT_EQ(vkGetQueryPoolResults(context.device(), pool, 0, 2, sizeof(ticks), ticks, sizeof(uint64_t),
                                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                      VK_SUCCESS);
            VkPhysicalDeviceProperties properties;
            vkGetPhysicalDeviceProperties(context.physical_device(), &properties);
            application_us = double(ticks[1] - ticks[0]) * properties.limits.timestampPeriod / 1000.0;
            vkDestroyQueryPool(context.device(), pool, nullptr);
        });
    ASSERT_EQ(lines.size(), 1u) << "level_timestamps turns the statistics line on";
    std::map<std::string, std::string> stats = ParseStatistics(lines[0]);
    EXPECT_EQ(stats["records.Sink[1]"], "3");
    ASSERT_NE(stats["gpu_us"], "") << lines[0];
    const double total = std::stod(stats["gpu_us"]), setup = std::stod(stats["setup_gpu_us"]);
    const std::vector<double> levels = ParseNumbers(stats["level_gpu_us"]);
    const std::vector<double> passes = ParseNumbers(stats["level_pass_gpu_us"]);
    ASSERT_EQ(levels.size(), 2u);
    ASSERT_EQ(passes.size(), 2u);
    EXPECT_GT(total, 0.0);
    EXPECT_LE(total, application_us + 0.01) << "the layer's first and last timestamps lie inside the application's";
    EXPECT_GE(setup, 0.0);
    EXPECT_NEAR(setup + levels[0] + levels[1], total, 0.02) << "each printed with two decimals";
    for (size_t level = 0; level < 2; ++level) {
        EXPECT_GT(levels[level], 0.0) << "level " << level << " dispatched nodes";
        EXPECT_GE(passes[level], 0.0);
        EXPECT_LE(passes[level], levels[level] + 0.01);
    }
    EXPECT_GT(passes[1], 0.0) << "level 1's level pass ran";
}

// Dispatches a graph whose entry names no node, with overflow_fatal set: never returns.
void RunDispatchThatDropsWorkWithOverflowFatal() {
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_OVERFLOW_FATAL", "1", 1);
    GraphTestContext context;
    TestBuffer uav = context.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context.CreateGraph(FaultGraphStages(), layout);
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    context.vkGetExecutionGraphPipelineScratchSizeAMDX(context.device(), graph, &size);
    TestBuffer scratch = context.CreateScratch(size.minSize);
    DispatchToEmitter(context, graph, layout, scratch, {{9, 1, 1}});  // names no node
}

// overflow_fatal: the process dies right after the report, with the report on stderr for the CI log.
TEST(OverflowFatalDeathTest, AbortsAfterReportingDroppedWork) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child starts from scratch instead of forking lavapipe's threads
    EXPECT_DEATH(RunDispatchThatDropsWorkWithOverflowFatal(),
                 "overflow_fatal: aborting after EXECGRAPH-DROPPED-WORK: .*1 records were dropped.*Node Emitter\\[0\\]");
}

}  // namespace
}  // namespace execgraph::test
