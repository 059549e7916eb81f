// SPDX-License-Identifier: Apache-2.0
// LowerNode(): every 2024 corpus module and every AMD compute fixture lowers to a module that passes the Vulkan 1.3
// validator and contains no AMDX construct; per feature, structural facts of the output; and the clear errors for
// shapes the lowering does not support.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
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
#include "execgraph/spirv/writer.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

// What the level hand-off (LevelHandOffPass) adds to every lowered node: two workgroup barriers and a loop (and a second
// loop, over a group consumer's members, with LoweringOptions::group_level_hand_off).
constexpr std::size_t kLevelHandOffBarriers = 2;
// An Invocation-visibility allocation reserved once per workgroup: three barriers around the reservation, three more on
// the heap-overflow path, one before the per-entry record counts are added (output tables of up to 256 entries).
constexpr std::size_t kPerWorkgroupReservationBarriers = 7;
constexpr std::size_t kLevelHandOffLoops = 1;

Module Assemble(const std::string& text, const std::string& what) { return spirv::test::AssembleModule(text, what); }

Module LoadCorpus(const std::string& name) { return Assemble(spirv::test::CorpusText(name), name); }

// The text of one of the end-to-end suites' node modules (tests/e2e/modules/NAME.spvasm), "" if missing.
std::string E2eModuleText(const std::string& name) {
    std::ifstream file(std::string(EXECGRAPH_E2E_MODULES_DIR) + "/" + name + ".spvasm");
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

Module LoadWords(const std::vector<std::uint32_t>& words, const std::string& what) {
    Result<Module> module = ReadModule(words);
    EXPECT_TRUE(module.ok()) << what << ": " << (module.ok() ? "" : module.error().ToString());
    return module.ok() ? *std::move(module) : Module();
}

std::string EntryName(const Module& module) {
    for (const Instruction& inst : module.section(Section::kEntryPoint)) return inst.StringAt(2);
    return "";
}

LoweringOptions MakeOptions(const Module& module, const NodeInfo& info) { return spirv::test::MakeLoweringOptions(module, info); }

std::string ValidateVulkan13(const std::vector<std::uint32_t>& words) { return spirv::test::ValidateVulkan13(words); }

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

bool Contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::size_t CountOf(const std::string& text, const std::string& needle) {
    std::size_t count = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
    return count;
}

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
    // The lowering takes subgroup totals from the highest lane's inclusive scan, never a Reduce, which NVIDIA 580
    // miscompiled in lowered nodes (lowering_context.h, docs/reliability.md); the application's own are kept.
    EXPECT_EQ(CountOf(out.text, " Reduce "), CountOf(Disassemble(module), " Reduce ")) << out.text;
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
    // Thread nodes run a batch per workgroup, nodes whose other invocations have nothing to do one invocation.
    const std::array<std::uint32_t, 3> expected_size =
        info.launch == LaunchKind::kThread              ? std::array<std::uint32_t, 3>{options.thread_batch_size, 1, 1}
        : lowered.node.only_invocation_0_runs_node_code ? std::array<std::uint32_t, 3>{1, 1, 1}
                                                        : info.local_size;
    EXPECT_EQ(lowered.node.local_size, expected_size);
    EXPECT_TRUE(Contains(lowered.text, "LocalSize " + std::to_string(expected_size[0]) + " " + std::to_string(expected_size[1]) +
                                           " " + std::to_string(expected_size[2])))
        << lowered.text;

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
    // Invocation-scope allocation at the top level of the body: reserved once per workgroup (LowerOutputsPass), plus the
    // level hand-off's two barriers (LevelHandOffPass).
    EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), kPerWorkgroupReservationBarriers + kLevelHandOffBarriers);
}

TEST(LoweringFeatures, WorkgroupAllocationIsSharedThroughWorkgroupMemory) {
    const Module module = LoadCorpus("hello_first_node.spvasm");
    const NodeInfo info = MustAnalyze(module, "firstNode");
    ASSERT_EQ(info.outputs.size(), 1u);
    ASSERT_TRUE(info.outputs[0].allocated_at_workgroup_scope);
    const Lowered lowered = MustLower(module, info, MakeOptions(module, info));
    // Invocation 0 allocates, stores the address in workgroup memory; two barriers around the read (and the level
    // hand-off's, with its own workgroup variable).
    EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), 2u + kLevelHandOffBarriers) << lowered.text;
    std::size_t workgroup_variables = 0;
    for (const Instruction& inst : lowered.module.section(Section::kTypesValues)) {
        workgroup_variables += inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::Workgroup);
    }
    EXPECT_EQ(workgroup_variables, 2u);
    EXPECT_TRUE(Contains(lowered.text, "BuiltIn LocalInvocationIndex"));
}

// AMD's classify shaders that allocate one group record per workgroup ("de" and "fe" variants) write it only under
// SV_GroupIndex == 0: invocation 0 keeps the address, so the allocation adds no barrier (the shader's own two and the
// level hand-off's remain) and no workgroup variable.
TEST(AmdFixtureLowering, ClassifyGroupRecordWrittenByInvocationZeroNeedsNoBarrier) {
    for (const char* name : {"classify_gpu_enqueue_cs_de.spv", "classify_material_map_gpu_enqueue_cs_fe.spv"}) {
        SCOPED_TRACE(name);
        const Module module =
            LoadWords(spirv::test::ReadWords(spirv::test::FixturePath(std::string("gpu_dispatch/") + name)), name);
        const NodeInfo info = MustAnalyze(module, "main");
        ASSERT_EQ(info.outputs.size(), 1u);
        ASSERT_TRUE(info.outputs[0].allocated_at_workgroup_scope);
        std::size_t shader_barriers = 0;
        module.ForEachInstruction([&](const Instruction& inst) { shader_barriers += inst.opcode() == Op::OpControlBarrier; });
        const Lowered lowered = MustLower(module, info, MakeOptions(module, info));
        EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), shader_barriers + kLevelHandOffBarriers) << lowered.text;
    }
}

// Which Workgroup-visibility allocations keep their address in invocation 0 (LeaderOnlyAllocations): a node of
// @SIZE@ invocations allocates one group record; @GUARD@ defines %writes, the condition under which the record's first
// member is stored, and @AFTER@ runs after that selection, in every invocation.
constexpr char kOneWriterGroupRecord[] = R"(
               OpCapability Shader
               OpCapability ShaderEnqueueAMDX
               OpExtension "SPV_AMDX_shader_enqueue"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %in %gl_LocalInvocationIndex %gl_LocalInvocationID
               OpExecutionMode %main LocalSize @SIZE@
               OpExecutionModeId %main ShaderIndexAMDX %uint_0
               OpExecutionModeId %main StaticNumWorkgroupsAMDX %uint_4 %uint_1 %uint_1
               OpDecorate %gl_LocalInvocationIndex BuiltIn LocalInvocationIndex
               OpDecorate %gl_LocalInvocationID BuiltIn LocalInvocationId
               OpMemberDecorate %InRec 0 Offset 0
               OpMemberDecorate %OutRec 0 Offset 0
               OpMemberDecorate %OutRec 1 Offset 4
               OpDecorateId %in_arr NodeMaxPayloadsAMDX %uint_1
               OpDecorateId %out_arr PayloadNodeNameAMDX %str_out
               OpDecorateId %out_arr NodeMaxPayloadsAMDX %uint_1
       %void = OpTypeVoid
       %bool = OpTypeBool
       %true = OpConstantTrue %bool
       %uint = OpTypeInt 32 0
     %v3uint = OpTypeVector %uint 3
     %v3bool = OpTypeVector %bool 3
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_4 = OpConstant %uint 4
    %uint3_0 = OpConstantComposite %v3uint %uint_0 %uint_0 %uint_0
    %str_out = OpConstantStringAMDX "out"
      %InRec = OpTypeStruct %uint
     %in_arr = OpTypeNodePayloadArrayAMDX %InRec
     %OutRec = OpTypeStruct %uint %uint
    %out_arr = OpTypeNodePayloadArrayAMDX %OutRec
%_ptr_NodePayloadAMDX_in_arr = OpTypePointer NodePayloadAMDX %in_arr
%_ptr_NodePayloadAMDX_out_arr = OpTypePointer NodePayloadAMDX %out_arr
%_ptr_NodePayloadAMDX_uint = OpTypePointer NodePayloadAMDX %uint
%_ptr_Function_out_arr = OpTypePointer Function %out_arr
%_ptr_Function_uint = OpTypePointer Function %uint
%_ptr_Input_uint = OpTypePointer Input %uint
%_ptr_Input_v3uint = OpTypePointer Input %v3uint
         %fn = OpTypeFunction %void
         %in = OpVariable %_ptr_NodePayloadAMDX_in_arr NodePayloadAMDX
%gl_LocalInvocationIndex = OpVariable %_ptr_Input_uint Input
%gl_LocalInvocationID = OpVariable %_ptr_Input_v3uint Input
       %main = OpFunction %void None %fn
      %entry = OpLabel
    %records = OpVariable %_ptr_Function_out_arr Function
        %tid = OpLoad %uint %gl_LocalInvocationIndex
       %lid3 = OpLoad %v3uint %gl_LocalInvocationID
       %lidx = OpCompositeExtract %uint %lid3 0
          %p = OpAllocateNodePayloadsAMDX %_ptr_NodePayloadAMDX_out_arr %uint_2 %uint_1 %uint_0
          %v = OpLoad %out_arr %p
               OpStore %records %v
@GUARD@
               OpSelectionMerge %done None
               OpBranchConditional %writes %write %done
      %write = OpLabel
      %first = OpAccessChain %_ptr_Function_uint %records %uint_0 %uint_0
               OpStore %first %tid
               OpBranch %done
       %done = OpLabel
@AFTER@
               OpEnqueueNodePayloadsAMDX %records
               OpReturn
               OpFunctionEnd
)";

// The workgroup barriers the allocation of kOneWriterGroupRecord adds: 0 where invocation 0 keeps the address, 2 where
// it shares it (DefineWorkgroupAllocate).
std::size_t GroupRecordBarriers(const std::string& size, const std::string& guard, const std::string& after = "") {
    std::string text = kOneWriterGroupRecord;
    text.replace(text.find("@SIZE@"), 6, size);
    text.replace(text.find("@GUARD@"), 7, guard);
    text.replace(text.find("@AFTER@"), 7, after);
    const Module module = Assemble(text, guard);
    const NodeInfo info = MustAnalyze(module, "main");
    const Lowered lowered = MustLower(module, info, MakeOptions(module, info));
    const std::size_t barriers = CountOf(lowered.text, "OpControlBarrier");
    // The level hand-off's two, except in a workgroup of one invocation, whose hand-off takes none.
    const std::size_t hand_off_barriers = lowered.text.find("LocalSize 1 1 1") != std::string::npos ? 0 : kLevelHandOffBarriers;
    EXPECT_GE(barriers, hand_off_barriers) << lowered.text;
    return barriers - hand_off_barriers;
}

