// Linking an execution graph: every rule vkCreateExecutionGraphPipelinesAMDX checks between nodes fails with an error
// VkResult and one EXECGRAPH-PIPELINE-CREATION message naming the node (facts §9, §12.5, §14), and the static
// reachability analysis dispatches each node exactly at the levels where it can have records (facts §13). The node
// shaders are generated from a small description, so each test spells out only the graph's shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

// One generated node: a thread node (or a one-workgroup static broadcast node) that adds 1 to UAV[slot] per record it
// runs, then sends one record to each output, whose first word is its own first input word plus one.
struct GeneratedNode {
    struct Output {
        std::string name;
        uint32_t index = 0;
        uint32_t words = 1;  // record size in 32-bit words
    };
    uint32_t slot = 0;
    uint32_t input_words = 1;   // 0: an empty input record
    bool static_grid = false;   // StaticNumWorkgroupsAMDX 1 1 1 instead of a thread node
    bool dynamic_grid = false;  // a broadcast node whose grid is the first input word (PayloadDispatchIndirectAMDX)
    bool api_entry = true;      // false: IsApiEntryAMDX false
    std::optional<uint32_t> max_recursion;
    std::optional<std::pair<std::string, uint32_t>> shares_input_with;
    std::vector<Output> outputs;
};

std::string Assembly(const GeneratedNode& node) {
    std::set<uint32_t> constants{0, 1, 4, node.slot};
    for (uint32_t w = 0; w < node.input_words; ++w) constants.insert(w);
    for (const auto& output : node.outputs) {
        constants.insert(output.index);
        for (uint32_t w = 0; w < output.words; ++w) constants.insert(w);
    }
    if (node.max_recursion) constants.insert(*node.max_recursion);
    if (node.shares_input_with) constants.insert(node.shares_input_with->second);
    auto c = [](uint32_t value) { return "%c" + std::to_string(value); };

    std::ostringstream s;
    s << "OpCapability Shader\nOpCapability ShaderEnqueueAMDX\nOpExtension \"SPV_AMDX_shader_enqueue\"\n"
         "OpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\" %in %UAV\nOpExecutionMode %main LocalSize 1 1 1\n";
    if (node.static_grid) {
        s << "OpExecutionModeId %main StaticNumWorkgroupsAMDX %c1 %c1 %c1\n";
    } else if (!node.dynamic_grid) {
        s << "OpExecutionMode %main CoalescingAMDX\n";
    }
    if (!node.api_entry) s << "OpExecutionModeId %main IsApiEntryAMDX %false\n";
    if (node.max_recursion) s << "OpExecutionModeId %main MaxNodeRecursionAMDX " << c(*node.max_recursion) << "\n";
    if (node.shares_input_with) {
        s << "OpExecutionModeId %main SharesInputWithAMDX %shared_name " << c(node.shares_input_with->second) << "\n";
    }
    for (uint32_t w = 0; w < node.input_words; ++w) s << "OpMemberDecorate %InRec " << w << " Offset " << 4 * w << "\n";
    if (node.dynamic_grid) s << "OpMemberDecorate %InRec 0 PayloadDispatchIndirectAMDX\n";
    s << "OpDecorateId %in_arr NodeMaxPayloadsAMDX %c1\n";
    for (size_t k = 0; k < node.outputs.size(); ++k) {
        for (uint32_t w = 0; w < node.outputs[k].words; ++w)
            s << "OpMemberDecorate %OutRec" << k << " " << w << " Offset " << 4 * w << "\n";
        s << "OpDecorateId %out" << k << " PayloadNodeNameAMDX %name" << k << "\n";
        s << "OpDecorateId %out" << k << " NodeMaxPayloadsAMDX %c1\n";
        s << "OpDecorateId %out" << k << " PayloadNodeBaseIndexAMDX " << c(node.outputs[k].index) << "\n";
    }
    s << "OpDecorate %uints ArrayStride 4\nOpMemberDecorate %Buffer 0 Offset 0\nOpDecorate %Buffer Block\n"
         "OpDecorate %UAV DescriptorSet 0\nOpDecorate %UAV Binding 0\n"
         "%void = OpTypeVoid\n%bool = OpTypeBool\n%uint = OpTypeInt 32 0\n%false = OpConstantFalse %bool\n";
    for (uint32_t value : constants) s << c(value) << " = OpConstant %uint " << value << "\n";
    if (node.shares_input_with) s << "%shared_name = OpConstantStringAMDX \"" << node.shares_input_with->first << "\"\n";
    s << "%InRec = OpTypeStruct";
    for (uint32_t w = 0; w < node.input_words; ++w) s << " %uint";
    s << "\n%in_arr = OpTypeNodePayloadArrayAMDX %InRec\n%in_ptr = OpTypePointer NodePayloadAMDX %in_arr\n";
    for (size_t k = 0; k < node.outputs.size(); ++k) {
        s << "%name" << k << " = OpConstantStringAMDX \"" << node.outputs[k].name << "\"\n%OutRec" << k << " = OpTypeStruct";
        for (uint32_t w = 0; w < node.outputs[k].words; ++w) s << " %uint";
        s << "\n%out" << k << " = OpTypeNodePayloadArrayAMDX %OutRec" << k << "\n%out_ptr" << k
          << " = OpTypePointer NodePayloadAMDX %out" << k << "\n";
    }
    s << "%payload_uint = OpTypePointer NodePayloadAMDX %uint\n%uints = OpTypeRuntimeArray %uint\n%Buffer = OpTypeStruct %uints\n"
         "%buffer_ptr = OpTypePointer StorageBuffer %Buffer\n%storage_uint = OpTypePointer StorageBuffer %uint\n"
         "%fn = OpTypeFunction %void\n%in = OpVariable %in_ptr NodePayloadAMDX\n%UAV = OpVariable %buffer_ptr StorageBuffer\n"
         "%main = OpFunction %void None %fn\n%entry = OpLabel\n";
    s << "%counter = OpAccessChain %storage_uint %UAV %c0 " << c(node.slot) << "\n%old = OpAtomicIAdd %uint %counter %c1 %c0 %c1\n";
    std::string first_word = "%c1";
    if (node.input_words > 0) {
        s << "%in_first = OpAccessChain %payload_uint %in %c0 %c0\n%in_value = OpLoad %uint %in_first\n"
             "%next_value = OpIAdd %uint %in_value %c1\n";
        first_word = "%next_value";
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
        s << "%records" << k << " = OpAllocateNodePayloadsAMDX %out_ptr" << k << " %c4 %c1 %c0\n";
        for (uint32_t w = 0; w < node.outputs[k].words; ++w) {
            s << "%word" << k << "_" << w << " = OpAccessChain %payload_uint %records" << k << " %c0 " << c(w) << "\n";
            s << "OpStore %word" << k << "_" << w << " " << (w == 0 ? first_word : "%c0") << "\n";
        }
        s << "OpEnqueueNodePayloadsAMDX %records" << k << "\n";
    }
    s << "OpReturn\nOpFunctionEnd\n";
    return s.str();
}

