// SPDX-License-Identifier: Apache-2.0
// The nine lowering passes one at a time (spirv_lowering/src/lowering/lowering_passes.h): each test runs the fixed
// pipeline up to the pass under test on a small assembled module, checks what exactly that pass did to the module
// (instructions removed / added, ids rewritten), then runs the remaining passes and checks that the final module
// passes the Vulkan 1.3 validator. LowerNode (lowering_node_test.cpp) covers the whole pipeline on every corpus module.
#include "lowering/lowering_passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/decorations.h"
#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/reader.h"
#include "execgraph/spirv/writer.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

using lowering::LoweringContext;

// runtime::NodePushContext's members as the lowering must lay them out: byte offsets from context_offset.
constexpr std::array<std::uint32_t, 7> kPushContextOffsets = {
    offsetof(runtime::NodePushContext, scratch_address),   offsetof(runtime::NodePushContext, node_index),
    offsetof(runtime::NodePushContext, output_table_base), offsetof(runtime::NodePushContext, input_half_offset),
    offsetof(runtime::NodePushContext, output_half_offset), offsetof(runtime::NodePushContext, level),
    offsetof(runtime::NodePushContext, next_level_consumer)};
static_assert(kPushContextOffsets.back() + 4 == sizeof(runtime::NodePushContext));

// The order LowerNode runs them in.
enum PassIndex : std::size_t {
    kSelectEntryPoint,
    kResolvePayloadAliases,
    kRuntimeContext,
    kLaunch,
    kLowerInput,
    kLowerOutputs,
    kRewritePayloadPointers,
    kMemorySemantics,
    kLevelHandOff,
    kStripAmdx,
    kPassCount,
};

std::unique_ptr<Pass> MakePass(std::size_t index, LoweringContext& ctx) {
    switch (index) {
        case kSelectEntryPoint:
            return std::make_unique<lowering::SelectEntryPointPass>(ctx);
        case kResolvePayloadAliases:
            return std::make_unique<lowering::ResolvePayloadAliasesPass>(ctx);
        case kRuntimeContext:
            return std::make_unique<lowering::RuntimeContextPass>(ctx);
        case kLaunch:
            return std::make_unique<lowering::LaunchPass>(ctx);
        case kLowerInput:
            return std::make_unique<lowering::LowerInputPass>(ctx);
        case kLowerOutputs:
            return std::make_unique<lowering::LowerOutputsPass>(ctx);
        case kRewritePayloadPointers:
            return std::make_unique<lowering::RewritePayloadPointersPass>(ctx);
        case kMemorySemantics:
            return std::make_unique<lowering::MemorySemanticsPass>(ctx);
        case kLevelHandOff:
            return std::make_unique<lowering::LevelHandOffPass>(ctx);
        default:
            return std::make_unique<lowering::StripAmdxPass>(ctx);
    }
}

// One LowerNode pipeline, run pass by pass.
class PassPipeline {
  public:
    PassPipeline(const Module& module, const std::string& entry, LoweringOptions options = {}, bool default_options = true)
        : module_(module) {
        Result<NodeInfo> info = AnalyzeNode(module_, entry, nullptr);
        EXPECT_TRUE(info.ok()) << entry << ": " << (info.ok() ? "" : info.error().ToString());
        if (info.ok()) info_ = *std::move(info);
        options_ = default_options ? spirv::test::MakeLoweringOptions(module_, info_) : std::move(options);
        ctx_ = std::make_unique<LoweringContext>(info_, options_);
    }
    // ctx_ refers to info_ and options_, so a pipeline stays where it was built (returned only as a prvalue).
    PassPipeline(PassPipeline&&) = delete;

    // Runs the passes up to and including `last`; returns what the last one reported (whether it changed the module).
    bool RunThrough(std::size_t last) {
        bool changed = false;
        for (; next_ <= last; ++next_) {
            std::unique_ptr<Pass> pass = MakePass(next_, *ctx_);
            Result<bool> ran = pass->Run(module_);
            EXPECT_TRUE(ran.ok()) << pass->Name() << ": " << (ran.ok() ? "" : ran.error().ToString());
            if (!ran.ok()) {
                failed_ = true;
                return false;
            }
            changed = *ran;
        }
        return changed;
    }

    // Runs the remaining passes; returns the final words after checking them with the Vulkan 1.3 validator.
    std::vector<std::uint32_t> FinishAndValidate() {
        RunThrough(kPassCount - 1);
        if (failed_) return {};
        std::vector<std::uint32_t> words = WriteModule(module_);
        EXPECT_EQ(spirv::test::ValidateVulkan13(words), "");
        return words;
    }

    Module& module() { return module_; }
    const NodeInfo& info() const { return info_; }
    const LoweringOptions& options() const { return options_; }
    LoweringContext& ctx() { return *ctx_; }

  private:
    Module module_;
    NodeInfo info_;
    LoweringOptions options_;
    std::unique_ptr<LoweringContext> ctx_;
    std::size_t next_ = 0;
    bool failed_ = false;
};

Module Corpus(const std::string& name) { return spirv::test::AssembleModule(spirv::test::CorpusText(name), name); }

// The id an OpName gives `name`, 0 if none.
std::uint32_t IdNamed(const Module& module, const std::string& name) {
    for (const Instruction& inst : module.section(Section::kDebugName)) {
        if (inst.opcode() == Op::OpName && inst.StringAt(1) == name) return inst.Word(0);
    }
    return 0;
}

// Every instruction inside functions (not the OpFunction headers).
std::vector<const Instruction*> BodyInstructions(const Module& module) {
    std::vector<const Instruction*> out;
    for (const Function& function : module.functions()) {
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) out.push_back(&inst);
        }
    }
    return out;
}

std::size_t CountOpcode(const Module& module, Op op) {
    std::size_t count = 0;
    module.ForEachInstruction([&](const Instruction& inst) { count += inst.opcode() == op; });
    return count;
}

// The function-body instruction defining `id`, or nullptr.
const Instruction* BodyDef(const Module& module, std::uint32_t id) {
    for (const Instruction* inst : BodyInstructions(module)) {
        if (inst->result_id() == id) return inst;
    }
    return nullptr;
}

// Function-body instructions that use `id` as an operand.
std::size_t UsesInBodies(const Module& module, std::uint32_t id) {
    std::size_t uses = 0;
    for (const Instruction* inst : BodyInstructions(module)) {
        for (std::size_t i = 0; i < inst->OperandWordCount(); ++i) uses += inst->IsIdOperand(i) && inst->Word(i) == id;
    }
    return uses;
}

bool HasCapability(const Module& module, Capability capability) {
    for (const Instruction& inst : module.section(Section::kCapability)) {
        if (inst.Word(0) == static_cast<std::uint32_t>(capability)) return true;
    }
    return false;
}

StorageClass StorageOfPointer(const Module& module, std::uint32_t pointer_type) {
    const Instruction* def = module.FindDef(pointer_type);
    return def != nullptr && def->opcode() == Op::OpTypePointer ? static_cast<StorageClass>(def->Word(0)) : StorageClass::Generic;
}

std::size_t GlobalVariables(const Module& module, StorageClass storage_class) {
    std::size_t count = 0;
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        count += inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(storage_class);
    }
    return count;
}

// ---------------------------------------------------------------------------------------------------------------------
// 1. SelectEntryPointPass

