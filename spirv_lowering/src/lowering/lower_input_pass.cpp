// SPDX-License-Identifier: Apache-2.0
// The NodePayloadAMDX input variable disappears (docs/design.md, "Lowered node semantics", Input):
//   * `OpAccessChain %in %i rest...` becomes a PhysicalStorageBuffer pointer to the record of directory entry
//     directory_first + i (records of one coalescing batch are not contiguous in the heap, so every index is looked up),
//     followed by the rest of the chain;
//   * OpNodePayloadArrayLengthAMDX on the input is the batch size the prologue computed (1 unless coalescing);
//   * OpFinishWritingNodePayloadAMDX decrements the record's finish_counter once per workgroup and is true for the
//     workgroup that takes it to zero.
#include <string>

#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

std::uint32_t DefineFinishWriting(Module& module, LoweringContext& ctx) {
    FunctionBuilder b(module, ctx);
    const bool per_invocation = ctx.info.launch == LaunchKind::kThread;
    const std::uint32_t shared = per_invocation ? 0 : CreateGlobalVariable(module, ctx, StorageClass::Workgroup, ctx.u32);
    return b.DefineFunction(ctx.bool_type, {}, [&](std::span<const std::uint32_t>) {
        Emitter& e = b.emit();
        auto decrement = [&]() {
            const std::uint32_t entry = e.Add(e.Add(e.LoadU32Var(ctx.var_input_half), e.LoadU32Var(ctx.var_directory_offset)),
                                              e.Mul(e.LoadU32Var(ctx.var_directory_first), e.U32(offsets::kDirectoryEntrySize)));
            const std::uint32_t old = e.AtomicScratch(Op::OpAtomicISub, e.Add(entry, e.U32(offsets::kDirectoryFinishCounter)), e.U32(1));
            return e.Equal(old, e.U32(1));
        };
        if (per_invocation) {
            e.EmitVoid(Op::OpReturnValue, {decrement()});
            return;
        }
        const std::uint32_t leader = e.Equal(e.Load(ctx.u32, ctx.builtin_local_invocation_index), e.U32(0));
        b.If(leader, [&]() { e.Store(shared, e.SelectU32(decrement(), e.U32(1), e.U32(0))); });
        e.WorkgroupBarrier();
        const std::uint32_t last = e.NotEqual(e.Load(ctx.u32, shared), e.U32(0));
        // Second barrier: the leader must not overwrite the shared flag (a later call) before everyone has read it.
        e.WorkgroupBarrier();
        e.EmitVoid(Op::OpReturnValue, {last});
    });
}

}  // namespace

Result<bool> LowerInputPass::Run(Module& module) {
    const std::uint32_t input = ctx_.info.input_variable_id;
    std::uint32_t record_pointer = 0;
    if (input != 0) {
        const Instruction* var = module.FindDef(input);
        std::uint32_t array_type = 0;
        StorageClass storage_class{};
        if (var == nullptr || var->opcode() != Op::OpVariable || !PointerInfo(module, var->type_id(), &storage_class, &array_type) ||
            storage_class != StorageClass::NodePayloadAMDX) {
            return Error{kNoWordOffset, "input %" + std::to_string(input) + " is not a NodePayloadAMDX variable"};
        }
        const Instruction* array = module.FindDef(array_type);
        if (array == nullptr || array->opcode() != Op::OpTypeNodePayloadArrayAMDX) {
            return Error{kNoWordOffset, "input %" + std::to_string(input) + " does not point to an OpTypeNodePayloadArrayAMDX"};
        }
        record_pointer = ctx_.types->GetPointer(StorageClass::PhysicalStorageBuffer, array->Word(0));
    }

    const std::unordered_map<std::uint32_t, std::uint32_t> result_types = CollectResultTypes(module);
    std::uint32_t finish_writing = 0;
    bool changed = false;
    for (Function& function : module.mutable_functions()) {
        for (BasicBlock& block : function.blocks) {
            std::vector<Instruction> rewritten;
            rewritten.reserve(block.instructions.size());
            Emitter e(module, ctx_, &rewritten);
            for (Instruction& inst : block.instructions) {
                const Op op = inst.opcode();
                if (op == Op::OpFinishWritingNodePayloadAMDX) {
                    if (finish_writing == 0) finish_writing = DefineFinishWriting(module, ctx_);
                    Instruction call(Op::OpFunctionCall, inst.type_id(), inst.result_id());
                    call.AddId(finish_writing);
                    rewritten.push_back(std::move(call));
                    changed = true;
                    continue;
                }
                bool uses_input = false;
                for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) uses_input |= input != 0 && inst.IsIdOperand(i) && inst.Word(i) == input;
                if (!uses_input) {
                    rewritten.push_back(std::move(inst));
                    continue;
                }
                changed = true;
                if ((op == Op::OpAccessChain || op == Op::OpInBoundsAccessChain) && inst.Word(0) == input) {
                    if (inst.OperandWordCount() < 2) {
                        return Error{kNoWordOffset, "access chain %" + std::to_string(inst.result_id()) + " takes the whole input array"};
                    }
                    const std::uint32_t index = ToUint32(module, ctx_, result_types, rewritten, inst.Word(1));
                    if (index == 0) return Error{kNoWordOffset, "input access chain index is not an integer"};
                    Instruction call(Op::OpFunctionCall, ctx_.u64, module.TakeNextId());
                    call.AddId(ctx_.fn_input_record_address).AddId(index);
                    const std::uint32_t address = call.result_id();
                    rewritten.push_back(std::move(call));
                    if (inst.OperandWordCount() == 2) {
                        Instruction convert(Op::OpConvertUToPtr, record_pointer, inst.result_id());
                        convert.AddId(address);
                        rewritten.push_back(std::move(convert));
                        continue;
                    }
                    const std::uint32_t record = e.Emit(Op::OpConvertUToPtr, record_pointer, {address});
                    Instruction chain(op, inst.type_id(), inst.result_id());  // result type: RewritePayloadPointersPass
                    chain.AddId(record);
                    for (std::size_t i = 2; i < inst.OperandWordCount(); ++i) chain.AddId(inst.Word(i));
                    rewritten.push_back(std::move(chain));
                    continue;
                }
                if (op == Op::OpNodePayloadArrayLengthAMDX) {
                    Instruction load(Op::OpLoad, inst.type_id(), inst.result_id());
                    load.AddId(ctx_.var_input_count);
                    rewritten.push_back(std::move(load));
                    continue;
                }
                return Error{kNoWordOffset, std::string(OpcodeName(static_cast<std::uint32_t>(op))) + " %" +
                                                std::to_string(inst.result_id()) + " uses the input payload variable directly; not supported"};
            }
            block.instructions = std::move(rewritten);
            module.InvalidateIndexes();  // the lookup index pointed into the replaced instruction vector
        }
    }
    FlushPendingFunctions(module, ctx_);
    return changed;
}

}  // namespace execgraph::spirv::lowering
