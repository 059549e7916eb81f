// What a person debugging a graph gets from the layer: debug-utils labels around the dispatches it records (seen by a
// capture layer placed below execgraph, as RenderDoc or Nsight would see them) and shader dumps with GLSL renderings.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <spirv-tools/libspirv.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "capture_layer.h"
#include "graph_test_context.h"
#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

// D3D12HelloWorkGraphs: broadcasting firstNode -> thread secondNode -> coalescing thirdNode. Every node is an entry
// node, so static reachability dispatches all three at level 0, the last two at level 1 and thirdNode at level 2.
std::vector<NodeStage> HelloStages() {
    return {{ReadCorpus("hello_first_node"), "firstNode"},
            {ReadCorpus("hello_second_node"), "secondNode"},
            {ReadCorpus("hello_third_node"), "thirdNode"}};
}
struct HelloRecord {
    uint32_t grid_size;
    uint32_t record_index;
};
const uint32_t kHelloExpected[8] = {5, 18, 39, 68, 2, 4, 6, 8};

bool CaptureLayerAvailable() {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    for (const VkLayerProperties& layer : layers) {
        if (std::strcmp(layer.layerName, kCaptureLayerName) == 0) return true;
    }
    return false;
}

// The capture layer's record, read through the functions it exports (capture_layer.h). The loader has loaded the
// library already; dlopen with RTLD_NOLOAD finds that copy.
class CaptureReader {
  public:
    CaptureReader() {
        handle_ = dlopen(EXECGRAPH_CAPTURE_LAYER_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
        if (handle_ == nullptr) return;
        events_ = reinterpret_cast<ExecgraphCaptureEventsFunction>(dlsym(handle_, "ExecgraphCaptureEvents"));
        clear_ = reinterpret_cast<ExecgraphCaptureClearFunction>(dlsym(handle_, "ExecgraphCaptureClear"));
        update_buffer_bytes_ =
            reinterpret_cast<ExecgraphCaptureUpdateBufferBytesFunction>(dlsym(handle_, "ExecgraphCaptureUpdateBufferBytes"));
        fill_buffer_commands_ =
            reinterpret_cast<ExecgraphCaptureFillBufferCommandsFunction>(dlsym(handle_, "ExecgraphCaptureFillBufferCommands"));
        indirect_barriers_ =
            reinterpret_cast<ExecgraphCaptureIndirectBarriersFunction>(dlsym(handle_, "ExecgraphCaptureIndirectBarriers"));
    }
    ~CaptureReader() {
        if (handle_ != nullptr) dlclose(handle_);
    }
    bool ok() const {
        return events_ != nullptr && clear_ != nullptr && update_buffer_bytes_ != nullptr && fill_buffer_commands_ != nullptr &&
               indirect_barriers_ != nullptr;
    }
    void Clear() const { clear_(); }
    std::vector<std::string> Events() const {
        std::vector<std::string> lines;
        std::istringstream text(events_());
        for (std::string line; std::getline(text, line);) lines.push_back(line);
        return lines;
    }
    uint64_t UpdateBufferBytes() const { return update_buffer_bytes_(); }
    uint64_t FillBufferCommands() const { return fill_buffer_commands_(); }
    uint64_t IndirectBarriers() const { return indirect_barriers_(); }

  private:
    void* handle_ = nullptr;
    ExecgraphCaptureEventsFunction events_ = nullptr;
    ExecgraphCaptureClearFunction clear_ = nullptr;
    ExecgraphCaptureUpdateBufferBytesFunction update_buffer_bytes_ = nullptr;
    ExecgraphCaptureFillBufferCommandsFunction fill_buffer_commands_ = nullptr;
    ExecgraphCaptureIndirectBarriersFunction indirect_barriers_ = nullptr;
};

// The capture as a debugger shows it: for every dispatch, the label regions it sits in, outermost first.
struct LabelledCapture {
    std::vector<std::vector<std::string>> indirect_dispatches;  // node dispatches
    std::vector<std::vector<std::string>> dispatches;           // meta passes
    std::vector<std::vector<std::string>> barriers;             // pipeline barriers
    std::vector<std::vector<std::string>> binds;                // compute pipeline binds
    std::vector<std::string> bound_pipelines;                   // the handle of each bind, in order
    std::vector<std::string> regions;                           // every label region in begin order
    std::string problems;                                       // unbalanced regions
};

LabelledCapture ReadLabels(const std::vector<std::string>& events) {
    LabelledCapture capture;
    std::vector<std::string> open;
    for (const std::string& event : events) {
        if (event.starts_with("begin ")) {
            open.push_back(event.substr(6));
            capture.regions.push_back(open.back());
        } else if (event == "end") {
            if (open.empty()) capture.problems += "an end without a begin; ";
            if (!open.empty()) open.pop_back();
        } else if (event == "dispatch_indirect") {
            capture.indirect_dispatches.push_back(open);
        } else if (event == "dispatch") {
            capture.dispatches.push_back(open);
        } else if (event == "barrier") {
            capture.barriers.push_back(open);
        } else if (event.starts_with("bind_pipeline ")) {
            capture.binds.push_back(open);
            capture.bound_pipelines.push_back(event.substr(14));
        }
    }
    if (!open.empty()) capture.problems += std::to_string(open.size()) + " regions left open; ";
    return capture;
}

std::string Joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    return text;
}

struct HelloRun {
    std::vector<uint32_t> uav;        // UAV[0..7] after the dispatch; empty if the graph could not be created
    std::vector<std::string> events;  // what the capture layer saw while the dispatch was recorded (with a capture)
};