NodeStage Stage(const char* name, uint32_t index, const GeneratedNode& node) { return {Assembly(node), "main", name, index}; }

// "N0", "N1", ...: the node names of a chain, kept alive by the test for the create infos that point at them.
std::vector<std::string> ChainNames(uint32_t length) {
    std::vector<std::string> names;
    for (uint32_t i = 0; i < length; ++i) names.push_back("N" + std::to_string(i));
    return names;
}

class GraphLinking : public GraphTest {
  protected:
    // Creates the graph, expects it to fail with VK_ERROR_UNKNOWN and one creation message containing every `needle`.
    void ExpectLinkError(const std::vector<NodeStage>& stages, const std::vector<std::string>& needles) {
        TestBuffer& uav = Uav(64);
        VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
        VkResult result = VK_SUCCESS;
        EXPECT_EQ(context_.CreateGraph(stages, layout, &result), VK_NULL_HANDLE);
        EXPECT_EQ(result, VK_ERROR_UNKNOWN);
        std::vector<std::string> errors;
        for (const MessageLog::Message& message : context_.log().Messages()) {
            if (message.severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
                errors.push_back(message.id + ": " + message.text);
        }
        ASSERT_EQ(errors.size(), 1u) << context_.log().Problems();
        EXPECT_EQ(errors[0].rfind("EXECGRAPH-PIPELINE-CREATION: ", 0), 0u) << errors[0];
        for (const std::string& needle : needles)
            EXPECT_NE(errors[0].find(needle), std::string::npos) << needle << " in " << errors[0];
        context_.log().Clear();
    }

    // Creates the graph and returns what its EXECGRAPH-GRAPH-LEVELS notice says each level dispatches.
    std::string LevelsOf(VkPipeline graph) {
        EXPECT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
        std::string levels;
        for (const MessageLog::Message& message : context_.log().Messages()) {
            if (message.id != "EXECGRAPH-GRAPH-LEVELS") continue;
            EXPECT_EQ(message.severity, VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT);
            levels = message.text.substr(message.text.find(" dispatches ") + 12);
        }
        context_.log().Clear();
        return levels;
    }
};

GeneratedNode Sends(std::vector<GeneratedNode::Output> outputs, uint32_t slot = 0) {
    GeneratedNode node;
    node.outputs = std::move(outputs);
    node.slot = slot;
    return node;
}

GeneratedNode Inner(std::vector<GeneratedNode::Output> outputs, uint32_t slot) {
    GeneratedNode node = Sends(std::move(outputs), slot);
    node.api_entry = false;
    return node;
}

// names[0] -> names[1] -> ...: node i adds 1 to UAV[i].
std::vector<NodeStage> Chain(const std::vector<std::string>& names) {
    std::vector<NodeStage> stages;
    for (uint32_t i = 0; i < names.size(); ++i) {
        std::vector<GeneratedNode::Output> next;
        if (i + 1 < names.size()) next.push_back({names[i + 1], 0});
        stages.push_back(Stage(names[i].c_str(), 0, i == 0 ? Sends(next) : Inner(next, i)));
    }
    return stages;
}

TEST_F(GraphLinking, PayloadSizeMismatchNamesBothNodes) {
    ExpectLinkError({Stage("A", 0, Sends({{"B", 0, 2}})), Stage("B", 0, Inner({}, 1))},
                    {"\"A\"[0] writes 8-byte records to \"B\"[0]", "4 bytes", "09139"});
}

TEST_F(GraphLinking, SelfEnqueueWithoutMaxNodeRecursion) {
    ExpectLinkError({Stage("R", 0, Sends({{"R", 0}}))}, {"\"R\"[0] enqueues to itself without MaxNodeRecursionAMDX"});
}

TEST_F(GraphLinking, EnqueueingTheSameNameAtAnotherIndex) {
    // Facts §14: only the node itself may be named; "R"[1] is a different node of the same name.
    GeneratedNode recursive = Sends({{"R", 1}});
    recursive.max_recursion = 4;
    ExpectLinkError({Stage("R", 0, recursive), Stage("R", 1, Inner({}, 1))},
                    {"\"R\"[0] enqueues to \"R\"[1]", "recursion other than to the node itself"});
}

TEST_F(GraphLinking, CycleThroughDifferentNamesNamesTheCycle) {
    ExpectLinkError({Stage("Entry", 0, Sends({{"A", 0}})), Stage("A", 0, Inner({{"B", 0}}, 1)), Stage("B", 0, Inner({{"C", 0}}, 2)),
                     Stage("C", 0, Inner({{"A", 0}}, 3))},
                    {"\"A\"[0] -> \"B\"[0] -> \"C\"[0] -> \"A\"[0]", "cycle", "facts §14"});
}

TEST_F(GraphLinking, SharingTheInputOfAMissingNode) {
    GeneratedNode tap = Inner({}, 1);
    tap.shares_input_with = {{"Nowhere", 2}};
    ExpectLinkError({Stage("A", 0, Sends({})), Stage("Tap", 0, tap)},
                    {"\"Tap\"[0] shares the input of \"Nowhere\"[2]", "not in the graph"});
}

TEST_F(GraphLinking, SharingTheInputOfANodeThatShares) {
    GeneratedNode first = Inner({}, 1);
    first.shares_input_with = {{"A", 0}};
    GeneratedNode second = Inner({}, 2);
    second.shares_input_with = {{"Tap", 0}};
    ExpectLinkError({Stage("A", 0, Sends({})), Stage("Tap", 0, first), Stage("TapOfTap", 0, second)},
                    {"\"TapOfTap\"[0] shares the input of \"Tap\"[0], which itself shares an input"});
}

TEST_F(GraphLinking, SharingAnInputOfAnotherSize) {
    GeneratedNode tap = Inner({}, 1);
    tap.input_words = 2;
    tap.shares_input_with = {{"A", 0}};
    ExpectLinkError({Stage("A", 0, Sends({})), Stage("Tap", 0, tap)},
                    {"\"Tap\"[0] shares the input of \"A\"[0] but declares a 8-byte input record where the shared one is 4 bytes"});
}

TEST_F(GraphLinking, MoreThan256NodesSharingOneInput) {
    // "Tap"[0..256]: 257 sharers of "A"[0]'s input, one more than facts §12.5 allows.
    GeneratedNode tap = Inner({}, 1);
    tap.shares_input_with = {{"A", 0}};
    std::vector<NodeStage> stages = {Stage("A", 0, Sends({}))};
    for (uint32_t i = 0; i <= 256; ++i) stages.push_back(Stage("Tap", i, tap));
    ExpectLinkError(stages, {"more than 256 nodes share the input of \"A\"[0], the last one being \"Tap\"[256]"});
}

TEST_F(GraphLinking, SameNameWithDifferentInputSizes) {
    GeneratedNode wide = Inner({}, 1);
    wide.input_words = 3;
    ExpectLinkError({Stage("Entry", 0, Sends({{"B", 0}})), Stage("B", 0, Inner({}, 1)), Stage("B", 1, wide)},
                    {"\"B\"[0] and \"B\"[1] share a name", "4 and 12 bytes", "09135"});
}

TEST_F(GraphLinking, SameNameWithAndWithoutStaticNumWorkgroups) {
    GeneratedNode fixed = Inner({}, 1);
    fixed.static_grid = true;
    ExpectLinkError({Stage("Entry", 0, Sends({{"B", 0}})), Stage("B", 0, Inner({}, 1)), Stage("B", 1, fixed)},
                    {"\"B\"[1] and \"B\"[0] share a name but only the first declares StaticNumWorkgroupsAMDX", "09138"});
}

TEST_F(GraphLinking, SameNameCoalescingAndBroadcast) {
    GeneratedNode broadcast = Inner({}, 1);
    broadcast.dynamic_grid = true;
    ExpectLinkError({Stage("Entry", 0, Sends({{"B", 0}})), Stage("B", 0, Inner({}, 1)), Stage("B", 1, broadcast)},
                    {"\"B\"[0] and \"B\"[1] share a name but only the first declares CoalescingAMDX", "09137"});
}

TEST_F(GraphLinking, ChainDeeperThanMaxExecutionGraphDepth) {
    // N0 -> N1 -> ... -> N32: the last node would run at depth 33 (facts §13: the API's node is depth 1).
    const std::vector<std::string> names = ChainNames(33);
    ExpectLinkError(Chain(names), {"\"N32\"[0] can receive records at depth 33", "maxExecutionGraphDepth (32)"});
}

TEST_F(GraphLinking, RecursionDeeperThanMaxExecutionGraphDepth) {
    // One API level plus 32 recursive steps is 33 levels.
    GeneratedNode recursive = Sends({{"R", 0}});
    recursive.max_recursion = 32;
    ExpectLinkError({Stage("R", 0, recursive)}, {"\"R\"[0] can receive records at depth 33"});
}

TEST_F(GraphLinking, ChainOfExactlyMaxExecutionGraphDepthRuns) {
    // N0 -> ... -> N31 is 32 levels: accepted, and every node runs once at its own level.
    const std::vector<std::string> names = ChainNames(32);
    const std::vector<NodeStage> stages = Chain(names);
    TestBuffer& uav = Uav(64);
    const uint32_t first_word = 0;
    VkPipeline graph = RunGraph(stages, uav, {{"N0", 0, 1, &first_word, 4}});
    std::string expected_levels;
    for (uint32_t i = 0; i < 32; ++i)
        expected_levels += (i ? "; level " : "level ") + std::to_string(i) + ": \"N" + std::to_string(i) + "\"[0]";
    EXPECT_EQ(LevelsOf(graph), expected_levels);
    ExpectUav(uav, std::vector<uint32_t>(32, 1));
}

// Reachability: nodes no record can reach are never dispatched, a diamond's join runs one level after both arms, and a
// node reachable along paths of different lengths is dispatched at each of those levels; the counts read back show each
// record ran exactly once.
TEST_F(GraphLinking, LevelsFollowStaticReachability) {
    // Entry -> A -> Join, Entry -> B -> Join (diamond); Entry -> Late -> Later -> Join and Entry -> Join (Join also at
    // levels 1 and 3); Orphan (not an API entry, enqueued by nobody) and its target Orphaned never run.
    const std::vector<NodeStage> stages = {
        Stage("Entry", 0, Sends({{"A", 0}, {"B", 0}, {"Late", 0}, {"Join", 0}}, 0)),
        Stage("A", 0, Inner({{"Join", 0}}, 1)),
        Stage("B", 0, Inner({{"Join", 0}}, 2)),
        Stage("Late", 0, Inner({{"Later", 0}}, 3)),
        Stage("Later", 0, Inner({{"Join", 0}}, 4)),
        Stage("Join", 0, Inner({}, 5)),
        Stage("Orphan", 0, Inner({{"Orphaned", 0}}, 6)),
        Stage("Orphaned", 0, Inner({}, 7)),
    };
    TestBuffer& uav = Uav(16);
    const uint32_t first_word = 0;
    VkPipeline graph = RunGraph(stages, uav, {{"Entry", 0, 1, &first_word, 4}});
    EXPECT_EQ(LevelsOf(graph),
              "level 0: \"Entry\"[0]; level 1: \"A\"[0], \"B\"[0], \"Late\"[0], \"Join\"[0]; level 2: \"Later\"[0], \"Join\"[0]; "
              "level 3: \"Join\"[0]");
    ExpectUav(uav, {1, 1, 1, 1, 1, 4, 0, 0});
}

TEST_F(GraphLinking, RecursionLevelsStopAtMaxNodeRecursion) {
    // R enqueues itself (MaxNodeRecursionAMDX 3) and Leaf, so Leaf can have records one level after each level of R.
    // (Created, not run: R's self-enqueue is unguarded, so its last level would drop a record.)
    GeneratedNode recursive = Sends({{"R", 0}, {"Leaf", 0}});
    recursive.max_recursion = 3;
    TestBuffer& uav = Uav(16);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({Stage("R", 0, recursive), Stage("Leaf", 0, Inner({}, 1))}, layout);
    EXPECT_EQ(LevelsOf(graph),
              "level 0: \"R\"[0]; level 1: \"R\"[0], \"Leaf\"[0]; level 2: \"R\"[0], \"Leaf\"[0]; level 3: \"R\"[0], \"Leaf\"[0]; "
              "level 4: \"Leaf\"[0]");
}

TEST_F(GraphLinking, SharingNodesRunAtTheLevelOfTheSharedInput) {
    GeneratedNode tap = Inner({}, 2);
    tap.shares_input_with = {{"Mid", 0}};
    TestBuffer& uav = Uav(16);
    const uint32_t first_word = 0;
    VkPipeline graph = RunGraph({Stage("Entry", 0, Sends({{"Mid", 0}}, 0)), Stage("Mid", 0, Inner({}, 1)), Stage("Tap", 0, tap)},
                                uav, {{"Entry", 0, 1, &first_word, 4}, {"Entry", 0, 1, &first_word, 4}});
    EXPECT_EQ(LevelsOf(graph), "level 0: \"Entry\"[0]; level 1: \"Mid\"[0], \"Tap\"[0]");
    ExpectUav(uav, {2, 2, 2});
}


// Facts §12.3: nodes with IsApiEntryAMDX false must not be dispatched from the API. Host infos are checked when the
// command is recorded; device infos only on the GPU, where the entry pass drops and reports such entries (the scheduler
// never dispatches a non-entry node at level 0, so they could not run), and the valid entries still run.
TEST_F(GraphLinking, DeviceEntryNamingANonEntryNodeIsDroppedAndReported) {
    TestBuffer& uav = Uav(4);
    VkPipelineLayout layout = context_.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context_.CreateGraph({Stage("Entry", 0, Sends({{"Mid", 0}}, 0)), Stage("Mid", 0, Inner({}, 1))}, layout);
    ASSERT_NE(graph, VK_NULL_HANDLE) << context_.log().Problems();
    TestBuffer& scratch = PrepareScratch(graph);
    TestBuffer& device_data = Own(context_.CreateBuffer(4096, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    auto* bytes = device_data.As<uint8_t>();
    const uint32_t words[5] = {1, 2, 3, 4, 5};
    std::memcpy(bytes + 1024, words, sizeof(words));
    VkDispatchGraphInfoAMDX infos[2] = {{context_.NodeIndex(graph, "Entry", 0), 2, {}, 4}, {context_.NodeIndex(graph, "Mid", 0), 3, {}, 4}};
    infos[0].payloads.deviceAddress = device_data.address + 1024;
    infos[1].payloads.deviceAddress = device_data.address + 1024 + 8;
    std::memcpy(bytes + 256, infos, sizeof(infos));
    VkDispatchGraphCountInfoAMDX count_info{2, {}, sizeof(VkDispatchGraphInfoAMDX)};
    count_info.infos.deviceAddress = device_data.address + 256;
    std::memcpy(bytes, &count_info, sizeof(count_info));
    VkDescriptorSet set = context_.descriptor_set();
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph, layout, set);
        context_.vkCmdDispatchGraphIndirectCountAMDX(cmd, scratch.address, scratch.size, device_data.address);
    });
    ExpectUav(uav, {2, 2, 0, 0});  // Mid ran Entry's two records only
    std::vector<std::string> reports;
    for (const MessageLog::Message& message : context_.log().Messages()) {
        if (message.id == "EXECGRAPH-DROPPED-WORK") reports.push_back(message.text);
    }
    ASSERT_EQ(reports.size(), 1u) << context_.log().Problems();
    EXPECT_NE(reports[0].find(": 3 records were dropped"), std::string::npos) << reports[0];
    EXPECT_NE(reports[0].find("Mid"), std::string::npos) << "charged to the node the entry named: " << reports[0];
    context_.log().Clear();
}

