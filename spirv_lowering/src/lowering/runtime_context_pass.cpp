// SPDX-License-Identifier: Apache-2.0
// Gives the module what every lowered construct builds on (docs/design.md, "How a node receives its scheduler
// context"): PhysicalStorageBuffer64 addressing, the scratch address from the NodePushContext in push constants (an
// extra member of the application's push-constant block when there is one: Vulkan allows one push-constant block per
// entry point), the Private context variables the prologue fills, and the input-record address helper.
#include <algorithm>
#include <string>
#include <unordered_set>

#include "execgraph/spirv/decorations.h"
#include "execgraph/spirv/layout.h"
#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

// Widest / narrowest scalar bit widths reachable from `type_id` (records only hold ints, floats and aggregates).
void CollectScalarWidths(const Module& module, std::uint32_t type_id, std::unordered_set<std::uint32_t>& widths,
                         std::unordered_set<std::uint32_t>& seen) {
    if (!seen.insert(type_id).second) return;
    const Instruction* def = module.FindDef(type_id);
    if (def == nullptr) return;
    switch (def->opcode()) {
        case Op::OpTypeInt:
        case Op::OpTypeFloat:
            widths.insert(def->Word(0));
            break;
        case Op::OpTypeVector:
        case Op::OpTypeMatrix:
        case Op::OpTypeArray:
        case Op::OpTypeRuntimeArray:
        case Op::OpTypeNodePayloadArrayAMDX:
            CollectScalarWidths(module, def->Word(0), widths, seen);
            break;
        case Op::OpTypeStruct:
            for (std::size_t i = 0; i < def->OperandWordCount(); ++i) CollectScalarWidths(module, def->Word(i), widths, seen);
            break;
        default:
            break;
    }
}

void AddMemberDecoration(Module& module, std::uint32_t struct_id, std::uint32_t member, Decoration decoration, std::uint32_t value) {
    Instruction inst(Op::OpMemberDecorate);
    inst.AddId(struct_id).AddLiteral(member).AddEnum(OperandKind::Decoration, decoration).AddLiteral(value);
    module.Append(Section::kAnnotation, std::move(inst));
}

}  // namespace