// Two nodes in one module (lib_6_8 style): "main" calls a helper, "other" is a coalescing node, "unused" is called by
// nobody.
constexpr const char* kTwoEntryPoints = R"(
               OpCapability Shader
               OpCapability ShaderEnqueueAMDX
               OpExtension "SPV_AMDX_shader_enqueue"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %in_a %out_buf
               OpEntryPoint GLCompute %other "other" %in_b
               OpExecutionMode %main LocalSize 8 1 1
               OpExecutionModeId %main StaticNumWorkgroupsAMDX %uint_1 %uint_1 %uint_1
               OpExecutionMode %other LocalSize 4 1 1
               OpExecutionMode %other CoalescingAMDX
               OpName %main "main"
               OpName %other "other"
               OpName %helper "helper"
               OpName %unused "unused"
               OpMemberDecorate %Rec 0 Offset 0
               OpDecorateId %arr_a NodeMaxPayloadsAMDX %uint_1
               OpDecorateId %arr_b NodeMaxPayloadsAMDX %uint_4
               OpDecorate %rt ArrayStride 4
               OpMemberDecorate %Buf 0 Offset 0
               OpDecorate %Buf Block
               OpDecorate %out_buf DescriptorSet 0
               OpDecorate %out_buf Binding 0
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_4 = OpConstant %uint 4
        %Rec = OpTypeStruct %uint
      %arr_a = OpTypeNodePayloadArrayAMDX %Rec
      %arr_b = OpTypeNodePayloadArrayAMDX %Rec
      %ptr_a = OpTypePointer NodePayloadAMDX %arr_a
      %ptr_b = OpTypePointer NodePayloadAMDX %arr_b
   %ptr_uint = OpTypePointer NodePayloadAMDX %uint
         %rt = OpTypeRuntimeArray %uint
        %Buf = OpTypeStruct %rt
    %ptr_buf = OpTypePointer StorageBuffer %Buf
 %ptr_sb_uint = OpTypePointer StorageBuffer %uint
         %fn = OpTypeFunction %void
    %fn_uint = OpTypeFunction %uint %uint
       %in_a = OpVariable %ptr_a NodePayloadAMDX
       %in_b = OpVariable %ptr_b NodePayloadAMDX
    %out_buf = OpVariable %ptr_buf StorageBuffer
       %main = OpFunction %void None %fn
         %e0 = OpLabel
          %p = OpAccessChain %ptr_uint %in_a %uint_0 %uint_0
          %v = OpLoad %uint %p
          %w = OpFunctionCall %uint %helper %v
          %d = OpAccessChain %ptr_sb_uint %out_buf %uint_0 %uint_0
               OpStore %d %w
               OpReturn
               OpFunctionEnd
     %helper = OpFunction %uint None %fn_uint
      %param = OpFunctionParameter %uint
         %e1 = OpLabel
       %plus = OpIAdd %uint %param %uint_1
               OpReturnValue %plus
               OpFunctionEnd
      %other = OpFunction %void None %fn
         %e2 = OpLabel
               OpReturn
               OpFunctionEnd
     %unused = OpFunction %void None %fn
         %e3 = OpLabel
               OpReturn
               OpFunctionEnd
)";

TEST(LoweringPasses, SelectEntryPointKeepsOnlyTheNodeAndWhatItCalls) {
    const Module module = spirv::test::AssembleModule(kTwoEntryPoints, "two entry points");
    const std::uint32_t main_id = IdNamed(module, "main"), helper = IdNamed(module, "helper");
    const std::uint32_t other = IdNamed(module, "other"), unused = IdNamed(module, "unused");
    ASSERT_EQ(module.section(Section::kEntryPoint).size(), 2u);
    ASSERT_EQ(module.functions().size(), 4u);
    ASSERT_EQ(module.section(Section::kExecutionMode).size(), 4u);

    PassPipeline pipeline(module, "main");
    EXPECT_TRUE(pipeline.RunThrough(kSelectEntryPoint));
    const Module& selected = pipeline.module();
    ASSERT_EQ(selected.section(Section::kEntryPoint).size(), 1u);
    EXPECT_EQ(selected.section(Section::kEntryPoint)[0].Word(1), main_id);
    // Only main's two execution modes survive.
    ASSERT_EQ(selected.section(Section::kExecutionMode).size(), 2u);
    for (const Instruction& mode : selected.section(Section::kExecutionMode)) EXPECT_EQ(mode.Word(0), main_id);
    // main and the helper it calls stay, in their order; "other" and "unused" are gone.
    std::vector<std::uint32_t> functions;
    for (const Function& function : selected.functions()) functions.push_back(function.result_id());
    EXPECT_EQ(functions, (std::vector<std::uint32_t>{main_id, helper}));
    EXPECT_EQ(std::count(functions.begin(), functions.end(), other), 0);
    EXPECT_EQ(std::count(functions.begin(), functions.end(), unused), 0);
    // ...and so are their debug names (they would refer to ids that no longer exist).
    EXPECT_EQ(IdNamed(selected, "other"), 0u);
    EXPECT_EQ(IdNamed(selected, "unused"), 0u);
    EXPECT_EQ(IdNamed(selected, "helper"), helper);

    pipeline.FinishAndValidate();
    // The other node's input variable was not part of this node: it is gone from the final interface too.
    for (const Instruction& entry : pipeline.module().section(Section::kEntryPoint)) {
        for (std::size_t i = 0; i < entry.OperandWordCount(); ++i) {
            if (entry.IsIdOperand(i)) {
                EXPECT_NE(entry.Word(i), IdNamed(module, "in_b"));
            }
        }
    }
}

TEST(LoweringPasses, SelectEntryPointRejectsPayloadParameters) {
    // DXC -Od passes the payload to the node body as a parameter. LowerNode inlines such calls first
    // (InlinePayloadFunctions; tests PayloadFunctionInlining.*); run on its own, the pass refuses what was not inlined.
    std::string text = kTwoEntryPoints;
    auto replace = [&text](const std::string& from, const std::string& to) {
        const std::size_t at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
    };
    replace("%fn_uint = OpTypeFunction %uint %uint", "%fn_uint = OpTypeFunction %uint %ptr_a");
    replace("%w = OpFunctionCall %uint %helper %v", "%w = OpFunctionCall %uint %helper %in_a");
    replace("%param = OpFunctionParameter %uint", "%param = OpFunctionParameter %ptr_a");
    replace("%plus = OpIAdd %uint %param %uint_1",
            "%pp = OpAccessChain %ptr_uint %param %uint_0 %uint_0\n%plus = OpLoad %uint %pp");
    const Module module = spirv::test::AssembleModule(text, "payload parameter");
    const Result<NodeInfo> info = AnalyzeNode(module, "main", nullptr);
    ASSERT_TRUE(info.ok()) << info.error().ToString();
    const LoweringOptions options = spirv::test::MakeLoweringOptions(module, *info);
    LoweringContext ctx(*info, options);
    Module copy = module;
    Result<bool> ran = lowering::SelectEntryPointPass(ctx).Run(copy);
    ASSERT_FALSE(ran.ok());
    EXPECT_NE(ran.error().message.find("takes a node payload as a parameter"), std::string::npos) << ran.error().message;
}

// ---------------------------------------------------------------------------------------------------------------------
// 2. ResolvePayloadAliasesPass

TEST(LoweringPasses, ResolvePayloadAliasesTurnsLoadsOfAllocationsIntoCopies) {
    // output_sparse_array: %p = OpAllocate...; %v = OpLoad %out_arr %p; OpStore %records %v; enqueue %records.
    const Module module = Corpus("output_sparse_array.spvasm");
    const std::uint32_t records = IdNamed(module, "records");
    ASSERT_NE(records, 0u);
    PassPipeline pipeline(module, "main");
    pipeline.RunThrough(kSelectEntryPoint);
    const std::size_t loads_before = CountOpcode(pipeline.module(), Op::OpLoad);
    const std::size_t copies_before = CountOpcode(pipeline.module(), Op::OpCopyObject);
    EXPECT_TRUE(pipeline.RunThrough(kResolvePayloadAliases));
    const Module& resolved = pipeline.module();

    // Exactly the by-value load of the allocation became a copy of the allocation's result, under the same id.
    EXPECT_EQ(CountOpcode(resolved, Op::OpLoad), loads_before - 1);
    EXPECT_EQ(CountOpcode(resolved, Op::OpCopyObject), copies_before + 1);
    std::uint32_t allocation = 0;
    for (const Instruction* inst : BodyInstructions(resolved)) {
        if (inst->opcode() == Op::OpAllocateNodePayloadsAMDX) allocation = inst->result_id();
    }
    ASSERT_NE(allocation, 0u);
    const Instruction* copy = nullptr;
    for (const Instruction* inst : BodyInstructions(resolved)) {
        if (inst->opcode() == Op::OpCopyObject) copy = inst;
    }
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(copy->Word(0), allocation);
    EXPECT_EQ(copy->type_id(), pipeline.info().outputs[0].payload_array_type_id);
    // Every alias (the copy and the Function variable it is stored to) now traces back to that one allocation.
    EXPECT_EQ(pipeline.ctx().payload_source.at(copy->result_id()), allocation);
    EXPECT_EQ(pipeline.ctx().payload_source.at(records), allocation);
    EXPECT_EQ(pipeline.ctx().payload_source.at(allocation), allocation);

    pipeline.FinishAndValidate();
}

TEST(LoweringPasses, ResolvePayloadAliasesChangesNothingWithoutOutputs) {
    PassPipeline pipeline(Corpus("broadcast_static_grid.spvasm"), "main");
    pipeline.RunThrough(kSelectEntryPoint);
    const std::vector<std::uint32_t> before = WriteModule(pipeline.module());
    EXPECT_FALSE(pipeline.RunThrough(kResolvePayloadAliases));
    EXPECT_EQ(WriteModule(pipeline.module()), before);
    EXPECT_TRUE(pipeline.ctx().payload_source.empty());
    pipeline.FinishAndValidate();
}

