// Node outputs end to end: node arrays indexed at run time, dense arrays, sparse arrays with ArraySize and unbounded
// sparse arrays with missing members, OpIsNodePayloadValidAMDX (on the output object and on the type id), empty
// records allocated and never enqueued, SharesInputWithAMDX, TrackFinishWriting with OpFinishWritingNodePayloadAMDX,
// allocations never explicitly enqueued, outputs sharing payload limits and a coalescing entry feeding a thread node
// (vkd3d-proton two_level_empty, shared_inputs and cross_group_sharing expectations). Every test compares the whole UAV
// with a CPU reference.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

using Outputs = GraphTest;

// What the last EXECGRAPH-GRAPH-PIPELINES notice says after "runs its ": "<nodes> nodes with <n> lowered pipelines".
std::string LoweredPipelinesNotice(MessageLog& log) {
    std::string pipelines;
    for (const MessageLog::Message& message : log.Messages()) {
        if (message.id == "EXECGRAPH-GRAPH-PIPELINES") pipelines = message.text.substr(message.text.find(" runs its ") + 10);
    }
    return pipelines;
}

// Entry nodes with an empty input still need a non-null payload pointer.
const uint32_t kEmptyRecord = 0;

// array_sink adds what it received to UAV[2*index] and counts records in UAV[2*index + 1].
void AddToSink(std::vector<uint32_t>& expected, uint32_t index, uint32_t value) {
    if (expected.size() < 2 * index + 2) expected.resize(2 * index + 2, 0);
    expected[2 * index] += value;
    expected[2 * index + 1] += 1;
}

TEST_F(Outputs, NodeArrayWithRuntimeIndex) {
    struct Rec {
        uint32_t node_idx, value;
    };
    // B[1] has no record; B[2] gets two workgroups' worth.
    const std::vector<Rec> records = {{2, 10}, {0, 100}, {3, 1000}, {2, 7}};
    std::vector<NodeStage> stages = {{ReadCorpus("output_node_array_runtime_index"), "main", "Entry"}};
    for (uint32_t i = 0; i < 4; ++i) stages.push_back({ReadModule("array_sink"), "main", "B", i});
    TestBuffer& uav = Uav(64);
    RunGraph(stages, uav, {{"Entry", 0, 4, records.data(), sizeof(Rec)}});
    std::vector<uint32_t> expected;
    for (const Rec& r : records) {
        for (uint32_t t = 0; t < 8; ++t) AddToSink(expected, r.node_idx, r.value + t);
    }
    ExpectUav(uav, expected);
}

// A group record written by one invocation, as AMD's classify shaders write theirs (under SV_GroupIndex == 0). With
// invocation 0 as the writer the lowering leaves the record's address with invocation 0 alone and puts no workgroup
// barrier in the allocation (LeaderOnlyAllocations in lower_outputs_pass.cpp); with any other writer it shares the
// address through workgroup memory. Both must deliver every workgroup's record to the member it names, and every
// invocation, writer or not, must run. Without the per-invocation count, invocation 0 is the only one with anything
// to do, and with writer 0 the others skip the node's code (OnlyInvocationZeroHasEffects): the records must still all
// arrive, also where the array has one member, so that level 1 is direct and the skipping workgroups take part in the
// level hand-off (their count, and the clearing of the half level 1 writes).
TEST_F(Outputs, GroupRecordWrittenByOneInvocation) {
    for (uint32_t members : {4u, 1u}) {
        for (bool counts : {true, false}) {
            for (uint32_t writer : {0u, 37u}) {
                SCOPED_TRACE("members " + std::to_string(members) + (counts ? ", counting" : ", not counting") + ", writer " +
                             std::to_string(writer));
                std::string producer = WithUintConstant(ReadModule("group_record_one_writer"), "%uint_writer", writer);
                producer = WithUintConstant(producer, "%uint_members", members);
                if (!counts) {
                    const std::string count = "%old = OpAtomicIAdd %uint %count %uint_1 %uint_0 %uint_1";
                    ASSERT_NE(producer.find(count), std::string::npos);
                    producer.erase(producer.find(count), count.size());
                }
                std::vector<NodeStage> stages = {{producer, "main", "Entry"}};
                for (uint32_t i = 0; i < members; ++i) stages.push_back({ReadModule("array_sink"), "main", "B", i});
                TestBuffer& uav = Uav(128);
                const uint32_t bases[] = {1000, 50000, 7};
                RunGraph(stages, uav, {{"Entry", 0, 3, bases, sizeof(uint32_t)}});
                std::vector<uint32_t> expected(128, 0);
                for (uint32_t base : bases) {
                    for (uint32_t group = 0; group < 16; ++group) {
                        AddToSink(expected, group % members, base + group);
                        if (counts) expected[64 + group] += 64;  // every invocation of every workgroup counted itself
                    }
                }
                ExpectUav(uav, expected);
            }
        }
    }
}