// Whether invocations other than 0 skip the node's code (OnlyInvocationZeroHasEffects): a node of 64 invocations
// whose group record invocation @WRITER@ writes; @ALL@ runs in every invocation before that, @LEADER@ in the writer's
// block. %pure returns a value, %impure counts in the storage buffer.
constexpr char kLeaderEffectsNode[] = R"(
               OpCapability Shader
               OpCapability ShaderEnqueueAMDX
               OpCapability GroupNonUniform
               OpCapability GroupNonUniformArithmetic
               OpExtension "SPV_AMDX_shader_enqueue"
       %glsl = OpExtInstImport "GLSL.std.450"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %in %gl_LocalInvocationIndex %shared %UAV
               OpExecutionMode %main LocalSize 64 1 1
               OpExecutionModeId %main ShaderIndexAMDX %uint_0
               OpExecutionModeId %main StaticNumWorkgroupsAMDX %uint_4 %uint_1 %uint_1
               OpDecorate %gl_LocalInvocationIndex BuiltIn LocalInvocationIndex
               OpMemberDecorate %Rec 0 Offset 0
               OpDecorateId %in_arr NodeMaxPayloadsAMDX %uint_1
               OpDecorateId %out_arr PayloadNodeNameAMDX %str_out
               OpDecorateId %out_arr NodeMaxPayloadsAMDX %uint_1
               OpDecorate %_runtimearr_uint ArrayStride 4
               OpMemberDecorate %Buffer 0 Offset 0
               OpDecorate %Buffer Block
               OpDecorate %UAV DescriptorSet 0
               OpDecorate %UAV Binding 0
       %void = OpTypeVoid
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_4 = OpConstant %uint 4
   %uint_264 = OpConstant %uint 264
%uint_writer = OpConstant %uint @WRITER@
    %str_out = OpConstantStringAMDX "out"
        %Rec = OpTypeStruct %uint
     %in_arr = OpTypeNodePayloadArrayAMDX %Rec
    %out_arr = OpTypeNodePayloadArrayAMDX %Rec
%_ptr_NodePayloadAMDX_in_arr = OpTypePointer NodePayloadAMDX %in_arr
%_ptr_NodePayloadAMDX_out_arr = OpTypePointer NodePayloadAMDX %out_arr
%_ptr_NodePayloadAMDX_uint = OpTypePointer NodePayloadAMDX %uint
%_ptr_Function_uint = OpTypePointer Function %uint
%_ptr_Workgroup_uint = OpTypePointer Workgroup %uint
%_ptr_Input_uint = OpTypePointer Input %uint
%_runtimearr_uint = OpTypeRuntimeArray %uint
     %Buffer = OpTypeStruct %_runtimearr_uint
%_ptr_StorageBuffer_Buffer = OpTypePointer StorageBuffer %Buffer
%_ptr_StorageBuffer_uint = OpTypePointer StorageBuffer %uint
         %fn = OpTypeFunction %void
    %fn_uint = OpTypeFunction %uint %uint
         %in = OpVariable %_ptr_NodePayloadAMDX_in_arr NodePayloadAMDX
%gl_LocalInvocationIndex = OpVariable %_ptr_Input_uint Input
     %shared = OpVariable %_ptr_Workgroup_uint Workgroup
        %UAV = OpVariable %_ptr_StorageBuffer_Buffer StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
      %local = OpVariable %_ptr_Function_uint Function
        %tid = OpLoad %uint %gl_LocalInvocationIndex
   %base_ptr = OpAccessChain %_ptr_NodePayloadAMDX_uint %in %uint_0 %uint_0
       %base = OpLoad %uint %base_ptr
       %slot = OpAccessChain %_ptr_StorageBuffer_uint %UAV %uint_0 %tid
          %p = OpAllocateNodePayloadsAMDX %_ptr_NodePayloadAMDX_out_arr %uint_2 %uint_1 %uint_0
@ALL@
     %writes = OpIEqual %bool %tid %uint_writer
               OpSelectionMerge %done None
               OpBranchConditional %writes %write %done
      %write = OpLabel
        %dst = OpAccessChain %_ptr_NodePayloadAMDX_uint %p %uint_0 %uint_0
               OpStore %dst %base
@LEADER@
               OpBranch %done
       %done = OpLabel
               OpEnqueueNodePayloadsAMDX %p
               OpReturn
               OpFunctionEnd
       %pure = OpFunction %uint None %fn_uint
     %pure_x = OpFunctionParameter %uint
 %pure_entry = OpLabel
 %pure_twice = OpIAdd %uint %pure_x %pure_x
               OpReturnValue %pure_twice
               OpFunctionEnd
     %impure = OpFunction %uint None %fn_uint
   %impure_x = OpFunctionParameter %uint
%impure_entry = OpLabel
%impure_slot = OpAccessChain %_ptr_StorageBuffer_uint %UAV %uint_0 %impure_x
%impure_old = OpAtomicIAdd %uint %impure_slot %uint_1 %uint_0 %uint_1
               OpReturnValue %impure_old
               OpFunctionEnd
)";

bool OnlyInvocationZeroRuns(const std::string& all, const std::string& leader = "", uint32_t writer = 0) {
    std::string text = kLeaderEffectsNode;
    text.replace(text.find("@WRITER@"), 8, std::to_string(writer));
    text.replace(text.find("@ALL@"), 5, all);
    text.replace(text.find("@LEADER@"), 8, leader);
    const Module module = Assemble(text, all + leader);
    const NodeInfo info = MustAnalyze(module, "main");
    const Lowered lowered = MustLower(module, info, MakeOptions(module, info));
    return lowered.node.only_invocation_0_runs_node_code;
}

TEST(LoweringFeatures, InvocationsWithNothingToDoSkipTheNodesCode) {
    // Computing, loading and writing one's own variables has no effect another invocation could see.
    EXPECT_TRUE(OnlyInvocationZeroRuns(""));
    EXPECT_TRUE(OnlyInvocationZeroRuns("%m = OpExtInst %uint %glsl UMin %base %tid\nOpStore %local %m\n%l = OpLoad %uint %slot"));
    EXPECT_TRUE(OnlyInvocationZeroRuns("%twice = OpFunctionCall %uint %pure %base"));
    // Invocation 0's own effects are its business.
    EXPECT_TRUE(OnlyInvocationZeroRuns("", "%c = OpAtomicIAdd %uint %slot %uint_1 %uint_0 %uint_1\nOpStore %shared %base"));
    EXPECT_TRUE(OnlyInvocationZeroRuns("", "%r = OpFunctionCall %uint %impure %base"));
    // Anything another invocation, the application or a later level could observe keeps every invocation.
    EXPECT_FALSE(OnlyInvocationZeroRuns("%c = OpAtomicIAdd %uint %slot %uint_1 %uint_0 %uint_1"));
    EXPECT_FALSE(OnlyInvocationZeroRuns("OpStore %slot %base"));
    EXPECT_FALSE(OnlyInvocationZeroRuns("OpStore %shared %tid"));
    EXPECT_FALSE(OnlyInvocationZeroRuns("OpControlBarrier %uint_2 %uint_2 %uint_264"));
    EXPECT_FALSE(OnlyInvocationZeroRuns("OpMemoryBarrier %uint_2 %uint_264"));
    EXPECT_FALSE(OnlyInvocationZeroRuns("%sum = OpGroupNonUniformIAdd %uint %uint_3 Reduce %tid"));
    EXPECT_FALSE(OnlyInvocationZeroRuns("%r = OpFunctionCall %uint %impure %base"));
    // A record another invocation writes needs that invocation.
    EXPECT_FALSE(OnlyInvocationZeroRuns("", "", 1));
}

// Such a node runs workgroups of one invocation (OneInvocationWorkgroupPass): the lowered LocalSize is 1 x 1 x 1. Not
// where invocation 0 could tell: a NumSubgroups built-in (8 or 1) or a WorkgroupSize built-in constant (which would
// override LocalSize) keeps the node's 64 invocations, and so does a node whose other invocations have work.
std::string LoweredLocalSizeOfLeaderEffectsNode(const std::string& builtin = "", const std::string& declaration = "",
                                                const std::string& all = "") {
    std::string text = kLeaderEffectsNode;
    text.replace(text.find("@WRITER@"), 8, "0");
    text.replace(text.find("@ALL@"), 5, all);
    text.replace(text.find("@LEADER@"), 8, "");
    if (!builtin.empty()) {
        const std::string decorations = "               OpDecorate %gl_LocalInvocationIndex BuiltIn LocalInvocationIndex\n";
        text.insert(text.find(decorations) + decorations.size(), "OpDecorate %extra BuiltIn " + builtin + "\n");
        const std::string globals = "%gl_LocalInvocationIndex = OpVariable %_ptr_Input_uint Input\n";
        text.insert(text.find(globals) + globals.size(), declaration + "\n");
    }
    const Module module = Assemble(text, builtin + all);
    const NodeInfo info = MustAnalyze(module, "main");
    const Lowered lowered = MustLower(module, info, MakeOptions(module, info));
    const std::size_t at = lowered.text.find("LocalSize ");
    return at == std::string::npos ? "" : lowered.text.substr(at, lowered.text.find('\n', at) - at);
}

TEST(LoweringFeatures, NodeWhoseOtherInvocationsHaveNothingToDoRunsWorkgroupsOfOneInvocation) {
    EXPECT_EQ(LoweredLocalSizeOfLeaderEffectsNode(), "LocalSize 1 1 1");
    // Declared, even unread, these keep the workgroup: their values would differ.
    EXPECT_EQ(LoweredLocalSizeOfLeaderEffectsNode("NumSubgroups", "%extra = OpVariable %_ptr_Input_uint Input"),
              "LocalSize 64 1 1");
    EXPECT_EQ(LoweredLocalSizeOfLeaderEffectsNode("WorkgroupSize",
                                                  "%uint_64 = OpConstant %uint 64\n%v3uint = OpTypeVector %uint 3\n"
                                                  "%extra = OpConstantComposite %v3uint %uint_64 %uint_1 %uint_1"),
              "LocalSize 64 1 1");
    EXPECT_EQ(LoweredLocalSizeOfLeaderEffectsNode("", "", "OpStore %slot %base"), "LocalSize 64 1 1");
}