// ---------------------------------------------------------------------------------------------------------------------
// 3. RuntimeContextPass

TEST(LoweringPasses, RuntimeContextAddsAddressingPushConstantsAndPrivateContext) {
    // Records with 16-bit members need the 16-bit storage capability once they live in buffer memory.
    PassPipeline pipeline(Corpus("broadcast_dynamic_grid_u16x2.spvasm"), "main");
    pipeline.RunThrough(kResolvePayloadAliases);
    const std::size_t functions_before = pipeline.module().functions().size();
    ASSERT_EQ(GlobalVariables(pipeline.module(), StorageClass::PushConstant), 0u);
    const std::size_t private_before = GlobalVariables(pipeline.module(), StorageClass::Private);
    EXPECT_FALSE(HasCapability(pipeline.module(), Capability::StorageBuffer16BitAccess));

    EXPECT_TRUE(pipeline.RunThrough(kRuntimeContext));
    const Module& m = pipeline.module();
    LoweringContext& ctx = pipeline.ctx();
    EXPECT_EQ(m.section(Section::kMemoryModel)[0].Word(0), static_cast<std::uint32_t>(AddressingModel::PhysicalStorageBuffer64));
    EXPECT_TRUE(HasCapability(m, Capability::PhysicalStorageBufferAddresses));
    EXPECT_TRUE(HasCapability(m, Capability::Int64));
    EXPECT_TRUE(HasCapability(m, Capability::StorageBuffer16BitAccess));
    // A push-constant block of our own: struct { uint64; uint x 6 } (NodePushContext) decorated Block, at context_offset.
    ASSERT_EQ(GlobalVariables(m, StorageClass::PushConstant), 1u);
    ASSERT_NE(ctx.push_constant_var, 0u);
    std::uint32_t block = 0;
    ASSERT_TRUE(lowering::PointerInfo(m, m.FindDef(ctx.push_constant_var)->type_id(), nullptr, &block));
    const Instruction* block_def = m.FindDef(block);
    ASSERT_EQ(block_def->opcode(), Op::OpTypeStruct);
    ASSERT_EQ(block_def->OperandWordCount(), kPushContextOffsets.size());
    EXPECT_EQ(ctx.push_constant_member, 0u);
    for (std::uint32_t member = 0; member < kPushContextOffsets.size(); ++member) {
        EXPECT_EQ(block_def->Word(member), member == 0 ? ctx.u64 : ctx.u32) << member;
        EXPECT_EQ(OffsetOf(m, block, member), std::optional<std::uint32_t>(pipeline.options().context_offset + kPushContextOffsets[member]))
            << member;
    }
    // Twelve Private context variables (scratch address, node index, output-table start + nine uint32 offsets/counts)
    // and the input-address helper.
    EXPECT_EQ(GlobalVariables(m, StorageClass::Private), private_before + 12);
    for (std::uint32_t var :
         {ctx.var_scratch, ctx.var_node_index, ctx.var_output_table_start, ctx.var_input_half, ctx.var_output_half,
          ctx.var_records_offset, ctx.var_directory_offset, ctx.var_heap_offset, ctx.var_directory_first, ctx.var_input_count,
          ctx.var_recursion_depth, ctx.var_first_payload_offset}) {
        ASSERT_NE(var, 0u);
        EXPECT_EQ(StorageOfPointer(m, m.FindDef(var)->type_id()), StorageClass::Private);
    }
    ASSERT_EQ(m.functions().size(), functions_before + 1);
    EXPECT_EQ(m.functions().back().result_id(), ctx.fn_input_record_address);

    pipeline.FinishAndValidate();
}

TEST(LoweringPasses, RuntimeContextExtendsTheApplicationsPushConstantBlock) {
    // Add an application push-constant block { uint a; uint b; } (8 bytes) used by the node.
    std::string text = spirv::test::CorpusText("broadcast_static_grid.spvasm");
    auto insert_after = [&text](const std::string& anchor, const std::string& what) {
        const std::size_t at = text.find(anchor);
        ASSERT_NE(at, std::string::npos) << anchor;
        text.insert(at + anchor.size(), what);
    };
    insert_after("OpDecorate %UAV Binding 0\n",
                 "OpMemberDecorate %PC 0 Offset 0\nOpMemberDecorate %PC 1 Offset 4\nOpDecorate %PC Block\n");
    insert_after("%_ptr_StorageBuffer_uint = OpTypePointer StorageBuffer %uint\n",
                 "%PC = OpTypeStruct %uint %uint\n%ptr_pc = OpTypePointer PushConstant %PC\n"
                 "%ptr_pc_uint = OpTypePointer PushConstant %uint\n%pc = OpVariable %ptr_pc PushConstant\n");
    insert_after("%tex = OpLoad %uint %tex_ptr\n", "%pcp = OpAccessChain %ptr_pc_uint %pc %uint_1\n%pcv = OpLoad %uint %pcp\n");
    const std::string store = "OpStore %dst %tex";
    text.replace(text.find(store), store.size(), "%sum = OpIAdd %uint %tex %pcv\nOpStore %dst %sum");
    const std::string entry = "%gl_GlobalInvocationID %UAV";
    text.replace(text.find(entry), entry.size(), entry + " %pc");
    const Module with_pc = spirv::test::AssembleModule(text, "static grid + push constants");

    PassPipeline pipeline(with_pc, "main");
    EXPECT_EQ(pipeline.options().context_offset, 8u);
    pipeline.RunThrough(kRuntimeContext);
    const Module& m = pipeline.module();
    // Still one push-constant variable: the application's, whose block gained NodePushContext at offset 8.
    ASSERT_EQ(GlobalVariables(m, StorageClass::PushConstant), 1u);
    std::uint32_t block = 0;
    ASSERT_TRUE(lowering::PointerInfo(m, m.FindDef(pipeline.ctx().push_constant_var)->type_id(), nullptr, &block));
    const Instruction* block_def = m.FindDef(block);
    ASSERT_EQ(block_def->OperandWordCount(), 2 + kPushContextOffsets.size());
    EXPECT_EQ(pipeline.ctx().push_constant_member, 2u);
    EXPECT_EQ(OffsetOf(m, block, 0), std::optional<std::uint32_t>(0u));
    EXPECT_EQ(OffsetOf(m, block, 1), std::optional<std::uint32_t>(4u));
    for (std::uint32_t member = 0; member < kPushContextOffsets.size(); ++member) {
        EXPECT_EQ(block_def->Word(2 + member), member == 0 ? pipeline.ctx().u64 : pipeline.ctx().u32) << member;
        EXPECT_EQ(OffsetOf(m, block, 2 + member), std::optional<std::uint32_t>(8u + kPushContextOffsets[member])) << member;
    }
    pipeline.FinishAndValidate();
}

// ---------------------------------------------------------------------------------------------------------------------
// 4. LaunchPass