// Where invocation 0 is the only one with anything to do, the lowered node runs workgroups of one invocation
// (OneInvocationWorkgroupPass), but invocation 0 must still see the built-ins of its 64-invocation workgroup: here the
// record's value comes from GlobalInvocationId (the module's WorkgroupId decoration swapped for it), so workgroup g's
// record is base + 64 g, and with one member and no count every record goes to B[0].
TEST_F(Outputs, OneInvocationWorkgroupSeesItsDeclaredGlobalInvocationId) {
    std::string producer = WithUintConstant(ReadModule("group_record_one_writer"), "%uint_writer", 0);
    producer = WithUintConstant(producer, "%uint_members", 1);
    const std::pair<std::string, std::string> edits[] = {{"%old = OpAtomicIAdd %uint %count %uint_1 %uint_0 %uint_1", ""},
                                                         {"BuiltIn WorkgroupId", "BuiltIn GlobalInvocationId"}};
    for (const auto& [from, to] : edits) {
        ASSERT_NE(producer.find(from), std::string::npos) << from;
        producer.replace(producer.find(from), from.size(), to);
    }
    TestBuffer& uav = Uav(128);
    RunGraph({{producer, "main", "Entry"}, {ReadModule("array_sink"), "main", "B", 0}}, uav,
             {{"Entry", 0, 3, std::array<uint32_t, 3>{1000, 50000, 7}.data(), sizeof(uint32_t)}});
    std::vector<uint32_t> expected(128, 0);
    for (uint32_t base : {1000u, 50000u, 7u}) {
        for (uint32_t group = 0; group < 16; ++group) AddToSink(expected, 0, base + 64 * group);
    }
    ExpectUav(uav, expected);
}