// Creates the hello graph (named `name` when not null) and runs it once from host payloads.
HelloRun DispatchHelloGraph(GraphTestContext& context, const CaptureReader* capture, const char* name) {
    HelloRun run;
    TestBuffer uav = context.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context.CreateGraph(HelloStages(), layout);
    EXPECT_NE(graph, VK_NULL_HANDLE) << context.log().Problems();
    if (graph == VK_NULL_HANDLE) return run;
    if (name != nullptr) {
        auto set_name = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(
            vkGetDeviceProcAddr(context.device(), "vkSetDebugUtilsObjectNameEXT"));
        VkDebugUtilsObjectNameInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT, nullptr, VK_OBJECT_TYPE_PIPELINE,
                                           reinterpret_cast<uint64_t>(graph), name};
        EXPECT_EQ(set_name(context.device(), &info), VK_SUCCESS);
    }
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    EXPECT_EQ(context.vkGetExecutionGraphPipelineScratchSizeAMDX(context.device(), graph, &size), VK_SUCCESS);
    TestBuffer scratch = context.CreateScratch(size.minSize);
    context.Submit(
        [&](VkCommandBuffer cmd) { context.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size); });

    HelloRecord records[4];
    for (uint32_t i = 0; i < 4; ++i) records[i] = {i + 1, i};
    VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, "firstNode", 0), 4, {}, sizeof(HelloRecord)};
    info.payloads.hostAddress = records;
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    if (capture != nullptr) capture->Clear();
    context.Submit([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        context.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    if (capture != nullptr) run.events = capture->Events();
    run.uav.assign(uav.As<uint32_t>(), uav.As<uint32_t>() + 8);
    context.Destroy(scratch);
    context.Destroy(uav);
    return run;
}

// DispatchHelloGraph, checking the results; returns what the capture layer saw while the dispatch was recorded.
std::vector<std::string> RunHelloGraph(GraphTestContext& context, const CaptureReader& capture, const char* name) {
    HelloRun run = DispatchHelloGraph(context, &capture, name);
    if (run.uav.empty()) return {};
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(run.uav[i], kHelloExpected[i]) << "UAV[" << i << "]";
    return run.events;
}

// Creates a graph of `stages` over `uav` (its one storage buffer), initializes minSize scratch for it (maxSize with
// `max_scratch`; not at all without `initialize`), and runs one vkCmdDispatchGraphAMDX of the entries `infos_for` gives
// for the created graph (their payloads must outlive the call). Returns what the capture layer saw while the dispatch was
// recorded; empty when the graph could not be created.
std::vector<std::string> DispatchCaptured(GraphTestContext& context, CaptureReader& capture, const std::vector<NodeStage>& stages,
                                          TestBuffer& uav,
                                          const std::function<std::vector<VkDispatchGraphInfoAMDX>(VkPipeline)>& infos_for,
                                          bool max_scratch = false, bool initialize = true) {
    VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context.CreateGraph(stages, layout);
    EXPECT_NE(graph, VK_NULL_HANDLE) << context.log().Problems();
    if (graph == VK_NULL_HANDLE) return {};
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    EXPECT_EQ(context.vkGetExecutionGraphPipelineScratchSizeAMDX(context.device(), graph, &size), VK_SUCCESS);
    TestBuffer scratch = context.CreateScratch(max_scratch ? size.maxSize : size.minSize);
    if (initialize) {
        context.Submit(
            [&](VkCommandBuffer cmd) { context.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size); });
    }
    const std::vector<VkDispatchGraphInfoAMDX> infos = infos_for(graph);
    VkDispatchGraphCountInfoAMDX count_info{static_cast<uint32_t>(infos.size()), {}, sizeof(VkDispatchGraphInfoAMDX)};
    count_info.infos.hostAddress = infos.data();
    capture.Clear();
    context.Submit([&](VkCommandBuffer cmd) {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        context.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    context.Destroy(scratch);
    return capture.Events();
}

// The commands recorded inside the vkCmdDispatchGraphAMDX label region of `events`, without labels and pipeline binds.
std::vector<std::string> DispatchCommands(const std::vector<std::string>& events) {
    std::vector<std::string> commands;
    int depth = 0;
    for (const std::string& event : events) {
        if (event.starts_with("begin ")) {
            depth += depth > 0 || event.starts_with("begin vkCmdDispatchGraphAMDX") ? 1 : 0;
        } else if (depth > 0 && event == "end") {
            --depth;
        } else if (depth > 0 && !event.starts_with("bind_pipeline ")) {
            commands.push_back(event);
        }
    }
    return commands;
}

class DebugLabels : public ::testing::Test {
  protected:
    // The structure tests below tell node dispatches (indirect) from meta passes (direct): fixed levels, whose node
    // dispatches are direct, are off for them, and on for the tests of fixed levels (DebugLabels.FixedLevels*).
    void SetUp() override {
        if (!CaptureLayerAvailable()) GTEST_SKIP() << kCaptureLayerName << " is not on VK_ADD_LAYER_PATH";
        setenv(kFixedLevels, "false", 1);
    }
    void TearDown() override {
        unsetenv(kFixedLevels);
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DEBUG_LABELS");
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DIRECT_LEVELS");
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS");
        unsetenv(kMaxProducerInvocations);
    }

    // The direct_levels_max_producer_invocations setting. Without a limit, every device lowers the hello graph's
    // firstNode (a dynamic broadcast node) with the level hand-off, as GPUs do by default.
    static constexpr const char* kMaxProducerInvocations = "VK_EXECGRAPH_SHADER_ENQUEUE_DIRECT_LEVELS_MAX_PRODUCER_INVOCATIONS";
    static void SetNoProducerLimit() { setenv(kMaxProducerInvocations, "4294967295", 1); }
    static constexpr const char* kFixedLevels = "VK_EXECGRAPH_SHADER_ENQUEUE_FIXED_LEVELS";

    static GraphTestOptions WithCapture(bool debug_utils = true) {
        GraphTestOptions options;
        options.layers_below = {kCaptureLayerName};
        options.debug_utils = debug_utils;
        // Without VK_EXT_debug_utils there is no messenger to fail the test on validation messages.
        options.with_validation = debug_utils;
        return options;
    }
};

TEST_F(DebugLabels, NameTheDispatchEveryLevelAndEveryNodeDispatch) {
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    const std::vector<std::string> events = RunHelloGraph(context, capture, "hello-graph");
    const LabelledCapture labels = ReadLabels(events);
    const std::string dispatch_label = "vkCmdDispatchGraphAMDX \"hello-graph\" (graph 1)";
    EXPECT_EQ(labels.problems, "") << Joined(events);
    // The dispatch names firstNode only, so each level dispatches the one node its records can reach (every node of the
    // hello graph is an API entry, but GraphPipeline::PlanForEntries follows the entries a dispatch has).
    const std::vector<std::vector<std::string>> expected_nodes = {
        {dispatch_label, "level 0", "firstNode[0]"}, {dispatch_label, "level 1", "secondNode[0]"}, {dispatch_label, "level 2", "thirdNode[0]"}};
    EXPECT_EQ(labels.indirect_dispatches, expected_nodes) << Joined(events);
    // Meta passes run inside the dispatch's region, and inside a level's region where they belong to one; the finish pass
    // beside the last level's nodes has a region of its own there ("report").
    ASSERT_FALSE(labels.dispatches.empty()) << Joined(events);
    for (const std::vector<std::string>& stack : labels.dispatches) {
        ASSERT_FALSE(stack.empty()) << Joined(events);
        EXPECT_EQ(stack.front(), dispatch_label);
        EXPECT_TRUE(stack.size() <= 2u || (stack.size() == 3u && stack.back() == "report"))
            << "a meta pass inside a node's region\n"
            << Joined(events);
    }
    EXPECT_EQ(labels.regions.front(), dispatch_label);
    EXPECT_EQ(context.log().Problems(), "");
}

// Whether the pass that prepares a dispatch's last level writes its report (FinishPassReportsFor in layer/scheduler.h:
// CPU devices, unless the `report_pass` setting says otherwise) rather than a finish pass beside that level's nodes.
bool PreparerReports(GraphTestContext& context) {
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(context.physical_device(), &properties);
    const char* setting = std::getenv("VK_EXECGRAPH_SHADER_ENQUEUE_REPORT_PASS");
    if (setting != nullptr && std::string(setting) != "auto") return std::string(setting) == "preparer";
    return properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

// The level structure (docs/design.md, "One graph dispatch"): each level is one meta dispatch (the fused level pass)
// between two barriers, then its node dispatches, except a direct level ("Direct levels"), which the level before
// prepares: one barrier, no meta dispatch. Dispatched from firstNode, the hello graph's levels 1 and 2 are direct (their
// records can only go to secondNode and thirdNode, coalescing nodes); with the `direct_levels` setting off they have a
// level pass like level 0, and so has level 1 where firstNode, whose records run up to 16 workgroups of 2 invocations
// (MaxNumWorkgroupsAMDX), is over `direct_levels_max_producer_invocations` (`level1_direct`). Level 0's records come from
// vkCmdDispatchGraphAMDX, so the begin transfers wrote them, and as its only node, firstNode, is a dynamic broadcast node, they
// also prepared its dispatch (layer/scheduler.cpp, HostLevelZero): its node dispatch follows the begin barrier, with nothing in its
// region. With the setting off level 0's level pass follows the begin barrier: one barrier in its region, and no entry pass. A
// regression to more barriers or passes per level fails here. A level pass is an indirect dispatch on a CPU device such
// as lavapipe, which dispatches it with the workgroups its producers asked for (LevelPassDispatchedIndirectlyFor in
// layer/scheduler.h), and a direct one elsewhere.
void ExpectLevelStructure(GraphTestContext& context, CaptureReader& capture, bool direct_levels, bool level1_direct = true) {
    const std::vector<std::string> events = RunHelloGraph(context, capture, "levels");
    const LabelledCapture labels = ReadLabels(events);
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(context.physical_device(), &properties);
    const bool indirect_level_pass = properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    auto count_in = [](const std::vector<std::vector<std::string>>& stacks, const std::string& region) {
        return std::count_if(stacks.begin(), stacks.end(), [&](const std::vector<std::string>& stack) {
            return std::find(stack.begin(), stack.end(), region) != stack.end() &&
                   std::find(stack.begin(), stack.end(), "report") == stack.end();
        });
    };
    const size_t indirect_per_level[] = {1, 1, 1};
    const bool direct[] = {direct_levels, direct_levels && level1_direct, direct_levels};
    const size_t barriers[] = {direct_levels ? 0u : 1u, direct[1] ? 1u : 2u, direct_levels ? 1u : 2u};
    for (uint32_t level = 0; level < 3; ++level) {
        const std::string region = "level " + std::to_string(level);
        EXPECT_EQ(count_in(labels.barriers, region), barriers[level]) << region << "\n" << Joined(events);
        const size_t level_passes = direct[level] ? 0 : 1;
        EXPECT_EQ(count_in(labels.dispatches, region), indirect_level_pass ? 0 : level_passes) << region << "\n" << Joined(events);
        EXPECT_EQ(count_in(labels.indirect_dispatches, region),
                  indirect_per_level[level] + (indirect_level_pass ? level_passes : 0))
            << region << "\n"
            << Joined(events);
    }
    // Besides the level passes, the finish pass, which writes the dispatch's report, in a region of its own ("report") in
    // the last level, beside that level's node dispatch (the last level's node, thirdNode, has no output, so there is no
    // leftover check to make). Without direct levels, on a device whose preparer reports (FinishPassReportsFor: CPU
    // devices), the last level's level pass writes the report and there is no finish pass (layer/scheduler.cpp,
    // report_by_preparer).
    const size_t finish_passes = direct_levels || !PreparerReports(context) ? 1u : 0u;
    const auto in_report =
        std::count_if(labels.dispatches.begin(), labels.dispatches.end(), [](const std::vector<std::string>& stack) {
            return std::find(stack.begin(), stack.end(), "report") != stack.end() &&
                   std::find(stack.begin(), stack.end(), "level 2") != stack.end();
        });
    EXPECT_EQ(in_report, finish_passes) << Joined(events);
    const size_t level_passes = direct_levels ? (level1_direct ? 0u : 1u) : 3u;
    EXPECT_EQ(labels.dispatches.size(), finish_passes + (indirect_level_pass ? 0u : level_passes)) << Joined(events);
    // The begin transfers zero this small graph's half counters, node states and statistics with inline data, not with
    // vkCmdFillBuffer, which cost an H100 far more GPU time (kInlineZeroMaxBytes in layer/scheduler.cpp).
    EXPECT_EQ(capture.FillBufferCommands(), 0u);
    EXPECT_EQ(context.log().Problems(), "");
}

TEST_F(DebugLabels, EachLevelHasOneMetaDispatchAndTwoBarriersUnlessItIsDirect) {
    SetNoProducerLimit();
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    ExpectLevelStructure(context, capture, true);
}

// Under a limit of 16 invocations per record, firstNode (up to 32) is lowered without the hand-off, so the level after it
// has a level pass; secondNode, a thread node, still prepares level 2. The report is then written by the finish pass, as
// with every direct last level.
TEST_F(DebugLabels, ALevelAfterANodeOverTheProducerLimitHasALevelPass) {
    setenv(kMaxProducerInvocations, "16", 1);
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    ExpectLevelStructure(context, capture, true, false);
}

TEST_F(DebugLabels, WithoutDirectLevelsEveryLevelHasALevelPass) {
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_DIRECT_LEVELS", "false", 1);
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    ExpectLevelStructure(context, capture, false);
}

// The fixed cost of a dispatch (layer/scheduler.h lists every barrier): a barrier pair around the begin transfers, two
// barriers per level (one for the direct levels 1 and 2, and none for level 0, which the begin transfers wrote and
// prepared), and one barrier at the end: 2 + (0 + 1 + 1) + 1 for the hello graph's three levels. The finish pass writes the report
// (no transfers, no read-back barriers). The last level's node, thirdNode, has no outputs, so there is no leftover check
// and the finish pass needs no barrier of its own: it is recorded right after the barrier before that level's node
// dispatch, which cannot change the header or the statistics it copies, and runs beside it.
TEST_F(DebugLabels, WithoutALeftoverCheckTheFinishPassRunsAlongsideTheLastLevel) {
    SetNoProducerLimit();
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    const std::vector<std::string> events = RunHelloGraph(context, capture, "finish");
    const std::string dispatch_label = "vkCmdDispatchGraphAMDX \"finish\" (graph 1)";
    // The dispatch's commands, without labels and binds.
    std::vector<std::string> commands;
    int depth = 0;
    for (const std::string& event : events) {
        if (event == "begin " + dispatch_label) {
            depth = 1;
        } else if (depth > 0 && event.starts_with("begin ")) {
            ++depth;
        } else if (depth > 0 && event == "end") {
            --depth;
        } else if (depth > 0 && !event.starts_with("bind_pipeline ")) {
            commands.push_back(event);
        }
    }
    EXPECT_EQ(std::count(commands.begin(), commands.end(), "barrier"), 2 + (0 + 1 + 1) + 1) << Joined(events);
    ASSERT_GE(commands.size(), 4u) << Joined(events);
    const std::vector<std::string> end(commands.end() - 4, commands.end());
    EXPECT_EQ(end, (std::vector<std::string>{"barrier", "dispatch", "dispatch_indirect", "barrier"})) << Joined(events);
    // The finish pass only (no entry pass or level 0 pass: the host wrote and prepared level 0); the node dispatches are
    // indirect.
    EXPECT_EQ(std::count(commands.begin(), commands.end(), "dispatch"), 1) << Joined(events);
    EXPECT_EQ(std::count(commands.begin(), commands.end(), "dispatch_indirect"), 3) << Joined(events);
    EXPECT_EQ(context.log().Problems(), "");
}

// Fixed levels (runtime::kLevelNextFixedWorkgroupsShift): a chain of one-node levels whose level 0 the host prepared,
// three records a level, each step enqueuing at most one record. Every level's bound is known, so every node dispatch
// is a vkCmdDispatch and no barrier of the dispatch waits in DRAW_INDIRECT. With the setting off the same dispatch has
// an indirect node dispatch per level, each after a barrier that does (the begin transfers' and each direct level's).
TEST_F(DebugLabels, FixedLevelsAreDispatchedDirectlyAfterBarriersWithoutTheIndirectStage) {
    constexpr uint32_t kLevels = 5, kChains = 3;
    for (const bool fixed : {true, false}) {
        SCOPED_TRACE(fixed ? "fixed levels" : "fixed levels off");
        setenv(kFixedLevels, fixed ? "true" : "false", 1);
        GraphTestContext context(WithCapture());
        ASSERT_TRUE(context.ok());
        CaptureReader capture;
        ASSERT_TRUE(capture.ok()) << dlerror();
        std::vector<std::string> names;
        const std::vector<NodeStage> stages = ArrayChainStages(1, kLevels, kChains, &names);
        const std::vector<std::vector<ArrayChainRecord>> records = ArrayChainEntryRecords(1, kChains);
        TestBuffer uav = context.CreateBuffer(kLevels * kChains * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        const std::vector<std::string> events = DispatchCaptured(context, capture, stages, uav, [&](VkPipeline graph) {
            VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, "L0", 0), kChains, {}, sizeof(ArrayChainRecord)};
            info.payloads.hostAddress = records[0].data();
            return std::vector<VkDispatchGraphInfoAMDX>{info};
        });
        ASSERT_FALSE(events.empty());
        const std::vector<std::string> commands = DispatchCommands(events);
        const uint32_t indirect = fixed ? 0 : kLevels;
        EXPECT_EQ(std::count(commands.begin(), commands.end(), "dispatch_indirect"), indirect) << Joined(events);
        EXPECT_EQ(capture.IndirectBarriers(), indirect) << Joined(events);
        // The node dispatches, and the finish pass beside the last level (no meta pass before any level).
        EXPECT_EQ(std::count(commands.begin(), commands.end(), "dispatch"), kLevels - indirect + 1) << Joined(events);
        const std::vector<uint32_t> expected = ArrayChainExpectedUav(1, kLevels, kChains);
        for (uint32_t i = 0; i < expected.size(); ++i) EXPECT_EQ(uav.As<uint32_t>()[i], expected[i]) << "UAV[" << i << "]";
        context.Destroy(uav);
        EXPECT_EQ(context.log().Problems(), "");
    }
}

// A direct level 0 (a thread node: its records can only be its own) dispatched from the host: the begin transfers write
// its records and prepare its dispatch, and rewrite the node and output tables so that no entry pass has to check
// initialization (layer/scheduler.cpp, HostLevelZero). The node has no outputs, so nothing can be dropped, and the
// report could only flag scratch not initialized for the graph: where the application recorded that initialization
// (ScratchBufferRegistry), the dispatch is the begin barrier pair, the node's dispatch and the end barrier. Where it did
// not, or the `statistics` setting asks for the report's counts, a finish pass writes the report beside the node's dispatch
// (no barrier between them): no meta pass waits before the node either way.
TEST_F(DebugLabels, AHostDispatchOfADirectLevelZeroHasNoMetaPassBeforeItsNode) {
    struct Case {
        bool initialize, statistics;
        std::vector<std::string> commands;
        size_t reports;  // EXECGRAPH-DROPPED-WORK (uninitialized scratch) and EXECGRAPH-STATISTICS messages
    };
    const Case cases[] = {
        {true, false, {"barrier", "barrier", "dispatch_indirect", "barrier"}, 0},
        {false, false, {"barrier", "barrier", "dispatch", "dispatch_indirect", "barrier"}, 1},
        {true, true, {"barrier", "barrier", "dispatch", "dispatch_indirect", "barrier"}, 1},
    };
    for (const Case& test : cases) {
        SCOPED_TRACE(std::string(test.initialize ? "initialized" : "not initialized") + (test.statistics ? ", statistics" : ""));
        if (test.statistics) setenv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS", "1", 1);
        GraphTestContext context(WithCapture());
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS");  // read when the instance is created
        ASSERT_TRUE(context.ok());
        CaptureReader capture;
        ASSERT_TRUE(capture.ok()) << dlerror();
        TestBuffer uav = context.CreateBuffer(64 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        // tests/spirv_corpus/thread_node.spvasm: each record {index, value} stores UAV[index] = value.
        struct Record {
            uint32_t index, value;
        };
        std::vector<Record> records(40);
        for (uint32_t i = 0; i < records.size(); ++i) records[i] = {i, 7 * i + 3};
        const std::vector<std::string> events = DispatchCaptured(
            context, capture, {{ReadCorpus("thread_node"), "main"}}, uav,
            [&](VkPipeline graph) {
                VkDispatchGraphInfoAMDX info{
                    context.NodeIndex(graph, "main", 0), static_cast<uint32_t>(records.size()), {}, sizeof(Record)};
                info.payloads.hostAddress = records.data();
                return std::vector<VkDispatchGraphInfoAMDX>{info};
            },
            false, test.initialize);
        ASSERT_FALSE(events.empty());
        for (uint32_t i = 0; i < 64; ++i)
            EXPECT_EQ(uav.As<uint32_t>()[i], i < records.size() ? 7 * i + 3 : 0u) << "UAV[" << i << "]";
        EXPECT_EQ(DispatchCommands(events), test.commands) << Joined(events);
        EXPECT_EQ(capture.FillBufferCommands(), 0u) << "half 1 is zeroed inline (kInlineZeroMaxBytes)";
        const char* report_id = test.statistics ? "EXECGRAPH-STATISTICS" : "EXECGRAPH-DROPPED-WORK";
        EXPECT_EQ(context.log().CountWithId(report_id), test.reports) << context.log().Problems();
        if (!test.initialize) {
            const std::vector<MessageLog::Message> messages = context.log().Messages();
            EXPECT_EQ(std::count_if(messages.begin(), messages.end(),
                                    [](const MessageLog::Message& message) {
                                        return message.id == "EXECGRAPH-DROPPED-WORK" &&
                                               message.text.find("scratch was not initialized for this graph") != std::string::npos;
                                    }),
                      1)
                << context.log().Problems();
            context.log().Clear();
        }
        EXPECT_EQ(context.log().Problems(), "");
        context.Destroy(uav);
    }
}

// The same for a graph whose tables are too large to rewrite with every dispatch (1025 nodes: 64 KiB of node table and 4
// KiB of output table): the begin transfers rewrite only what level 0's node reads, its own table entries, and level
// 1's pass, which follows level 0's node, checks initialization (layer/scheduler.cpp, TablesRewrite). So the dispatch is
// the begin barrier pair, Entry's dispatch, level 1's barrier, pass and barrier, the sinks' group dispatch (with the
// finish pass before it where that writes the report) and the end barrier, with fewer bytes through vkCmdUpdateBuffer
// than the tables alone.
TEST_F(DebugLabels, ALargeGraphsHostPreparedLevelZeroRewritesOnlyItsOwnTables) {
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    constexpr uint32_t kSinks = 1024;
    TestBuffer uav = context.CreateBuffer(2 * kSinks * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    struct Rec {
        uint32_t node_idx, value;
    };
    const Rec records[] = {{kSinks - 1, 40}, {17, 3}};
    const std::vector<std::string> events =
        DispatchCaptured(context, capture, ClassificationStages(kSinks), uav, [&](VkPipeline graph) {
            VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, "Entry", 0), 2, {}, sizeof(Rec)};
            info.payloads.hostAddress = records;
            return std::vector<VkDispatchGraphInfoAMDX>{info};
        });
    ASSERT_FALSE(events.empty());
    // Each record sends 8 records {value + thread} to its sink, which sums them and counts them.
    for (uint32_t sink = 0; sink < kSinks; ++sink) {
        uint32_t sum = 0, count = 0;
        for (const Rec& record : records) {
            if (record.node_idx != sink) continue;
            sum += 8 * record.value + 28;
            count += 8;
        }
        EXPECT_EQ(uav.As<uint32_t>()[2 * sink], sum) << "B[" << sink << "] sum";
        EXPECT_EQ(uav.As<uint32_t>()[2 * sink + 1], count) << "B[" << sink << "] count";
    }
    const std::vector<std::string> commands = DispatchCommands(events);
    // Level 1's level pass: an indirect dispatch on a CPU device (LevelPassDispatchedIndirectlyFor in layer/scheduler.h).
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(context.physical_device(), &properties);
    // The report comes from that pass, or from a finish pass beside the sinks (FinishPassReportsFor: GPUs).
    const std::string level_pass = properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? "dispatch_indirect" : "dispatch";
    std::vector<std::string> expected{"barrier", "barrier", "dispatch_indirect", "barrier", level_pass, "barrier"};
    if (!PreparerReports(context)) expected.push_back("dispatch");
    expected.insert(expected.end(), {"dispatch_indirect", "barrier"});
    EXPECT_EQ(commands, expected) << Joined(events);
    constexpr uint64_t kTablesBytes = (kSinks + 1) * 64 + kSinks * sizeof(uint32_t);
    EXPECT_LT(capture.UpdateBufferBytes(), kTablesBytes);
    // Half 1's 49 KiB of node states and the statistics around the entry node's are filled, not sent inline.
    EXPECT_GE(capture.FillBufferCommands(), 2u);
    EXPECT_EQ(context.log().Problems(), "");
    context.Destroy(uav);
}

// AMD's classify shape with 1024 static broadcast members: level 1 is direct, with the members' dispatch group as its
// consumer, although the begin transfers rewrite only Entry's tables (a group of more than kDirectLevelGroupMaxMembers
// members qualifies where the statistics are not kept). Entry's last workgroup checks initialization in its hand-off
// (runtime::kDirectLevelChecksInitialization) instead of a level pass: the dispatch is the begin barrier pair, Entry's
// dispatch, one barrier and the group's dispatch (with the finish pass beside it, which writes the report), and the end
// barrier. With the `statistics` setting level 1 has its level pass again, which writes each member's statistics. Each
// case checks every member's UAV words.
TEST_F(DebugLabels, ALargeStaticBroadcastArrayIsADirectLevelAfterItsClassifyNode) {
    constexpr uint32_t kSinks = 1024;
    for (const bool statistics : {false, true}) {
        SCOPED_TRACE(statistics ? "statistics" : "no statistics");
        if (statistics) setenv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS", "1", 1);
        GraphTestContext context(WithCapture());
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS");  // read when the instance is created
        ASSERT_TRUE(context.ok());
        CaptureReader capture;
        ASSERT_TRUE(capture.ok()) << dlerror();
        TestBuffer uav = context.CreateBuffer(4 * kSinks * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        std::memset(uav.As<uint32_t>(), 0, 4 * kSinks * sizeof(uint32_t));
        struct Rec {
            uint32_t node_idx, value;
        };
        const Rec records[] = {{kSinks - 1, 40}, {17, 3}, {600, 9}, {17, 1000}};
        const std::vector<std::string> events =
            DispatchCaptured(context, capture, ClassificationStages(kSinks, "array_static_sink"), uav, [&](VkPipeline graph) {
                VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, "Entry", 0), 4, {}, sizeof(Rec)};
                info.payloads.hostAddress = records;
                return std::vector<VkDispatchGraphInfoAMDX>{info};
            });
        ASSERT_FALSE(events.empty());
        std::vector<uint32_t> expected(4 * kSinks, 0);
        for (const Rec& record : records) {
            for (uint32_t thread = 0; thread < 8; ++thread) AddStaticSinkRecord(expected, record.node_idx, record.value + thread);
        }
        size_t wrong = 0;
        for (uint32_t i = 0; i < 4 * kSinks; ++i) {
            if (uav.As<uint32_t>()[i] != expected[i] && ++wrong <= 8) {
                ADD_FAILURE() << "UAV[" << i << "] = " << uav.As<uint32_t>()[i] << ", expected " << expected[i];
            }
        }
        EXPECT_EQ(wrong, 0u);
        // With the statistics, level 1's pass is one workgroup's direct dispatch on every device (the level's record list
        // is the group's directory: nothing to scatter), and it writes the report where the preparer does.
        std::vector<std::string> expected_commands{"barrier", "barrier", "dispatch_indirect", "barrier"};
        if (statistics) {
            expected_commands.insert(expected_commands.end(), {"dispatch", "barrier"});
            if (!PreparerReports(context)) expected_commands.push_back("dispatch");
        } else {
            expected_commands.push_back("dispatch");  // the finish pass: a direct last level's preparer is a node
        }
        expected_commands.insert(expected_commands.end(), {"dispatch_indirect", "barrier"});
        EXPECT_EQ(DispatchCommands(events), expected_commands) << Joined(events);
        // Only Entry's 64-byte table entry and its one output-table entry besides the header, not 68 KiB of tables.
        constexpr uint64_t kTablesBytes = (kSinks + 1) * 64 + kSinks * sizeof(uint32_t);
        EXPECT_LT(capture.UpdateBufferBytes(), kTablesBytes / 4);
        EXPECT_EQ(context.log().CountWithId("EXECGRAPH-STATISTICS"), statistics ? 1u : 0u) << context.log().Problems();
        context.log().Clear();
        EXPECT_EQ(context.log().Problems(), "");
        context.Destroy(uav);
    }
}

// A chain of node arrays (array_chain_step: each level four static broadcast members of one module, every record of a
// level reaching that level's array) runs its levels after level 0 as direct levels whose consumer is the array's
// dispatch group (GraphPlan::FormDispatchGroups, runtime::kDirectLevelGroupConsumer): the last workgroup of the level
// before prepares the group, so such a level is one barrier and one group dispatch, with no level pass. Level 0's
// records come from the host; its level pass writes the group's directory. Every member writes its index where its
// chain's record says, so a record run by the wrong member, twice or not at all shows in the UAV.
TEST_F(DebugLabels, LevelsOfANodeArrayChainAreDirectWithTheGroupAsConsumer) {
    constexpr uint32_t kWidth = 4, kLevels = 3, kChains = 4;
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    std::vector<std::string> names;  // NodeStage::node_name points into it
    const std::vector<NodeStage> stages = ArrayChainStages(kWidth, kLevels, kChains, &names);
    TestBuffer uav = context.CreateBuffer(kLevels * kChains * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::memset(uav.As<uint32_t>(), 0, kLevels * kChains * sizeof(uint32_t));
    // Chain c enters at member c: one record per member of level 0.
    struct Rec {
        uint32_t chain, level;
    };
    std::vector<Rec> records(kChains);
    const std::vector<std::string> events = DispatchCaptured(context, capture, stages, uav, [&](VkPipeline graph) {
        std::vector<VkDispatchGraphInfoAMDX> infos;
        for (uint32_t chain = 0; chain < kChains; ++chain) {
            records[chain] = {chain, 0};
            VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, "L0", chain), 1, {}, sizeof(Rec)};
            info.payloads.hostAddress = &records[chain];
            infos.push_back(info);
        }
        return infos;
    });
    ASSERT_FALSE(events.empty());
    for (uint32_t level = 0; level < kLevels; ++level) {
        for (uint32_t chain = 0; chain < kChains; ++chain) {
            EXPECT_EQ(uav.As<uint32_t>()[level * kChains + chain], (chain + level) % kWidth + 1)
                << "level " << level << " chain " << chain;
        }
    }
    const LabelledCapture labels = ReadLabels(events);
    // (The last level's region also holds the finish pass that writes the report, in a region of its own.)
    auto count_in = [](const std::vector<std::vector<std::string>>& stacks, const std::string& region) {
        return std::count_if(stacks.begin(), stacks.end(), [&](const std::vector<std::string>& stack) {
            return std::find(stack.begin(), stack.end(), region) != stack.end() &&
                   std::find(stack.begin(), stack.end(), "report") == stack.end();
        });
    };
    for (uint32_t level = 1; level < kLevels; ++level) {
        const std::string region = "level " + std::to_string(level);
        EXPECT_EQ(count_in(labels.barriers, region), 1) << region << "\n" << Joined(events);
        EXPECT_EQ(count_in(labels.dispatches, region), 0) << region << "\n" << Joined(events);
        EXPECT_EQ(count_in(labels.indirect_dispatches, region), 1) << "the group's dispatch alone\n" << Joined(events);
    }
    // L0 and L1 lower to the same code (their modules differ only in the name of the next level), so they share one
    // pipeline, which level 1 need not bind again; still each level's group holds only its own array, whose members were
    // lowered as one group (a group spanning levels would be no list-directory group: GraphPlan::FormDispatchGroups).
    for (uint32_t level = 0; level < kLevels; ++level) {
        const std::string region = "level " + std::to_string(level), array = "L" + std::to_string(level);
        std::vector<std::string> dispatched, bound;
        for (const std::vector<std::string>& stack : labels.indirect_dispatches) {
            if (stack.size() == 3 && stack[1] == region) dispatched.push_back(stack[2]);
        }
        for (const std::vector<std::string>& stack : labels.binds) {
            if (stack.size() == 3 && stack[1] == region && stack[2] != "report") bound.push_back(stack[2]);
        }
        EXPECT_EQ(dispatched, (std::vector<std::string>{array + "[0] .. " + array + "[3] (4 nodes)"})) << Joined(events);
        EXPECT_EQ(bound.size(), level == 1 ? 0u : 1u) << region << "\n" << Joined(events);
    }
    EXPECT_EQ(context.log().Problems(), "");
    context.Destroy(uav);
}