TEST(LoweringPasses, LaunchPrependsThePrologueAndRetargetsBuiltins) {
    const Module module = Corpus("broadcast_static_grid.spvasm");
    const std::uint32_t global_id_input = lowering::FindBuiltinVariable(module, BuiltIn::GlobalInvocationId);
    ASSERT_NE(global_id_input, 0u);
    PassPipeline pipeline(module, "main");
    pipeline.RunThrough(kRuntimeContext);
    const Function* entry_before = lowering::FindFunction(pipeline.module(), pipeline.info().entry_point_id);
    ASSERT_NE(entry_before, nullptr);
    const std::uint32_t original_first_label = entry_before->blocks.front().label_id();
    const std::size_t blocks_before = entry_before->blocks.size();
    // The node's code reads GlobalInvocationId straight from the Input variable.
    std::uint32_t gid_load = 0;
    for (const Instruction* inst : BodyInstructions(pipeline.module())) {
        if (inst->opcode() == Op::OpLoad && inst->Word(0) == global_id_input) gid_load = inst->result_id();
    }
    ASSERT_NE(gid_load, 0u);
    ASSERT_EQ(lowering::FindBuiltinVariable(pipeline.module(), BuiltIn::WorkgroupId), 0u);

    EXPECT_TRUE(pipeline.RunThrough(kLaunch));
    const Module& m = pipeline.module();
    const Function* entry = lowering::FindFunction(pipeline.module(), pipeline.info().entry_point_id);
    ASSERT_NE(entry, nullptr);
    // New blocks in front: the first block is new and the original first block is still there.
    EXPECT_GT(entry->blocks.size(), blocks_before);
    EXPECT_NE(entry->blocks.front().label_id(), original_first_label);
    EXPECT_TRUE(std::any_of(entry->blocks.begin(), entry->blocks.end(),
                            [&](const BasicBlock& block) { return block.label_id() == original_first_label; }));
    // The prologue reads the real WorkgroupId (created, the node had none) and LocalInvocationIndex / Id.
    EXPECT_EQ(pipeline.ctx().builtin_workgroup_id, lowering::FindBuiltinVariable(m, BuiltIn::WorkgroupId));
    EXPECT_NE(pipeline.ctx().builtin_workgroup_id, 0u);
    EXPECT_NE(pipeline.ctx().builtin_local_invocation_index, 0u);
    // The node's own load of GlobalInvocationId now reads a Private copy the prologue writes; nothing reads the Input.
    const Instruction* load = BodyDef(m, gid_load);
    ASSERT_NE(load, nullptr);
    EXPECT_NE(load->Word(0), global_id_input);
    EXPECT_EQ(StorageOfPointer(m, m.FindDef(load->Word(0))->type_id()), StorageClass::Private);
    EXPECT_EQ(UsesInBodies(m, global_id_input), 0u);
    std::size_t stores_to_copy = 0;
    for (const Instruction* inst : BodyInstructions(m))
        stores_to_copy += inst->opcode() == Op::OpStore && inst->Word(0) == load->Word(0);
    EXPECT_EQ(stores_to_copy, 1u);
    // The prologue fills the context: the scratch address comes from the push constant.
    std::size_t scratch_stores = 0;
    for (const Instruction* inst : BodyInstructions(m))
        scratch_stores += inst->opcode() == Op::OpStore && inst->Word(0) == pipeline.ctx().var_scratch;
    EXPECT_EQ(scratch_stores, 1u);
    // Early returns for the workgroups past the node's work and past a dispatch group's: two OpReturns more.
    std::size_t returns = 0;
    for (const BasicBlock& block : entry->blocks) returns += block.instructions.back().opcode() == Op::OpReturn;
    EXPECT_EQ(returns, 3u);

    pipeline.FinishAndValidate();
}

// Issue 7: at a direct level (runtime::kLevelRecordListIsDirectory in the pushed level) the record list is the node's
// directory, so a workgroup of one invocation of a static broadcast node outside any dispatch group (a chain step), whose
// graph's node count is a constant (LoweringOptions::node_count), loads its entry's payload offset in the block that
// loads its record count and branches to return past the node's work, at an address that depends on no load of scratch
// at all: the entry's round trip runs beside the count's. Every other node, and a chain step without the node count,
// loads it after the branch, from the directory base it loaded with the count.
TEST(LoweringPasses, ChainStepLoadsItsRecordListEntryBesideItsRecordCountAtADirectLevel) {
    struct Case {
        const char* file;
        std::uint32_t node_count;
        bool group_member;
        std::size_t entries_beside_the_count;
    };
    for (const Case& c : {Case{"record_layout_16bit.spvasm", 5, false, 1}, Case{"record_layout_16bit.spvasm", 0, false, 0},
                          Case{"record_layout_16bit.spvasm", 5, true, 0}, Case{"broadcast_static_grid.spvasm", 5, false, 0},
                          Case{"thread_node.spvasm", 5, false, 0}, Case{"coalescing_max_records.spvasm", 5, false, 0}}) {
        SCOPED_TRACE(std::string(c.file) + " node count " + std::to_string(c.node_count) +
                     (c.group_member ? " (group member)" : ""));
        const Module module = Corpus(c.file);
        LoweringOptions options = PassPipeline(module, "main").options();
        options.node_count = c.node_count;
        options.dispatch_group_member = c.group_member;
        PassPipeline pipeline(module, "main", options, false);
        EXPECT_TRUE(pipeline.RunThrough(kLaunch));
        const Module& m = pipeline.module();
        const Function* entry = lowering::FindFunction(m, pipeline.info().entry_point_id);
        ASSERT_NE(entry, nullptr);
        std::set<std::uint32_t> return_blocks;
        for (const BasicBlock& block : entry->blocks) {
            if (block.instructions.size() == 2 && block.instructions.back().opcode() == Op::OpReturn)
                return_blocks.insert(block.label_id());
        }
        // Loads through a buffer address carry an Aligned memory operand; those of Private variables carry none.
        auto is_scratch_load = [&](const Instruction& inst) {
            return inst.opcode() == Op::OpLoad && inst.OperandWordCount() >= 3 &&
                   (inst.Word(1) & static_cast<std::uint32_t>(MemoryAccess::Aligned)) != 0;
        };
        // Ids computed from any scratch load of the prologue (in layout order, which defines before it uses here).
        std::set<std::uint32_t> from_loads;
        for (const BasicBlock& block : entry->blocks) {
            for (const Instruction& inst : block.instructions) {
                if (inst.result_id() == 0) continue;
                bool derived = is_scratch_load(inst);
                for (std::uint32_t w = 0; w < inst.OperandWordCount() && !derived; ++w)
                    derived = from_loads.count(inst.Word(w)) != 0;
                if (derived) from_loads.insert(inst.result_id());
            }
        }
        // The loads whose value the prologue keeps as record 0's payload offset, in the blocks that branch to a return.
        std::size_t entries_beside = 0;
        for (const BasicBlock& block : entry->blocks) {
            const Instruction& branch = block.instructions.back();
            if (branch.opcode() != Op::OpBranchConditional || !return_blocks.count(branch.Word(1))) continue;
            std::set<std::uint32_t> loads_here;
            for (const Instruction& inst : block.instructions) {
                if (is_scratch_load(inst)) loads_here.insert(inst.result_id());
                if (inst.opcode() != Op::OpStore || inst.Word(0) != pipeline.ctx().var_first_payload_offset ||
                    !loads_here.count(inst.Word(1)))
                    continue;
                const Instruction* load = m.FindDef(inst.Word(1));
                for (const Instruction& candidate : block.instructions) {
                    if (candidate.result_id() == inst.Word(1)) load = &candidate;
                }
                ASSERT_NE(load, nullptr);
                EXPECT_EQ(from_loads.count(load->Word(0)), 0u) << "the entry's address waits for a load";
                ++entries_beside;
            }
        }
        EXPECT_EQ(entries_beside, c.entries_beside_the_count);
        pipeline.FinishAndValidate();
    }
}

TEST(LoweringPasses, LaunchGivesThreadNodesTheBatchAsTheirWorkgroup) {
    PassPipeline probe(Corpus("thread_node.spvasm"), "main");
    LoweringOptions options = probe.options();
    options.thread_batch_size = 24;
    PassPipeline pipeline(Corpus("thread_node.spvasm"), "main", options, false);
    ASSERT_EQ(pipeline.info().launch, LaunchKind::kThread);
    pipeline.RunThrough(kRuntimeContext);
    auto local_sizes = [](const Module& m) {
        std::vector<std::vector<std::uint32_t>> sizes;
        for (const Instruction& inst : m.section(Section::kExecutionMode)) {
            if (inst.Word(1) != static_cast<std::uint32_t>(ExecutionMode::LocalSize)) continue;
            sizes.push_back({inst.Word(2), inst.Word(3), inst.Word(4)});
        }
        return sizes;
    };
    EXPECT_EQ(local_sizes(pipeline.module()), (std::vector<std::vector<std::uint32_t>>{{1, 1, 1}}));
    pipeline.RunThrough(kLaunch);
    EXPECT_EQ(local_sizes(pipeline.module()), (std::vector<std::vector<std::uint32_t>>{{24, 1, 1}}));
    pipeline.FinishAndValidate();
}

// ---------------------------------------------------------------------------------------------------------------------
// 5. LowerInputPass