// A node array whose members are listed out of order, so that their graph nodes are not consecutive: every record
// still reaches the member its index names (the output table maps array index to graph node; NodeArrayWithRuntimeIndex
// has consecutive members), so nothing may assume that member i is the first member's graph node + i.
TEST_F(Outputs, NodeArrayOfNonConsecutiveGraphNodesWithRuntimeIndex) {
    struct Rec {
        uint32_t node_idx, value;
    };
    const std::vector<Rec> records = {{2, 10}, {0, 100}, {3, 1000}, {2, 7}, {1, 5}};
    std::vector<NodeStage> stages = {{ReadCorpus("output_node_array_runtime_index"), "main", "Entry"}};
    for (uint32_t i : {2u, 0u, 3u, 1u}) stages.push_back({ReadModule("array_sink"), "main", "B", i});
    TestBuffer& uav = Uav(64);
    RunGraph(stages, uav, {{"Entry", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
    std::vector<uint32_t> expected;
    for (const Rec& r : records) {
        for (uint32_t t = 0; t < 8; ++t) AddToSink(expected, r.node_idx, r.value + t);
    }
    ExpectUav(uav, expected);
}

// Nodes made from one module share one lowered pipeline (each gets its graph index and output-table base in its push
// constants): four Entry[i] nodes, each with its own table for the output array B, and four B[i] sinks that each report
// their own ShaderIndexAMDX. Eight nodes, two lowered pipelines, and the CPU reference results.
TEST_F(Outputs, NodeArrayFromOneModuleSharesOneLoweredPipeline) {
    struct Rec {
        uint32_t node_idx, value;
    };
    std::vector<NodeStage> stages;
    for (uint32_t i = 0; i < 4; ++i) stages.push_back({ReadCorpus("output_node_array_runtime_index"), "main", "Entry", i});
    for (uint32_t i = 0; i < 4; ++i) stages.push_back({ReadModule("array_sink"), "main", "B", i});
    // Entry[e] sends its records to B[(node_idx + e) % 4], so every entry node's table is used.
    std::vector<std::vector<Rec>> records(4);
    std::vector<uint32_t> expected;
    for (uint32_t e = 0; e < 4; ++e) {
        for (uint32_t r = 0; r <= e; ++r) {
            const Rec rec{(r + e) % 4, 1000 * (e + 1) + 10 * r};
            records[e].push_back(rec);
            for (uint32_t t = 0; t < 8; ++t) AddToSink(expected, rec.node_idx, rec.value + t);
        }
    }
    TestBuffer& uav = Uav(64);
    std::vector<NamedEntry> entries;
    for (uint32_t e = 0; e < 4; ++e)
        entries.push_back({"Entry", e, static_cast<uint32_t>(records[e].size()), records[e].data(), sizeof(Rec)});
    context_.log().Clear();
    ASSERT_NE(RunGraph(stages, uav, entries), VK_NULL_HANDLE);
    ExpectUav(uav, expected);
    EXPECT_EQ(LoweredPipelinesNotice(context_.log()), "8 nodes with 2 lowered pipelines");
}

// Modules that differ only in the names of their outputs' nodes lower to the same code (the names become output-table
// entries), so such nodes share one pipeline too: the levels of a chain, here of node arrays L<l>[0..2] made by
// array_chain_step, whose text names the next level. Levels 0 to 2 send on and share one pipeline; level 3, without the
// output, has its own. The nodes of different levels were lowered from different sources, so each level stays a
// dispatch group of its own (a group spanning levels would put the member search of level 1's members over level 0's).
// Every member writes its index where its chain's record says, so a record run by the wrong member, twice or not at
// all changes the UAV.
TEST_F(Outputs, ModulesThatLowerToTheSameCodeShareOnePipelineButNotADispatchGroup) {
    constexpr uint32_t kWidth = 3, kLevels = 4, kChains = 5;
    std::vector<std::string> names;  // NodeStage::node_name points into it
    const std::vector<NodeStage> stages = ArrayChainStages(kWidth, kLevels, kChains, &names);
    const std::vector<std::vector<ArrayChainRecord>> entry_records = ArrayChainEntryRecords(kWidth, kChains);
    std::vector<NamedEntry> entries;
    for (uint32_t member = 0; member < kWidth; ++member) {
        entries.push_back({"L0", member, static_cast<uint32_t>(entry_records[member].size()), entry_records[member].data(),
                           sizeof(ArrayChainRecord)});
    }
    TestBuffer& uav = Uav(kLevels * kChains);
    context_.log().Clear();
    ASSERT_NE(RunGraph(stages, uav, entries), VK_NULL_HANDLE);
    ExpectUav(uav, ArrayChainExpectedUav(kWidth, kLevels, kChains));
    EXPECT_EQ(LoweredPipelinesNotice(context_.log()), "12 nodes with 2 lowered pipelines");
}

// Issue 7: a chain of one-invocation static broadcast steps (node arrays of one member, each level its own module, none a
// dispatch group's member) with several records per level: the levels after the first are direct, so their workgroups
// load their entries from the record list beside their record counts (LaunchPass, runtime::kLevelRecordListIsDirectory).
// Each record writes its chain's slot of its level and moves its chain on, so a record run twice, or not at all, leaves
// a slot unwritten.
TEST_F(Outputs, ChainStepsOfOneInvocationRunTheirOwnRecordsAtDirectLevels) {
    constexpr uint32_t kWidth = 1, kLevels = 5, kChains = 7;
    std::vector<std::string> names;  // NodeStage::node_name points into it
    const std::vector<NodeStage> stages = ArrayChainStages(kWidth, kLevels, kChains, &names);
    const std::vector<std::vector<ArrayChainRecord>> entry_records = ArrayChainEntryRecords(kWidth, kChains);
    TestBuffer& uav = Uav(kLevels * kChains);
    ASSERT_NE(
        RunGraph(stages, uav,
                 {{"L0", 0, static_cast<uint32_t>(entry_records[0].size()), entry_records[0].data(), sizeof(ArrayChainRecord)}}),
        VK_NULL_HANDLE);
    ExpectUav(uav, ArrayChainExpectedUav(kWidth, kLevels, kChains));
}

TEST_F(Outputs, SparseArrayWithArraySizeSkipsMissingMembers) {
    // Only members 3 and 128 of the 129 exist; the node guards each allocation with IsValid on its input's index.
    const std::vector<uint32_t> records = {3, 5, 128, 3, 0, 127};
    TestBuffer& uav = Uav(2 * 129 + 16);
    RunGraph({{ReadCorpus("output_sparse_array"), "main", "Entry"},
              {ReadModule("array_sink"), "main", "OutputArray_1_0", 3},
              {ReadModule("array_sink"), "main", "OutputArray_1_0", 128}},
             uav, {{"Entry", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(uint32_t)}});
    std::vector<uint32_t> expected;
    AddToSink(expected, 3, 3);
    AddToSink(expected, 3, 3);
    AddToSink(expected, 128, 128);
    ExpectUav(uav, expected);
}

TEST_F(Outputs, DenseArrayIsValidOnTheTypeId) {
    // OpIsNodePayloadValidAMDX given the payload array type id (the spec's form) on a dense array of 4: every member
    // exists, so every record reaches the member its index names.
    const std::vector<uint32_t> records = {2, 0, 3, 2, 1, 3, 3};
    std::vector<NodeStage> stages = {{ReadCorpus("output_dense_array_is_valid_type"), "main", "Entry"}};
    for (uint32_t i = 0; i < 4; ++i) stages.push_back({ReadModule("array_sink"), "main", "B", i});
    TestBuffer& uav = Uav(16);
    RunGraph(stages, uav, {{"Entry", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(uint32_t)}});
    std::vector<uint32_t> expected;
    for (uint32_t index : records) AddToSink(expected, index, index + 100);
    ExpectUav(uav, expected);
}

TEST_F(Outputs, IsValidOnTheTypeIdStopsRecursionAtTheLimit) {
    // vkd3d basic_recursion with the recursive node's IsValid given the type id instead of DXC's output object: the
    // recursion still stops at MaxNodeRecursionAMDX 6, so the buffer matches the corpus README's expectation.
    std::string recursive = ReadCorpus("vkd3d_basic_recursion_recursive");
    const std::string object_form = "OpIsNodePayloadValidAMDX %bool %param_var_op ";
    const size_t at = recursive.find(object_form);
    ASSERT_NE(at, std::string::npos);
    recursive.replace(at, object_form.size(), "OpIsNodePayloadValidAMDX %bool %out_arr ");
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadCorpus("vkd3d_basic_recursion_entry"), "EntryNode"}, {recursive, "Recursive"}}, uav,
             {{"EntryNode", 0, 1, &kEmptyRecord, 0}});
    ExpectUav(uav, {0, 7, 13, 17, 25, 34, 46, 59, 71, 76, 68, 47, 23, 7, 1});
}

