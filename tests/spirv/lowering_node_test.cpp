// SPDX-License-Identifier: Apache-2.0
// LowerNode(): every 2024 corpus module and every AMD compute fixture lowers to a module that passes the Vulkan 1.3
// validator and contains no AMDX construct; per feature, structural facts of the output; and the clear errors for
// shapes the lowering does not support.
#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "amdx_assembler.h"
#include "execgraph/runtime/scratch_layout.h"
#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/decorations.h"
#include "execgraph/spirv/disassembler.h"
#include "execgraph/spirv/layout.h"
#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/reader.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

std::string ReadText(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

std::string CorpusPath(const std::string& name) { return std::string(EXECGRAPH_SPIRV_CORPUS_DIR) + "/" + name; }

Module Assemble(const std::string& text, const std::string& what) {
    const execgraph::test::AssembleResult assembled = execgraph::test::AssembleAmdx(text);
    EXPECT_TRUE(assembled.ok()) << what << ": " << assembled.error;
    if (!assembled.ok()) return Module();
    Result<Module> module = ReadModule(assembled.words);
    EXPECT_TRUE(module.ok()) << what << ": " << (module.ok() ? "" : module.error().ToString());
    return module.ok() ? *std::move(module) : Module();
}

Module LoadCorpus(const std::string& name) { return Assemble(ReadText(CorpusPath(name)), name); }

Module LoadWords(const std::vector<std::uint32_t>& words, const std::string& what) {
    Result<Module> module = ReadModule(words);
    EXPECT_TRUE(module.ok()) << what << ": " << (module.ok() ? "" : module.error().ToString());
    return module.ok() ? *std::move(module) : Module();
}

std::string EntryName(const Module& module) {
    for (const Instruction& inst : module.section(Section::kEntryPoint)) return inst.StringAt(2);
    return "";
}

// Representative options: node 3 of a graph, tables laid out one after the other, strides = size rounded up to the
// record alignment (at least 4 unless empty), the context after any application push constants.
LoweringOptions MakeOptions(const Module& module, const NodeInfo& info) {
    LoweringOptions options;
    options.graph_node_index = 3;
    options.context_offset = 0;
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpVariable || inst.Word(0) != static_cast<std::uint32_t>(StorageClass::PushConstant)) continue;
        const Instruction* pointer = module.FindDef(inst.type_id());
        Result<std::uint32_t> size = ExplicitLayoutSize(module, pointer->Word(1));
        EXPECT_TRUE(size.ok());
        options.context_offset = size.ok() ? (*size + 7u) & ~7u : 0;
    }
    std::uint32_t next = 0;
    for (const NodeOutputInfo& output : info.outputs) {
        const std::uint32_t length = output.array_size.value_or(output.unbounded() ? 16u : 1u);
        options.output_table_index.push_back(next);
        options.output_table_length.push_back(length);
        next += length;
        const std::uint32_t alignment = std::max(output.record.alignment, 4u);
        options.output_record_stride.push_back(output.record.size == 0 ? 0 : (output.record.size + alignment - 1) / alignment * alignment);
    }
    options.input_record_stride = (info.input_record.size + 3u) & ~3u;
    return options;
}

std::string ValidateVulkan13(const std::vector<std::uint32_t>& words) {
    spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
    spv_validator_options options = spvValidatorOptionsCreate();
    spvValidatorOptionsSetScalarBlockLayout(options, true);
    spv_const_binary_t binary{words.data(), words.size()};
    spv_diagnostic diagnostic = nullptr;
    const spv_result_t result = spvValidateWithOptions(context, options, &binary, &diagnostic);
    std::string message = result == SPV_SUCCESS ? "" : (diagnostic != nullptr ? diagnostic->error : "invalid");
    spvDiagnosticDestroy(diagnostic);
    spvValidatorOptionsDestroy(options);
    spvContextDestroy(context);
    return message;
}