// A classify node (tiled_classify: 128 invocations per tile, more than kGroupHandOffMaxInvocationsPerRecordGpu) gets the
// hand-off's group code where the device sets no limit (GPUs; here the setting), but makes its node array a direct
// level only where the host prepared level 0 and it runs at most kSmallProducerLevelMaxWorkgroups workgroups, each of
// which pays the hand-off's fence (layer/scheduler.h). So 16384 tiles run the array after one barrier, 16385 with the
// level pass (one workgroup: the record list is the group's directory) between them. Each tile's member writes its own
// index at the tile's place, so a tile run by the wrong member, twice or not at all shows in the UAV.
TEST_F(DebugLabels, AClassifyNodesArrayIsADirectLevelOnlyWhenTheClassifyLevelIsSmall) {
    SetNoProducerLimit();
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    constexpr uint32_t kWidth = 4, kMostTiles = 16385;
    TestBuffer uav = context.CreateBuffer(kMostTiles * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    std::vector<std::string> names;  // NodeStage::node_name points into it
    std::vector<NodeStage> stages;
    for (const NodeStage& stage : ArrayChainStages(kWidth, 2, kMostTiles, &names)) {
        if (std::string(stage.node_name) == "L1") stages.push_back(stage);  // the array, in its last-level form
    }
    std::string classify = ReadModule("tiled_classify");
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"@NEXT@", "L1"}, {"@WIDTH@", std::to_string(kWidth)}}) {
        for (size_t at = classify.find(from); at != std::string::npos; at = classify.find(from, at + to.size())) {
            classify.replace(at, from.size(), to);
        }
    }
    stages.push_back({classify, "main", "Classify", 0});
    for (const uint32_t tiles : {16384u, kMostTiles}) {
        std::memset(uav.mapped, 0, uav.size);
        const std::vector<std::string> events = DispatchCaptured(
            context, capture, stages, uav,
            [&](VkPipeline graph) {
                VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, "Classify", 0), 1, {}, sizeof(tiles)};
                info.payloads.hostAddress = &tiles;
                return std::vector<VkDispatchGraphInfoAMDX>{info};
            },
            /*max_scratch=*/true);  // minSize holds 16384 records a level
        ASSERT_FALSE(events.empty());
        uint32_t wrong = 0;
        for (uint32_t tile = 0; tile < kMostTiles; ++tile) {
            const uint32_t expected = tile < tiles ? tile % kWidth + 1 : 0;
            if (uav.As<uint32_t>()[tile] != expected && wrong++ < 8) {
                ADD_FAILURE() << tiles << " tiles: tile " << tile << " holds " << uav.As<uint32_t>()[tile] << ", not " << expected;
            }
        }
        EXPECT_EQ(wrong, 0u) << tiles << " tiles";
        // Level 1's region: the level pass (a plain dispatch) only after the larger level; the array's one group dispatch
        // either way (the finish pass that writes the report has a region of its own).
        const LabelledCapture labels = ReadLabels(events);
        auto count_in_level_one = [](const std::vector<std::vector<std::string>>& stacks) {
            return std::count_if(stacks.begin(), stacks.end(), [](const std::vector<std::string>& stack) {
                return std::find(stack.begin(), stack.end(), "level 1") != stack.end() &&
                       std::find(stack.begin(), stack.end(), "report") == stack.end();
            });
        };
        const bool direct = tiles <= 16384;
        EXPECT_EQ(count_in_level_one(labels.dispatches), direct ? 0 : 1) << tiles << " tiles\n" << Joined(events);
        EXPECT_EQ(count_in_level_one(labels.barriers), direct ? 1 : 2) << tiles << " tiles\n" << Joined(events);
        EXPECT_EQ(count_in_level_one(labels.indirect_dispatches), 1) << tiles << " tiles\n" << Joined(events);
    }
    EXPECT_EQ(context.log().Problems(), "");
    context.Destroy(uav);
}