TEST_F(Outputs, UnboundedSparseArraySkipsMissingMembers) {
    const std::vector<uint32_t> records = {7, 1000, 8, 999, 7, 0};
    TestBuffer& uav = Uav(2 * 1001 + 16);
    RunGraph({{ReadCorpus("output_unbounded_sparse"), "main", "Entry"},
              {ReadModule("array_sink"), "main", "OutputArray_2_0", 7},
              {ReadModule("array_sink"), "main", "OutputArray_2_0", 1000}},
             uav, {{"Entry", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(uint32_t)}});
    std::vector<uint32_t> expected;
    AddToSink(expected, 7, 7);
    AddToSink(expected, 7, 7);
    AddToSink(expected, 1000, 1000);
    ExpectUav(uav, expected);
}

TEST_F(Outputs, EmptyRecordsAllocatedButNeverEnqueued) {
    // output_empty_increment: per input record 3 empty records to A (Invocation scope) and 1 to C[1] (Workgroup scope,
    // one per record since a thread node's workgroup is its invocation); C[0] gets nothing.
    TestBuffer& uav = Uav(16);
    const uint32_t unused = 0;
    RunGraph({{ReadCorpus("output_empty_increment"), "main", "Entry"},
              {ReadModule("empty_leaf_coalescing"), "main", "A", 0, specs_.Add({0})},
              {ReadModule("empty_leaf_thread"), "main", "C", 0, specs_.Add({1})},
              {ReadModule("empty_leaf_coalescing"), "main", "C", 1, specs_.Add({2})}},
             uav, {{"Entry", 0, 5, &unused, 0}});
    ExpectUav(uav, {15, 0, 5});
}