// A node lowered without the level hand-off (LoweringOptions::level_hand_off, for nodes that never precede a direct
// level) has none of its code: no barrier, no count on HalfHeader::level_pass_done, and for a node that only invocation
// 0 runs, a wrapper that just calls the node's code in invocation 0 (the workgroup keeps one invocation). The options
// record says which it is, so that a replacement lowered the other way is refused.
TEST(LoweringFeatures, NodeLoweredWithoutTheLevelHandOffHasNoneOfItsCode) {
    std::string text = kLeaderEffectsNode;
    text.replace(text.find("@WRITER@"), 8, "0");
    text.replace(text.find("@ALL@"), 5, "");
    text.replace(text.find("@LEADER@"), 8, "");
    const Module module = Assemble(text, "leader effects");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    const Lowered with = MustLower(module, info, options);
    options.level_hand_off = false;
    const Lowered without = MustLower(module, info, options);
    // The node runs workgroups of one invocation, so even its hand-off takes no workgroup barrier.
    EXPECT_NE(with.text.find("LocalSize 1 1 1"), std::string::npos) << with.text;
    EXPECT_EQ(CountOf(with.text, "OpControlBarrier"), 0u) << with.text;
    EXPECT_EQ(CountOf(without.text, "OpControlBarrier"), 0u) << without.text;
    EXPECT_EQ(CountOf(without.text, "OpLoopMerge") + kLevelHandOffLoops, CountOf(with.text, "OpLoopMerge"));
    EXPECT_LT(CountOf(without.text, "OpAtomicIAdd"), CountOf(with.text, "OpAtomicIAdd"));
    EXPECT_NE(without.text.find("LocalSize 1 1 1"), std::string::npos) << without.text;
    EXPECT_EQ(CountOf(without.text, "OpFunctionCall"), CountOf(with.text, "OpFunctionCall")) << "the wrapper stays" << without.text;
    EXPECT_NE(with.text.find("level_hand_off=1"), std::string::npos);
    EXPECT_NE(without.text.find("level_hand_off=0"), std::string::npos);
}

TEST(LoweringFeatures, GroupRecordOnlyInvocationZeroAccessesKeepsItsAddressThere) {
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %tid %uint_0"), 0u);
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %uint_0 %tid"), 0u);
    // LocalInvocationId.x == 0 singles out invocation 0 only in a workgroup one row wide.
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %lidx %uint_0"), 0u);
    EXPECT_EQ(GroupRecordBarriers("8 8 1", "%writes = OpIEqual %bool %lidx %uint_0"), 2u);
    // A conjunction with the leader test is true in invocation 0 at most.
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%is0 = OpIEqual %bool %tid %uint_0\n%writes = OpLogicalAnd %bool %true %is0"), 0u);
    // In two dimensions, both components: in one condition, as all(LocalInvocationId == 0), or in nested selections (HLSL
    // 2021 short-circuits `gtid.x == 0 && gtid.y == 0`). Not where a dimension larger than one is left out.
    const std::string x_and_y =
        "%y = OpCompositeExtract %uint %lid3 1\n%x0 = OpIEqual %bool %lidx %uint_0\n%y0 = OpIEqual %bool %y %uint_0\n"
        "%writes = OpLogicalAnd %bool %x0 %y0";
    EXPECT_EQ(GroupRecordBarriers("8 8 1", x_and_y), 0u);
    EXPECT_EQ(GroupRecordBarriers("8 8 2", x_and_y), 2u);
    EXPECT_EQ(GroupRecordBarriers("8 8 2", "%eq = OpIEqual %v3bool %lid3 %uint3_0\n%writes = OpAll %bool %eq"), 0u);
    const std::string nested_outer =
        "%x0 = OpIEqual %bool %lidx %uint_0\nOpSelectionMerge %outer None\nOpBranchConditional %x0 %inner %outer\n"
        "%inner = OpLabel\n%y = OpCompositeExtract %uint %lid3 1\n%writes = OpIEqual %bool %y %uint_0";
    EXPECT_EQ(GroupRecordBarriers("8 8 1", nested_outer, "OpBranch %outer\n%outer = OpLabel"), 0u);
    EXPECT_EQ(GroupRecordBarriers("8 8 2", nested_outer, "OpBranch %outer\n%outer = OpLabel"), 2u);
    // In a workgroup of one invocation, whatever the guard.
    EXPECT_EQ(GroupRecordBarriers("1 1 1", "%writes = OpIEqual %bool %tid %uint_1"), 0u);
    // Reading the pointer out of its alias outside the region is no access to the record.
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %tid %uint_0", "%reloaded = OpLoad %out_arr %records"), 0u);
}

TEST(LoweringFeatures, GroupRecordOtherInvocationsAccessSharesItsAddress) {
    // Another writer, every invocation, or any invocation but 0.
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %tid %uint_1"), 2u);
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %tid %tid"), 2u);
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpINotEqual %bool %tid %uint_0"), 2u);
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%is0 = OpIEqual %bool %tid %uint_0\n%writes = OpLogicalOr %bool %true %is0"), 2u);
    // A store or a load outside the guarded region.
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %tid %uint_0",
                                  "%second = OpAccessChain %_ptr_Function_uint %records %uint_0 %uint_1\nOpStore %second %tid"),
              2u);
    EXPECT_EQ(
        GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %tid %uint_0",
                            "%second = OpAccessChain %_ptr_Function_uint %records %uint_0 %uint_1\n%read = OpLoad %uint %second"),
        2u);
    // The pointer itself going anywhere the analysis does not follow.
    EXPECT_EQ(GroupRecordBarriers("64 1 1", "%writes = OpIEqual %bool %tid %uint_0",
                                  "%either = OpSelect %out_arr %true %v %v\n%copy = OpCopyObject %out_arr %either"),
              2u);
}

TEST(AmdFixtureLowering, ComputeToMeshAppendsTheContextToItsPushConstants) {
    const Module module =
        LoadWords(spirv::test::ReadWords(spirv::test::FixturePath("gpu_draw_dispatch/compute_to_mesh_multi_cs.spv")), "compute_to_mesh");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    ASSERT_GT(options.context_offset, 0u) << "expected the fixture to declare push constants";
    options.context_offset += 8;  // any 8-aligned offset past the application's range
    const Lowered lowered = MustLower(module, info, options);
    // Still exactly one push-constant variable, whose block gained NodePushContext's members: a uint64 at context_offset,
    // then six uint32 words (node index, output-table base, the level's halves, level, next consumer).
    EXPECT_EQ(CountOf(lowered.text, "PushConstant\n"), 1u) << lowered.text;
    std::uint32_t block = 0;
    for (const Instruction& inst : lowered.module.section(Section::kTypesValues)) {
        if (inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::PushConstant)) {
            block = lowered.module.FindDef(inst.type_id())->Word(1);
        }
    }
    ASSERT_NE(block, 0u);
    const Instruction* block_def = lowered.module.FindDef(block);
    constexpr std::uint32_t kContextMembers = 7;
    static_assert(sizeof(runtime::NodePushContext) == 8 + 4 * (kContextMembers - 1));
    const std::uint32_t context = static_cast<std::uint32_t>(block_def->OperandWordCount()) - kContextMembers;
    EXPECT_GT(context, 0u);
    for (std::uint32_t member = 0; member < kContextMembers; ++member) {
        EXPECT_EQ(OffsetOf(lowered.module, block, context + member),
                  std::optional<std::uint32_t>(options.context_offset + (member == 0 ? 0 : 4 + 4 * member)));
        const Instruction* member_type = lowered.module.FindDef(block_def->Word(context + member));
        EXPECT_EQ(member_type->opcode(), Op::OpTypeInt);
        EXPECT_EQ(member_type->Word(0), member == 0 ? 64u : 32u);
    }

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
    // The directory search, the prologue's search for the member of a dispatch group, and the level hand-off's loop
    // over the node states it clears.
    EXPECT_EQ(CountOf(lowered.text, "OpLoopMerge"), 2u + kLevelHandOffLoops) << lowered.text;
    EXPECT_TRUE(Contains(lowered.text, "OpCapability StorageBuffer16BitAccess"));
}

// A node lowered for a module no other node shares (LoweringOptions::dispatch_group_member unset) is never dispatched
// as a group: its prologue has no branch for a group dispatch (the member search of a dynamic grid's group, the group's
// directory range for static broadcast members), hence fewer selections and loads, and the options record says so.
TEST(LoweringFeatures, NodeThatIsNoDispatchGroupMemberHasNoGroupCode) {
    for (const char* corpus : {"broadcast_dynamic_grid_u16x2.spvasm", "broadcast_static_grid.spvasm"}) {
        SCOPED_TRACE(corpus);
        const Module module = LoadCorpus(corpus);
        const NodeInfo info = MustAnalyze(module, "main");
        LoweringOptions options = MakeOptions(module, info);
        const Lowered member = MustLower(module, info, options);
        options.dispatch_group_member = false;
        const Lowered alone = MustLower(module, info, options);
        EXPECT_LT(CountOf(alone.text, "OpSelectionMerge"), CountOf(member.text, "OpSelectionMerge")) << alone.text;
        EXPECT_LT(CountOf(alone.text, "OpLoad"), CountOf(member.text, "OpLoad")) << alone.text;
        EXPECT_TRUE(Contains(alone.text, "dispatch_group_member=0"));
        EXPECT_TRUE(Contains(member.text, "dispatch_group_member=1"));
        if (info.launch == LaunchKind::kBroadcastDynamic) {
            EXPECT_EQ(CountOf(alone.text, "OpLoopMerge") + 1, CountOf(member.text, "OpLoopMerge")) << "no member search";
        }
    }
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
    EXPECT_TRUE(Contains(lowered.text, "OpAtomicUMax"));                  // HalfHeader::level_pass_workgroups
    EXPECT_TRUE(Contains(lowered.text, "OpAtomicOr"));                    // status flags on drops
    EXPECT_TRUE(Contains(lowered.text, "Aligned 4"));
}