TEST(LoweringPasses, LowerInputLooksUpEveryRecordAndLoadsTheBatchSize) {
    // coalescing_max_records: %count = OpNodePayloadArrayLengthAMDX %in; two access chains %in[%i].member.
    const Module module = Corpus("coalescing_max_records.spvasm");
    const std::uint32_t input = IdNamed(module, "in");
    PassPipeline pipeline(module, "main");
    pipeline.RunThrough(kLaunch);
    ASSERT_EQ(pipeline.info().input_variable_id, input);
    std::size_t input_chains = 0;
    std::uint32_t length = 0;
    for (const Instruction* inst : BodyInstructions(pipeline.module())) {
        input_chains += inst->opcode() == Op::OpAccessChain && inst->Word(0) == input;
        if (inst->opcode() == Op::OpNodePayloadArrayLengthAMDX) length = inst->result_id();
    }
    ASSERT_EQ(input_chains, 2u);
    ASSERT_NE(length, 0u);
    const std::size_t calls_before = CountOpcode(pipeline.module(), Op::OpFunctionCall);

    EXPECT_TRUE(pipeline.RunThrough(kLowerInput));
    const Module& m = pipeline.module();
    EXPECT_EQ(UsesInBodies(m, input), 0u) << "the input variable is no longer used";
    EXPECT_EQ(CountOpcode(m, Op::OpNodePayloadArrayLengthAMDX), 0u);
    // The length is the batch size the prologue stored, under the same result id.
    const Instruction* length_def = BodyDef(m, length);
    ASSERT_NE(length_def, nullptr);
    EXPECT_EQ(length_def->opcode(), Op::OpLoad);
    EXPECT_EQ(length_def->Word(0), pipeline.ctx().var_input_count);
    // One InputRecordAddress(index) call per access chain, converted to a PhysicalStorageBuffer record pointer.
    std::size_t address_calls = 0;
    for (const Instruction* inst : BodyInstructions(m)) {
        address_calls += inst->opcode() == Op::OpFunctionCall && inst->Word(0) == pipeline.ctx().fn_input_record_address;
    }
    EXPECT_EQ(address_calls, 2u);
    EXPECT_EQ(CountOpcode(m, Op::OpFunctionCall), calls_before + 2);
    EXPECT_GE(CountOpcode(m, Op::OpConvertUToPtr), 2u);
    pipeline.FinishAndValidate();
}

TEST(LoweringPasses, LowerInputTurnsFinishWritingIntoASharedDecrement) {
    PassPipeline pipeline(Corpus("track_finish_writing.spvasm"), "main");
    pipeline.RunThrough(kLaunch);
    std::uint32_t finish_id = 0;
    for (const Instruction* inst : BodyInstructions(pipeline.module())) {
        if (inst->opcode() == Op::OpFinishWritingNodePayloadAMDX) finish_id = inst->result_id();
    }
    ASSERT_NE(finish_id, 0u);
    const std::size_t functions_before = pipeline.module().functions().size();
    const std::size_t workgroup_before = GlobalVariables(pipeline.module(), StorageClass::Workgroup);

    pipeline.RunThrough(kLowerInput);
    const Module& m = pipeline.module();
    EXPECT_EQ(CountOpcode(m, Op::OpFinishWritingNodePayloadAMDX), 0u);
    // Same result id, now a call of a new helper that decrements the counter and shares the verdict (workgroup flag).
    const Instruction* call = BodyDef(m, finish_id);
    ASSERT_NE(call, nullptr);
    EXPECT_EQ(call->opcode(), Op::OpFunctionCall);
    ASSERT_EQ(m.functions().size(), functions_before + 1);
    EXPECT_EQ(call->Word(0), m.functions().back().result_id());
    EXPECT_EQ(GlobalVariables(m, StorageClass::Workgroup), workgroup_before + 1);
    std::size_t decrements = 0;
    for (const BasicBlock& block : m.functions().back().blocks) {
        for (const Instruction& inst : block.instructions) decrements += inst.opcode() == Op::OpAtomicISub;
    }
    EXPECT_EQ(decrements, 1u);
    pipeline.FinishAndValidate();
}

// ---------------------------------------------------------------------------------------------------------------------
// 6. LowerOutputsPass

TEST(LoweringPasses, LowerOutputsReplacesAllocateEnqueueAndIsValid) {
    // output_sparse_array: IsValid on the Function-variable output object, an Invocation allocation, one enqueue.
    const Module module = Corpus("output_sparse_array.spvasm");
    PassPipeline pipeline(module, "main");
    pipeline.RunThrough(kLowerInput);
    std::uint32_t allocation = 0, valid = 0;
    for (const Instruction* inst : BodyInstructions(pipeline.module())) {
        if (inst->opcode() == Op::OpAllocateNodePayloadsAMDX) allocation = inst->result_id();
        if (inst->opcode() == Op::OpIsNodePayloadValidAMDX) valid = inst->result_id();
    }
    ASSERT_NE(allocation, 0u);
    ASSERT_NE(valid, 0u);
    ASSERT_EQ(CountOpcode(pipeline.module(), Op::OpEnqueueNodePayloadsAMDX), 1u);
    const std::size_t functions_before = pipeline.module().functions().size();

    EXPECT_TRUE(pipeline.RunThrough(kLowerOutputs));
    const Module& m = pipeline.module();
    EXPECT_EQ(CountOpcode(m, Op::OpAllocateNodePayloadsAMDX), 0u);
    EXPECT_EQ(CountOpcode(m, Op::OpEnqueueNodePayloadsAMDX), 0u);
    EXPECT_EQ(CountOpcode(m, Op::OpIsNodePayloadValidAMDX), 0u);
    // The allocation's id is now the record-buffer pointer converted from the helper's address.
    const Instruction* pointer = BodyDef(m, allocation);
    ASSERT_NE(pointer, nullptr);
    EXPECT_EQ(pointer->opcode(), Op::OpConvertUToPtr);
    EXPECT_EQ(StorageOfPointer(m, pointer->type_id()), StorageClass::PhysicalStorageBuffer);
    const Instruction* address = BodyDef(m, pointer->Word(0));
    ASSERT_NE(address, nullptr);
    EXPECT_EQ(address->opcode(), Op::OpFunctionCall);
    EXPECT_EQ(address->type_id(), pipeline.ctx().u64);
    // IsValid keeps its id and becomes a call of the is-valid helper; two new helpers (allocate, is-valid).
    const Instruction* valid_call = BodyDef(m, valid);
    ASSERT_NE(valid_call, nullptr);
    EXPECT_EQ(valid_call->opcode(), Op::OpFunctionCall);
    EXPECT_EQ(valid_call->type_id(), pipeline.ctx().bool_type);
    EXPECT_NE(valid_call->Word(0), address->Word(0));
    EXPECT_EQ(m.functions().size(), functions_before + 2);
    pipeline.FinishAndValidate();
}

TEST(LoweringPasses, LowerOutputsSharesWorkgroupAllocationsThroughWorkgroupMemory) {
    PassPipeline pipeline(Corpus("hello_first_node.spvasm"), "firstNode");
    ASSERT_TRUE(pipeline.info().outputs.at(0).allocated_at_workgroup_scope);
    pipeline.RunThrough(kLowerInput);
    const std::size_t functions_before = pipeline.module().functions().size();
    const std::size_t workgroup_before = GlobalVariables(pipeline.module(), StorageClass::Workgroup);
    pipeline.RunThrough(kLowerOutputs);
    // Invocation allocate + the workgroup wrapper (leader allocates, shares the address in one Workgroup variable).
    EXPECT_EQ(pipeline.module().functions().size(), functions_before + 2);
    EXPECT_EQ(GlobalVariables(pipeline.module(), StorageClass::Workgroup), workgroup_before + 1);
    EXPECT_EQ(CountOpcode(pipeline.module(), Op::OpControlBarrier), 2u);
    pipeline.FinishAndValidate();
}

TEST(LoweringPasses, LowerOutputsChecksADenseArrayIndexAgainstItsTableGivenTheTypeId) {
    // output_dense_array_is_valid_type: `OpIsNodePayloadValidAMDX %bool %out_arr %node_idx` (type id), ArraySize 4.
    const Module module = Corpus("output_dense_array_is_valid_type.spvasm");
    PassPipeline pipeline(module, "main");
    ASSERT_EQ(pipeline.info().outputs.size(), 1u);
    EXPECT_FALSE(pipeline.info().outputs[0].sparse);
    EXPECT_EQ(pipeline.options().output_table_length, (std::vector<std::uint32_t>{4}));
    pipeline.RunThrough(kLowerInput);
    std::uint32_t valid = 0;
    for (const Instruction* inst : BodyInstructions(pipeline.module())) {
        if (inst->opcode() == Op::OpIsNodePayloadValidAMDX) {
            valid = inst->result_id();
            EXPECT_EQ(inst->Word(0), pipeline.info().outputs[0].payload_array_type_id) << "the operand is the type id";
        }
    }
    ASSERT_NE(valid, 0u);

    pipeline.RunThrough(kLowerOutputs);
    const Module& m = pipeline.module();
    const Instruction* call = BodyDef(m, valid);
    ASSERT_NE(call, nullptr);
    ASSERT_EQ(call->opcode(), Op::OpFunctionCall);
    const Function* helper = lowering::FindFunction(pipeline.module(), call->Word(0));
    ASSERT_NE(helper, nullptr);
    ASSERT_EQ(helper->header.size(), 2u);  // OpFunction + the node index parameter
    const std::uint32_t index = helper->header[1].result_id();
    // index < 4 (the dense array's table length), and the self-recursion check compares with this node's graph index,
    // which the prologue loads from NodePushContext::node_index (not a constant: nodes share lowered modules).
    bool bounds_check = false, self_check = false;
    for (const BasicBlock& block : helper->blocks) {
        for (const Instruction& inst : block.instructions) {
            if (inst.opcode() == Op::OpULessThan && inst.Word(0) == index) {
                Result<std::uint32_t> bound = EvaluateUint32(m, inst.Word(1));
                bounds_check |= bound.ok() && *bound == 4u;
            }
            if (inst.opcode() == Op::OpIEqual) {
                const Instruction* node = BodyDef(m, inst.Word(1));
                self_check |= node != nullptr && node->opcode() == Op::OpLoad && node->Word(0) == pipeline.ctx().var_node_index;
            }
        }
    }
    EXPECT_TRUE(bounds_check);
    EXPECT_TRUE(self_check);
    pipeline.FinishAndValidate();
}