// ---------------------------------------------------------------------------------------------------------------------
// Direct levels (docs/design.md, "Direct levels"): a level whose records can only go to one thread, coalescing or static
// broadcast node runs without a level pass; the last workgroup of the level before prepares it. Each scenario runs with
// the `direct_levels` setting on and off, in fresh instances: both must give the expected UAV and the same statistics line (records,
// workgroups and dispatches per node, levels run, high-water marks) for every dispatch.

struct DirectLevelsEntry {  // as GraphTest::NamedEntry
    const char* node_name;
    uint32_t node_index;
    uint32_t payload_count;
    const void* payloads;
    uint64_t stride;
};

struct DirectLevelsRun {
    std::vector<std::vector<uint32_t>> uav_after_each;  // UAV contents after each dispatch
    std::vector<std::string> statistics;                // EXECGRAPH-STATISTICS per dispatch, pipeline handle removed
};

// Runs each entry list as one vkCmdDispatchGraphAMDX (in separate submissions, one scratch) of the graph `stages`.
// `expected_problem` names the only warning or error id the run may report (a test's deliberate drops), one per dispatch.
DirectLevelsRun RunWithDirectLevels(bool direct_levels, const std::vector<NodeStage>& stages, uint32_t uav_words,
                                    const std::vector<std::vector<DirectLevelsEntry>>& dispatches,
                                    const std::string& expected_problem = "") {
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS", "1", 1);
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_DIRECT_LEVELS", direct_levels ? "true" : "false", 1);
    GraphTestContext context;
    unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS");
    unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DIRECT_LEVELS");
    DirectLevelsRun run;
    EXPECT_TRUE(context.ok());
    if (!context.ok()) return run;
    TestBuffer uav = context.CreateBuffer(uav_words * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context.CreateGraph(stages, layout);
    EXPECT_NE(graph, VK_NULL_HANDLE) << context.log().Problems();
    if (graph == VK_NULL_HANDLE) return run;
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    EXPECT_EQ(context.vkGetExecutionGraphPipelineScratchSizeAMDX(context.device(), graph, &size), VK_SUCCESS);
    TestBuffer scratch = context.CreateScratch(size.minSize);
    context.Submit([&](VkCommandBuffer cmd) { context.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size); });
    for (const std::vector<DirectLevelsEntry>& entries : dispatches) {
        std::memset(uav.As<uint32_t>(), 0, uav_words * sizeof(uint32_t));
        std::vector<VkDispatchGraphInfoAMDX> infos;
        for (const DirectLevelsEntry& entry : entries) {
            VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, entry.node_name, entry.node_index), entry.payload_count, {}, entry.stride};
            info.payloads.hostAddress = entry.payloads;
            infos.push_back(info);
        }
        VkDispatchGraphCountInfoAMDX count_info{static_cast<uint32_t>(infos.size()), {}, sizeof(VkDispatchGraphInfoAMDX)};
        count_info.infos.hostAddress = infos.data();
        VkDescriptorSet set = context.descriptor_set();
        context.Submit([&](VkCommandBuffer cmd) {
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
            context.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
        });
        run.uav_after_each.emplace_back(uav.As<uint32_t>(), uav.As<uint32_t>() + uav_words);
    }
    for (const MessageLog::Message& message : context.log().Messages()) {
        if (message.id != "EXECGRAPH-STATISTICS") continue;
        std::string line = message.text;
        const size_t pipeline = line.find("\"pipeline\":");
        if (pipeline != std::string::npos) line.erase(pipeline, line.find(',', pipeline) + 1 - pipeline);
        run.statistics.push_back(line);
    }
    if (expected_problem.empty()) {
        EXPECT_EQ(context.log().Problems(), "");
    } else {
        size_t expected = 0, others = 0;
        for (const MessageLog::Message& message : context.log().Messages()) {
            if (message.severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) continue;
            ++(message.id == expected_problem ? expected : others);
        }
        EXPECT_EQ(expected, dispatches.size()) << context.log().Problems();
        EXPECT_EQ(others, 0u) << context.log().Problems();
    }
    context.Destroy(scratch);
    context.Destroy(uav);
    return run;
}