// Issue 7: where one invocation runs every allocation (here a thread node in batches of one, as a chain step's workgroup
// of one invocation), its subgroup has one lane: the allocation takes its ranges straight from the atomics' results,
// with no subgroup operation between them and the stores that wait for them. In batches of 32 it scans and shuffles.
TEST(LoweringFeatures, AllocationOfAOneInvocationWorkgroupUsesNoSubgroupOperations) {
    for (std::uint32_t batch : {1u, 32u}) {
        SCOPED_TRACE("thread batch " + std::to_string(batch));
        LoweringOptions options;
        options.thread_batch_size = batch;
        const Lowered lowered = LowerCorpus("hello_second_node.spvasm", &options);
        std::size_t group_operations = 0;
        for (const Function& function : lowered.module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    const std::uint32_t opcode = static_cast<std::uint32_t>(inst.opcode());
                    group_operations += opcode >= static_cast<std::uint32_t>(Op::OpGroupNonUniformElect) &&
                                        opcode <= static_cast<std::uint32_t>(Op::OpGroupNonUniformQuadSwap);
                }
            }
        }
        if (batch == 1) {
            EXPECT_EQ(group_operations, 0u) << lowered.text;
        } else {
            EXPECT_GE(CountOf(lowered.text, " InclusiveScan "), 2u) << lowered.text;
            EXPECT_GE(CountOf(lowered.text, "OpGroupNonUniformShuffle"), 3u) << lowered.text;
        }
        // The reservation and the target's count stay atomics either way.
        EXPECT_GE(CountOf(lowered.text, "OpAtomicIAdd"), 2u) << lowered.text;
    }
}

// Issue 7: where an allocation is not provably in workgroup-uniform control flow (a thread node, or a broadcast node
// allocating under a branch), the per-half counters are bumped once per subgroup. The highest active lane, whose
// inclusive scan is the subgroup's total, adds it to the heap top and to the record count; the lanes' ranges come from
// their inclusive scans less their own values (never a Reduce: NVIDIA 580 miscompiled it, lowering_context.h). No
// workgroup barrier: the invocations may not all get there.
TEST(LoweringFeatures, DivergentAllocationAggregatesTheHalfCountersPerSubgroup) {
    for (const char* name : {"hello_second_node.spvasm", "divergent_allocate.spvasm"}) {
        SCOPED_TRACE(name);
        const Lowered lowered = LowerCorpus(name);
        EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), kLevelHandOffBarriers) << lowered.text;
        EXPECT_TRUE(Contains(lowered.text, "OpCapability GroupNonUniformArithmetic")) << lowered.text;
        // One output: one allocate function. It elects next to each use: the next level pass's size, the target's count.
        EXPECT_EQ(CountOf(lowered.text, "OpGroupNonUniformElect"), 2u) << lowered.text;
        // In the allocate function (the prologue's searches use subgroup operations too): the heap and record ranges'
        // scans and the target check. The end of the subgroup's records (which sizes the next level pass) and what the
        // list holds of them (the target's count) follow from the record range's base and total.
        std::map<Op, std::size_t> in_allocate;
        std::size_t inclusive_scans = 0;
        for (const Function& function : lowered.module.functions()) {
            bool allocates = false;
            std::map<Op, std::size_t> ops;
            std::size_t scans = 0;
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    allocates |= inst.opcode() == Op::OpGroupNonUniformElect;
                    ++ops[inst.opcode()];
                    scans += inst.opcode() == Op::OpGroupNonUniformIAdd &&
                             inst.Word(1) == static_cast<std::uint32_t>(GroupOperation::InclusiveScan);
                }
            }
            if (!allocates) continue;
            in_allocate = ops;
            inclusive_scans = scans;
        }
        EXPECT_EQ(inclusive_scans, 2u) << lowered.text;
        EXPECT_EQ(in_allocate[Op::OpGroupNonUniformUMax], 0u) << lowered.text;
        EXPECT_EQ(in_allocate[Op::OpGroupNonUniformAllEqual], 1u) << lowered.text;
        // The heap and record ranges each find their highest active lane with a ballot, and shuffle its base and total
        // to the other lanes.
        EXPECT_EQ(in_allocate[Op::OpGroupNonUniformBallotFindMSB], 2u) << lowered.text;
        EXPECT_EQ(in_allocate[Op::OpGroupNonUniformShuffle], 4u) << lowered.text;
        EXPECT_EQ(CountOf(lowered.text, " Reduce "), 0u) << lowered.text;
        EXPECT_GE(CountOf(lowered.text, " InclusiveScan "), 2u) << lowered.text;  // how the text names group operations
        std::unordered_set<std::uint32_t> highest_lanes, is_highest_lane, inclusive, nonzero_total, highest_with_total;
        std::unordered_map<std::uint32_t, std::uint32_t> guarded_by;  // block label -> condition of the branch into it
        for (const Function& function : lowered.module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    if (inst.opcode() == Op::OpGroupNonUniformBallotFindMSB) highest_lanes.insert(inst.result_id());
                    if (inst.opcode() == Op::OpIEqual &&
                        (highest_lanes.count(inst.Word(0)) != 0 || highest_lanes.count(inst.Word(1)) != 0)) {
                        is_highest_lane.insert(inst.result_id());
                    }
                    if (inst.opcode() == Op::OpGroupNonUniformIAdd &&
                        inst.Word(1) == static_cast<std::uint32_t>(GroupOperation::InclusiveScan)) {
                        inclusive.insert(inst.result_id());
                    }
                    if (inst.opcode() == Op::OpINotEqual && (inclusive.count(inst.Word(0)) != 0 || inclusive.count(inst.Word(1)) != 0)) {
                        nonzero_total.insert(inst.result_id());
                    }
                    if (inst.opcode() == Op::OpLogicalAnd && is_highest_lane.count(inst.Word(0)) != 0 &&
                        nonzero_total.count(inst.Word(1)) != 0) {
                        highest_with_total.insert(inst.result_id());
                    }
                    if (inst.opcode() == Op::OpBranchConditional) guarded_by[inst.Word(1)] = inst.Word(0);
                }
            }
        }
        // Exactly two atomics add a subgroup total (heap top, then record count): an inclusive scan, on the highest lane,
        // and only where that total is not zero (a subgroup that asks for nothing takes no atomic).
        std::size_t aggregated = 0;
        for (const Function& function : lowered.module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    if (inst.opcode() != Op::OpAtomicIAdd || inclusive.count(inst.Word(3)) == 0) continue;
                    ++aggregated;
                    EXPECT_EQ(highest_with_total.count(guarded_by[block.label_id()]), 1u)
                        << "atomic add of a subgroup total outside the highest lane, or of a zero total";
                }
            }
        }
        EXPECT_EQ(aggregated, 2u) << lowered.text;
    }
}

// Issue 7: an allocation at the top level of a broadcast or coalescing node's body (all invocations of the workgroup get
// there, as facts §16 requires) reserves once per workgroup: subgroups take their ranges with workgroup-memory atomics,
// invocation 0 adds the workgroup's totals to the heap top and the record count, and each output-table entry's records
// are counted in workgroup memory and added to the target node once.
TEST(LoweringFeatures, UniformAllocationReservesOncePerWorkgroup) {
    const Lowered lowered = LowerCorpus("output_single_late_constants.spvasm");
    EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), kPerWorkgroupReservationBarriers + kLevelHandOffBarriers) << lowered.text;
    EXPECT_EQ(CountOf(lowered.text, "OpGroupNonUniformAllEqual"), 0u) << lowered.text;  // per-entry counts instead
    std::unordered_set<std::uint32_t> workgroup_pointers;  // Workgroup variables and access chains into them
    std::unordered_set<std::uint32_t> workgroup_atomic_results;
    for (const Instruction& inst : lowered.module.section(Section::kTypesValues)) {
        if (inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::Workgroup)) {
            workgroup_pointers.insert(inst.result_id());
        }
    }
    std::size_t global_adds_of_workgroup_totals = 0;
    for (const Function& function : lowered.module.functions()) {
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) {
                if (inst.opcode() == Op::OpAccessChain && workgroup_pointers.count(inst.Word(0)) != 0) workgroup_pointers.insert(inst.result_id());
                if (inst.opcode() != Op::OpAtomicIAdd) continue;
                if (workgroup_pointers.count(inst.Word(0)) != 0) {
                    workgroup_atomic_results.insert(inst.result_id());
                    EXPECT_EQ(*EvaluateUint32(lowered.module, inst.Word(1)), 2u) << "workgroup memory atomic at Workgroup scope";
                } else if (workgroup_atomic_results.count(inst.Word(3)) != 0) {
                    ++global_adds_of_workgroup_totals;
                }
            }
        }
    }
    // Adds: heap bytes and records per subgroup, records again on the overflow path, each lane's delivered records into
    // its table entry's counter. Reads (atomic adds of 0, ReadWorkgroupCounter): the heap and record totals, the records
    // again on the overflow path, the entry's counter.
    EXPECT_EQ(workgroup_atomic_results.size(), 8u) << lowered.text;
    // Heap top, record count (fast and overflow paths) and the target's record count add workgroup totals.
    EXPECT_EQ(global_adds_of_workgroup_totals, 4u) << lowered.text;
}

// The same allocation lowered with LoweringOptions::reserve_per_workgroup unset (what CPU devices get: llvmpipe runs
// every SIMD group through the workgroup path's barriers and masked code) reserves once per subgroup, as allocations in
// divergent control flow do: no workgroup barrier or workgroup-memory atomic of the reservation, and the target's records
// counted per subgroup after the same-target vote.
TEST(LoweringFeatures, UniformAllocationReservesPerSubgroupWhereTheOptionsSaySo) {
    const Module module = LoadCorpus("output_single_late_constants.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    options.reserve_per_workgroup = false;
    const Lowered lowered = MustLower(module, info, options);
    EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), kLevelHandOffBarriers) << lowered.text;
    EXPECT_EQ(CountOf(lowered.text, "OpGroupNonUniformAllEqual"), 1u) << lowered.text;
    EXPECT_TRUE(Contains(lowered.text, "reserve_per_workgroup=0")) << lowered.text;
    const Lowered per_workgroup = LowerCorpus("output_single_late_constants.spvasm");
    EXPECT_TRUE(Contains(per_workgroup.text, "reserve_per_workgroup=1")) << per_workgroup.text;
    auto workgroup_variables = [](const Lowered& l) {
        std::size_t count = 0;
        for (const Instruction& inst : l.module.section(Section::kTypesValues)) {
            count += inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::Workgroup);
        }
        return count;
    };
    // The workgroup's heap and record totals, their bases, whether its heap range fits, and the per-entry counts.
    EXPECT_EQ(workgroup_variables(per_workgroup) - workgroup_variables(lowered), 6u) << lowered.text;
}