// Word-level scan, independent of our IR: no AMDX opcode (5074-5104), capability 5067 or storage class 5068.
std::string FindAmdx(const std::vector<std::uint32_t>& words) {
    for (std::size_t i = 5; i < words.size();) {
        const std::uint32_t count = words[i] >> 16;
        const std::uint32_t opcode = words[i] & 0xffffu;
        if (count == 0 || i + count > words.size()) return "malformed instruction stream";
        for (std::uint32_t amdx : {5074u, 5075u, 5076u, 5078u, 5090u, 5101u, 5103u, 5104u}) {
            if (opcode == amdx) return "opcode " + std::to_string(opcode);
        }
        if (opcode == static_cast<std::uint32_t>(Op::OpCapability) && words[i + 1] == 5067u) return "capability ShaderEnqueueAMDX";
        if (opcode == static_cast<std::uint32_t>(Op::OpTypePointer) && words[i + 2] == 5068u) return "NodePayloadAMDX pointer";
        if (opcode == static_cast<std::uint32_t>(Op::OpVariable) && words[i + 3] == 5068u) return "NodePayloadAMDX variable";
        i += count;
    }
    return "";
}

struct Lowered {
    LoweredNode node;
    Module module;  // the lowered words read back
    std::string text;
};

// Lowers, and checks the invariants every lowered node must satisfy.
Lowered MustLower(const Module& module, const NodeInfo& info, const LoweringOptions& options) {
    Lowered out;
    Result<LoweredNode> lowered = LowerNode(module, info, options);
    EXPECT_TRUE(lowered.ok()) << info.entry_point_name << ": " << (lowered.ok() ? "" : lowered.error().ToString());
    if (!lowered.ok()) return out;
    out.node = *std::move(lowered);
    EXPECT_EQ(FindAmdx(out.node.words), "");
    const std::string validation = ValidateVulkan13(out.node.words);
    EXPECT_EQ(validation, "");
    out.module = LoadWords(out.node.words, info.entry_point_name);
    out.text = Disassemble(out.module);
    if (!validation.empty()) ADD_FAILURE() << out.text;
    // Debugging aid: EXECGRAPH_DUMP_LOWERED=1 prints every lowered module.
    if (std::getenv("EXECGRAPH_DUMP_LOWERED") != nullptr) std::cout << "; lowered " << info.entry_point_name << "\n" << out.text;
    return out;
}

std::string MustFail(const Module& module, const NodeInfo& info, const LoweringOptions& options) {
    Result<LoweredNode> lowered = LowerNode(module, info, options);
    EXPECT_FALSE(lowered.ok()) << info.entry_point_name << " lowered although it should fail";
    return lowered.ok() ? "" : lowered.error().message;
}

NodeInfo MustAnalyze(const Module& module, const std::string& entry, const SpecializationMap* spec = nullptr) {
    Result<NodeInfo> info = AnalyzeNode(module, entry, spec);
    EXPECT_TRUE(info.ok()) << entry << ": " << (info.ok() ? "" : info.error().ToString());
    return info.ok() ? *std::move(info) : NodeInfo();
}

bool Contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::size_t CountOf(const std::string& text, const std::string& needle) {
    std::size_t count = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
    return count;
}

std::vector<std::string> CorpusModules() {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(EXECGRAPH_SPIRV_CORPUS_DIR)) {
        const std::string name = entry.path().filename().string();
        if (entry.path().extension() == ".spvasm" && name != "revision2023_reject.spvasm") names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// ---------------------------------------------------------------------------------------------------------------------
// Every corpus module, plain and optimised.

class CorpusLoweringTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusLoweringTest, LowersToValidVulkanCompute) {
    const Module module = LoadCorpus(GetParam());
    const NodeInfo info = MustAnalyze(module, EntryName(module));
    LoweringOptions options = MakeOptions(module, info);
    const Lowered lowered = MustLower(module, info, options);
    ASSERT_FALSE(lowered.node.words.empty());
    EXPECT_TRUE(Contains(lowered.text, "OpMemoryModel PhysicalStorageBuffer64 GLSL450")) << lowered.text;
    EXPECT_TRUE(Contains(lowered.text, "OpCapability PhysicalStorageBufferAddresses"));
    EXPECT_TRUE(Contains(lowered.text, "OpCapability Int64"));
    EXPECT_FALSE(Contains(lowered.text, "AMDX"));
    const std::array<std::uint32_t, 3> expected_size =
        info.launch == LaunchKind::kThread ? std::array<std::uint32_t, 3>{options.thread_batch_size, 1, 1} : info.local_size;
    EXPECT_EQ(lowered.node.local_size, expected_size);