void ExpectSameWithAndWithoutDirectLevels(const std::vector<NodeStage>& stages,
                                          const std::vector<std::vector<DirectLevelsEntry>>& dispatches,
                                          const std::vector<std::vector<uint32_t>>& expected_uav,
                                          const std::string& expected_problem = "") {
    const uint32_t words = static_cast<uint32_t>(expected_uav.front().size());
    const DirectLevelsRun direct = RunWithDirectLevels(true, stages, words, dispatches, expected_problem);
    const DirectLevelsRun passes = RunWithDirectLevels(false, stages, words, dispatches, expected_problem);
    EXPECT_EQ(direct.uav_after_each, expected_uav) << "with direct levels";
    EXPECT_EQ(passes.uav_after_each, expected_uav) << "with level passes only";
    ASSERT_EQ(direct.statistics.size(), dispatches.size());
    EXPECT_EQ(direct.statistics, passes.statistics);
}

// 40 records through a chain of four coalescing nodes (one record per workgroup): levels 1 to 3 are direct, each with
// 40 workgroups whose last one hands off to the next level.
TEST(DirectLevels, ChainOfManyWorkgroupsPerLevel) {
    const std::vector<std::string> names = ChainNames(4);
    const std::vector<uint32_t> words(40, 7);
    ExpectSameWithAndWithoutDirectLevels(Chain(names), {{{"N0", 0, 40, words.data(), 4}}, {{"N0", 0, 3, words.data(), 4}}},
                                         {{40, 40, 40, 40}, {3, 3, 3, 3}});
}