// Where the scheduler dispatches level passes indirectly by HalfHeader::level_pass_workgroups (CPU devices), the level
// hand-off clears a half's counters to (0, 0, 0, 1), so that no level pass is ever dispatched with no workgroups;
// otherwise to zeros, as GPUs' zero-filled halves hold them.
TEST(LoweringFeatures, LevelHandOffClearsLevelPassWorkgroupsToOneWhereLevelPassesAreIndirect) {
    const Module module = LoadCorpus("thread_node.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    // The constant uvec4 values the lowered code builds, as their four words.
    auto constant_vectors = [](const Lowered& lowered) {
        std::vector<std::array<std::uint32_t, 4>> vectors;
        for (const Function& function : lowered.module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    if (inst.opcode() != Op::OpCompositeConstruct || inst.OperandWordCount() != 4) continue;
                    std::array<std::uint32_t, 4> words{};
                    bool constant = true;
                    for (std::size_t i = 0; i < 4 && constant; ++i) {
                        const Instruction* def = lowered.module.FindDef(inst.Word(i));
                        Result<std::uint32_t> value = EvaluateUint32(lowered.module, inst.Word(i));
                        constant = def != nullptr && def->opcode() == Op::OpConstant && value.ok();
                        if (constant) words[i] = *value;
                    }
                    if (constant) vectors.push_back(words);
                }
            }
        }
        return vectors;
    };
    const std::array<std::uint32_t, 4> zeros{0, 0, 0, 0}, cleared_for_indirect{0, 0, 0, 1};
    LoweringOptions options = MakeOptions(module, info);
    const Lowered direct = MustLower(module, info, options);
    options.indirect_level_pass = true;
    const Lowered indirect = MustLower(module, info, options);
    const auto direct_vectors = constant_vectors(direct), indirect_vectors = constant_vectors(indirect);
    EXPECT_NE(std::find(direct_vectors.begin(), direct_vectors.end(), zeros), direct_vectors.end()) << direct.text;
    EXPECT_EQ(std::find(direct_vectors.begin(), direct_vectors.end(), cleared_for_indirect), direct_vectors.end()) << direct.text;
    EXPECT_NE(std::find(indirect_vectors.begin(), indirect_vectors.end(), cleared_for_indirect), indirect_vectors.end())
        << indirect.text;
    EXPECT_TRUE(Contains(indirect.text, "indirect_level_pass=1")) << indirect.text;
    EXPECT_TRUE(Contains(direct.text, "indirect_level_pass=0")) << direct.text;
}

// A node whose outputs name a node array of static broadcast members (a chain of node arrays, a classify node) is
// lowered with the hand-off's group code (LoweringOptions::group_level_hand_off): where the scheduler pushes a group
// consumer (runtime::kDirectLevelGroupConsumer) the last workgroup loops over the members, reading each one's record
// count and writing its statistics (a 16-byte load and store), and writes the group's arguments (8 bytes) and group
// words (16). Without the option none of that is there. With LoweringOptions::group_hand_off_checks_initialization as
// well, where the scheduler sets runtime::kDirectLevelChecksInitialization, it checks the header's tags and, in scratch
// not initialized for the graph, loops over the nodes to charge their records as dropped.
TEST(LoweringFeatures, GroupLevelHandOffHasTheMemberLoopOnlyWithTheOption) {
    const Module module = LoadCorpus("thread_node.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    const Lowered single = MustLower(module, info, options);
    options.group_level_hand_off = true;
    const Lowered group = MustLower(module, info, options);
    EXPECT_EQ(CountOf(group.text, "OpLoopMerge"), CountOf(single.text, "OpLoopMerge") + 1) << group.text;
    EXPECT_EQ(CountOf(group.text, "Aligned 16"), CountOf(single.text, "Aligned 16") + 3) << group.text;
    EXPECT_EQ(CountOf(group.text, "Aligned 8"), CountOf(single.text, "Aligned 8") + 1) << group.text;
    EXPECT_TRUE(Contains(group.text, "group_level_hand_off=1")) << group.text;
    EXPECT_TRUE(Contains(single.text, "group_level_hand_off=0")) << single.text;
    // The flag bit is tested against the pushed consumer only with the option.
    auto has_bit = [](const Lowered& lowered, uint32_t flag) {
        const std::string bit = std::to_string(flag);
        return Contains(lowered.text, " " + bit + "\n") || Contains(lowered.text, "_" + bit);
    };
    EXPECT_TRUE(has_bit(group, runtime::kDirectLevelGroupConsumer)) << group.text;
    // The check of initialization (its flag, and its loop over the nodes to charge their records) only with its option.
    EXPECT_FALSE(has_bit(group, runtime::kDirectLevelChecksInitialization)) << group.text;
    options.group_hand_off_checks_initialization = true;
    const Lowered checking = MustLower(module, info, options);
    EXPECT_TRUE(has_bit(checking, runtime::kDirectLevelChecksInitialization)) << checking.text;
    EXPECT_EQ(CountOf(checking.text, "OpLoopMerge"), CountOf(group.text, "OpLoopMerge") + 1) << checking.text;
    EXPECT_TRUE(Contains(checking.text, "group_hand_off_checks_initialization=1")) << checking.text;
    EXPECT_TRUE(Contains(group.text, "group_hand_off_checks_initialization=0")) << group.text;
}

// Issue 7: the level hand-off of a workgroup of more than one invocation fences at device scope only where its level
// launched other workgroups (the last one must see their writes); alone at its level, its leader reads back only what
// the workgroup's invocations changed with atomics, so a workgroup-scope fence does (on an H200 `recursion` -1.6% and
// `binary_tree_21` -0.6%, whose first levels are one batch of a thread node). A workgroup of one invocation needs
// neither fence alone.
TEST(LoweringFeatures, LevelHandOffFencesAtDeviceScopeOnlyAmongOtherWorkgroups) {
    const Module module = LoadCorpus("thread_node.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    ASSERT_TRUE(options.level_hand_off);
    // OpMemoryBarrier instructions over storage-buffer memory (UniformMemory, 0x40) at a scope (1: device, 2: workgroup).
    auto fences_at = [](const Lowered& lowered, std::uint32_t scope) {
        auto constant = [&lowered](std::uint32_t id) {
            const Instruction* def = lowered.module.FindDef(id);
            return def != nullptr && def->opcode() == Op::OpConstant ? def->Word(0) : ~0u;
        };
        std::size_t count = 0;
        for (const Function& function : lowered.module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    count +=
                        inst.opcode() == Op::OpMemoryBarrier && constant(inst.Word(0)) == scope && (constant(inst.Word(1)) & 0x40u);
                }
            }
        }
        return count;
    };
    options.thread_batch_size = 64;
    const Lowered batch = MustLower(module, info, options);
    ASSERT_TRUE(Contains(batch.text, "LocalSize 64 1 1")) << batch.text;
    EXPECT_EQ(fences_at(batch, 1), 1u) << batch.text;
    EXPECT_EQ(fences_at(batch, 2), 1u) << batch.text;
    options.thread_batch_size = 1;
    const Lowered single = MustLower(module, info, options);
    ASSERT_TRUE(Contains(single.text, "LocalSize 1 1 1")) << single.text;
    EXPECT_EQ(fences_at(single, 1), 1u) << single.text;
    EXPECT_EQ(fences_at(single, 2), 0u) << single.text;
}

// An output table too long for per-entry workgroup counters (over 256 entries; the node's outputs share a 2 KiB budget)
// keeps the reservation per workgroup but counts each target's records per subgroup: no barrier before the counts, the
// same-target vote instead.
TEST(LoweringFeatures, UniformAllocationToALongTableCountsTargetsPerSubgroup) {
    const Module module = LoadCorpus("output_single_late_constants.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    options.output_table_length = {300};
    const Lowered lowered = MustLower(module, info, options);
    EXPECT_EQ(CountOf(lowered.text, "OpControlBarrier"), kPerWorkgroupReservationBarriers - 1 + kLevelHandOffBarriers) << lowered.text;
    EXPECT_EQ(CountOf(lowered.text, "OpGroupNonUniformAllEqual"), 1u) << lowered.text;
}

// Issue 7: where the graph's heap holds a full record list of its largest record (LoweringOptions::heap_holds_record_list),
// one 64-bit atomic on HalfHeader's adjacent heap_top and record_count reserves both, per subgroup or per workgroup, so
// no record-count atomic waits for the heap's; and a workgroup never reserves its records a second time (its heap range
// cannot fail where its records fit). The level hand-off reads both words with one 64-bit atomic too.
TEST(LoweringFeatures, HeapHoldingTheRecordListReservesHeapAndRecordsWithOneAtomic) {
    for (const char* name : {"divergent_allocate.spvasm", "output_single_late_constants.spvasm"}) {
        SCOPED_TRACE(name);
        const Module module = LoadCorpus(name);
        const NodeInfo info = MustAnalyze(module, EntryName(module));
        LoweringOptions options = MakeOptions(module, info);
        const bool per_workgroup = std::string(name) == "output_single_late_constants.spvasm";
        auto atomic_adds = [](const Lowered& lowered) {
            std::uint32_t u64 = 0;
            for (const Instruction& inst : lowered.module.section(Section::kTypesValues)) {
                if (inst.opcode() == Op::OpTypeInt && inst.Word(0) == 64 && inst.Word(1) == 0) u64 = inst.result_id();
            }
            std::pair<std::size_t, std::size_t> adds{0, 0};  // 32-bit, 64-bit
            for (const Function& function : lowered.module.functions()) {
                for (const BasicBlock& block : function.blocks) {
                    for (const Instruction& inst : block.instructions) {
                        if (inst.opcode() == Op::OpAtomicIAdd) ++(inst.type_id() == u64 ? adds.second : adds.first);
                    }
                }
            }
            return adds;
        };
        const Lowered two_atomics = MustLower(module, info, options);
        options.heap_holds_record_list = true;
        const Lowered one_atomic = MustLower(module, info, options);
        EXPECT_FALSE(Contains(two_atomics.text, "OpCapability Int64Atomics")) << two_atomics.text;
        EXPECT_TRUE(Contains(one_atomic.text, "OpCapability Int64Atomics")) << one_atomic.text;
        const auto [before32, before64] = atomic_adds(two_atomics);
        const auto [after32, after64] = atomic_adds(one_atomic);
        EXPECT_EQ(before64, 0u);
        EXPECT_EQ(after64, 2u) << one_atomic.text;  // the reservation, and the hand-off's read of both words
        // Gone: the heap add and the record add, the hand-off's two 32-bit reads, and per workgroup the second
        // reservation (its workgroup-memory add and read of the retaken records, and its record add).
        EXPECT_EQ(before32 - after32, per_workgroup ? 7u : 4u) << one_atomic.text;
        if (per_workgroup) {
            // The second reservation's three barriers are gone.
            EXPECT_EQ(CountOf(one_atomic.text, "OpControlBarrier"), kPerWorkgroupReservationBarriers - 3 + kLevelHandOffBarriers)
                << one_atomic.text;
        }
    }
}

// Issue 7: what an allocation reads of scratch before it can reserve (the header's output-table offset, and the target of
// an output that is not a node array) is loaded by the prologue, in the lowered entry function, before the node's own
// code: at the allocation such a load waits behind the node's stores (a compiler cannot move it above a store that may
// alias scratch), one more round trip to memory in every chain of dependent levels.
TEST(LoweringFeatures, AllocationsFindTheirTableEntriesLoadedByThePrologue) {
    const Module module = LoadCorpus("output_single_late_constants.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    // Loads through PhysicalStorageBuffer pointers (scratch, and the input payload), in the lowered entry function (the
    // prologue and the node's code) and in the others (allocations, the hand-off wrapper).
    auto scratch_loads = [&info](const Lowered& lowered) {
        std::pair<std::size_t, std::size_t> loads{0, 0};  // entry function, other functions
        for (const Function& function : lowered.module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    if (inst.opcode() != Op::OpLoad) continue;
                    const Instruction* pointer = lowered.module.FindDef(inst.Word(0));
                    const Instruction* pointer_type = pointer == nullptr ? nullptr : lowered.module.FindDef(pointer->type_id());
                    if (pointer_type == nullptr || pointer_type->opcode() != Op::OpTypePointer ||
                        pointer_type->Word(0) != static_cast<std::uint32_t>(StorageClass::PhysicalStorageBuffer)) {
                        continue;
                    }
                    ++(function.result_id() == info.entry_point_id ? loads.first : loads.second);
                }
            }
        }
        return loads;
    };
    LoweringOptions options = MakeOptions(module, info);
    ASSERT_EQ(options.output_table_length, (std::vector<std::uint32_t>{1}));
    const Lowered sole_target = MustLower(module, info, options);
    options.output_table_length = {2};  // as if the output were a node array of two: its entry depends on the index
    const Lowered array_target = MustLower(module, info, options);
    const auto [sole_in_entry, sole_elsewhere] = scratch_loads(sole_target);
    const auto [array_in_entry, array_elsewhere] = scratch_loads(array_target);
    EXPECT_EQ(sole_in_entry, array_in_entry + 1) << sole_target.text;
    EXPECT_EQ(sole_elsewhere + 1, array_elsewhere) << sole_target.text;
    // The header's output-table offset (GraphHeader::output_table_offset) is addressed in the entry function only.
    for (const Lowered* lowered : {&sole_target, &array_target}) {
        std::uint32_t offset_constant = 0;
        for (const Instruction& inst : lowered->module.section(Section::kTypesValues)) {
            if (inst.opcode() == Op::OpConstant && inst.Word(0) == offsetof(execgraph::runtime::GraphHeader, output_table_offset) &&
                lowered->module.FindDef(inst.type_id())->opcode() == Op::OpTypeInt) {
                offset_constant = inst.result_id();
            }
        }
        ASSERT_NE(offset_constant, 0u);
        std::size_t uses_in_entry = 0, uses_elsewhere = 0;
        for (const Function& function : lowered->module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    for (std::size_t w = 0; w < inst.OperandWordCount(); ++w) {
                        if (inst.Word(w) != offset_constant) continue;
                        ++(function.result_id() == info.entry_point_id ? uses_in_entry : uses_elsewhere);
                    }
                }
            }
        }
        EXPECT_EQ(uses_in_entry, 1u) << lowered->text;
        EXPECT_EQ(uses_elsewhere, 0u) << lowered->text;
    }
}