Result<bool> RuntimeContextPass::Run(Module& module) {
    if (ctx_.options.context_offset % 8 != 0) {
        return Error{kNoWordOffset, "context_offset " + std::to_string(ctx_.options.context_offset) + " is not 8-byte aligned"};
    }
    ctx_.types = std::make_unique<TypeManager>(module);
    TypeManager& types = *ctx_.types;
    ctx_.void_type = types.GetVoid();
    ctx_.bool_type = types.GetBool();
    ctx_.u32 = types.GetUint32();
    ctx_.u64 = types.GetInt(64, false);
    ctx_.v3u32 = types.GetVector(ctx_.u32, 3);
    ctx_.psb_u32 = types.GetPointer(StorageClass::PhysicalStorageBuffer, ctx_.u32);
    for (std::uint32_t i = 0; i < ctx_.info.outputs.size(); ++i) ctx_.output_of_array_type[ctx_.info.outputs[i].payload_array_type_id] = i;

    // Addressing model: payloads and scratch are reached through buffer device addresses.
    std::vector<Instruction>& memory_model = module.mutable_section(Section::kMemoryModel);
    if (memory_model.size() != 1) return Error{kNoWordOffset, "module has no OpMemoryModel"};
    if (memory_model[0].Word(0) != static_cast<std::uint32_t>(AddressingModel::Logical) &&
        memory_model[0].Word(0) != static_cast<std::uint32_t>(AddressingModel::PhysicalStorageBuffer64)) {
        return Error{kNoWordOffset, "addressing model " + std::to_string(memory_model[0].Word(0)) + " is not Logical"};
    }
    memory_model[0].SetWord(0, static_cast<std::uint32_t>(AddressingModel::PhysicalStorageBuffer64));
    module.AddCapability(Capability::PhysicalStorageBufferAddresses);
    module.AddCapability(Capability::Int64);
    module.AddExtension("SPV_KHR_physical_storage_buffer");
    // Output allocations aggregate their atomics per subgroup (lower_outputs_pass.cpp: the highest lane's inclusive scan
    // is the total, and its atomic's result is shuffled to the others, lowering_context.h); the layer requires these
    // subgroup operations in compute (docs/design.md, Requirements). GroupNonUniform instructions need SPIR-V 1.3, which
    // Vulkan 1.3 always accepts; later versions are kept.
    module.AddCapability(Capability::GroupNonUniform);
    module.AddCapability(Capability::GroupNonUniformVote);
    module.AddCapability(Capability::GroupNonUniformArithmetic);
    module.AddCapability(Capability::GroupNonUniformBallot);
    module.AddCapability(Capability::GroupNonUniformShuffle);
    constexpr std::uint32_t kSpirvVersion1_3 = 0x00010300u;
    if (module.header().version < kSpirvVersion1_3) module.header().version = kSpirvVersion1_3;

    // Records move from NodePayloadAMDX to PhysicalStorageBuffer storage, where narrow types need the storage caps.
    std::unordered_set<std::uint32_t> widths, seen;
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (inst.opcode() == Op::OpTypePointer && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::NodePayloadAMDX)) {
            CollectScalarWidths(module, inst.Word(1), widths, seen);
        }
    }
    if (widths.count(16) != 0) {
        module.AddCapability(Capability::StorageBuffer16BitAccess);
        module.AddExtension("SPV_KHR_16bit_storage");
    }
    if (widths.count(8) != 0) {
        module.AddCapability(Capability::StorageBuffer8BitAccess);
        module.AddExtension("SPV_KHR_8bit_storage");
    }

    // Push constants: append the scratch address to the existing block, or add a block of our own.
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::PushConstant)) {
            if (ctx_.push_constant_var != 0) return Error{kNoWordOffset, "module declares more than one push-constant variable"};
            ctx_.push_constant_var = inst.result_id();
        }
    }
    std::uint32_t block_struct = 0;
    if (ctx_.push_constant_var != 0) {
        std::uint32_t pointee = 0;
        PointerInfo(module, module.FindDef(ctx_.push_constant_var)->type_id(), nullptr, &pointee);
        const Instruction* block = module.FindDef(pointee);
        if (block == nullptr || block->opcode() != Op::OpTypeStruct) return Error{kNoWordOffset, "push-constant variable is not a struct"};
        Result<std::uint32_t> size = ExplicitLayoutSize(module, pointee);
        if (!size) return Error{kNoWordOffset, "push-constant block: " + size.error().message};
        if (*size > ctx_.options.context_offset) {
            return Error{kNoWordOffset, "the application's push constants end at byte " + std::to_string(*size) +
                                            ", after context_offset " + std::to_string(ctx_.options.context_offset)};
        }
        block_struct = pointee;
        ctx_.push_constant_member = static_cast<std::uint32_t>(block->OperandWordCount());
        std::vector<Instruction>& declarations = module.mutable_section(Section::kTypesValues);
        auto position = [&declarations](std::uint32_t id) {
            return std::find_if(declarations.begin(), declarations.end(), [id](const Instruction& inst) { return inst.result_id() == id; });
        };
        // The new members' types must be declared before the block; OpTypeInt depends on nothing, so it can move up.
        for (std::uint32_t type : {ctx_.u64, ctx_.u32}) {
            if (position(type) > position(block_struct)) {
                Instruction declaration = std::move(*position(type));
                declarations.erase(position(type));
                declarations.insert(position(block_struct), std::move(declaration));
            }
        }
        Instruction& block_declaration = *position(block_struct);
        block_declaration.AddId(ctx_.u64);
        for (std::uint32_t m = 1; m < static_cast<std::uint32_t>(PushContextMember::kCount); ++m) block_declaration.AddId(ctx_.u32);
    } else {
        std::vector<std::uint32_t> members(static_cast<std::size_t>(PushContextMember::kCount), ctx_.u32);
        members.front() = ctx_.u64;
        block_struct = types.CreateStruct(members);
        Instruction block(Op::OpDecorate);
        block.AddId(block_struct).AddEnum(OperandKind::Decoration, Decoration::Block);
        module.Append(Section::kAnnotation, std::move(block));
        ctx_.push_constant_member = 0;
        ctx_.push_constant_var = CreateGlobalVariable(module, ctx_, StorageClass::PushConstant, block_struct);
    }
    // runtime::NodePushContext: the scratch address, the node's graph index and output-table base, and the level's halves,
    // number and next direct consumer. The node- and level-specific words come at dispatch time so that every node lowered
    // from the same source shares one module and pipeline.
    for (std::uint32_t m = 0; m < static_cast<std::uint32_t>(PushContextMember::kCount); ++m) {
        AddMemberDecoration(module, block_struct, ctx_.push_constant_member + m, Decoration::Offset,
                            ctx_.options.context_offset + kPushContextMemberOffsets[m]);
    }
    ctx_.push_constant_u64_pointer = types.GetPointer(StorageClass::PushConstant, ctx_.u64);
    ctx_.push_constant_u32_pointer = types.GetPointer(StorageClass::PushConstant, ctx_.u32);

    // Private context, written by the prologue (LaunchPass) before any lowered instruction can run.
    ctx_.var_scratch = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u64);
    for (std::uint32_t* var :
         {&ctx_.var_node_index, &ctx_.var_output_table_start, &ctx_.var_input_half, &ctx_.var_output_half, &ctx_.var_records_offset,
          &ctx_.var_directory_offset, &ctx_.var_heap_offset, &ctx_.var_directory_first, &ctx_.var_input_count,
          &ctx_.var_recursion_depth, &ctx_.var_first_payload_offset}) {
        *var = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
    }

    // uint64 InputRecordAddress(uint index): the payload of directory entry directory_first + index
    // (docs/design.md, "Lowered node semantics", Input). Only a coalescing node has more than record 0 (the input array's
    // length is 1 for the others, facts §12.5); the prologue loaded record 0's payload offset with its recursion depth.
    const bool one_record = ctx_.info.launch != LaunchKind::kCoalescing;
    FunctionBuilder builder(module, ctx_);
    const std::uint32_t parameter_types[] = {ctx_.u32};
    ctx_.fn_input_record_address = builder.DefineFunction(ctx_.u64, parameter_types, [&](std::span<const std::uint32_t> params) {
        Emitter& e = builder.emit();
        const std::uint32_t half = e.LoadU32Var(ctx_.var_input_half);
        std::uint32_t payload = 0;
        if (one_record) {
            payload = e.LoadU32Var(ctx_.var_first_payload_offset);
        } else {
            const std::uint32_t entry = e.Add(e.LoadU32Var(ctx_.var_directory_first), params[0]);
            auto load_payload_offset = [&]() {
                const std::uint32_t entry_offset =
                    e.Add(e.Add(half, e.LoadU32Var(ctx_.var_directory_offset)), e.Mul(entry, e.U32(offsets::kDirectoryEntrySize)));
                return e.LoadScratchU32(e.Add(entry_offset, e.U32(offsets::kDirectoryPayloadOffset)));
            };
            // Records by index (runtime::kLevelRecordsByIndex; LaunchPass made directory_first the batch's first record
            // index in the level): record i of the batch lies at (first + i) * the input stride.
            if (ctx_.options.records_by_index && ctx_.options.heap_holds_record_list) {
                const std::uint32_t by_index = e.NotEqual(
                    e.And(e.LoadPushContextU32(PushContextMember::kLevel), e.U32(runtime::kLevelRecordsByIndex)), e.U32(0));
                payload = builder.IfElseValue(
                    by_index, ctx_.u32, [&]() { return e.Mul(entry, e.U32(ctx_.options.input_record_stride)); },
                    load_payload_offset);
            } else {
                payload = load_payload_offset();
            }
        }
        const std::uint32_t address = e.ScratchAddress(e.Add(e.Add(half, e.LoadU32Var(ctx_.var_heap_offset)), payload));
        e.EmitVoid(Op::OpReturnValue, {address});
    });
    FlushPendingFunctions(module, ctx_);
    return true;
}

}  // namespace execgraph::spirv::lowering