// The same through static broadcast nodes (one workgroup per record, as the benchmark's chain). The second dispatch has
// one record: each level is one workgroup of one invocation, whose hand-off takes the level's counts from what its own
// allocations added and the consumer's table entry and statistics loaded before its code (LevelHandOffPass), so the
// statistics must come out as the level passes' do.
TEST(DirectLevels, ChainOfStaticBroadcastNodes) {
    std::vector<NodeStage> stages;
    const std::vector<std::string> names = ChainNames(5);
    for (uint32_t i = 0; i < names.size(); ++i) {
        GeneratedNode node = i == 0 ? Sends({}, i) : Inner({}, i);
        if (i + 1 < names.size()) node.outputs.push_back({names[i + 1], 0});
        node.static_grid = true;
        stages.push_back(Stage(names[i].c_str(), 0, node));
    }
    const std::vector<uint32_t> words(9, 1);
    ExpectSameWithAndWithoutDirectLevels(stages, {{{"N0", 0, 9, words.data(), 4}}, {{"N0", 0, 1, words.data(), 4}}},
                                         {{9, 9, 9, 9, 9}, {1, 1, 1, 1, 1}});
}

// A static broadcast node of one invocation that enqueues itself (MaxNodeRecursionAMDX 3) from one record: levels 1 to 3
// are direct, each one workgroup of one invocation, so each hand-off takes its counts from its own allocations and adds
// to the node's statistics loaded before its code; the node runs at every level, so the statistics it adds to are the
// earlier levels'. Its self-enqueue at level 3 is past the limit and is dropped and reported, as the level passes do.
TEST(DirectLevels, RecursionOfOneInvocationSteps) {
    GeneratedNode recursive = Sends({{"R", 0}}, 0);
    recursive.static_grid = true;
    recursive.max_recursion = 3;
    const std::vector<uint32_t> words(2, 0);
    ExpectSameWithAndWithoutDirectLevels({Stage("R", 0, recursive)},
                                         {{{"R", 0, 1, words.data(), 4}}, {{"R", 0, 2, words.data(), 4}}}, {{4}, {8}},
                                         "EXECGRAPH-DROPPED-WORK");
}