// Nodes lowered from one module share a pipeline, and consecutive ones form a dispatch group that a level binds once and
// dispatches once (docs/design.md, "Dispatch groups"): level 0 dispatches the four Entry[i] as one group (the B[i] sinks
// are API entries too, but this dispatch names none of them, so level 0 leaves them out), level 1 the four sinks as one
// (the hello graph's distinct nodes still get one dispatch each). The sinks' ShaderIndexAMDX and records still come out
// right, so each workgroup found its member.
TEST_F(DebugLabels, NodesSharingAPipelineAreBoundAndDispatchedOncePerLevel) {
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    std::vector<NodeStage> stages;
    for (uint32_t i = 0; i < 4; ++i) stages.push_back({ReadCorpus("output_node_array_runtime_index"), "main", "Entry", i});
    for (uint32_t i = 0; i < 4; ++i) stages.push_back({ReadModule("array_sink"), "main", "B", i});
    TestBuffer uav = context.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    // Entry[e] sends 8 records (value 10 * e + thread) to B[3 - e].
    struct Rec {
        uint32_t node_idx, value;
    };
    Rec records[4];
    const std::vector<std::string> events = DispatchCaptured(context, capture, stages, uav, [&](VkPipeline graph) {
        std::vector<VkDispatchGraphInfoAMDX> infos(4);
        for (uint32_t e = 0; e < 4; ++e) {
            records[e] = {3 - e, 10 * e};
            infos[e] = {context.NodeIndex(graph, "Entry", e), 1, {}, sizeof(Rec)};
            infos[e].payloads.hostAddress = &records[e];
        }
        return infos;
    });
    ASSERT_FALSE(events.empty());
    for (uint32_t b = 0; b < 4; ++b) {
        const uint32_t e = 3 - b;
        EXPECT_EQ(uav.As<uint32_t>()[2 * b], 8 * 10 * e + 28) << "B[" << b << "] sum";
        EXPECT_EQ(uav.As<uint32_t>()[2 * b + 1], 8u) << "B[" << b << "] count";
    }

    const LabelledCapture labels = ReadLabels(events);
    EXPECT_EQ(labels.problems, "") << Joined(events);
    // Node binds sit in a node's label region: dispatch, level, node.
    std::vector<std::string> node_pipelines[2];
    size_t node_dispatches[2] = {0, 0};
    for (size_t i = 0; i < labels.binds.size(); ++i) {
        if (labels.binds[i].size() != 3 || labels.binds[i].back() == "report") continue;
        for (uint32_t level = 0; level < 2; ++level) {
            if (labels.binds[i][1] == "level " + std::to_string(level)) node_pipelines[level].push_back(labels.bound_pipelines[i]);
        }
    }
    std::vector<std::string> group_labels[2];
    for (const std::vector<std::string>& stack : labels.indirect_dispatches) {
        for (uint32_t level = 0; level < 2; ++level) {
            if (stack.size() != 3 || stack[1] != "level " + std::to_string(level)) continue;
            ++node_dispatches[level];
            group_labels[level].push_back(stack[2]);
        }
    }
    EXPECT_EQ(node_dispatches[0], 1u) << Joined(events);
    EXPECT_EQ(node_dispatches[1], 1u) << Joined(events);
    EXPECT_EQ(group_labels[0], (std::vector<std::string>{"Entry[0] .. Entry[3] (4 nodes)"}));
    EXPECT_EQ(group_labels[1], (std::vector<std::string>{"B[0] .. B[3] (4 nodes)"}));
    ASSERT_EQ(node_pipelines[0].size(), 1u) << Joined(events);  // Entry's
    ASSERT_EQ(node_pipelines[1].size(), 1u) << Joined(events);  // B's
    EXPECT_NE(node_pipelines[0][0], node_pipelines[1][0]);
    context.Destroy(uav);

    // Distinct nodes keep one bind each: the hello graph's three levels dispatch firstNode, secondNode and thirdNode.
    const LabelledCapture hello = ReadLabels(RunHelloGraph(context, capture, "hello"));
    const size_t node_binds = std::count_if(hello.binds.begin(), hello.binds.end(), [](const std::vector<std::string>& stack) {
        return stack.size() == 3 && stack.back() != "report";
    });
    EXPECT_EQ(node_binds, 3u);
    EXPECT_EQ(context.log().Problems(), "");
}

