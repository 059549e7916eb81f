// How long vkCreateExecutionGraphPipelinesAMDX takes for graphs of N nodes, against the same number of ordinary compute
// pipelines created directly from an equivalent GLSL shader (the baseline), measured in the same run.
//
// Each graph is N broadcasting nodes named compose[0..N-1] made from one AMDX module (AMD's classify/compose sample
// uses a compose node array of up to 1023 shaders). The graph time covers everything the layer adds: analysis,
// linking, lowering, SPIR-V writing and the driver's pipeline compiles; the baseline is the driver's compiles alone.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "amdx_assembler.h"
#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/reader.h"
#include "graph_test_context.h"

namespace execgraph::bench {
namespace {

using test::GraphTestContext;
using test::TestBuffer;

const uint32_t kPlainShader[] = {
#include "plain_node_equivalent.inc"
};

struct Fixture {
    GraphTestContext context{/*with_validation=*/false};
    TestBuffer uav;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipelineLayout plain_layout = VK_NULL_HANDLE;
    VkShaderModule plain_module = VK_NULL_HANDLE;
    std::string node_assembly = test::ReadCorpus("broadcast_static_grid");

    Fixture() {
        uav = context.CreateBuffer(4096, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        layout = context.CreateStorageBufferLayout({&uav});
        plain_layout = layout;
        VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        module_info.codeSize = sizeof(kPlainShader);
        module_info.pCode = kPlainShader;
        vkCreateShaderModule(context.device(), &module_info, nullptr, &plain_module);
    }
};

Fixture& SharedFixture() {
    static Fixture fixture;
    return fixture;
}

// Times vkCreateExecutionGraphPipelinesAMDX of one graph whose node k runs `modules[k]` as (names[k], indices[k]); the
// modules are created before, outside the timing.
void TimeGraphCreation(benchmark::State& state, Fixture& fixture, const std::vector<VkShaderModule>& modules,
                       const std::vector<const char*>& names, const std::vector<uint32_t>& indices) {
    const uint32_t nodes = static_cast<uint32_t>(modules.size());
    std::vector<VkPipelineShaderStageNodeCreateInfoAMDX> node_infos(nodes);
    std::vector<VkPipelineShaderStageCreateInfo> stages(nodes);
    for (uint32_t i = 0; i < nodes; ++i) {
        node_infos[i] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, nullptr, names[i], indices[i]};
        stages[i] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                     &node_infos[i],
                     0,
                     VK_SHADER_STAGE_COMPUTE_BIT,
                     modules[i],
                     "main"};
    }
    VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
    create_info.stageCount = nodes;
    create_info.pStages = stages.data();
    create_info.layout = fixture.layout;
    create_info.basePipelineIndex = -1;
    for (auto _ : state) {
        VkPipeline graph = VK_NULL_HANDLE;
        VkResult result = fixture.context.vkCreateExecutionGraphPipelinesAMDX(fixture.context.device(), VK_NULL_HANDLE, 1, &create_info,
                                                                             nullptr, &graph);
        if (result != VK_SUCCESS) {
            state.SkipWithError(("graph creation failed: " + fixture.context.log().Problems()).c_str());
            break;
        }
        state.PauseTiming();
        vkDestroyPipeline(fixture.context.device(), graph, nullptr);
        state.ResumeTiming();
    }
    state.counters["nodes"] = nodes;
}

void BM_GraphCreation(benchmark::State& state) {
    Fixture& fixture = SharedFixture();
    const uint32_t nodes = static_cast<uint32_t>(state.range(0));
    // One module, N stages naming compose[0..N-1], as AMD's sample does.
    static VkShaderModule module = fixture.context.CreateNodeModule(fixture.node_assembly);
    std::vector<uint32_t> indices(nodes);
    std::iota(indices.begin(), indices.end(), 0u);
    TimeGraphCreation(state, fixture, std::vector<VkShaderModule>(nodes, module), std::vector<const char*>(nodes, "compose"),
                      indices);
    state.counters["us_per_node"] =
        benchmark::Counter(nodes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// A chain of N levels L0 -> L1 -> ... of one node each, made from N modules that differ only in the name of their
// output's node (array_chain_step): what an application gets from one HLSL function per pipeline stage. The modules
// lower to the same code but for the last (no output), so the graph needs two lowerings and pipeline compiles, not N
// (docs/design.md, "How a node receives its scheduler context").
void BM_ChainGraphCreation(benchmark::State& state) {
    Fixture& fixture = SharedFixture();
    const uint32_t levels = static_cast<uint32_t>(state.range(0));
    std::vector<std::string> names;  // NodeStage::node_name points into it
    const std::vector<test::NodeStage> chain = test::ArrayChainStages(1, levels, 1, &names);
    std::vector<VkShaderModule> modules;
    std::vector<const char*> node_names;
    for (const test::NodeStage& stage : chain) {
        modules.push_back(fixture.context.CreateNodeModule(stage.assembly));
        node_names.push_back(stage.node_name);
    }
    TimeGraphCreation(state, fixture, modules, node_names, std::vector<uint32_t>(levels, 0u));
}

void BM_PlainComputePipelines(benchmark::State& state) {
    Fixture& fixture = SharedFixture();
    const uint32_t pipelines = static_cast<uint32_t>(state.range(0));
    VkComputePipelineCreateInfo create_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    create_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create_info.stage.module = fixture.plain_module;
    create_info.stage.pName = "main";
    create_info.layout = fixture.plain_layout;
    std::vector<VkPipeline> created(pipelines);
    const VkSpecializationMapEntry entry{0, 0, sizeof(uint32_t)};
    uint32_t node_index = 0;
    const VkSpecializationInfo specialization{1, &entry, sizeof(node_index), &node_index};
    create_info.stage.pSpecializationInfo = &specialization;
    uint32_t generation = 0;
    for (auto _ : state) {
        // One call per pipeline, as the layer makes them; each distinct, and distinct from earlier iterations too.
        for (uint32_t i = 0; i < pipelines; ++i) {
            node_index = ++generation;
            vkCreateComputePipelines(fixture.context.device(), VK_NULL_HANDLE, 1, &create_info, nullptr, &created[i]);
        }
        state.PauseTiming();
        for (VkPipeline pipeline : created) vkDestroyPipeline(fixture.context.device(), pipeline, nullptr);
        state.ResumeTiming();
    }
    state.counters["nodes"] = pipelines;
}

// The layer's own share of graph creation, without the driver: reading, analysing and lowering one node module, as
// graph creation does once per distinct lowered module (once for all the compose[i] of the graph creation benchmark).
void BM_AnalyzeAndLowerOneNode(benchmark::State& state) {
    test::AssembleResult assembled = test::AssembleAmdx(test::ReadCorpus("broadcast_static_grid"));
    for (auto _ : state) {
        auto module = spirv::ReadModule(assembled.words);
        auto info = spirv::AnalyzeNode(*module, "main", nullptr);
        spirv::LoweringOptions options;
        options.context_offset = 0;
        options.validate = false;
        auto lowered = spirv::LowerNode(*module, *info, options);
        if (!lowered.ok()) {
            state.SkipWithError(lowered.error().ToString().c_str());
            break;
        }
        benchmark::DoNotOptimize(lowered->words.data());
    }
}
BENCHMARK(BM_AnalyzeAndLowerOneNode)->Unit(benchmark::kMicrosecond);

// Node counts: 8, 32 (the chain's baseline), 64 and 1024 by default; EXECGRAPH_BENCH_SMOKE=1 (lavapipe in CI) stops at 64.
void NodeCounts(benchmark::internal::Benchmark* benchmark) {
    benchmark->Arg(8)->Arg(32)->Arg(64);
    if (std::getenv("EXECGRAPH_BENCH_SMOKE") == nullptr) benchmark->Arg(1024);
    benchmark->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
}

BENCHMARK(BM_GraphCreation)->Apply(NodeCounts);
BENCHMARK(BM_PlainComputePipelines)->Apply(NodeCounts);
BENCHMARK(BM_ChainGraphCreation)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);

// Prints graph / baseline per node count after the usual console table.
class RatioReporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& run : runs) {
            // With --benchmark_repetitions the median stands for the benchmark (the first repetition pays driver warm-up).
            if (run.error_occurred || (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median")) continue;
            const std::string name = run.benchmark_name();
            const size_t first = name.find('/');
            const std::string count = name.substr(first + 1, name.find('/', first + 1) - first - 1);
            if (name.rfind("BM_GraphCreation", 0) == 0) graph_[count] = run.GetAdjustedRealTime();
            if (name.rfind("BM_PlainComputePipelines", 0) == 0) baseline_[count] = run.GetAdjustedRealTime();
            if (name.rfind("BM_ChainGraphCreation", 0) == 0) chain_[count] = run.GetAdjustedRealTime();
        }
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf("\n%-8s %14s %14s %8s\n", "nodes", "graph (ms)", "baseline (ms)", "ratio");  // medians when repeated
        for (const auto& [count, graph_ms] : graph_) {  // keyed by node count as text
            auto baseline = baseline_.find(count);
            if (baseline == baseline_.end()) continue;
            std::printf("%-8s %14.2f %14.2f %8.2f\n", count.c_str(), graph_ms, baseline->second, graph_ms / baseline->second);
        }
        std::printf("\n%-8s %14s %14s %8s\n", "chain", "graph (ms)", "baseline (ms)", "ratio");  // levels; N plain pipelines
        for (const auto& [count, graph_ms] : chain_) {
            auto baseline = baseline_.find(count);
            if (baseline == baseline_.end()) continue;
            std::printf("%-8s %14.2f %14.2f %8.2f\n", count.c_str(), graph_ms, baseline->second, graph_ms / baseline->second);
        }
    }

  private:
    std::map<std::string, double> graph_;  // node count → ms per graph
    std::map<std::string, double> baseline_;
    std::map<std::string, double> chain_;  // levels → ms per chain graph
};

}  // namespace
}  // namespace execgraph::bench

int main(int argc, char** argv) {
    setenv("NODEVICE_SELECT", "1", 0);
    benchmark::Initialize(&argc, argv);
    execgraph::bench::RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