// Records by index (runtime::kLevelRecordsByIndex) carry no depth of their own: the host pushes one per level, which it
// knows only where every record of the level has the same depth. Here a recursive coalescing node R (MaxNodeRecursionAMDX
// 2) gets records at level 2 both from itself (depth 1) and from X (depth 0), so levels 2 to 4, each R alone and direct,
// hold records of two depths and must keep their entries: were R's depth taken as one number per level, R would run 5
// or 7 records instead of 6 (1 at level 1, 2 at levels 2 and 3, 1 at level 4), and drop other than the 2 self-enqueues
// past the limit.
TEST(DirectLevels, RecursionFedAlsoByAnotherNodeKeepsEachRecordsDepth) {
    GeneratedNode recursive = Inner({{"R", 0}}, 2);
    recursive.max_recursion = 2;
    const std::vector<NodeStage> stages = {Stage("E", 0, Sends({{"R", 0}, {"X", 0}}, 0)), Stage("X", 0, Inner({{"R", 0}}, 1)),
                                           Stage("R", 0, recursive)};
    const uint32_t word = 0;
    ExpectSameWithAndWithoutDirectLevels(stages, {{{"E", 0, 1, &word, 4}}}, {{1, 1, 6}}, "EXECGRAPH-DROPPED-WORK");
}