    options.optimize = true;
    const Lowered optimized = MustLower(module, info, options);
    EXPECT_FALSE(optimized.node.words.empty());
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusLoweringTest, ::testing::ValuesIn(CorpusModules()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                             std::string name = param.param.substr(0, param.param.find('.'));
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

TEST(CorpusLoweringCoverage, CorpusIsPresent) { EXPECT_GE(CorpusModules().size(), 28u); }

// ---------------------------------------------------------------------------------------------------------------------
// AMD's gpu_dispatch compute nodes (and the compute_to_mesh producers, which are compute nodes too).

TEST(AmdFixtureLowering, EveryComputeNodeLowers) {
    std::size_t lowered_count = 0;
    for (const std::string& path : spirv::test::AllFixtures()) {
        const std::string name = std::filesystem::path(path).filename().string();
        if (name.rfind("geometry_", 0) == 0) continue;  // graphics and mesh stages are not nodes we lower
        SCOPED_TRACE(name);
        const Module module = LoadWords(spirv::test::ReadWords(path), name);
        const NodeInfo info = MustAnalyze(module, "main");
        const LoweringOptions options = MakeOptions(module, info);
        const Lowered lowered = MustLower(module, info, options);
        EXPECT_FALSE(lowered.node.words.empty());
        ++lowered_count;
    }
    EXPECT_EQ(lowered_count, 16u) << "fixtures not found under " << EXECGRAPH_AMD_FIXTURES_DIR;
}

TEST(AmdFixtureLowering, ClassifyAllocatesIntoTheComposeArrayThroughItsAlias) {
    const Module module = LoadWords(spirv::test::ReadWords(spirv::test::FixturePath("gpu_dispatch/classify_gpu_enqueue_cs_a.spv")), "classify");
    const NodeInfo info = MustAnalyze(module, "main");
    ASSERT_EQ(info.outputs.size(), 1u);
    const Lowered lowered = MustLower(module, info, MakeOptions(module, info));
    // The Function-variable alias now holds the record-buffer pointer (AliasedPointer), and 16-bit members need the
    // 16-bit storage capability once records live in buffer memory.
    EXPECT_TRUE(Contains(lowered.text, "AliasedPointer")) << lowered.text;
    EXPECT_TRUE(Contains(lowered.text, "OpCapability StorageBuffer16BitAccess"));
    // Invocation-scope allocation: no workgroup sharing.
    EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), 0u);
}

TEST(LoweringFeatures, WorkgroupAllocationIsSharedThroughWorkgroupMemory) {
    const Module module = LoadCorpus("hello_first_node.spvasm");
    const NodeInfo info = MustAnalyze(module, "firstNode");
    ASSERT_EQ(info.outputs.size(), 1u);
    ASSERT_TRUE(info.outputs[0].allocated_at_workgroup_scope);
    const Lowered lowered = MustLower(module, info, MakeOptions(module, info));
    // Invocation 0 allocates, stores the address in workgroup memory; two barriers around the read.
    EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), 2u) << lowered.text;
    std::size_t workgroup_variables = 0;
    for (const Instruction& inst : lowered.module.section(Section::kTypesValues)) {
        workgroup_variables += inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::Workgroup);
    }
    EXPECT_EQ(workgroup_variables, 1u);
    EXPECT_TRUE(Contains(lowered.text, "BuiltIn LocalInvocationIndex"));
}

TEST(AmdFixtureLowering, ComputeToMeshAppendsTheContextToItsPushConstants) {
    const Module module =
        LoadWords(spirv::test::ReadWords(spirv::test::FixturePath("gpu_draw_dispatch/compute_to_mesh_multi_cs.spv")), "compute_to_mesh");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    ASSERT_GT(options.context_offset, 0u) << "expected the fixture to declare push constants";
    options.context_offset += 8;  // any 8-aligned offset past the application's range
    const Lowered lowered = MustLower(module, info, options);
    // Still exactly one push-constant variable, whose block gained a uint64 member at context_offset.
    EXPECT_EQ(CountOf(lowered.text, "PushConstant\n"), 1u) << lowered.text;
    std::uint32_t block = 0;
    for (const Instruction& inst : lowered.module.section(Section::kTypesValues)) {
        if (inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::PushConstant)) {
            block = lowered.module.FindDef(inst.type_id())->Word(1);
        }
    }
    ASSERT_NE(block, 0u);
    const Instruction* block_def = lowered.module.FindDef(block);
    const std::uint32_t last = static_cast<std::uint32_t>(block_def->OperandWordCount()) - 1;
    EXPECT_GT(last, 0u);
    EXPECT_EQ(OffsetOf(lowered.module, block, last), std::optional<std::uint32_t>(options.context_offset));
    const Instruction* member_type = lowered.module.FindDef(block_def->Word(last));
    EXPECT_EQ(member_type->opcode(), Op::OpTypeInt);
    EXPECT_EQ(member_type->Word(0), 64u);

    options.context_offset = 0;  // overlaps the application's push constants
    EXPECT_TRUE(Contains(MustFail(module, info, options), "push constants end at byte"));
}