TEST_F(Outputs, TwoLevelEmptyWithSparseAndUnboundedArrays) {
    // vkd3d-proton test_workgraph_two_level_empty: thread leaves A, C[*], E[*], G[*], coalescing leaves B, D[*], F[*],
    // H[*]; E, F have only members 1 and 3, G, H only 7 and 8.
    struct Leaf {
        const char* name;
        uint32_t index;
        bool coalescing;
    };
    const Leaf leaves[14] = {{"A", 0, false}, {"B", 0, true},  {"C", 0, false}, {"C", 1, false}, {"D", 0, true},
                             {"D", 1, true},  {"E", 1, false}, {"E", 3, false}, {"F", 1, true},  {"F", 3, true},
                             {"G", 7, false}, {"G", 8, false}, {"H", 7, true},  {"H", 8, true}};
    std::vector<NodeStage> stages = {{ReadModule("two_level_empty_entry"), "main", "EntryNode"}};
    for (uint32_t slot = 0; slot < 14; ++slot) {
        stages.push_back({ReadModule(leaves[slot].coalescing ? "empty_leaf_coalescing" : "empty_leaf_thread"), "main",
                          leaves[slot].name, leaves[slot].index, specs_.Add({slot})});
    }
    TestBuffer& uav = Uav(1024);
    const uint32_t unused = 0;
    RunGraph(stages, uav, {{"EntryNode", 0, 1, &unused, 0}});
    ExpectUav(uav, {5, 5, 4, 6, 4, 6, 3, 2, 3, 2, 9, 7, 9, 7});
}

TEST_F(Outputs, SharesInputWithFromAGraphEntry) {
    // vkd3d-proton test_workgraph_shared_inputs: the entry sends one {512, 9} record to "Broadcast"[3]; TappedInput
    // (fixed grid 256) runs on the same record.
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadModule("thread_entry_emit"), "main", "Entry", 0, specs_.Add({3, 3, 0, 9})},
              {ReadModule("broadcast_shared"), "main", "Broadcast", 3},
              {ReadCorpus("shares_input_with"), "main", "TappedInput"}},
             uav, {{"Entry", 0, 1, &kEmptyRecord, 0}});
    std::vector<uint32_t> expected(128);
    for (uint32_t i = 0; i < 64; ++i) expected[i] = 4608, expected[64 + i] = 2304;
    ExpectUav(uav, expected);
}

TEST_F(Outputs, SharesInputWithFromTheApi) {
    // The same record dispatched from the API straight to "Broadcast"[3] reaches the node sharing its input too.
    struct Rec {
        uint32_t grid, value;
    };
    const Rec record{512, 9};
    TestBuffer& uav = Uav(1024);
    RunGraph({{ReadModule("broadcast_shared"), "main", "Broadcast", 3}, {ReadCorpus("shares_input_with"), "main", "TappedInput"}},
             uav, {{"Broadcast", 3, 1, &record, sizeof(record)}});
    std::vector<uint32_t> expected(128);
    for (uint32_t i = 0; i < 64; ++i) expected[i] = 4608, expected[64 + i] = 2304;
    ExpectUav(uav, expected);
}