TEST(LoweringFeatures, RecursionAndShaderIndexBuiltinsBecomePrivate) {
    for (const char* name : {"recursion_remaining_levels.spvasm", "shader_index_builtin.spvasm", "vkd3d_basic_recursion_recursive.spvasm"}) {
        SCOPED_TRACE(name);
        const Lowered lowered = LowerCorpus(name);
        EXPECT_FALSE(Contains(lowered.text, "RemainingRecursionLevels"));
        EXPECT_FALSE(Contains(lowered.text, "ShaderIndex"));
    }
}

// Where the layer passes the graph's node-table and statistics offsets (LoweringOptions), the lowered code uses them as
// constants instead of loading GraphHeader::node_table_offset first: a node's ShaderIndexAMDX (and a group member's
// table entry) is then one load away, not two.
TEST(LoweringFeatures, GraphOffsetsGivenAsOptionsAreNotLoaded) {
    const Module module = LoadCorpus("shader_index_builtin.spvasm");
    const NodeInfo info = MustAnalyze(module, EntryName(module));
    auto scratch_loads = [&](std::uint32_t node_table_offset) {
        LoweringOptions options = MakeOptions(module, info);
        options.node_table_offset = node_table_offset;
        options.node_stats_offset = 1024;  // the same in both: only the table's offset differs
        const Lowered lowered = MustLower(module, info, options);
        // Loads through an address the lowering computed (scratch and payloads: OpConvertUToPtr).
        std::size_t loads = 0;
        for (const Function& function : lowered.module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    if (inst.opcode() != Op::OpLoad) continue;
                    const Instruction* pointer = lowered.module.FindDef(inst.Word(0));
                    if (pointer == nullptr || pointer->opcode() != Op::OpConvertUToPtr) continue;
                    ++loads;
                }
            }
        }
        return std::make_pair(loads, lowered.text);
    };
    const auto [without, without_text] = scratch_loads(0);
    const auto [with, with_text] = scratch_loads(256);
    EXPECT_LT(with, without) << with_text;
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

// CoalesceRecordStoresPass: coalesced_record_producer (tests/e2e/modules; the e2e suite CoalescedRecordStores runs it) keeps
// its one 64-byte record in a Private array of 16 words and its wrapper writes a subgroup's records transposed: four
// rounds of four word shuffles, and two more for lane 0's address. Shapes the pass must leave alone lower as without it.
TEST(LoweringFeatures, OneRecordAllocationsOfWholeChunksAreWrittenPerSubgroupTransposed) {
    const std::string source = E2eModuleText("coalesced_record_producer");
    ASSERT_FALSE(source.empty());
    auto with = [&](const std::string& words, const std::string& from = "", const std::string& to = "") {
        std::string text = source;
        for (std::size_t at; (at = text.find("@WORDS@")) != std::string::npos;) text.replace(at, 7, words);
        if (!from.empty()) {
            const std::size_t at = text.find(from);
            EXPECT_NE(at, std::string::npos) << from;
            if (at != std::string::npos) text.replace(at, from.size(), to);
        }
        return text;
    };
    // Shuffles and Private word arrays with the pass (`coalesce`) and without it.
    auto lower = [&](const std::string& text, bool coalesce) {
        const Module module = Assemble(text, "coalesced_record_producer");
        const NodeInfo info = MustAnalyze(module, "main");
        LoweringOptions options = MakeOptions(module, info);
        options.coalesce_record_stores = coalesce;
        // Without the options record, which names the option.
        std::string lowered = MustLower(module, info, options).text;
        const std::size_t record = lowered.find("OpModuleProcessed");
        if (record != std::string::npos) lowered.erase(record, lowered.find('\n', record) - record);
        return lowered;
    };
    const std::string plain = lower(with("3"), false);
    const std::string coalesced = lower(with("3"), true);
    EXPECT_EQ(CountOf(coalesced, "OpGroupNonUniformShuffle "), CountOf(plain, "OpGroupNonUniformShuffle ") + 4 * 4 + 2)
        << coalesced;
    EXPECT_TRUE(Contains(coalesced, "BuiltIn SubgroupSize")) << coalesced;
    EXPECT_TRUE(Contains(coalesced, "OpGroupNonUniformAll ")) << coalesced;
    EXPECT_FALSE(Contains(plain, "OpGroupNonUniformAll ")) << plain;
    // 32 and 128 bytes: two and eight rounds.
    EXPECT_EQ(CountOf(lower(with("1"), true), "OpGroupNonUniformShuffle "),
              CountOf(lower(with("1"), false), "OpGroupNonUniformShuffle ") + 2 * 4 + 2);
    EXPECT_EQ(CountOf(lower(with("7"), true), "OpGroupNonUniformShuffle "),
              CountOf(lower(with("7"), false), "OpGroupNonUniformShuffle ") + 8 * 4 + 2);
    // Left alone: a 48-byte record (three chunks), up to two records per invocation, Workgroup visibility (the broadcast
    // node's records shared), a pointer into the record passed on (an atomic on a member).
    for (const auto& [words, from, to] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"2", "", ""},
             {"3", "%n = OpSelect %uint %has %uint_1 %uint_0", "%n = OpSelect %uint %has %uint_2 %uint_0"},
             {"3", "OpAllocateNodePayloadsAMDX %_ptr_NodePayloadAMDX_out_arr %uint_4",
              "OpAllocateNodePayloadsAMDX %_ptr_NodePayloadAMDX_out_arr %uint_2"},
             {"3", "       %back = OpLoad %uint %d_id", "       %back = OpAtomicIAdd %uint %d_id %uint_1 %uint_0 %uint_0"},
         }) {
        SCOPED_TRACE(words + " " + to);
        EXPECT_EQ(lower(with(words, from, to), true), lower(with(words, from, to), false));
    }
}

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