// ---------------------------------------------------------------------------------------------------------------------
// Features, on the corpus.

Lowered LowerCorpus(const std::string& name, LoweringOptions* options_out = nullptr) {
    const Module module = LoadCorpus(name);
    const NodeInfo info = MustAnalyze(module, EntryName(module));
    LoweringOptions options = MakeOptions(module, info);
    if (options_out != nullptr) {
        options.thread_batch_size = options_out->thread_batch_size;
        *options_out = options;
    }
    return MustLower(module, info, options);
}

TEST(LoweringFeatures, ThreadNodeRunsOneBatchPerWorkgroup) {
    LoweringOptions options;
    options.thread_batch_size = 48;
    const Lowered lowered = LowerCorpus("thread_node.spvasm", &options);
    EXPECT_EQ(lowered.node.local_size, (std::array<std::uint32_t, 3>{48, 1, 1}));
    EXPECT_TRUE(Contains(lowered.text, "LocalSize 48 1 1")) << lowered.text;
    EXPECT_FALSE(Contains(lowered.text, "LocalSize 1 1 1"));
    EXPECT_FALSE(Contains(lowered.text, "CoalescingAMDX"));
}

TEST(LoweringFeatures, NewPushConstantBlockHoldsTheContextAtItsOffset) {
    const Module module = LoadCorpus("broadcast_static_grid.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    options.context_offset = 40;
    const Lowered lowered = MustLower(module, info, options);
    EXPECT_TRUE(Contains(lowered.text, "Offset 40")) << lowered.text;
    EXPECT_EQ(CountOf(lowered.text, "PushConstant\n"), 1u);
    // The static grid's record index divides the linear workgroup by gx*gy*gz = 12 and the split width is 65535.
    EXPECT_TRUE(Contains(lowered.text, "OpConstant %uint 65535") || Contains(lowered.text, " 65535")) << lowered.text;
}

TEST(LoweringFeatures, DynamicGridBinarySearchesTheDirectory) {
    const Lowered lowered = LowerCorpus("broadcast_dynamic_grid_u16x2.spvasm");
    EXPECT_EQ(CountOf(lowered.text, "OpLoopMerge"), 1u) << lowered.text;  // the directory search
    EXPECT_TRUE(Contains(lowered.text, "OpCapability StorageBuffer16BitAccess"));
}

TEST(LoweringFeatures, OutputMemoryBecomesUniformMemory) {
    const Lowered lowered = LowerCorpus("track_finish_writing.spvasm");
    // 0x1148 (AcquireRelease | UniformMemory | WorkgroupMemory | OutputMemory) becomes 0x148 = 328.
    bool found = false;
    for (const Function& function : lowered.module.functions()) {
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) {
                for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) {
                    if (inst.KindOf(i) != OperandKind::IdMemorySemantics) continue;
                    Result<std::uint32_t> value = EvaluateUint32(lowered.module, inst.Word(i));
                    ASSERT_TRUE(value.ok());
                    EXPECT_EQ(*value & 0x1000u, 0u);
                    found |= *value == 0x148u;
                }
            }
        }
    }
    EXPECT_TRUE(found) << lowered.text;
    // Finish-writing: one atomic decrement of the directory entry's counter.
    EXPECT_TRUE(Contains(lowered.text, "OpAtomicISub")) << lowered.text;
}

TEST(LoweringFeatures, AllocationsAppendRecordsWithAtomicsAndEnqueueVanishes) {
    const Lowered lowered = LowerCorpus("output_single_late_constants.spvasm");
    EXPECT_GE(CountOf(lowered.text, "OpAtomicIAdd"), 3u) << lowered.text;  // heap_top, record_count, NodeState.record_count
    EXPECT_TRUE(Contains(lowered.text, "OpAtomicUMax"));                  // heap_high_water
    EXPECT_TRUE(Contains(lowered.text, "OpAtomicOr"));                    // status flags on drops
    EXPECT_TRUE(Contains(lowered.text, "Aligned 4"));
}