TEST_F(Outputs, CrossGroupSharingFromAGraphEntry) {
    // vkd3d-proton test_workgraph_cross_group_sharing: {512, 0} to "Broadcast"[0] (dynamic grid 512) and [1] (fixed 256).
    // D3D12 lets one node array mix the two; Vulkan does not (VUID-...-StaticNumWorkgroupsAMDX-09138), so each member
    // gets its own graph here, with the entry's second record switched off (its output array is sparse).
    TestBuffer& dynamic_uav = Uav(1024);
    RunGraph({{ReadModule("thread_entry_emit"), "main", "Entry", 0, specs_.Add({0, 1, 0, 0})},
              {ReadCorpus("track_finish_writing"), "main", "Broadcast", 0}},
             dynamic_uav, {{"Entry", 0, 1, &kEmptyRecord, 0}});
    TestBuffer& fixed_uav = Uav(1024);
    RunGraph({{ReadModule("thread_entry_emit"), "main", "Entry", 0, specs_.Add({1, 0, 0, 0})},
              {ReadModule("track_finish_fixed"), "main", "Broadcast", 1}},
             fixed_uav, {{"Entry", 0, 1, &kEmptyRecord, 0}});
    ExpectUav(dynamic_uav, std::vector<uint32_t>(64, 32777));
    std::vector<uint32_t> expected(129);
    for (uint32_t i = 0; i < 64; ++i) expected[64 + i] = 16395;
    expected[128] = 1;
    ExpectUav(fixed_uav, expected);
}

TEST_F(Outputs, FinishWritingIsTrueOncePerRecord) {
    // OpFinishWritingNodePayloadAMDX needs records written by a node (facts §12.3), so a thread entry forwards each API
    // record to "Tracker", whose grid comes from the record. Per record, every workgroup of its grid runs and exactly
    // one of them sees FinishWriting return true, after all of them added to the shared count.
    struct Rec {
        uint32_t id, grid;
    };
    const std::vector<Rec> records = {{0, 3}, {1, 1}, {2, 17}, {3, 64}, {4, 2}};
    TestBuffer& uav = Uav(128);
    RunGraph({{ReadModule("finish_writing_feeder"), "main", "Feeder"}, {ReadModule("track_finish_per_record"), "main", "Tracker"}},
             uav, {{"Feeder", 0, static_cast<uint32_t>(records.size()), records.data(), sizeof(Rec)}});
    std::vector<uint32_t> expected(128);
    for (const Rec& r : records) {
        expected[2 * r.id] = 1;                // workgroups that saw FinishWriting true
        expected[2 * r.id + 1] = 32 * r.grid;  // the shared count the finishing workgroup read
        expected[64 + r.id] = r.grid;          // workgroups that ran
    }
    ExpectUav(uav, expected);
}

TEST_F(Outputs, FinishWritingNodesCannotBeDispatchedFromTheApi) {
    // facts §12.3: the API's records have no producers to finish writing them; the dispatch is skipped with a message.
    struct Rec {
        uint32_t grid, count;
    };
    const Rec record{1, 0};
    TestBuffer& uav = Uav(256);
    RunGraph({{ReadModule("track_finish_fixed"), "main"}}, uav, {{"main", 0, 1, &record, sizeof(Rec)}});
    size_t rejections = 0;
    for (const MessageLog::Message& message : context_.log().Messages()) {
        rejections += message.id == "EXECGRAPH-DISPATCH" &&
                      message.text.find("\"main\"[0], which uses OpFinishWritingNodePayloadAMDX") != std::string::npos;
    }
    EXPECT_EQ(rejections, 1u) << context_.log().Problems();
    ExpectUav(uav, {});
    context_.log().Clear();
}

TEST_F(Outputs, AllocationNeverEnqueuedIsEnqueuedAtTheEnd) {
    // The entry fills a record but never calls OpEnqueueNodePayloadsAMDX: the record still reaches "Sink"[0].
    const std::vector<uint32_t> values = {1, 20, 300, 4000, 50000};
    TestBuffer& uav = Uav(16);
    RunGraph({{ReadModule("unenqueued_allocation"), "main", "Entry"}, {ReadModule("array_sink"), "main", "Sink", 0}}, uav,
             {{"Entry", 0, static_cast<uint32_t>(values.size()), values.data(), sizeof(uint32_t)}});
    ExpectUav(uav, {3 * 54321, 5});
}