TEST_F(DebugLabels, UnnamedGraphsAreLabelledByNumber) {
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    RunHelloGraph(context, capture, "first");
    const LabelledCapture labels = ReadLabels(RunHelloGraph(context, capture, nullptr));
    ASSERT_FALSE(labels.regions.empty());
    EXPECT_EQ(labels.regions.front(), "vkCmdDispatchGraphAMDX (graph 2)");
    EXPECT_EQ(context.log().Problems(), "");
}

TEST_F(DebugLabels, NoneWhenTheSettingIsOff) {
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_DEBUG_LABELS", "false", 1);
    GraphTestContext context(WithCapture());
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    const LabelledCapture labels = ReadLabels(RunHelloGraph(context, capture, "hello-graph"));
    EXPECT_TRUE(labels.regions.empty()) << Joined(labels.regions);
    EXPECT_EQ(labels.indirect_dispatches.size(), 3u);
    EXPECT_EQ(context.log().Problems(), "");
}

// The label commands belong to VK_EXT_debug_utils: without it on the instance the layer must not call them, even
// though the loader hands out their function pointers.
TEST_F(DebugLabels, NoneWhenTheInstanceLacksDebugUtils) {
    GraphTestContext context(WithCapture(/*debug_utils=*/false));
    ASSERT_TRUE(context.ok());
    CaptureReader capture;
    ASSERT_TRUE(capture.ok()) << dlerror();
    const LabelledCapture labels = ReadLabels(RunHelloGraph(context, capture, nullptr));
    EXPECT_TRUE(labels.regions.empty()) << Joined(labels.regions);
    EXPECT_EQ(labels.indirect_dispatches.size(), 3u);
}