TEST(LoweringFeatures, RecursionAndShaderIndexBuiltinsBecomePrivate) {
    for (const char* name : {"recursion_remaining_levels.spvasm", "shader_index_builtin.spvasm", "vkd3d_basic_recursion_recursive.spvasm"}) {
        SCOPED_TRACE(name);
        const Lowered lowered = LowerCorpus(name);
        EXPECT_FALSE(Contains(lowered.text, "RemainingRecursionLevels"));
        EXPECT_FALSE(Contains(lowered.text, "ShaderIndex"));
    }
}

TEST(LoweringFeatures, EveryGlobalTheEntryPointUsesIsInItsInterface) {
    const Lowered lowered = LowerCorpus("hello_first_node.spvasm");
    // Private context, push constants, workgroup sharing of the allocation: SPIR-V 1.4+ lists them all (the
    // validator checks the rule; here we check the lowering really added them).
    std::size_t interface = 0;
    for (const Instruction& inst : lowered.module.section(Section::kEntryPoint)) interface = inst.OperandWordCount() - 2 - inst.StringWordCount(2);
    EXPECT_GE(interface, 10u);
}

// ---------------------------------------------------------------------------------------------------------------------
// Errors: never invalid SPIR-V, a clear message instead.

TEST(LoweringErrors, OptionsMustDescribeEveryOutput) {
    const Module module = LoadCorpus("output_alloc_scopes.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    options.output_record_stride.clear();
    EXPECT_TRUE(Contains(MustFail(module, info, options), "outputs; the node has 1"));
    options = MakeOptions(module, info);
    options.output_record_stride[0] = 2;  // smaller than the record
    EXPECT_TRUE(Contains(MustFail(module, info, options), "does not hold"));
}

TEST(LoweringErrors, ContextOffsetMustBeAligned) {
    const Module module = LoadCorpus("broadcast_static_grid.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    options.context_offset = 4;
    EXPECT_TRUE(Contains(MustFail(module, info, options), "not 8-byte aligned"));
}

TEST(LoweringErrors, ThreadNodeWithBarrierIsRejected) {
    // A thread node whose single invocation synchronises with itself: batching would make the barrier real.
    std::string text = ReadText(CorpusPath("thread_node.spvasm"));
    const std::size_t at = text.find("OpReturn\n");
    ASSERT_NE(at, std::string::npos);
    text.insert(at, "OpControlBarrier %uint_2 %uint_2 %uint_264\n");
    if (!Contains(text, "%uint_2 = OpConstant")) {
        const std::size_t types = text.find("%uint = OpTypeInt 32 0\n");
        ASSERT_NE(types, std::string::npos);
        text.insert(types + std::string("%uint = OpTypeInt 32 0\n").size(), "%uint_2 = OpConstant %uint 2\n");
    }
    if (!Contains(text, "%uint_264 = OpConstant")) {
        const std::size_t types = text.find("%uint = OpTypeInt 32 0\n");
        text.insert(types + std::string("%uint = OpTypeInt 32 0\n").size(), "%uint_264 = OpConstant %uint 264\n");
    }
    const Module module = Assemble(text, "thread_node + barrier");
    const NodeInfo info = MustAnalyze(module, "main");
    ASSERT_EQ(info.launch, LaunchKind::kThread);
    EXPECT_TRUE(Contains(MustFail(module, info, MakeOptions(module, info)), "thread launch node uses workgroup memory"));
}

}  // namespace
}  // namespace execgraph::spirv

namespace execgraph::spirv {
namespace {

TEST(LoweringFeatures, SignedIndexesAndCountsAreConverted) {
    // DXC indexes with signed constants in places; the runtime helpers take uint32.
    std::string text = ReadText(CorpusPath("output_single_late_constants.spvasm"));
    auto replace = [&text](const std::string& from, const std::string& to) {
        const std::size_t at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
    };
    replace("%uint_4 %uint_1 %uint_0\n", "%uint_4 %uint_1 %int_0\n");
    replace("%in %uint_0 %uint_0", "%in %int_0 %uint_0");
    replace("%uint = OpTypeInt 32 0\n", "%uint = OpTypeInt 32 0\n%int = OpTypeInt 32 1\n%int_0 = OpConstant %int 0\n");
    const Module module = Assemble(text, "signed indexes");
    const NodeInfo info = MustAnalyze(module, "main");
    const Lowered lowered = MustLower(module, info, MakeOptions(module, info));
    EXPECT_GE(CountOf(lowered.text, "OpBitcast"), 2u) << lowered.text;
}

}  // namespace
}  // namespace execgraph::spirv