// ---------------------------------------------------------------------------------------------------------------------
// 7. RewritePayloadPointersPass

TEST(LoweringPasses, RewritePayloadPointersMovesPayloadsToPhysicalStorageBuffer) {
    const Module module = Corpus("output_sparse_array.spvasm");
    const std::uint32_t records = IdNamed(module, "records");
    PassPipeline pipeline(module, "main");
    pipeline.RunThrough(kLowerOutputs);
    auto payload_typed = [](const Module& m) {
        std::size_t count = 0;
        for (const Instruction* inst : BodyInstructions(m)) {
            if (inst->type_id() == 0) continue;
            const Instruction* type = m.FindDef(inst->type_id());
            count += type != nullptr && ((type->opcode() == Op::OpTypePointer &&
                                          type->Word(0) == static_cast<std::uint32_t>(StorageClass::NodePayloadAMDX)) ||
                                         type->opcode() == Op::OpTypeNodePayloadArrayAMDX);
        }
        return count;
    };
    ASSERT_GT(payload_typed(pipeline.module()), 0u);

    EXPECT_TRUE(pipeline.RunThrough(kRewritePayloadPointers));
    const Module& m = pipeline.module();
    EXPECT_EQ(payload_typed(m), 0u) << "no value of NodePayloadAMDX pointer or payload-array type is left";
    // The Function variable that aliased the allocation now holds a PhysicalStorageBuffer pointer: AliasedPointer.
    const Instruction* var = BodyDef(m, records);
    ASSERT_NE(var, nullptr);
    std::uint32_t pointee = 0;
    ASSERT_TRUE(lowering::PointerInfo(m, var->type_id(), nullptr, &pointee));
    EXPECT_EQ(StorageOfPointer(m, pointee), StorageClass::PhysicalStorageBuffer);
    bool aliased = false;
    for (const Instruction* decoration : m.DecorationsOf(records)) {
        aliased |= decoration->Word(1) == static_cast<std::uint32_t>(Decoration::AliasedPointer);
    }
    EXPECT_TRUE(aliased);
    // Every load and store through a PhysicalStorageBuffer pointer carries Aligned: the input's node_idx (its 4-byte
    // records may follow one another: 4) and the output's value at the start of a 16-byte aligned allocation (16).
    const std::unordered_map<std::uint32_t, std::uint32_t> types = lowering::CollectResultTypes(m);
    std::size_t buffer_accesses = 0;
    std::set<std::uint32_t> alignments;
    for (const Instruction* inst : BodyInstructions(m)) {
        if (inst->opcode() != Op::OpLoad && inst->opcode() != Op::OpStore) continue;
        const auto type = types.find(inst->Word(0));
        if (type == types.end() || StorageOfPointer(m, type->second) != StorageClass::PhysicalStorageBuffer) continue;
        ++buffer_accesses;
        const std::size_t mask = inst->opcode() == Op::OpLoad ? 1 : 2;
        ASSERT_GT(inst->OperandWordCount(), mask + 1);
        EXPECT_NE(inst->Word(mask) & static_cast<std::uint32_t>(MemoryAccess::Aligned), 0u);
        alignments.insert(inst->Word(mask + 1));
    }
    EXPECT_GE(buffer_accesses, 2u);  // the input's node_idx load and the output's value store
    EXPECT_EQ(alignments, (std::set<std::uint32_t>{4, 16}));
    pipeline.FinishAndValidate();
}

// ---------------------------------------------------------------------------------------------------------------------
// 8. MemorySemanticsPass

TEST(LoweringPasses, MemorySemanticsTurnsOutputMemoryIntoUniformMemory) {
    // track_finish_writing: OpControlBarrier Workgroup Device 0x1148 (AcquireRelease|Uniform|Workgroup|OutputMemory).
    PassPipeline pipeline(Corpus("track_finish_writing.spvasm"), "main");
    pipeline.RunThrough(kRewritePayloadPointers);
    auto semantics_values = [](const Module& m) {
        std::vector<std::uint32_t> values;
        for (const Instruction* inst : BodyInstructions(m)) {
            for (std::size_t i = 0; i < inst->OperandWordCount(); ++i) {
                if (inst->KindOf(i) != OperandKind::IdMemorySemantics) continue;
                Result<std::uint32_t> value = EvaluateUint32(m, inst->Word(i));
                EXPECT_TRUE(value.ok());
                if (value.ok()) values.push_back(*value);
            }
        }
        std::sort(values.begin(), values.end());
        return values;
    };
    const std::vector<std::uint32_t> before = semantics_values(pipeline.module());
    ASSERT_EQ(std::count(before.begin(), before.end(), 0x1148u), 1);

    EXPECT_TRUE(pipeline.RunThrough(kMemorySemantics));
    std::vector<std::uint32_t> expected = before;
    std::replace(expected.begin(), expected.end(), 0x1148u, 0x148u);
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(semantics_values(pipeline.module()), expected) << "only the OutputMemory operand changed";
    pipeline.FinishAndValidate();
}

TEST(LoweringPasses, MemorySemanticsLeavesOtherSemanticsAlone) {
    PassPipeline pipeline(Corpus("workgroup_shared_barrier.spvasm"), "main");
    pipeline.RunThrough(kRewritePayloadPointers);
    const std::vector<std::uint32_t> before = WriteModule(pipeline.module());
    EXPECT_FALSE(pipeline.RunThrough(kMemorySemantics));
    EXPECT_EQ(WriteModule(pipeline.module()), before);
    pipeline.FinishAndValidate();
}

// ---------------------------------------------------------------------------------------------------------------------
// 9. LevelHandOffPass

// The thread_node corpus module's pipeline with its default lowering options changed by `change`.
template <typename Change>
PassPipeline ThreadNodePipeline(Change change) {
    const Module module = Corpus("thread_node.spvasm");
    LoweringOptions options = PassPipeline(module, "main").options();
    change(options);
    return PassPipeline(module, "main", options, false);
}

// Loads of scratch (PhysicalStorageBuffer) in `function`'s blocks before its first instruction with `opcode`, and that
// instruction (nullptr if none).
std::pair<std::size_t, const Instruction*> ScratchLoadsBefore(const Module& m, const Function& function, Op opcode) {
    std::size_t loads = 0;
    for (const BasicBlock& block : function.blocks) {
        for (const Instruction& inst : block.instructions) {
            if (inst.opcode() == opcode) return {loads, &inst};
            if (inst.opcode() != Op::OpLoad) continue;
            const Instruction* pointer = m.FindDef(inst.Word(0));
            loads += pointer != nullptr && StorageOfPointer(m, pointer->type_id()) == StorageClass::PhysicalStorageBuffer;
        }
    }
    return {loads, nullptr};
}

// The hello graph's second node (coalescing, one invocation, one allocation) batched one record per workgroup, as a chain
// step's, reserving heap and list with one atomic, with the graph's node-table and statistics offsets known or not.
PassPipeline OneInvocationStepPipeline(bool offsets_known) {
    const Module module = Corpus("hello_second_node.spvasm");
    LoweringOptions options = PassPipeline(module, "secondNode").options();
    options.thread_batch_size = 1;
    options.heap_holds_record_list = true;
    options.node_table_offset = offsets_known ? 256 : 0;
    options.node_stats_offset = offsets_known ? 1024 : 0;
    return PassPipeline(module, "secondNode", options, false);
}

// The function the entry point names (the hand-off's wrapper once LevelHandOffPass ran), or nullptr.
const Function* EntryWrapper(const Module& m) {
    for (const Function& function : m.functions()) {
        if (function.header.front().result_id() == m.section(Section::kEntryPoint)[0].Word(1)) return &function;
    }
    return nullptr;
}