std::vector<uint32_t> ReadWords(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), words.size() * 4);
    return words;
}

std::string ReadText(const std::filesystem::path& path) {
    std::ifstream file(path);
    return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

class ShaderDumps : public ::testing::Test {
  protected:
    void SetUp() override {
        folder_ = ::testing::TempDir() + "execgraph_dumps_" + std::to_string(::getpid());
        std::filesystem::remove_all(folder_);
        std::filesystem::create_directories(folder_);
        setenv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH", folder_.c_str(), 1);
    }
    void TearDown() override {
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH");
        std::filesystem::remove_all(folder_);
    }
    // Creates a graph of `stages` with the setting's environment variable set to `value` (unset where empty), so that
    // its nodes' modules land in the folder; the variable is unset again afterwards.
    void CreateGraphWithSetting(const char* variable, const char* value, const std::vector<NodeStage>& stages) {
        if (*value != 0) setenv(variable, value, 1);
        {
            GraphTestContext context;
            if (context.ok()) {
                TestBuffer uav = context.CreateBuffer(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
                VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
                EXPECT_NE(context.CreateGraph(stages, layout), VK_NULL_HANDLE) << context.log().Problems();
                context.Destroy(uav);
                EXPECT_EQ(context.log().Problems(), "");
            } else {
                ADD_FAILURE() << "no device";
            }
        }
        unsetenv(variable);
    }
    // The disassembly of each dumped module named (empty where it cannot be read), then an empty folder for the next graph.
    std::vector<std::string> DisassembleDumpsThenClear(const std::vector<std::string>& files) {
        spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_3);
        std::vector<std::string> texts;
        for (const std::string& file : files) {
            std::string text;
            EXPECT_TRUE(tools.Disassemble(ReadWords((std::filesystem::path(folder_) / file).string()), &text,
                                          SPV_BINARY_TO_TEXT_OPTION_NO_HEADER))
                << file;
            texts.push_back(text);
        }
        std::filesystem::remove_all(folder_);
        std::filesystem::create_directories(folder_);
        return texts;
    }
    std::string folder_;
};

// Every node's AMDX module, its lowered module (plain Vulkan 1.3 SPIR-V that SPIRV-Tools accepts) and a GLSL rendering
// land in the folder, named graph<N>_<node>_<index> with N counting the device's graphs.
TEST_F(ShaderDumps, EveryNodeIsWrittenBeforeAndAfterLoweringAndAsGlsl) {
    {
        GraphTestContext context;
        ASSERT_TRUE(context.ok());
        TestBuffer uav = context.CreateBuffer(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
        ASSERT_NE(context.CreateGraph(HelloStages(), layout), VK_NULL_HANDLE) << context.log().Problems();
        ASSERT_NE(context.CreateGraph(HelloStages(), layout), VK_NULL_HANDLE) << context.log().Problems();
        context.Destroy(uav);
        EXPECT_EQ(context.log().Problems(), "");
    }
    spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_3);
    for (const char* graph : {"graph1", "graph2"}) {
        for (const char* node : {"firstNode", "secondNode", "thirdNode"}) {
            const std::filesystem::path stem = std::filesystem::path(folder_) / (std::string(graph) + "_" + node + "_0");
            const std::vector<uint32_t> amdx = ReadWords(stem.string() + ".amdx.spv");
            ASSERT_GE(amdx.size(), 5u) << stem;
            EXPECT_EQ(amdx[0], 0x07230203u) << stem;
            const std::vector<uint32_t> lowered = ReadWords(stem.string() + ".lowered.spv");
            ASSERT_GE(lowered.size(), 5u) << stem;
            spv_validator_options options = spvValidatorOptionsCreate();
            spvValidatorOptionsSetScalarBlockLayout(options, true);
            EXPECT_TRUE(tools.Validate(lowered.data(), lowered.size(), options)) << stem;
            spvValidatorOptionsDestroy(options);
            const std::string glsl = ReadText(stem.string() + ".glsl");
            EXPECT_NE(glsl.find("#version 460"), std::string::npos) << stem;
            EXPECT_NE(glsl.find("void main()"), std::string::npos) << stem << ":\n" << glsl;
        }
    }
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder_), std::filesystem::directory_iterator()), 18);
}

// The allocation_reservation setting reaches the lowering: uniform_allocate_array's Entry node (36 invocations, every
// one allocating) is lowered with its allocation reserved once per workgroup (seven workgroup barriers more) or once
// per subgroup, as its dumped module's options record says; unset, by device type (lavapipe, a CPU device: subgroup).
TEST_F(ShaderDumps, AllocationReservationSettingPicksHowUniformAllocationsReserve) {
    std::map<std::string, size_t> barriers;
    for (const char* value : {"workgroup", "subgroup", ""}) {
        SCOPED_TRACE(value);
        CreateGraphWithSetting("VK_EXECGRAPH_SHADER_ENQUEUE_ALLOCATION_RESERVATION", value, UniformAllocateArrayStages());
        const std::string text = DisassembleDumpsThenClear({"graph1_Entry_0.lowered.spv"})[0];
        const bool per_workgroup = std::string(value) == "workgroup";
        EXPECT_NE(text.find(per_workgroup ? "reserve_per_workgroup=1" : "reserve_per_workgroup=0"), std::string::npos) << text;
        for (size_t at = text.find("OpControlBarrier"); at != std::string::npos; at = text.find("OpControlBarrier", at + 1)) {
            ++barriers[value];
        }
    }
    // Three around the reservation, three around its retry where the heap overflows, one before the per-entry counts.
    EXPECT_EQ(barriers["workgroup"], barriers["subgroup"] + 7);
    EXPECT_EQ(barriers[""], barriers["subgroup"]);
}

// Issue 7: a thread node without outputs (a leaf) runs a larger batch than one with outputs (kLeafThreadBatchSize
// against ThreadBatchSizeFor the device type: 256 and, on lavapipe, 32), as each dumped module's options record; with
// the thread_batch_size setting every thread node runs the set batch. The leaf batch's results are checked wherever a
// thread leaf runs (the workload smoke run's thread_launch and fan_out_tree, the launch-kind suites).
TEST_F(ShaderDumps, ThreadLeavesRunALargerBatchThanThreadNodesWithOutputs) {
    // HelloStages' secondNode is a thread node that enqueues thirdNode; Leaf, an entry of its own, enqueues nothing.
    std::vector<NodeStage> stages = HelloStages();
    stages.push_back({ReadModule("array_sink"), "main", "Leaf", 0});
    for (const char* value : {"", "48"}) {
        SCOPED_TRACE(value);
        CreateGraphWithSetting("VK_EXECGRAPH_SHADER_ENQUEUE_THREAD_BATCH_SIZE", value, stages);
        const std::vector<std::string> texts =
            DisassembleDumpsThenClear({"graph1_secondNode_0.lowered.spv", "graph1_Leaf_0.lowered.spv"});
        auto batch_of = [](const std::string& text) {
            const size_t at = text.find("thread_batch_size=");
            return at == std::string::npos ? std::string("none") : text.substr(at, text.find_first_of(" \"", at) - at);
        };
        const bool set = *value != 0;
        EXPECT_EQ(batch_of(texts[0]), set ? "thread_batch_size=48" : "thread_batch_size=32");
        EXPECT_EQ(batch_of(texts[1]), set ? "thread_batch_size=48" : "thread_batch_size=256");
    }
}

// A dump that cannot be written is a warning: the pipeline is still created and the other files are still written.
TEST_F(ShaderDumps, AFileThatCannotBeWrittenOnlyWarns) {
    std::filesystem::create_directories(std::filesystem::path(folder_) / "graph1_secondNode_0.glsl");  // blocks the file
    GraphTestContext context;
    ASSERT_TRUE(context.ok());
    TestBuffer uav = context.CreateBuffer(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
    EXPECT_NE(context.CreateGraph(HelloStages(), layout), VK_NULL_HANDLE);
    context.Destroy(uav);
    std::vector<MessageLog::Message> messages = context.log().Messages();
    ASSERT_EQ(context.log().CountWithId("EXECGRAPH-SETTINGS"), 1u) << context.log().Problems();
    for (const MessageLog::Message& message : messages) {
        if (message.id != "EXECGRAPH-SETTINGS") continue;
        EXPECT_EQ(message.severity, VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT);
        EXPECT_NE(message.text.find("could not write"), std::string::npos) << message.text;
        EXPECT_NE(message.text.find("graph1_secondNode_0.glsl"), std::string::npos) << message.text;
    }
    EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(folder_) / "graph1_secondNode_0.lowered.spv"));
    EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(folder_) / "graph1_thirdNode_0.glsl"));
    context.log().Clear();
}