TEST_F(Outputs, OutputsSharingPayloadLimits) {
    // output_shares_payload_limits: even values go to "aggregation"[0], odd ones to "fixed_exp"[2], two outputs sharing
    // one NodeSharesPayloadLimitsWithAMDX budget; array_sink reports per shader index.
    const std::vector<uint32_t> values = {2, 7, 10, 13, 1, 40};
    TestBuffer& uav = Uav(16);
    RunGraph({{ReadCorpus("output_shares_payload_limits"), "main", "Entry"},
              {ReadModule("array_sink"), "main", "aggregation", 0},
              {ReadModule("array_sink"), "main", "fixed_exp", 2}},
             uav, {{"Entry", 0, static_cast<uint32_t>(values.size()), values.data(), sizeof(uint32_t)}});
    std::vector<uint32_t> expected;
    for (uint32_t v : values) AddToSink(expected, v % 2 ? 2 : 0, v);
    ExpectUav(uav, expected);
}

TEST_F(Outputs, CoalescingEntryFeedsAThreadNode) {
    // 11 records batched up to 4 per coalescing workgroup (the last batch partial); each becomes one thread-node record.
    std::vector<uint32_t> values;
    for (uint32_t i = 0; i < 11; ++i) values.push_back(i * i);
    TestBuffer& uav = Uav(16);
    RunGraph({{ReadModule("coalescing_forward"), "main", "Entry"}, {ReadModule("array_sink"), "main", "Sink", 0}}, uav,
             {{"Entry", 0, static_cast<uint32_t>(values.size()), values.data(), sizeof(uint32_t)}});
    std::vector<uint32_t> expected;
    for (uint32_t v : values) AddToSink(expected, 0, v + 100);
    ExpectUav(uav, expected);
}

// The same node as DXC -Od emits it (coalescing_forward_od): an entry wrapper passing the input and output to the node
// function, a helper taking the record object, Function-pointer writes into the allocation's copy and an early return.
// The layer inlines the calls (spirv_lowering's InlinePayloadFunctions); every record must arrive as with the -O3 shape.
TEST_F(Outputs, CoalescingEntryCompiledAtOdFeedsAThreadNode) {
    std::vector<uint32_t> values;
    for (uint32_t i = 0; i < 11; ++i) values.push_back(i * i + 3);
    TestBuffer& uav = Uav(16);
    RunGraph({{ReadModule("coalescing_forward_od"), "main", "Entry"}, {ReadModule("array_sink"), "main", "Sink", 0}}, uav,
             {{"Entry", 0, static_cast<uint32_t>(values.size()), values.data(), sizeof(uint32_t)}});
    std::vector<uint32_t> expected;
    for (uint32_t v : values) AddToSink(expected, 0, v + 100);
    ExpectUav(uav, expected);
}

// One-record allocations of 32, 64 and 128 bytes (coalesced_record_producer with 1, 3 and 7 words), lowered with the
// records kept in words and written per subgroup, transposed (`on`, what GPUs do), and as the node's code writes them
// (`off`, what CPU devices do). Both must give the CPU reference: full workgroups take the transposed path; a hole in
// the invocations, a partial last workgroup and a workgroup without records write each record on its own.
// coalesced_record_producer's and coalesced_record_thread_producer's text with @WORDS@ replaced.
std::string WithWords(std::string text, uint32_t words) {
    for (std::size_t at; (at = text.find("@WORDS@")) != std::string::npos;) text.replace(at, 7, std::to_string(words));
    return text;
}

// What coalesced_record_sink writes for the record of `id` (coalesced_record_producer's stores, `words` uint4 words).
void ExpectCoalescedRecord(std::vector<uint32_t>& expected, uint32_t id, uint32_t words) {
    std::vector<uint32_t> record_words(4 * words);
    for (uint32_t k = 0; k < 4 * words; ++k) record_words[k] = id * 16 + k;
    record_words[4 * (id % words) + 1] ^= id + 0xABC;
    uint32_t sum = 0;
    for (uint32_t k = 0; k < 4 * words; ++k) sum += record_words[k] * (k + 1);
    const float half_id = static_cast<float>(id) * 0.5f;
    uint32_t half_bits = 0;
    std::memcpy(&half_bits, &half_id, sizeof(half_bits));
    if (expected.size() < 4 * id + 4) expected.resize(4 * id + 4, 0);
    expected[4 * id] = half_bits;
    expected[4 * id + 1] = id * 7 + 3 * (id ^ 0x55);
    expected[4 * id + 2] = sum;
    expected[4 * id + 3] += 1;
}