// A workgroup of one invocation (a coalescing node of one invocation, as a chain step is) whose graph's node-table and
// statistics offsets are known (LoweringOptions) and whose
// allocations reserve heap and list with one atomic keeps what it adds to the half's counters, and loads the next level's
// consumer's table entry and statistics (and the node count and record capacity) before the node's code: its hand-off
// then reads scratch only for a dispatch group's member count. Without the offsets it reads them after the code.
TEST(LoweringPasses, LevelHandOffOfAOneInvocationWorkgroupLoadsWhatItNeedsBeforeTheNodesCode) {
    for (const bool offsets_known : {true, false}) {
        SCOPED_TRACE(offsets_known ? "offsets known" : "offsets loaded");
        PassPipeline pipeline = OneInvocationStepPipeline(offsets_known);
        EXPECT_TRUE(pipeline.RunThrough(kLevelHandOff));
        const Module& m = pipeline.module();
        const Function* wrapper = EntryWrapper(m);
        ASSERT_NE(wrapper, nullptr);
        // Before the call: what level L launched, and with the offsets known the node count, record capacity, the
        // consumer's launch kind, batch and grid (five words) and its statistics (one vector); else the two offsets.
        const auto [loads_before_call, call] = ScratchLoadsBefore(m, *wrapper, Op::OpFunctionCall);
        ASSERT_NE(call, nullptr);
        EXPECT_EQ(loads_before_call, offsets_known ? 9u : 3u);
        const std::size_t loads_in_wrapper = ScratchLoadsBefore(m, *wrapper, Op::OpKill).first;
        if (offsets_known) {
            EXPECT_EQ(loads_in_wrapper - loads_before_call, 1u);  // a group dispatch's member count
        } else {
            EXPECT_GT(loads_in_wrapper - loads_before_call, 7u);
        }
        pipeline.FinishAndValidate();
    }
}

// Issue 7: NodeStats' records, dispatches and workgroups are read by the statistics line alone, so the level hand-off loads
// and writes the next consumer's only under runtime::kDirectLevelStatistics in the pushed consumer word (the scheduler
// sets it where the report keeps them). Every store of them (16 bytes where the hand-off reads them back after the
// node's code; 8 and 4 where a workgroup of one invocation loaded them before it) and the preload lie inside selections
// on that bit.
TEST(LoweringPasses, LevelHandOffUpdatesTheConsumersStatisticsOnlyWhereTheReportKeepsThem) {
    for (const bool offsets_known : {true, false}) {
        SCOPED_TRACE(offsets_known ? "offsets known" : "offsets loaded");
        PassPipeline pipeline = OneInvocationStepPipeline(offsets_known);
        EXPECT_TRUE(pipeline.RunThrough(kLevelHandOff));
        const Module& m = pipeline.module();
        std::set<std::uint32_t> bit_constants;
        for (const Instruction& inst : m.section(Section::kTypesValues)) {
            if (inst.opcode() == Op::OpConstant && inst.OperandWordCount() == 1 && inst.Word(0) == runtime::kDirectLevelStatistics)
                bit_constants.insert(inst.result_id());
        }
        ASSERT_EQ(bit_constants.size(), 1u);
        const Function* wrapper = EntryWrapper(m);
        ASSERT_NE(wrapper, nullptr);
        // Ids computed from the bit; blocks of the selections that branch on one of them (structured: from the true
        // label up to the merge label, in layout order).
        std::set<std::uint32_t> from_bit;
        std::size_t selections = 0, stores_inside = 0, vector_loads_inside = 0;
        const auto& blocks = wrapper->blocks;
        for (std::size_t i = 0; i < blocks.size(); ++i) {
            for (const Instruction& inst : blocks[i].instructions) {
                if (inst.result_id() == 0) continue;
                for (std::uint32_t w = 0; w < inst.OperandWordCount(); ++w) {
                    if (bit_constants.count(inst.Word(w)) || from_bit.count(inst.Word(w))) from_bit.insert(inst.result_id());
                }
            }
            const Instruction& branch = blocks[i].instructions.back();
            if (branch.opcode() != Op::OpBranchConditional || !from_bit.count(branch.Word(0))) continue;
            const Instruction& merge = blocks[i].instructions[blocks[i].instructions.size() - 2];
            ASSERT_EQ(merge.opcode(), Op::OpSelectionMerge);
            ++selections;
            for (std::size_t j = i + 1; j < blocks.size() && blocks[j].label_id() != merge.Word(0); ++j) {
                for (const Instruction& inst : blocks[j].instructions) {
                    const bool aligned = inst.OperandWordCount() >= 3 && (inst.Word(inst.opcode() == Op::OpStore ? 2 : 1) &
                                                                          static_cast<std::uint32_t>(MemoryAccess::Aligned)) != 0;
                    stores_inside += inst.opcode() == Op::OpStore && aligned;
                    vector_loads_inside += inst.opcode() == Op::OpLoad && aligned;
                }
            }
        }
        // With the offsets known: the preload (one 16-byte load) and the two stores after the code; else one 16-byte load
        // and store after it. The group's member loop (not lowered here) has its own selection.
        EXPECT_EQ(selections, offsets_known ? 2u : 1u);
        EXPECT_EQ(vector_loads_inside, 1u);
        EXPECT_EQ(stores_inside, offsets_known ? 2u : 1u);
        pipeline.FinishAndValidate();
    }
}

// Issue 7: an allocation raises its output half's level_pass_workgroups (the next level pass's width) only where a level
// pass follows: where the pushed next-level consumer names one, the next level is direct and nothing reads the count.
// So the allocation's OpAtomicUMax lies in a selection whose condition compares that push-constant word.
TEST(LoweringPasses, AllocationsSizeTheNextLevelPassOnlyWhereOneFollows) {
    for (const std::uint32_t batch : {32u, 1u}) {
        SCOPED_TRACE("thread batch " + std::to_string(batch));
        const Module module = Corpus("hello_second_node.spvasm");
        LoweringOptions options = PassPipeline(module, "secondNode").options();
        options.thread_batch_size = batch;
        PassPipeline pipeline(module, "secondNode", options, false);
        EXPECT_TRUE(pipeline.RunThrough(kLowerOutputs));
        const Module& m = pipeline.module();
        const LoweringContext& ctx = pipeline.ctx();
        const std::uint32_t consumer_member =
            ctx.push_constant_member + static_cast<std::uint32_t>(lowering::PushContextMember::kNextLevelConsumer);
        std::size_t raises_inside = 0, raises = 0;
        for (const Function& function : m.functions()) {
            // Ids computed from a load of NodePushContext::next_level_consumer within this function.
            std::set<std::uint32_t> from_consumer;
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) {
                    if (inst.result_id() == 0) continue;
                    bool derived = false;
                    if (inst.opcode() == Op::OpAccessChain && inst.Word(0) == ctx.push_constant_var &&
                        inst.OperandWordCount() == 2) {
                        const Result<std::uint32_t> member = EvaluateUint32(m, inst.Word(1));
                        derived = member && *member == consumer_member;
                    }
                    for (std::uint32_t w = 0; w < inst.OperandWordCount() && !derived; ++w)
                        derived = from_consumer.count(inst.Word(w)) != 0;
                    if (derived) from_consumer.insert(inst.result_id());
                }
            }
            const auto& blocks = function.blocks;
            for (std::size_t i = 0; i < blocks.size(); ++i) {
                for (const Instruction& inst : blocks[i].instructions) raises += inst.opcode() == Op::OpAtomicUMax;
                const Instruction& branch = blocks[i].instructions.back();
                if (branch.opcode() != Op::OpBranchConditional || !from_consumer.count(branch.Word(0))) continue;
                const Instruction& merge = blocks[i].instructions[blocks[i].instructions.size() - 2];
                ASSERT_EQ(merge.opcode(), Op::OpSelectionMerge);
                for (std::size_t j = i + 1; j < blocks.size() && blocks[j].label_id() != merge.Word(0); ++j) {
                    for (const Instruction& inst : blocks[j].instructions) raises_inside += inst.opcode() == Op::OpAtomicUMax;
                }
            }
        }
        // The allocation's raise, under the condition; the other UMax (a drop's first level) is not.
        EXPECT_EQ(raises_inside, 1u);
        EXPECT_GT(raises, raises_inside);
        pipeline.FinishAndValidate();
    }
}