// The lowering takes fresh ids past the bound, so a bound near 2^32 (a fuzzed module had 4294967262) would wrap them onto
// the module's own ids; SPIR-V caps the bound at 4194303 (universal limits), and the lowering says so instead.
TEST(LoweringErrors, IdBoundBeyondTheUniversalLimitIsRejected) {
    Module module = LoadCorpus("broadcast_static_grid.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    const LoweringOptions options = MakeOptions(module, info);
    module.header().bound = 0x300000;  // unused ids below the limit: lowered as before
    MustLower(module, info, options);
    module.header().bound = 0xFFFFFFDEu;
    EXPECT_TRUE(Contains(MustFail(module, info, options), "exceeds SPIR-V's universal limit of 4194303"));
}

TEST(LoweringErrors, ThreadNodeWithBarrierIsRejected) {
    // A thread node whose single invocation synchronises with itself: batching would make the barrier real.
    std::string text = spirv::test::CorpusText("thread_node.spvasm");
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
    std::string text = spirv::test::CorpusText("output_single_late_constants.spvasm");
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

namespace execgraph::spirv {
namespace {

// OpIsNodePayloadValidAMDX names its output by the payload array type id (the spec) or by the output object (DXC, a
// Function variable of pointer-to-array type). Both forms must lower to the same module: only that operand differs.
void ExpectTypeIdFormLowersLikeObjectForm(const std::string& corpus, const std::string& object_operand, const std::string& type_id) {
    SCOPED_TRACE(corpus);
    const std::string object_text = spirv::test::CorpusText(corpus);
    std::string type_text = object_text;
    const std::string from = "OpIsNodePayloadValidAMDX %bool " + object_operand + " ";
    const std::size_t at = type_text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    type_text.replace(at, from.size(), "OpIsNodePayloadValidAMDX %bool " + type_id + " ");

    const Module object_module = Assemble(object_text, corpus);
    const Module type_module = Assemble(type_text, corpus + " (type id)");
    const NodeInfo object_info = MustAnalyze(object_module, EntryName(object_module));
    const NodeInfo type_info = MustAnalyze(type_module, EntryName(type_module));
    ASSERT_TRUE(type_info.uses_is_payload_valid);
    ASSERT_EQ(type_info.outputs.size(), object_info.outputs.size());
    const Lowered object_lowered = MustLower(object_module, object_info, MakeOptions(object_module, object_info));
    const Lowered type_lowered = MustLower(type_module, type_info, MakeOptions(type_module, type_info));
    ASSERT_FALSE(type_lowered.node.words.empty());
    EXPECT_EQ(type_lowered.node.words, object_lowered.node.words) << type_lowered.text;
}

TEST(LoweringIsPayloadValid, TypeIdOperandOnASparseArrayLowersLikeTheOutputObject) {
    ExpectTypeIdFormLowersLikeObjectForm("output_sparse_array.spvasm", "%param_var_OutputArray_1_0", "%out_arr");
}

TEST(LoweringIsPayloadValid, TypeIdOperandOnTheSelfOutputLowersLikeTheOutputObject) {
    // The recursion-limit case: IsValid on the node's own output is false once no recursion levels remain.
    ExpectTypeIdFormLowersLikeObjectForm("vkd3d_basic_recursion_recursive.spvasm", "%param_var_op", "%out_arr");
}

TEST(LoweringIsPayloadValid, TypeIdThatIsNoOutputIsRejected) {
    // The input's payload array type is no output of the node: a clear error, not invalid SPIR-V.
    std::string text = spirv::test::CorpusText("output_dense_array_is_valid_type.spvasm");
    const std::string from = "OpIsNodePayloadValidAMDX %bool %out_arr";
    text.replace(text.find(from), from.size(), "OpIsNodePayloadValidAMDX %bool %in_arr");
    const Module module = Assemble(text, "is-valid on the input type");
    const NodeInfo info = MustAnalyze(module, "main");
    EXPECT_TRUE(Contains(MustFail(module, info, MakeOptions(module, info)), "does not name one of the node's outputs"));
}

}  // namespace
}  // namespace execgraph::spirv

namespace execgraph::spirv {
namespace {

// Records start 16-byte aligned in the heap; every access through the record pointers must claim exactly the scalar
// alignment of what it loads or stores (Aligned 2 for 16-bit members, 4 for 32-bit, 8 for 64-bit), which the member
// offsets of the scalar layout guarantee.
// Issue 7: record member accesses are Aligned to what the record's start and the member's offset guarantee
// (RewritePayloadPointersPass): an output allocation starts 16-byte aligned; an input record at the largest power of two
// dividing its stride (here 20: 4), since it may be record i of an allocation. Wider than the scalar alignment where
// the layout allows it, so drivers can use wide accesses.
TEST(LoweringRecordLayout, AccessesCarryTheAlignmentOfTheRecordStartAndTheirOffset) {
    const Module module = LoadCorpus("record_layout_16bit.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    const LoweringOptions options = MakeOptions(module, info);
    EXPECT_EQ(options.output_record_stride, (std::vector<std::uint32_t>{24, 8}));
    const Lowered lowered = MustLower(module, info, options);
    ASSERT_FALSE(lowered.node.words.empty());
    EXPECT_TRUE(Contains(lowered.text, "OpCapability StorageBuffer16BitAccess"));

    const Module& m = lowered.module;
    std::unordered_map<std::uint32_t, std::uint32_t> type_of;
    m.ForEachInstruction([&type_of](const Instruction& inst) {
        if (inst.result_id() != 0) type_of[inst.result_id()] = inst.type_id();
    });
    auto scalar_bytes = [&m](std::uint32_t type) -> std::uint32_t {
        const Instruction* def = m.FindDef(type);
        if (def != nullptr && def->opcode() == Op::OpTypeVector) def = m.FindDef(def->Word(0));
        return def != nullptr && def->opcode() == Op::OpTypeInt ? def->Word(0) / 8 : 0;
    };
    auto is_buffer_pointer = [&m, &type_of](std::uint32_t pointer) {
        const Instruction* type = m.FindDef(type_of[pointer]);
        return type != nullptr && type->opcode() == Op::OpTypePointer &&
               type->Word(0) == static_cast<std::uint32_t>(StorageClass::PhysicalStorageBuffer);
    };
    std::map<std::uint32_t, std::size_t> accesses_by_alignment;  // record member accesses (not the scratch words)
    for (const Function& function : m.functions()) {
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) {
                if (inst.opcode() != Op::OpLoad && inst.opcode() != Op::OpStore) continue;
                if (!is_buffer_pointer(inst.Word(0))) continue;
                const std::size_t mask = inst.opcode() == Op::OpLoad ? 1 : 2;
                ASSERT_GT(inst.OperandWordCount(), mask + 1);
                ASSERT_NE(inst.Word(mask) & static_cast<std::uint32_t>(MemoryAccess::Aligned), 0u);
                const std::uint32_t value_type = inst.opcode() == Op::OpLoad ? inst.type_id() : type_of[inst.Word(1)];
                const std::uint32_t bytes = scalar_bytes(value_type);
                if (bytes == 0) continue;  // the uint64 payload pointers the helpers keep are not record members
                ++accesses_by_alignment[inst.Word(mask + 1)];
            }
        }
    }
    // Input (record start 4-byte aligned): a at 0, c at 8 and d.z at 16 are 4, b at 2 is 2. Output "wide" (start 16):
    // x at 0 and z at 16 are 16, y at 8 is 8; "narrow" (start 16): p at 0 is 16, q at 4 is 4. The runtime's own
    // scratch words are 4 too, except the record-list entry each allocation writes in one 16-byte store and the level
    // hand-off's vectors: the node states' clearing, the consumer's state (16 and 8 bytes), its statistics (a 16-byte
    // load and store) and the half's counters (16).
    EXPECT_EQ(accesses_by_alignment[2], 1u) << Disassemble(m);
    EXPECT_GE(accesses_by_alignment[4], 4u) << Disassemble(m);
    EXPECT_EQ(accesses_by_alignment[8], 1u + 1u) << Disassemble(m);
    EXPECT_EQ(accesses_by_alignment[16], 3u + 2u + 1u + 4u) << Disassemble(m);
    for (const auto& [alignment, count] : accesses_by_alignment) {
        EXPECT_TRUE(alignment == 2 || alignment == 4 || alignment == 8 || alignment == 16) << alignment << " x" << count;
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// The record of lowering options (OpModuleProcessed) and what CheckLoweredReplacement makes of it.

// Every option that becomes a constant of the lowered code is in the record, and the record is in the module once.
TEST(LoweringOptionsRecord, NamesEveryOptionThatBecomesAConstantAndIsInTheModuleOnce) {
    const Module module = LoadCorpus("thread_node.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions options = MakeOptions(module, info);
    options.thread_batch_size = 64;
    options.level_pass_records_per_workgroup = 512;
    const std::string record = LoweringOptionsRecord(options);
    for (const char* field : {"context_offset=", "input_record_stride=", "thread_batch_size=64",
                              "level_pass_records_per_workgroup=512", "heap_holds_record_list=", "level_hand_off=1",
                              "dispatch_group_member=1", "reserve_per_workgroup=1", "shader_index=scratch", "outputs="}) {
        EXPECT_TRUE(Contains(record, field)) << field << " missing from " << record;
    }
    const Lowered lowered = MustLower(module, info, options);
    std::size_t records = 0;
    for (const Instruction& inst : lowered.module.section(Section::kDebugModuleProcessed)) records += inst.StringAt(0) == record;
    EXPECT_EQ(records, 1u) << lowered.text;
}

// A module lowered for another device (here: level passes sized for a CPU device) cannot replace the node; the error
// names the differing option and no other. The same module, and a module without a record, can.
TEST(LoweringOptionsRecord, AReplacementLoweredWithOtherOptionsIsRefusedAndNamesThem) {
    const Module module = LoadCorpus("thread_node.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    LoweringOptions gpu = MakeOptions(module, info);
    gpu.thread_batch_size = 64;
    gpu.level_pass_records_per_workgroup = 512;
    const Lowered ours = MustLower(module, info, gpu);
    EXPECT_TRUE(CheckLoweredReplacement(ours.node.words, "main", ours.node).ok());

    LoweringOptions cpu = gpu;
    cpu.level_pass_records_per_workgroup = 16384;
    const Lowered other = MustLower(module, info, cpu);
    Status refused = CheckLoweredReplacement(other.node.words, "main", ours.node);
    ASSERT_FALSE(refused.ok());
    EXPECT_TRUE(Contains(refused.error().message, "level_pass_records_per_workgroup=16384 where this node is lowered with 512"))
        << refused.error().message;
    EXPECT_FALSE(Contains(refused.error().message, "thread_batch_size")) << refused.error().message;

    // Without its record, the same module is accepted: nothing tells what it was lowered with.
    Module stripped = other.module;
    stripped.mutable_section(Section::kDebugModuleProcessed).clear();
    EXPECT_TRUE(CheckLoweredReplacement(WriteModule(stripped), "main", ours.node).ok());
}

// glslang states the workgroup size as LocalSizeId with constant operands when it targets SPIR-V 1.6 (Vulkan 1.3), so a
// replacement compiled from an edited GLSL dump carries no LocalSize: its LocalSizeId is checked as the same size, and a
// different one is refused with the sizes named.
TEST(LoweringOptionsRecord, AReplacementMayStateItsSizeAsLocalSizeId) {
    const Module module = LoadCorpus("thread_node.spvasm");
    const NodeInfo info = MustAnalyze(module, "main");
    const Lowered ours = MustLower(module, info, MakeOptions(module, info));
    auto with_local_size_id = [&](std::array<std::uint32_t, 3> size) {
        Module edited = ours.module;
        std::uint32_t u32 = 0;
        for (const Instruction& inst : edited.section(Section::kTypesValues)) {
            if (inst.opcode() == Op::OpTypeInt && inst.Word(0) == 32 && inst.Word(1) == 0) u32 = inst.result_id();
        }
        EXPECT_NE(u32, 0u);
        std::vector<std::uint32_t> ids;
        for (std::uint32_t value : size) {
            Instruction constant(Op::OpConstant, u32, edited.TakeNextId());
            constant.AddLiteral(value);
            ids.push_back(constant.result_id());
            edited.Append(Section::kTypesValues, std::move(constant));
        }
        std::vector<Instruction>& modes = edited.mutable_section(Section::kExecutionMode);
        const auto local_size = std::find_if(modes.begin(), modes.end(), [](const Instruction& inst) {
            return inst.opcode() == Op::OpExecutionMode && inst.Word(1) == static_cast<std::uint32_t>(ExecutionMode::LocalSize);
        });
        EXPECT_NE(local_size, modes.end());
        if (local_size == modes.end()) return std::vector<std::uint32_t>{};
        Instruction by_id(Op::OpExecutionModeId);
        by_id.AddId(local_size->Word(0)).AddEnum(OperandKind::ExecutionMode, ExecutionMode::LocalSizeId);
        for (std::uint32_t id : ids) by_id.AddId(id);
        *local_size = std::move(by_id);
        return WriteModule(edited);
    };
    const std::array<std::uint32_t, 3> size = ours.node.local_size;
    const std::vector<std::uint32_t> same = with_local_size_id(size);
    ASSERT_EQ(ValidateVulkan13(same), "");
    const Status accepted = CheckLoweredReplacement(same, "main", ours.node);
    EXPECT_TRUE(accepted.ok()) << accepted.error().message;

    const Status refused = CheckLoweredReplacement(with_local_size_id({size[0] * 2, size[1], size[2]}), "main", ours.node);
    ASSERT_FALSE(refused.ok());
    const std::string wanted = "has LocalSize " + std::to_string(size[0] * 2) + "x" + std::to_string(size[1]) + "x" +
                               std::to_string(size[2]) + " where the lowered node has " + std::to_string(size[0]) + "x";
    EXPECT_TRUE(Contains(refused.error().message, wanted)) << refused.error().message;
}

// ---- DXC -Od: payloads passed to functions (InlinePayloadFunctions) -------------------------------------------------

std::size_t CallCount(const Module& module) {
    std::size_t calls = 0;
    module.ForEachInstruction([&calls](const Instruction& inst) { calls += inst.opcode() == Op::OpFunctionCall ? 1 : 0; });
    return calls;
}

// The -Od shape of coalescing_forward (tests/e2e/modules/coalescing_forward_od.spvasm): the wrapper's call of the node
// function ends its path, so the node function's early return stays a return; the helper's call does not, so its one
// return becomes a branch to the rest of the split block. Afterwards one function is left, with the callees'
// variables at the top of its first block, and it analyses and lowers like the -O3 shape (which the e2e suite runs).
TEST(PayloadFunctionInlining, DxcOdWrapperAndHelperAreInlinedAndLowerLikeO3) {
    const Module od = Assemble(E2eModuleText("coalescing_forward_od"), "coalescing_forward_od");
    const Module o3 = Assemble(E2eModuleText("coalescing_forward"), "coalescing_forward");
    EXPECT_TRUE(HasPayloadParameterFunctions(od));
    EXPECT_FALSE(HasPayloadParameterFunctions(o3));

    Module inlined = od;
    const Status status = InlinePayloadFunctions(inlined);
    ASSERT_TRUE(status.ok()) << status.error().message;
    EXPECT_FALSE(HasPayloadParameterFunctions(inlined));
    ASSERT_EQ(inlined.functions().size(), 1u) << Disassemble(inlined);
    EXPECT_EQ(CallCount(inlined), 0u);
    const Function& main = inlined.functions().front();
    std::size_t variables = 0, returns = 0;
    for (std::size_t b = 0; b < main.blocks.size(); ++b) {
        for (const Instruction& inst : main.blocks[b].instructions) {
            if (inst.opcode() == Op::OpVariable) {
                ++variables;
                EXPECT_EQ(b, 0u) << "a variable outside the first block";
            }
            returns += inst.opcode() == Op::OpReturn ? 1 : 0;
        }
    }
    EXPECT_EQ(variables, 4u) << "the wrapper's two and the node function's two";
    EXPECT_EQ(returns, 2u) << "the node function's early and final returns, now main's";
    // Inlining twice gives the same ids, which AnalyzeNode and LowerNode rely on (each inlines its own copy).
    Module again = od;
    ASSERT_TRUE(InlinePayloadFunctions(again).ok());
    EXPECT_EQ(WriteModule(again), WriteModule(inlined));

    const NodeInfo od_info = MustAnalyze(od, "main");
    const NodeInfo o3_info = MustAnalyze(o3, "main");
    EXPECT_EQ(od_info.launch, o3_info.launch);
    EXPECT_EQ(od_info.input_record.size, o3_info.input_record.size);
    EXPECT_EQ(od_info.input_max_payloads, o3_info.input_max_payloads);
    EXPECT_EQ(od_info.uses_payload_array_length, o3_info.uses_payload_array_length);
    ASSERT_EQ(od_info.outputs.size(), 1u);
    EXPECT_EQ(od_info.outputs[0].name, "Sink");
    EXPECT_EQ(od_info.outputs[0].record.size, o3_info.outputs[0].record.size);
    EXPECT_EQ(od_info.outputs[0].allocated_at_workgroup_scope, o3_info.outputs[0].allocated_at_workgroup_scope);
    MustLower(od, od_info, spirv::test::MakeLoweringOptions(od, od_info));
}

// DXC -Od with -Zi puts line information after a block's terminator too (module.h keeps it at the end of the block): a
// wrapper whose call is followed by OpReturn and an OpLine still ends its path, so the node function's early return
// stays a return rather than making the call a refused mid-function one.
TEST(PayloadFunctionInlining, LineInformationAfterTheWrappersReturnKeepsItsCallAtTheEnd) {
    std::string text = E2eModuleText("coalescing_forward_od");
    auto replace = [&text](const std::string& from, const std::string& to) {
        const std::size_t at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
    };
    replace("               OpName %main \"main\"\n",
            "       %file = OpString \"node.hlsl\"\n               OpName %main \"main\"\n");
    replace("%call = OpFunctionCall %void %src_main %in %param_var_tid %param_var_Sink\n               OpReturn\n",
            "%call = OpFunctionCall %void %src_main %in %param_var_tid %param_var_Sink\n               OpReturn\n"
            "               OpLine %file 12 1\n");
    const Module od = Assemble(text, "coalescing_forward_od with a line after the return");
    Module inlined = od;
    const Status status = InlinePayloadFunctions(inlined);
    ASSERT_TRUE(status.ok()) << status.error().message;
    EXPECT_EQ(CallCount(inlined), 0u);
    const NodeInfo info = MustAnalyze(od, "main");
    MustLower(od, info, spirv::test::MakeLoweringOptions(od, info));
}

// A helper that takes a payload and returns a value, called in the middle of a block: the value replaces the call's
// result, and a phi after the split block names the block's rest as its predecessor.
TEST(PayloadFunctionInlining, HelperReturningAValueSplitsItsCallersBlock) {
    std::string text = E2eModuleText("coalescing_forward_od");
    auto replace = [&text](const std::string& from, const std::string& to) {
        const std::size_t at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
    };
    // WriteRecord returns what it wrote; the caller keeps it through a phi at the merge.
    replace("%fn_write = OpTypeFunction %void", "%fn_write = OpTypeFunction %uint");
    replace("%WriteRecord = OpFunction %void None %fn_write", "%WriteRecord = OpFunction %uint None %fn_write");
    replace("               OpStore %r_dst %out\n               OpReturn\n",
            "               OpStore %r_dst %out\n               OpReturnValue %out\n");
    replace("%call_wr = OpFunctionCall %void %WriteRecord", "%call_wr = OpFunctionCall %uint %WriteRecord");
    replace("    %written = OpLabel\n", "    %written = OpLabel\n    %wrote = OpPhi %uint %call_wr %write %uint_0 %src_entry\n");
    const Module od = Assemble(text, "coalescing_forward_od with a value");
    Module inlined = od;
    const Status status = InlinePayloadFunctions(inlined);
    ASSERT_TRUE(status.ok()) << status.error().message;
    const std::string listing = Disassemble(inlined);
    EXPECT_EQ(CallCount(inlined), 0u) << listing;
    EXPECT_TRUE(Contains(listing, "OpCopyObject")) << listing;
    // Each phi names blocks that branch to it: the write's rest now ends in the branch to the merge, not the write.
    for (const Function& function : inlined.functions()) {
        std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> successors;
        for (const BasicBlock& block : function.blocks) {
            const Instruction& last = block.instructions.back();
            if (last.opcode() == Op::OpBranch) successors[block.label_id()] = {last.Word(0)};
            if (last.opcode() == Op::OpBranchConditional) successors[block.label_id()] = {last.Word(1), last.Word(2)};
        }
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) {
                if (inst.opcode() != Op::OpPhi) continue;
                for (std::size_t i = 1; i < inst.OperandWordCount(); i += 2) {
                    const std::vector<std::uint32_t>& to = successors[inst.Word(i)];
                    EXPECT_NE(std::find(to.begin(), to.end(), block.label_id()), to.end()) << listing;
                }
            }
        }
    }
    const NodeInfo info = MustAnalyze(od, "main");
    MustLower(od, info, spirv::test::MakeLoweringOptions(od, info));
}

// A callee with two returns whose call is followed by more of its caller would need a construct of its own: refused,
// naming the function, by the analysis (where the layer reports it at pipeline creation) and by the lowering.
TEST(PayloadFunctionInlining, HelperWithTwoReturnsInTheMiddleOfItsCallerIsRefused) {
    std::string text = E2eModuleText("coalescing_forward_od");
    const std::string body = "      %index = OpLoad %uint %index_p\n";
    const std::size_t at = text.find(body);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, body.size(),
                 body +
                     "       %zero = OpIEqual %bool %index %uint_4\n"
                     "               OpSelectionMerge %go None\n"
                     "               OpBranchConditional %zero %leave %go\n"
                     "      %leave = OpLabel\n"
                     "               OpReturn\n"
                     "         %go = OpLabel\n");
    const Module od = Assemble(text, "coalescing_forward_od with two returns");
    const Result<NodeInfo> info = AnalyzeNode(od, "main", nullptr);
    ASSERT_FALSE(info.ok());
    EXPECT_TRUE(Contains(info.error().message, "\"WriteRecord\"")) << info.error().message;
    EXPECT_TRUE(Contains(info.error().message, "returns from more than one place")) << info.error().message;
}

}  // namespace
}  // namespace execgraph::spirv