class CoalescedRecordStores : private ScopedEnvironmentVariable,
                              public GraphTest,
                              public ::testing::WithParamInterface<std::tuple<const char*, uint32_t>> {
  protected:
    CoalescedRecordStores()
        : ScopedEnvironmentVariable("VK_EXECGRAPH_SHADER_ENQUEUE_RECORD_STORE_COALESCING", std::get<0>(GetParam())) {}
};

TEST_P(CoalescedRecordStores, RecordsWrittenPerSubgroupMatchTheirInvocationsStores) {
    const uint32_t words = std::get<1>(GetParam());
    struct Launch {
        uint32_t grid, count, hole, base;
    };
    const std::vector<Launch> launches = {
        {4, 256, ~0u, 0},    // four full workgroups: every subgroup's records side by side
        {3, 150, 77, 1000},  // a hole at invocation 77 and a last workgroup of 22 records
        {1, 0, ~0u, 600},    // a workgroup without records
        {2, 128, 0, 300},    // a hole at the first invocation
    };
    std::vector<uint32_t> expected;
    for (const Launch& launch : launches) {
        for (uint32_t i = 0; i < launch.grid * 64; ++i) {
            if (i < launch.count && i != launch.hole) ExpectCoalescedRecord(expected, launch.base + i, words);
        }
    }
    TestBuffer& uav = Uav(static_cast<uint32_t>(expected.size()));
    ASSERT_NE(RunGraph({{WithWords(ReadModule("coalesced_record_producer"), words), "main", "Entry"},
                        {WithWords(ReadModule("coalesced_record_sink"), words), "main", "Sink"}},
                       uav, {{"Entry", 0, static_cast<uint32_t>(launches.size()), launches.data(), sizeof(Launch)}}),
              VK_NULL_HANDLE);
    ExpectUav(uav, expected);
}

// The same records from a thread node: its lowered workgroup batches unrelated host records (64 on GPUs, 32 on CPU
// devices), so whole batches take the transposed path, and batches with a record that allocates nothing, or the last,
// partial batch, write each record on its own.
TEST_P(CoalescedRecordStores, RecordsOfThreadNodeBatchesMatchTheirInvocationsStores) {
    const uint32_t words = std::get<1>(GetParam());
    struct Input {
        uint32_t id, has;
    };
    std::vector<Input> inputs;
    std::vector<uint32_t> expected;
    for (uint32_t j = 0; j < 300; ++j) {
        const Input input{2 * j + 5, j < 128 || j % 37 != 11 ? 1u : 0u};  // the first four batches of 32 are whole
        inputs.push_back(input);
        if (input.has != 0) ExpectCoalescedRecord(expected, input.id, words);
    }
    TestBuffer& uav = Uav(static_cast<uint32_t>(expected.size()));
    ASSERT_NE(RunGraph({{WithWords(ReadModule("coalesced_record_thread_producer"), words), "main", "Entry"},
                        {WithWords(ReadModule("coalesced_record_sink"), words), "main", "Sink"}},
                       uav, {{"Entry", 0, static_cast<uint32_t>(inputs.size()), inputs.data(), sizeof(Input)}}),
              VK_NULL_HANDLE);
    ExpectUav(uav, expected);
}

INSTANTIATE_TEST_SUITE_P(Setting, CoalescedRecordStores,
                         ::testing::Combine(::testing::Values("on", "off"), ::testing::Values(1u, 2u, 3u, 7u)),
                         [](const ::testing::TestParamInfo<std::tuple<const char*, uint32_t>>& info) {
                             return std::string(std::get<0>(info.param)) + "_" + std::to_string(16 + 16 * std::get<1>(info.param)) +
                                    "_bytes";
                         });

}  // namespace
}  // namespace execgraph::test