// A one-invocation node that sends two records to the last level in one level of one workgroup: its hand-off takes the
// half's record and heap high-water marks from what its allocations reserved, and no later level sees that half's
// counts again, so the report's marks come from it alone.
TEST(DirectLevels, HighWaterMarksOfAOneInvocationLevel) {
    GeneratedNode entry = Sends({{"L", 0}, {"L", 0}}, 0);
    entry.static_grid = true;
    GeneratedNode leaf = Inner({}, 1);
    leaf.static_grid = true;
    const uint32_t word = 0;
    ExpectSameWithAndWithoutDirectLevels({Stage("E", 0, entry), Stage("L", 0, leaf)}, {{{"E", 0, 1, &word, 4}}}, {{1, 2}});
}

// Every node is an API entry (as DXC makes them), so the static levels hold every node at every depth it can reach; a
// dispatch runs the levels its own entries reach (GraphPipeline::PlanForEntries, cached per entry set), which here are
// chains of single nodes, hence direct. Different entry sets in a row, and one again, in one scratch.
TEST(DirectLevels, EachDispatchFollowsTheLevelsOfItsEntries) {
    const std::vector<NodeStage> stages = {Stage("X", 0, Sends({{"Y", 0}}, 0)), Stage("Y", 0, Sends({{"Z", 0}}, 1)),
                                           Stage("Z", 0, Sends({}, 2))};
    const std::vector<uint32_t> words(4, 1);
    ExpectSameWithAndWithoutDirectLevels(stages,
                                         {{{"X", 0, 3, words.data(), 4}},
                                          {{"Y", 0, 2, words.data(), 4}},
                                          {{"X", 0, 1, words.data(), 4}, {"Z", 0, 4, words.data(), 4}},
                                          {{"X", 0, 3, words.data(), 4}}},
                                         {{3, 3, 3}, {0, 2, 2}, {1, 1, 5}, {3, 3, 3}});
}

// Level passes and direct levels alternate: Entry -> {A, B} (level 1 has a pass), A, B -> C (level 2 is direct), C -> {E, F}
// (level 3 has a pass again, and reads the half the direct level's hand-off cleared and filled).
TEST(DirectLevels, BetweenLevelsWithLevelPasses) {
    const std::vector<NodeStage> stages = {
        Stage("Entry", 0, Sends({{"A", 0}, {"B", 0}}, 0)), Stage("A", 0, Inner({{"C", 0}}, 1)), Stage("B", 0, Inner({{"C", 0}}, 2)),
        Stage("C", 0, Inner({{"E", 0}, {"F", 0}}, 3)),     Stage("E", 0, Inner({}, 4)),          Stage("F", 0, Inner({}, 5))};
    const std::vector<uint32_t> words(7, 1);
    ExpectSameWithAndWithoutDirectLevels(stages, {{{"Entry", 0, 7, words.data(), 4}}}, {{7, 7, 7, 14, 14, 14}});
}