// A thread node lowered to batches of 32 invocations, and to workgroups of one invocation (a batch of 1, as a chain
// step's): the wrapper runs the node's code, then counts the workgroup in uniform control flow.
TEST(LoweringPasses, LevelHandOffWrapsTheEntryPointAndCountsWorkgroupsInUniformControlFlow) {
    for (std::uint32_t batch : {32u, 1u}) {
        SCOPED_TRACE("thread batch " + std::to_string(batch));
        PassPipeline pipeline = ThreadNodePipeline([&](LoweringOptions& options) { options.thread_batch_size = batch; });
        pipeline.RunThrough(kMemorySemantics);
        const std::uint32_t lowered_entry = pipeline.info().entry_point_id;
        const std::size_t functions_before = pipeline.module().functions().size();
        const std::size_t barriers_before = CountOpcode(pipeline.module(), Op::OpControlBarrier);

        EXPECT_TRUE(pipeline.RunThrough(kLevelHandOff));
        const Module& m = pipeline.module();
        ASSERT_EQ(m.functions().size(), functions_before + 1);
        // The entry point and its execution modes name the wrapper; the lowered entry is called once, from it.
        ASSERT_EQ(m.section(Section::kEntryPoint).size(), 1u);
        const std::uint32_t wrapper = m.section(Section::kEntryPoint)[0].Word(1);
        EXPECT_NE(wrapper, lowered_entry);
        for (const Instruction& mode : m.section(Section::kExecutionMode)) EXPECT_EQ(mode.Word(0), wrapper);
        const Function* wrapper_function = nullptr;
        for (const Function& function : m.functions()) {
            if (function.header.front().result_id() == wrapper) wrapper_function = &function;
        }
        ASSERT_NE(wrapper_function, nullptr);
        EXPECT_EQ(UsesInBodies(m, lowered_entry), 1u);
        // The node's code runs before the hand-off, all of it. Only in a workgroup of one invocation do the hand-off's
        // loads of what level L launched and of the node-table and statistics offsets come before it (a compiler cannot
        // move them above the node's stores): held through larger workgroups' code, they cost occupancy.
        const auto [loads_before_call, call] = ScratchLoadsBefore(m, *wrapper_function, Op::OpFunctionCall);
        ASSERT_NE(call, nullptr);
        EXPECT_EQ(call->Word(0), lowered_entry);
        EXPECT_EQ(loads_before_call, batch == 1 ? 3u : 0u);
        // Two workgroup barriers, both in the wrapper (after the call, so every invocation reaches them), and one
        // workgroup variable for the last-workgroup flag; a workgroup of one invocation needs neither, so that it uses no
        // workgroup memory.
        const std::size_t barriers = batch == 1 ? 0u : 2u;
        EXPECT_EQ(CountOpcode(m, Op::OpControlBarrier), barriers_before + barriers);
        std::size_t wrapper_barriers = 0;
        for (const BasicBlock& block : wrapper_function->blocks) {
            for (const Instruction& inst : block.instructions) wrapper_barriers += inst.opcode() == Op::OpControlBarrier;
        }
        EXPECT_EQ(wrapper_barriers, barriers);
        EXPECT_EQ(GlobalVariables(m, StorageClass::Workgroup), batch == 1 ? 0u : 1u);
        // The header words the last workgroup needs (the level's launched workgroups, node count, node-table and
        // statistics offsets, record capacity) are loaded before the count, so that its reads of the consumer's table
        // entry wait for nothing but the count (issue 7), and the device-scope counter is HalfHeader::level_pass_done.
        const auto [loads_before_count, count] = ScratchLoadsBefore(m, *wrapper_function, Op::OpAtomicIAdd);
        ASSERT_NE(count, nullptr);
        EXPECT_EQ(loads_before_count, 5u);
        // A level of one workgroup takes no count: the atomic sits in a block of its own, which holds no barrier.
        for (const BasicBlock& block : wrapper_function->blocks) {
            if (std::none_of(block.instructions.begin(), block.instructions.end(),
                             [&](const Instruction& inst) { return &inst == count; })) {
                continue;
            }
            for (const Instruction& inst : block.instructions) EXPECT_NE(inst.opcode(), Op::OpControlBarrier);
        }
        pipeline.FinishAndValidate();
    }
}

// A node lowered without the hand-off (LoweringOptions::level_hand_off), whose invocations all run its code, keeps its
// entry point: the pass changes nothing.
TEST(LoweringPasses, LevelHandOffLeavesANodeLoweredWithoutItAlone) {
    PassPipeline pipeline = ThreadNodePipeline([](LoweringOptions& options) { options.level_hand_off = false; });
    pipeline.RunThrough(kMemorySemantics);
    const std::vector<std::uint32_t> before = WriteModule(pipeline.module());
    EXPECT_FALSE(pipeline.RunThrough(kLevelHandOff));
    EXPECT_EQ(WriteModule(pipeline.module()), before);
    EXPECT_EQ(pipeline.module().section(Section::kEntryPoint)[0].Word(1), pipeline.info().entry_point_id);
    EXPECT_FALSE(pipeline.FinishAndValidate().empty());
}

// ---------------------------------------------------------------------------------------------------------------------
// 10. StripAmdxPass

TEST(LoweringPasses, StripAmdxRemovesEveryAmdxDeclarationAndRecomputesTheInterface) {
    const Module module = Corpus("output_sparse_array.spvasm");
    PassPipeline pipeline(module, "main");
    pipeline.RunThrough(kLevelHandOff);
    const Module& before = pipeline.module();
    ASSERT_TRUE(HasCapability(before, Capability::ShaderEnqueueAMDX));
    ASSERT_EQ(CountOpcode(before, Op::OpTypeNodePayloadArrayAMDX), 2u);
    ASSERT_EQ(CountOpcode(before, Op::OpConstantStringAMDX), 1u);
    const std::size_t private_and_push =
        GlobalVariables(before, StorageClass::Private) + GlobalVariables(before, StorageClass::PushConstant);

    EXPECT_TRUE(pipeline.RunThrough(kStripAmdx));
    const Module& m = pipeline.module();
    EXPECT_FALSE(HasCapability(m, Capability::ShaderEnqueueAMDX));
    for (const Instruction& inst : m.section(Section::kExtension)) EXPECT_NE(inst.StringAt(0), "SPV_AMDX_shader_enqueue");
    for (const Instruction& inst : m.section(Section::kExecutionMode)) {
        EXPECT_NE(inst.Word(1), static_cast<std::uint32_t>(ExecutionMode::ShaderIndexAMDX));
        EXPECT_NE(inst.Word(1), static_cast<std::uint32_t>(ExecutionMode::StaticNumWorkgroupsAMDX));
    }
    EXPECT_EQ(CountOpcode(m, Op::OpTypeNodePayloadArrayAMDX), 0u);
    EXPECT_EQ(CountOpcode(m, Op::OpConstantStringAMDX), 0u);
    EXPECT_EQ(CountOpcode(m, Op::OpDecorateId), 0u) << "every OpDecorateId here was an AMDX decoration";
    EXPECT_EQ(GlobalVariables(m, StorageClass::NodePayloadAMDX), 0u);
    for (const Instruction& inst : m.section(Section::kTypesValues)) {
        if (inst.opcode() == Op::OpTypePointer) {
            EXPECT_NE(inst.Word(0), static_cast<std::uint32_t>(StorageClass::NodePayloadAMDX));
        }
    }
    // SPIR-V 1.4+: the interface lists every global the entry point uses; the NodePayloadAMDX input is gone from it.
    ASSERT_EQ(m.section(Section::kEntryPoint).size(), 1u);
    const Instruction& entry = m.section(Section::kEntryPoint)[0];
    const std::size_t interface = entry.OperandWordCount() - 2 - entry.StringWordCount(2);
    EXPECT_GE(interface, private_and_push);
    for (std::size_t i = 2 + entry.StringWordCount(2); i < entry.OperandWordCount(); ++i)
        EXPECT_NE(entry.Word(i), IdNamed(module, "in"));

    // The final module is what LowerNode returns for the same options, less the OpModuleProcessed that records them.
    const std::vector<std::uint32_t> words = pipeline.FinishAndValidate();
    Result<LoweredNode> lowered = LowerNode(module, pipeline.info(), pipeline.options());
    ASSERT_TRUE(lowered.ok()) << lowered.error().ToString();
    Result<Module> returned = ReadModule(lowered->words);
    ASSERT_TRUE(returned.ok()) << returned.error().ToString();
    std::vector<Instruction>& processed = returned->mutable_section(Section::kDebugModuleProcessed);
    ASSERT_FALSE(processed.empty());
    EXPECT_EQ(processed.back().StringAt(0), LoweringOptionsRecord(pipeline.options()));
    processed.pop_back();
    EXPECT_EQ(WriteModule(*returned), words);
}

}  // namespace
}  // namespace execgraph::spirv