// Bookworm's SPIRV-Cross cannot express the lowered Entry node of output_empty_increment (a buffer block that is neither
// std140, std430 nor scalar in GLSL terms; spirv-val accepts it). That failure is a warning naming the file: the
// pipeline is created, the SPIR-V files are written and the other nodes still get their GLSL.
TEST_F(ShaderDumps, GlslThatCannotBeRenderedOnlyWarns) {
    GraphTestContext context;
    ASSERT_TRUE(context.ok());
    TestBuffer uav = context.CreateBuffer(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
    SpecializationStore specs;
    EXPECT_NE(context.CreateGraph({{ReadCorpus("output_empty_increment"), "main", "Entry"},
                                   {ReadModule("empty_leaf_coalescing"), "main", "A", 0, specs.Add({0})},
                                   {ReadModule("empty_leaf_thread"), "main", "C", 0, specs.Add({1})},
                                   {ReadModule("empty_leaf_coalescing"), "main", "C", 1, specs.Add({2})}},
                                  layout),
              VK_NULL_HANDLE);
    context.Destroy(uav);
    const std::filesystem::path folder(folder_);
    bool entry_reported = false;
    for (const MessageLog::Message& message : context.log().Messages()) {
        if (message.severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) continue;
        EXPECT_EQ(message.id, "EXECGRAPH-SETTINGS") << message.text;
        EXPECT_EQ(message.severity, VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) << message.text;
        EXPECT_NE(message.text.find("SPIRV-Cross could not render"), std::string::npos) << message.text;
        entry_reported |= message.text.find("graph1_Entry_0.lowered.spv") != std::string::npos;
    }
    EXPECT_TRUE(entry_reported) << "SPIRV-Cross now renders the Entry node; pick another module for this test\n"
                                << context.log().Problems();
    EXPECT_FALSE(std::filesystem::exists(folder / "graph1_Entry_0.glsl"));
    EXPECT_TRUE(std::filesystem::is_regular_file(folder / "graph1_Entry_0.amdx.spv"));
    EXPECT_TRUE(std::filesystem::is_regular_file(folder / "graph1_Entry_0.lowered.spv"));
    EXPECT_NE(ReadText(folder / "graph1_C_1.glsl").find("void main()"), std::string::npos);
    context.log().Clear();
}

// replace_shaders_path: a graph<N>_<node>_<index>.lowered.spv in the folder runs instead of the node's lowered module.
class ShaderReplacements : public ::testing::Test {
  protected:
    void SetUp() override {
        dumps_ = ::testing::TempDir() + "execgraph_dumps_" + std::to_string(::getpid());
        edits_ = ::testing::TempDir() + "execgraph_edits_" + std::to_string(::getpid());
        for (const std::string& folder : {dumps_, edits_}) {
            std::filesystem::remove_all(folder);
            std::filesystem::create_directories(folder);
        }
    }
    void TearDown() override {
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH");
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_REPLACE_SHADERS_PATH");
        std::filesystem::remove_all(dumps_);
        std::filesystem::remove_all(edits_);
    }
    // The hello graph's lowered thirdNode, as the layer writes it to a dump folder, in SPIRV-Tools' text with raw ids.
    std::string DumpedThirdNode() {
        setenv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH", dumps_.c_str(), 1);
        {
            GraphTestContext context;
            EXPECT_TRUE(context.ok());
            TestBuffer uav = context.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
            EXPECT_NE(context.CreateGraph(HelloStages(), context.CreateStorageBufferLayout({&uav})), VK_NULL_HANDLE);
            context.Destroy(uav);
        }
        unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH");
        const std::vector<uint32_t> words = ReadWords(std::filesystem::path(dumps_) / "graph1_thirdNode_0.lowered.spv");
        std::string text;
        EXPECT_TRUE(tools_.Disassemble(words, &text, SPV_BINARY_TO_TEXT_OPTION_NONE));
        return text;
    }
    void WriteEdit(const std::string& file, const std::string& text) {
        std::vector<uint32_t> words;
        ASSERT_TRUE(tools_.Assemble(text, &words, SPV_TEXT_TO_BINARY_OPTION_PRESERVE_NUMERIC_IDS)) << text;
        std::ofstream out(std::filesystem::path(edits_) / file, std::ios::binary);
        out.write(reinterpret_cast<const char*>(words.data()), std::streamsize(words.size() * 4));
    }
    std::string dumps_, edits_;
    spvtools::SpirvTools tools_{SPV_ENV_VULKAN_1_3};
};

// The ids of `OpConstant %type value` lines in SPIRV-Tools text with raw ids, by type id.
std::map<std::string, std::string> ConstantsOfValue(const std::string& text, uint32_t value) {
    std::map<std::string, std::string> by_type;
    const std::regex constant("(%[0-9]+) = OpConstant (%[0-9]+) " + std::to_string(value) + "\n");
    for (std::sregex_iterator it(text.begin(), text.end(), constant), end; it != end; ++it) by_type[(*it)[2]] = (*it)[1];
    return by_type;
}

// thirdNode adds its per-record counts to UAV[4 + tid]. An edited copy of its lowered module that adds them to
// UAV[0 + tid] instead runs in its place: the sums land on firstNode's words and words 4 to 7 stay zero. A warning says
// which node runs which file.
TEST_F(ShaderReplacements, AnEditedLoweredModuleRunsInsteadOfTheLoweredOne) {
    std::string text = DumpedThirdNode();
    // The UAV is the variable at binding 0; find the OpIAdd of a constant 4 that indexes it, and make that constant 0.
    std::smatch binding;
    ASSERT_TRUE(std::regex_search(text, binding, std::regex("OpDecorate (%[0-9]+) Binding 0\n"))) << text;
    std::smatch chain;
    ASSERT_TRUE(
        std::regex_search(text, chain, std::regex("OpAccessChain %[0-9]+ " + std::string(binding[1]) + " %[0-9]+ (%[0-9]+)\n")))
        << text;
    std::smatch add;
    ASSERT_TRUE(std::regex_search(text, add, std::regex(std::string(chain[1]) + " = OpIAdd (%[0-9]+) (%[0-9]+) (%[0-9]+)\n")))
        << text;
    const std::map<std::string, std::string> fours = ConstantsOfValue(text, 4), zeros = ConstantsOfValue(text, 0);
    const std::string type = add[1];
    ASSERT_EQ(fours.count(type), 1u) << text;
    ASSERT_EQ(zeros.count(type), 1u) << text;
    std::string edited_add = add[0];
    const size_t four_at = edited_add.find(" " + fours.at(type), edited_add.find("OpIAdd"));
    ASSERT_NE(four_at, std::string::npos) << "thirdNode's UAV index is no longer 4 + tid: " << edited_add;
    edited_add.replace(four_at + 1, fours.at(type).size(), zeros.at(type));
    text.replace(add.position(0), add.length(0), edited_add);
    WriteEdit("graph1_thirdNode_0.lowered.spv", text);

    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_REPLACE_SHADERS_PATH", edits_.c_str(), 1);
    GraphTestContext context;
    ASSERT_TRUE(context.ok());
    const HelloRun run = DispatchHelloGraph(context, nullptr, nullptr);
    ASSERT_EQ(run.uav.size(), 8u) << context.log().Problems();
    const uint32_t expected[8] = {5 + 2, 18 + 4, 39 + 6, 68 + 8, 0, 0, 0, 0};
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(run.uav[i], expected[i]) << "UAV[" << i << "]";
    ASSERT_EQ(context.log().CountWithId("EXECGRAPH-SETTINGS"), 1u) << context.log().Problems();
    for (const MessageLog::Message& message : context.log().Messages()) {
        if (message.id != "EXECGRAPH-SETTINGS") continue;
        EXPECT_EQ(message.severity, VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT);
        EXPECT_NE(message.text.find("\"thirdNode\"[0]"), std::string::npos) << message.text;
        EXPECT_NE(message.text.find("graph1_thirdNode_0.lowered.spv"), std::string::npos) << message.text;
    }
    context.log().Clear();
}

// vkd3d-proton's basic recursion (GraphDispatch.RecursionToMaxNodeRecursion): UAV[0..14] after one dispatch.
std::vector<uint32_t> DispatchRecursionGraph(GraphTestContext& context) {
    TestBuffer uav = context.CreateBuffer(16 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    VkPipelineLayout layout = context.CreateStorageBufferLayout({&uav});
    VkPipeline graph = context.CreateGraph(
        {{ReadCorpus("vkd3d_basic_recursion_entry"), "EntryNode"}, {ReadCorpus("vkd3d_basic_recursion_recursive"), "Recursive"}},
        layout);
    EXPECT_NE(graph, VK_NULL_HANDLE) << context.log().Problems();
    if (graph == VK_NULL_HANDLE) return {};
    VkExecutionGraphPipelineScratchSizeAMDX size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    EXPECT_EQ(context.vkGetExecutionGraphPipelineScratchSizeAMDX(context.device(), graph, &size), VK_SUCCESS);
    TestBuffer scratch = context.CreateScratch(size.minSize);
    VkDispatchGraphInfoAMDX info{context.NodeIndex(graph, "EntryNode", 0), 1, {}, 0};
    uint32_t empty_record = 0;
    info.payloads.hostAddress = &empty_record;
    VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
    count_info.infos.hostAddress = &info;
    context.Submit([&](VkCommandBuffer cmd) {
        context.vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size);
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT,
                                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0,
                             nullptr, 0, nullptr);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
        VkDescriptorSet set = context.descriptor_set();
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, layout, 0, 1, &set, 0, nullptr);
        context.vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
    });
    std::vector<uint32_t> words(uav.As<uint32_t>(), uav.As<uint32_t>() + 15);
    context.Destroy(scratch);
    context.Destroy(uav);
    return words;
}