// Levels whose nodes are members of one dispatch group of static broadcast nodes (here node arrays L<l>[0..3] of one
// module, 1x1x1 grids): each level is one group dispatch, and each workgroup finds its member in its directory entry.
// Every member writes its index where its chain's record says and moves the chain on to the next member, so a record
// run by the wrong member, or twice, or not at all, changes the UAV; the statistics (records, dispatches and workgroups
// per member) must not depend on the direct-levels setting. Six chains give some members two records; two chains leave
// half the members of every level without one.
TEST(DirectLevels, ChainOfStaticBroadcastNodeArrays) {
    constexpr uint32_t kWidth = 4, kLevels = 5, kChains = 6;
    std::vector<std::string> names;  // NodeStage::node_name points into it
    const std::vector<NodeStage> stages = ArrayChainStages(kWidth, kLevels, kChains, &names);
    // Chain c enters at member c % kWidth, and each level moves it to the next member.
    struct Rec {
        uint32_t chain, level;
    };
    std::vector<std::vector<Rec>> entry_records(kWidth);
    for (uint32_t chain = 0; chain < kChains; ++chain) entry_records[chain % kWidth].push_back({chain, 0});
    auto dispatch_of = [&](uint32_t chains) {
        std::vector<DirectLevelsEntry> entries;
        for (uint32_t member = 0; member < kWidth && member < chains; ++member) {
            const uint32_t count = static_cast<uint32_t>(std::count_if(entry_records[member].begin(), entry_records[member].end(),
                                                                       [chains](const Rec& r) { return r.chain < chains; }));
            entries.push_back({"L0", member, count, entry_records[member].data(), sizeof(Rec)});
        }
        return entries;
    };
    auto expected_for = [&](uint32_t chains) {
        std::vector<uint32_t> uav(kLevels * kChains, 0);
        for (uint32_t level = 0; level < kLevels; ++level) {
            for (uint32_t chain = 0; chain < chains; ++chain) uav[level * kChains + chain] = (chain + level) % kWidth + 1;
        }
        return uav;
    };
    ExpectSameWithAndWithoutDirectLevels(stages, {dispatch_of(kChains), dispatch_of(2)}, {expected_for(kChains), expected_for(2)});
}

// The last workgroup of a level that is one node dispatch clears only that dispatch's node states in the half the level
// read (runtime::kDirectLevelClearsOwnStates): here level 0 is one group dispatch of L0[0..3] before the direct group
// level L1, whose members send to L2[0..3], four nodes of distinct modules (an unused constant each), so level 2 has a
// level pass. That pass reads the half level 0 read and counts every node's records in it: the record count of an L0
// member left uncleared would count again there, and show in the statistics and the UAV. Two dispatches in one scratch.
TEST(DirectLevels, LevelPassAfterAGroupLevelThatClearedOnlyItsOwnStates) {
    constexpr uint32_t kWidth = 4, kLevels = 3, kChains = 6;
    std::vector<std::string> names;  // NodeStage::node_name points into it
    std::vector<NodeStage> stages = ArrayChainStages(kWidth, kLevels, kChains, &names);
    for (NodeStage& stage : stages) {
        if (stage.node_name != names[2]) continue;
        const std::string uint_0 = "     %uint_0 = OpConstant %uint 0\n";
        const size_t at = stage.assembly.find(uint_0);
        ASSERT_NE(at, std::string::npos);
        stage.assembly.insert(at + uint_0.size(), "%distinct = OpConstant %uint " + std::to_string(100 + stage.node_index) + "\n");
    }
    const std::vector<std::vector<ArrayChainRecord>> entry_records = ArrayChainEntryRecords(kWidth, kChains);
    std::vector<DirectLevelsEntry> entries;
    for (uint32_t member = 0; member < kWidth; ++member) {
        entries.push_back({"L0", member, static_cast<uint32_t>(entry_records[member].size()), entry_records[member].data(),
                           sizeof(ArrayChainRecord)});
    }
    const std::vector<uint32_t> expected = ArrayChainExpectedUav(kWidth, kLevels, kChains);
    ExpectSameWithAndWithoutDirectLevels(stages, {entries, entries}, {expected, expected});
}

// A level that launches no workgroup although it has records (dynamic grids of 0) has no last workgroup to prepare the
// direct level after it. Its level pass clears its own half, which level 2 (T -> {U, V}: a level pass again) reads:
// D's records must not be found there a second time (the statistics would count them twice). The next dispatch in the
// same scratch runs normally.
TEST(DirectLevels, AfterALevelOfEmptyGrids) {
    GeneratedNode broadcast = Sends({{"T", 0}}, 0);
    broadcast.dynamic_grid = true;
    const std::vector<NodeStage> stages = {Stage("D", 0, broadcast), Stage("T", 0, Inner({{"U", 0}, {"V", 0}}, 1)),
                                           Stage("U", 0, Inner({}, 2)), Stage("V", 0, Inner({}, 3))};
    const std::vector<uint32_t> empty_grids = {0, 0, 0};
    const std::vector<uint32_t> grids = {2, 0, 3};
    ExpectSameWithAndWithoutDirectLevels(stages, {{{"D", 0, 3, empty_grids.data(), 4}}, {{"D", 0, 3, grids.data(), 4}}},
                                         {{0, 0, 0, 0}, {5, 5, 5, 5}});
}

}  // namespace
}  // namespace execgraph::test