// The GLSL route of docs/debugging.md: every node's GLSL rendering, compiled by scripts/glsl-replacement.py (which fixes
// what glslang does not take from SPIRV-Cross and compiles for Vulkan 1.3, whose modules state LocalSizeId), runs
// instead of the node's lowered module with the graph's results unchanged: the hello graph, and the recursion, whose
// record struct is both a member of its output's record array and a buffer reference's block (the script renames the
// struct; removing it had made the array one of references, and the node write through them). An edit of thirdNode's
// GLSL (its UAV words 4 + tid made 0 + tid) moves its sums as the same edit of the SPIR-V does above.
TEST_F(ShaderReplacements, GlslDumpsCompiledByTheScriptRunInsteadOfTheLoweredModules) {
    // The build machine's tools; a GPU machine the test binaries were copied to (scripts/gpu/stage.sh) may lack them.
    for (const char* tool : {EXECGRAPH_PYTHON3, EXECGRAPH_GLSLANG_VALIDATOR, EXECGRAPH_GLSL_REPLACEMENT_SCRIPT}) {
        if (!std::filesystem::exists(tool)) GTEST_SKIP() << tool << " is not on this machine";
    }
    DumpedThirdNode();
    // The script on `glsl`, writing `spv` (and the fixed source to `fixed`, where given).
    auto compile = [&](const std::filesystem::path& glsl, const std::filesystem::path& spv,
                       const std::filesystem::path& fixed = {}) {
        const std::string command = std::string(EXECGRAPH_PYTHON3) + " " + EXECGRAPH_GLSL_REPLACEMENT_SCRIPT + " --glslang " +
                                    EXECGRAPH_GLSLANG_VALIDATOR + (fixed.empty() ? "" : " --fixed " + fixed.string()) + " " +
                                    glsl.string() + " " + spv.string();
        return std::system(command.c_str()) == 0;
    };
    std::vector<std::filesystem::path> renderings;
    for (const auto& file : std::filesystem::directory_iterator(dumps_)) {
        if (file.path().extension() == ".glsl") renderings.push_back(file.path());
    }
    ASSERT_EQ(renderings.size(), 3u);
    for (const std::filesystem::path& glsl : renderings) {
        const std::filesystem::path spv = std::filesystem::path(edits_) / (glsl.stem().string() + ".lowered.spv");
        ASSERT_TRUE(compile(glsl, spv)) << glsl;
    }
    auto run_hello = [&](const uint32_t(&expected)[8]) {
        setenv("VK_EXECGRAPH_SHADER_ENQUEUE_REPLACE_SHADERS_PATH", edits_.c_str(), 1);
        GraphTestContext context;
        ASSERT_TRUE(context.ok());
        const HelloRun run = DispatchHelloGraph(context, nullptr, nullptr);
        ASSERT_EQ(run.uav.size(), 8u) << context.log().Problems();
        for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(run.uav[i], expected[i]) << "UAV[" << i << "]";
        // One warning per node that runs a replacement, and no error (validation below the layer included).
        EXPECT_EQ(context.log().CountWithId("EXECGRAPH-SETTINGS"), 3u) << context.log().Problems();
        for (const MessageLog::Message& message : context.log().Messages()) {
            EXPECT_EQ(message.severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT, 0u) << message.text;
        }
        context.log().Clear();
    };
    run_hello(kHelloExpected);

    // thirdNode's UAV index: `4u + ` before the invocation's id in the only store to the node's storage buffer.
    const std::filesystem::path third = std::filesystem::path(dumps_) / "graph1_thirdNode_0.glsl";
    std::ifstream in(third);
    std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::regex uav_index("(\\._m0\\[)4u \\+ ");
    ASSERT_EQ(std::distance(std::sregex_iterator(source.begin(), source.end(), uav_index), std::sregex_iterator()), 1) << source;
    std::ofstream(third) << std::regex_replace(source, uav_index, "$010u + ");
    ASSERT_TRUE(compile(third, std::filesystem::path(edits_) / "graph1_thirdNode_0.lowered.spv"));
    const uint32_t moved[8] = {5 + 2, 18 + 4, 39 + 6, 68 + 8, 0, 0, 0, 0};
    run_hello(moved);

    for (const std::string& folder : {dumps_, edits_}) {
        std::filesystem::remove_all(folder);
        std::filesystem::create_directories(folder);
    }
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH", dumps_.c_str(), 1);
    {
        GraphTestContext context;
        ASSERT_TRUE(context.ok());
        const std::vector<uint32_t> lowered = DispatchRecursionGraph(context);
        const std::vector<uint32_t> expected{0, 7, 13, 17, 25, 34, 46, 59, 71, 76, 68, 47, 23, 7, 1};
        ASSERT_EQ(lowered, expected) << context.log().Problems();
    }
    unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH");
    bool renamed_struct = false;
    for (const std::string node : {"EntryNode", "Recursive"}) {
        const std::filesystem::path glsl = std::filesystem::path(dumps_) / ("graph1_" + node + "_0.glsl");
        const std::filesystem::path fixed = std::filesystem::path(edits_) / (node + ".comp");
        ASSERT_TRUE(compile(glsl, std::filesystem::path(edits_) / ("graph1_" + node + "_0.lowered.spv"), fixed)) << glsl;
        std::ifstream fixed_in(fixed);
        const std::string fixed_source((std::istreambuf_iterator<char>(fixed_in)), std::istreambuf_iterator<char>());
        renamed_struct = renamed_struct || std::regex_search(fixed_source, std::regex("\\n\\s+_[0-9]+_value _m[0-9]+\\[\\];"));
    }
    EXPECT_TRUE(renamed_struct) << "no record array of a renamed struct: the case this part covers is gone";
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_REPLACE_SHADERS_PATH", edits_.c_str(), 1);
    GraphTestContext context;
    ASSERT_TRUE(context.ok());
    const std::vector<uint32_t> replaced = DispatchRecursionGraph(context);
    const std::vector<uint32_t> expected{0, 7, 13, 17, 25, 34, 46, 59, 71, 76, 68, 47, 23, 7, 1};
    EXPECT_EQ(replaced, expected);
    EXPECT_EQ(context.log().CountWithId("EXECGRAPH-SETTINGS"), 2u) << context.log().Problems();
    context.log().Clear();
}

// A replacement the layer cannot run as the node (not SPIR-V, invalid, another LocalSize, lowered with another device's
// options) fails pipeline creation with a message naming the file; it is never silently skipped, which would hide the
// experiment's outcome.
TEST_F(ShaderReplacements, AFileThatCannotReplaceTheNodeFailsPipelineCreation) {
    const std::string text = DumpedThirdNode();
    std::smatch local_size;
    ASSERT_TRUE(std::regex_search(text, local_size, std::regex("OpExecutionMode %[0-9]+ LocalSize 32 1 1\n"))) << text;
    std::string wider = text;
    wider.replace(local_size.position(0), local_size.length(0),
                  std::regex_replace(std::string(local_size[0]), std::regex("LocalSize 32"), "LocalSize 64"));
    // The same module as another device would lower it: its level passes sized for another number of records per
    // workgroup (a CPU device's default is 16384, a GPU's 512; docs/debugging.md).
    std::smatch record;
    ASSERT_TRUE(std::regex_search(text, record,
                                  std::regex("OpModuleProcessed \"execgraph-lowering-options [^\"]*"
                                             "level_pass_records_per_workgroup=([0-9]+)[^\"]*\"\n")))
        << text;
    const std::string ours = record[1], theirs = ours == "512" ? "16384" : "512";
    std::string other_device = text;
    other_device.replace(
        record.position(0), record.length(0),
        std::regex_replace(std::string(record[0]), std::regex("records_per_workgroup=" + ours), "records_per_workgroup=" + theirs));
    const std::string other_device_reason =
        "level_pass_records_per_workgroup=" + theirs + " where this node is lowered with " + ours;
    struct Case {
        const char* what;
        std::function<void()> write;
        const char* reason;
    };
    const Case cases[] = {
        {"not SPIR-V", [&] { std::ofstream(std::filesystem::path(edits_) / "graph1_thirdNode_0.lowered.spv") << "hello"; },
         "graph1_thirdNode_0.lowered.spv"},
        {"another LocalSize", [&] { WriteEdit("graph1_thirdNode_0.lowered.spv", wider); }, "LocalSize 64x1x1"},
        {"invalid", [&] { WriteEdit("graph1_thirdNode_0.lowered.spv", std::regex_replace(text, std::regex("OpReturn\n"), "")); },
         "validation"},
        {"lowered for another device", [&] { WriteEdit("graph1_thirdNode_0.lowered.spv", other_device); },
         other_device_reason.c_str()},
    };
    setenv("VK_EXECGRAPH_SHADER_ENQUEUE_REPLACE_SHADERS_PATH", edits_.c_str(), 1);
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        c.write();
        GraphTestContext context;
        ASSERT_TRUE(context.ok());
        TestBuffer uav = context.CreateBuffer(8 * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        EXPECT_EQ(context.CreateGraph(HelloStages(), context.CreateStorageBufferLayout({&uav})), VK_NULL_HANDLE);
        context.Destroy(uav);
        bool named = false;
        for (const MessageLog::Message& message : context.log().Messages()) {
            if (message.text.find("replace_shaders_path") == std::string::npos) continue;
            EXPECT_EQ(message.severity, VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) << message.text;
            EXPECT_NE(message.text.find(c.reason), std::string::npos) << message.text;
            named |= message.text.find("graph1_thirdNode_0.lowered.spv") != std::string::npos;
        }
        EXPECT_TRUE(named) << context.log().Problems();
        context.log().Clear();
    }
}

}  // namespace
}  // namespace execgraph::test
