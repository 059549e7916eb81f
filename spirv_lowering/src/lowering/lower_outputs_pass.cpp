// SPDX-License-Identifier: Apache-2.0
// Output payloads (docs/design.md, "Lowered node semantics"):
//   * OpAllocateNodePayloadsAMDX calls a per-output helper that looks the target node up in the output table, bumps the
//     output half's heap and record list with atomics (one per subgroup for the per-half counters, and for the target's
//     record count when the subgroup's lanes all name one node), bounds-checks both against the capacities, appends the record
//     entries (allocation = enqueue: the spec counts allocations as enqueued when the invocation / workgroup ends, and
//     DXC never enqueues empty outputs), counts the target's records, and on overflow or an invalid node flags the
//     status, counts the drop and returns the trash region. Workgroup visibility: invocation 0 allocates and shares the
//     address through workgroup memory (thread nodes treat Workgroup as Invocation: each invocation is its own group).
//     The result is the PhysicalStorageBuffer pointer to the records.
//   * OpEnqueueNodePayloadsAMDX lowers to nothing.
//   * OpIsNodePayloadValidAMDX: the table has a node for the index and, for the node itself, RemainingRecursionLevels > 0.
//   * OpNodePayloadArrayLengthAMDX of an output: the allocation's (constant) payload count.
#include <algorithm>
#include <array>
#include <string>

#include "execgraph/spirv/constant_eval.h"
#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

class OutputHelpers {
  public:
    OutputHelpers(Module& module, LoweringContext& ctx) : module_(module), ctx_(ctx) {}

    std::uint32_t Allocate(std::uint32_t output, bool workgroup) {
        std::array<std::uint32_t, 2>& fns = allocate_[output];
        if (fns[0] == 0) fns[0] = DefineInvocationAllocate(output);
        if (!workgroup) return fns[0];
        if (fns[1] == 0) fns[1] = DefineWorkgroupAllocate(fns[0]);
        return fns[1];
    }

    std::uint32_t IsValid(std::uint32_t output) {
        std::uint32_t& fn = valid_[output];
        if (fn == 0) fn = DefineIsValid(output);
        return fn;
    }

  private:
    // Looks up entry `index` of the output's table: returns (valid, target) with target 0 when invalid.
    std::pair<std::uint32_t, std::uint32_t> LookUp(Emitter& e, std::uint32_t output, std::uint32_t index) {
        const std::uint32_t length = ctx_.options.output_table_length[output];
        if (length == 0) return {e.Bool(false), e.U32(0)};
        const std::uint32_t in_range = e.Less(index, e.U32(length));
        const std::uint32_t table_index = e.SelectU32(in_range, index, e.U32(0));
        const std::uint32_t table = e.LoadScratchU32(e.U32(offsets::kHeaderOutputTableOffset));
        const std::uint32_t entry = e.Add(table, e.Mul(e.Add(table_index, e.Add(e.LoadU32Var(ctx_.var_output_table_base),
                                                                                e.U32(ctx_.options.output_table_index[output]))),
                                                       e.U32(4)));
        const std::uint32_t raw = e.LoadScratchU32(entry);
        const std::uint32_t valid = e.LogicalAnd(in_range, e.NotEqual(raw, e.U32(runtime::kInvalidNode)));
        return {valid, e.SelectU32(valid, raw, e.U32(0))};
    }

    // Charges `count` dropped records (flag bits `flags`) to graph node `node` at the level now running: the header's
    // totals and the node's NodeStats, as ReportDrop in scratch_layout.glsl does. Only reached on the drop path.
    void ReportDrop(Emitter& e, std::uint32_t node, std::uint32_t flags, std::uint32_t count) {
        e.AtomicScratch(Op::OpAtomicIAdd, e.U32(offsets::kHeaderDroppedRecords), count);
        e.AtomicScratch(Op::OpAtomicOr, e.U32(offsets::kHeaderStatusFlags), flags);
        const std::uint32_t stats =
            e.Add(e.LoadScratchU32(e.U32(offsets::kHeaderNodeStatsOffset)), e.Mul(node, e.U32(offsets::kNodeStatsSize)));
        e.AtomicScratch(Op::OpAtomicIAdd, e.Add(stats, e.U32(offsets::kNodeStatsDroppedRecords)), count);
        e.AtomicScratch(Op::OpAtomicOr, e.Add(stats, e.U32(offsets::kNodeStatsDropFlags)), flags);
        const std::uint32_t level = e.LoadScratchU32(e.U32(offsets::kHeaderLevel));
        e.AtomicScratch(Op::OpAtomicUMax, e.Add(stats, e.U32(offsets::kNodeStatsFirstDropLevelComplement)),
                        e.Emit(Op::OpNot, ctx_.u32, {level}));
    }

    std::uint32_t DefineInvocationAllocate(std::uint32_t output) {
        FunctionBuilder b(module_, ctx_);
        const std::uint32_t stride = ctx_.options.output_record_stride[output];
        const std::uint32_t limit = OutputRecordLimit(ctx_.info.outputs[output]);
        const std::uint32_t params[] = {ctx_.u32, ctx_.u32};
        return b.DefineFunction(ctx_.u64, params, [&](std::span<const std::uint32_t> p) {
            Emitter& e = b.emit();
            // A count above NodeMaxPayloadsAMDX is undefined behaviour (facts §16); the excess is dropped and reported
            // against this node, and what remains never exceeds what the trash region and the heap guard hold.
            const std::uint32_t requested = p[0];
            const std::uint32_t over_limit = e.Less(e.U32(limit), requested);
            const std::uint32_t count = e.SelectU32(over_limit, e.U32(limit), requested);
            b.If(over_limit, [&]() {
                ReportDrop(e, e.LoadU32Var(ctx_.var_node_index), e.U32(runtime::kStatusPayloadCountClamped),
                           e.Sub(requested, e.U32(limit)));
            });
            // Plain variables, not a structured binding: clang < 16 cannot capture bindings in the nested lambdas below.
            const std::pair<std::uint32_t, std::uint32_t> looked_up = LookUp(e, output, p[1]);
            const std::uint32_t target = looked_up.second;
            // A self-enqueue past MaxNodeRecursionAMDX (OpIsNodePayloadValidAMDX says false there, facts §14) has no level
            // to run at: dropped and reported as a recursion limit, like an index that names no node.
            const std::uint32_t past_recursion =
                e.LogicalAnd(looked_up.first, e.LogicalAnd(e.Equal(target, e.LoadU32Var(ctx_.var_node_index)),
                                                           e.LogicalNot(e.Less(e.LoadU32Var(ctx_.var_recursion_depth),
                                                                               e.U32(ctx_.info.max_recursion.value_or(0))))));
            const std::uint32_t valid = e.LogicalAnd(looked_up.first, e.LogicalNot(past_recursion));
            const std::uint32_t half = e.LoadU32Var(ctx_.var_output_half);
            // Same-address atomics serialise in the L2, so the per-half counters (heap top, record count, high water) are
            // bumped once per subgroup: the elected (lowest active) invocation adds the subgroup's total and every
            // invocation takes its range at the exclusive prefix of the lanes below it. Heap ranges and record slots
            // come from the same lane order. All subgroup operations run at this function's top level, so they see
            // exactly the invocations that called it (the caller may be in divergent control flow); per-lane
            // conditions only mask the values.
            const std::uint32_t elected = e.SubgroupElect();
            auto aggregated_add = [&](std::uint32_t offset, std::uint32_t value) {
                const std::uint32_t total = e.SubgroupReduceAdd(value);
                const std::uint32_t prefix = e.SubgroupExclusiveAdd(value);
                const std::uint32_t old =
                    b.IfValue(elected, ctx_.u32, e.U32(0), [&]() { return e.AtomicScratch(Op::OpAtomicIAdd, offset, total); });
                return e.Add(e.SubgroupBroadcastFirst(old), prefix);
            };
            std::uint32_t heap_old = e.U32(0);
            std::uint32_t heap_ok = valid;
            if (stride != 0) {
                // Whole 16-byte units keep heap_top 16-aligned, so every record is aligned to its own alignment.
                const std::uint32_t bytes =
                    e.And(e.Add(e.Mul(count, e.U32(stride)), e.U32(offsets::kHeapAlignment - 1)), e.U32(~(offsets::kHeapAlignment - 1)));
                heap_old = aggregated_add(e.Add(half, e.U32(offsets::kHalfHeapTop)), e.SelectU32(valid, bytes, e.U32(0)));
                const std::uint32_t capacity = e.LoadScratchU32(e.U32(offsets::kHeaderHeapCapacity));
                const std::uint32_t fits = e.LogicalAnd(e.LessEqual(heap_old, capacity), e.LessEqual(bytes, e.Sub(capacity, heap_old)));
                heap_ok = e.LogicalAnd(valid, fits);
                const std::uint32_t high_water = e.SubgroupReduceUMax(e.SelectU32(heap_ok, e.Add(heap_old, bytes), e.U32(0)));
                b.If(e.LogicalAnd(elected, e.NotEqual(high_water, e.U32(0))),
                     [&]() { e.AtomicScratch(Op::OpAtomicUMax, e.U32(offsets::kHeaderHeapHighWater), high_water); });
            }
            const std::uint32_t records_added = e.SelectU32(heap_ok, count, e.U32(0));
            const std::uint32_t record_old = aggregated_add(e.Add(half, e.U32(offsets::kHalfRecordCount)), records_added);
            const std::uint32_t record_capacity = e.LoadScratchU32(e.U32(offsets::kHeaderRecordCapacity));
            // The next level pass gets one workgroup per level_pass_records_per_workgroup records of this half
            // (HalfHeader::level_pass_workgroups): the subgroup whose slots cross into a new such block raises the count
            // to cover its end, so one atomic in every few subgroups, and the maximum covers the last record.
            {
                const std::uint32_t subgroup_end =
                    e.Min(e.SubgroupReduceUMax(e.SelectU32(e.NotEqual(records_added, e.U32(0)), e.Add(record_old, records_added), e.U32(0))),
                          record_capacity);
                const std::uint32_t subgroup_begin = e.Min(e.SubgroupBroadcastFirst(record_old), subgroup_end);
                const std::uint32_t per_workgroup = e.U32(std::max<std::uint32_t>(ctx_.options.level_pass_records_per_workgroup, 1));
                auto blocks = [&](std::uint32_t records) {
                    return e.Min(e.Div(e.Add(records, e.Sub(per_workgroup, e.U32(1))), per_workgroup), e.U32(runtime::kDispatchSplitWidth));
                };
                const std::uint32_t workgroups = blocks(subgroup_end);
                b.If(e.LogicalAnd(elected, e.Less(blocks(subgroup_begin), workgroups)), [&]() {
                    e.AtomicScratch(Op::OpAtomicUMax, e.Add(half, e.U32(offsets::kHalfLevelPassWorkgroups)), workgroups);
                });
            }
            const std::uint32_t room = e.SelectU32(e.Less(record_old, record_capacity), e.Sub(record_capacity, record_old), e.U32(0));
            const std::uint32_t delivered = e.SelectU32(heap_ok, e.Min(count, room), e.U32(0));
            const std::uint32_t dropped = e.Sub(count, delivered);
            const std::uint32_t flags = e.Or(
                e.Or(e.SelectU32(looked_up.first, e.SelectU32(past_recursion, e.U32(runtime::kStatusDepthLimit), e.U32(0)),
                                 e.U32(runtime::kStatusInvalidNodeIndex)),
                     e.SelectU32(e.LogicalAnd(valid, e.LogicalNot(heap_ok)), e.U32(runtime::kStatusHeapOverflow), e.U32(0))),
                e.SelectU32(e.LogicalAnd(heap_ok, e.Less(delivered, count)), e.U32(runtime::kStatusRecordListOverflow), e.U32(0)));
            // The target's record count: one atomic per subgroup when every calling lane names the same node (the
            // common case), else one per lane. Both subgroup operations run unconditionally; only the atomic is masked.
            const std::uint32_t same_target = e.SubgroupAllEqual(target);
            const std::uint32_t subgroup_delivered = e.SubgroupReduceAdd(delivered);
            const std::uint32_t target_add = e.SelectU32(same_target, subgroup_delivered, delivered);
            const std::uint32_t adds = e.Select(ctx_.bool_type, same_target, elected, e.Bool(true));
            // Records lost for a real node are charged to it; an index that names no node is this node's fault.
            const std::uint32_t charged = e.SelectU32(looked_up.first, target, e.LoadU32Var(ctx_.var_node_index));
            b.If(e.NotEqual(dropped, e.U32(0)), [&]() { ReportDrop(e, charged, flags, dropped); });
            b.If(e.LogicalAnd(adds, e.NotEqual(target_add, e.U32(0))), [&]() {
                const std::uint32_t state =
                    e.Add(half, e.Add(e.U32(offsets::kHalfNodes + offsets::kNodeStateRecordCount), e.Mul(target, e.U32(offsets::kNodeStateSize))));
                e.AtomicScratch(Op::OpAtomicIAdd, state, target_add);
            });
            // Self-enqueues carry the depth one further (RemainingRecursionLevels = max_recursion - depth).
            const std::uint32_t depth = e.SelectU32(e.Equal(target, e.LoadU32Var(ctx_.var_node_index)),
                                                    e.Add(e.LoadU32Var(ctx_.var_recursion_depth), e.U32(1)), e.U32(0));
            const std::uint32_t records = e.Add(half, e.LoadU32Var(ctx_.var_records_offset));
            b.For(delivered, [&](std::uint32_t i) {
                const std::uint32_t slot = e.Add(records, e.Mul(e.Add(record_old, i), e.U32(offsets::kRecordEntrySize)));
                e.StoreScratchU32(e.Add(slot, e.U32(offsets::kRecordEntryPayloadOffset)), e.Add(heap_old, e.Mul(i, e.U32(stride))));
                e.StoreScratchU32(e.Add(slot, e.U32(offsets::kRecordEntryRecursionDepth)), depth);
                e.StoreScratchU32(e.Add(slot, e.U32(offsets::kRecordEntryNode)), target);
                e.StoreScratchU32(e.Add(slot, e.U32(offsets::kRecordEntryReserved)), e.U32(0));
            });
            const std::uint32_t heap_address = e.ScratchAddress(e.Add(e.Add(half, e.LoadU32Var(ctx_.var_heap_offset)), heap_old));
            const std::uint32_t trash_address = e.ScratchAddress(e.LoadScratchU32(e.U32(offsets::kHeaderTrashOffset)));
            e.EmitVoid(Op::OpReturnValue, {e.Select(ctx_.u64, heap_ok, heap_address, trash_address)});
        });
    }

    std::uint32_t DefineWorkgroupAllocate(std::uint32_t invocation_allocate) {
        FunctionBuilder b(module_, ctx_);
        const std::uint32_t shared = CreateGlobalVariable(module_, ctx_, StorageClass::Workgroup, ctx_.u64);
        const std::uint32_t params[] = {ctx_.u32, ctx_.u32};
        return b.DefineFunction(ctx_.u64, params, [&](std::span<const std::uint32_t> p) {
            Emitter& e = b.emit();
            const std::uint32_t leader = e.Equal(e.Load(ctx_.u32, ctx_.builtin_local_invocation_index), e.U32(0));
            b.If(leader, [&]() {
                e.Store(shared, e.Emit(Op::OpFunctionCall, ctx_.u64, {invocation_allocate, p[0], p[1]}));
            });
            e.WorkgroupBarrier();
            const std::uint32_t address = e.Load(ctx_.u64, shared);
            // Second barrier: a later allocation (e.g. in a loop) must not overwrite the address before all have read it.
            e.WorkgroupBarrier();
            e.EmitVoid(Op::OpReturnValue, {address});
        });
    }

    std::uint32_t DefineIsValid(std::uint32_t output) {
        FunctionBuilder b(module_, ctx_);
        const std::uint32_t params[] = {ctx_.u32};
        return b.DefineFunction(ctx_.bool_type, params, [&](std::span<const std::uint32_t> p) {
            Emitter& e = b.emit();
            const auto [valid, target] = LookUp(e, output, p[0]);
            // A self-enqueue is valid while recursion levels remain (facts §14).
            const std::uint32_t is_self = e.Equal(target, e.LoadU32Var(ctx_.var_node_index));
            const std::uint32_t levels_left =
                e.Less(e.LoadU32Var(ctx_.var_recursion_depth), e.U32(ctx_.info.max_recursion.value_or(0)));
            const std::uint32_t self_ok = e.Emit(Op::OpLogicalOr, ctx_.bool_type, {e.LogicalNot(is_self), levels_left});
            e.EmitVoid(Op::OpReturnValue, {e.LogicalAnd(valid, self_ok)});
        });
    }

    Module& module_;
    LoweringContext& ctx_;
    std::unordered_map<std::uint32_t, std::array<std::uint32_t, 2>> allocate_;
    std::unordered_map<std::uint32_t, std::uint32_t> valid_;
};

// The payload array type an OpIsNodePayloadValidAMDX / array-length operand names: the type itself (the spec), or the
// output object, a value or a pointer to one (DXC, dxc-spirv-shapes §3.2).
std::uint32_t ResolvePayloadArrayType(const Module& module, const std::unordered_map<std::uint32_t, std::uint32_t>& result_types,
                                      std::uint32_t id) {
    const Instruction* def = module.FindDef(id);
    if (def != nullptr && def->opcode() == Op::OpTypeNodePayloadArrayAMDX) return id;
    const auto it = result_types.find(id);
    if (it == result_types.end()) return 0;
    std::uint32_t type = it->second;
    std::uint32_t pointee = 0;
    if (PointerInfo(module, type, nullptr, &pointee)) type = pointee;
    const Instruction* type_def = module.FindDef(type);
    return type_def != nullptr && type_def->opcode() == Op::OpTypeNodePayloadArrayAMDX ? type : 0;
}

}  // namespace

Result<bool> LowerOutputsPass::Run(Module& module) {
    const std::size_t outputs = ctx_.info.outputs.size();
    if (ctx_.options.output_table_index.size() != outputs || ctx_.options.output_table_length.size() != outputs ||
        ctx_.options.output_record_stride.size() != outputs) {
        return Error{kNoWordOffset, "LoweringOptions output tables describe " + std::to_string(ctx_.options.output_table_index.size()) +
                                        "/" + std::to_string(ctx_.options.output_table_length.size()) + "/" +
                                        std::to_string(ctx_.options.output_record_stride.size()) + " outputs; the node has " +
                                        std::to_string(outputs)};
    }
    for (std::size_t i = 0; i < outputs; ++i) {
        const std::uint32_t stride = ctx_.options.output_record_stride[i];
        const RecordLayout& record = ctx_.info.outputs[i].record;
        if (record.size != 0 && (stride < record.size || stride % std::max(record.alignment, 1u) != 0)) {
            return Error{kNoWordOffset, "output " + std::to_string(i) + ": record stride " + std::to_string(stride) +
                                            " does not hold a " + std::to_string(record.size) + "-byte record aligned to " +
                                            std::to_string(record.alignment)};
        }
    }

    const std::unordered_map<std::uint32_t, std::uint32_t> result_types = CollectResultTypes(module);
    std::unordered_map<std::uint32_t, std::uint32_t> allocation_count;  // allocation result -> Payload Count id
    module.ForEachInstruction([&allocation_count](const Instruction& inst) {
        if (inst.opcode() == Op::OpAllocateNodePayloadsAMDX) allocation_count[inst.result_id()] = inst.Word(1);
    });
    OutputHelpers helpers(module, ctx_);
    auto output_of = [&](std::uint32_t array_type, std::uint32_t id) -> Result<std::uint32_t> {
        const auto it = ctx_.output_of_array_type.find(array_type);
        if (array_type == 0 || it == ctx_.output_of_array_type.end()) {
            return Error{kNoWordOffset, "%" + std::to_string(id) + " does not name one of the node's outputs"};
        }
        return it->second;
    };

    bool changed = false;
    for (Function& function : module.mutable_functions()) {
        for (BasicBlock& block : function.blocks) {
            std::vector<Instruction> rewritten;
            rewritten.reserve(block.instructions.size());
            for (Instruction& inst : block.instructions) {
                switch (inst.opcode()) {
                    case Op::OpAllocateNodePayloadsAMDX: {
                        std::uint32_t array_type = 0;
                        PointerInfo(module, inst.type_id(), nullptr, &array_type);
                        Result<std::uint32_t> output = output_of(array_type, inst.result_id());
                        if (!output) return output.error();
                        Result<std::uint32_t> scope = EvaluateUint32(module, inst.Word(0));
                        if (!scope || (*scope != static_cast<std::uint32_t>(AllocationScope::kWorkgroup) &&
                                       *scope != static_cast<std::uint32_t>(AllocationScope::kInvocation))) {
                            return Error{kNoWordOffset, "allocation %" + std::to_string(inst.result_id()) +
                                                            ": Visibility must be a constant Workgroup or Invocation scope"};
                        }
                        const bool workgroup = *scope == static_cast<std::uint32_t>(AllocationScope::kWorkgroup) &&
                                               ctx_.info.launch != LaunchKind::kThread;
                        Result<std::uint32_t> pointer = PayloadBufferPointer(module, ctx_, array_type);
                        if (!pointer) return pointer.error();
                        const std::uint32_t count = ToUint32(module, ctx_, result_types, rewritten, inst.Word(1));
                        const std::uint32_t index = ToUint32(module, ctx_, result_types, rewritten, inst.Word(2));
                        if (count == 0 || index == 0) return Error{kNoWordOffset, "allocation count or node index is not an integer"};
                        Instruction call(Op::OpFunctionCall, ctx_.u64, module.TakeNextId());
                        call.AddId(helpers.Allocate(*output, workgroup)).AddId(count).AddId(index);
                        const std::uint32_t address = call.result_id();
                        rewritten.push_back(std::move(call));
                        Instruction convert(Op::OpConvertUToPtr, *pointer, inst.result_id());
                        convert.AddId(address);
                        rewritten.push_back(std::move(convert));
                        changed = true;
                        break;
                    }
                    case Op::OpEnqueueNodePayloadsAMDX:
                        changed = true;  // records were appended at allocation
                        break;
                    case Op::OpIsNodePayloadValidAMDX: {
                        Result<std::uint32_t> output =
                            output_of(ResolvePayloadArrayType(module, result_types, inst.Word(0)), inst.Word(0));
                        if (!output) return output.error();
                        const std::uint32_t index = ToUint32(module, ctx_, result_types, rewritten, inst.Word(1));
                        if (index == 0) return Error{kNoWordOffset, "OpIsNodePayloadValidAMDX node index is not an integer"};
                        Instruction call(Op::OpFunctionCall, inst.type_id(), inst.result_id());
                        call.AddId(helpers.IsValid(*output)).AddId(index);
                        rewritten.push_back(std::move(call));
                        changed = true;
                        break;
                    }
                    case Op::OpNodePayloadArrayLengthAMDX: {
                        // The input's length was lowered by LowerInputPass; what remains names an output.
                        const auto source = ctx_.payload_source.find(inst.Word(0));
                        std::uint32_t count_id = 0;
                        if (source != ctx_.payload_source.end() && allocation_count.count(source->second) != 0) {
                            count_id = allocation_count[source->second];
                        }
                        const Instruction* count = count_id != 0 ? module.FindDef(count_id) : nullptr;
                        if (count == nullptr || (count->opcode() != Op::OpConstant && count->opcode() != Op::OpSpecConstant &&
                                                 count->opcode() != Op::OpSpecConstantOp)) {
                            return Error{kNoWordOffset, "OpNodePayloadArrayLengthAMDX %" + std::to_string(inst.result_id()) +
                                                            " on an output whose allocation is not unique or whose count is not constant"};
                        }
                        Instruction copy(Op::OpCopyObject, inst.type_id(), inst.result_id());
                        copy.AddId(count_id);
                        rewritten.push_back(std::move(copy));
                        changed = true;
                        break;
                    }
                    default:
                        rewritten.push_back(std::move(inst));
                        break;
                }
            }
            block.instructions = std::move(rewritten);
            module.InvalidateIndexes();  // the lookup index pointed into the replaced instruction vector
        }
    }
    FlushPendingFunctions(module, ctx_);
    return changed;
}

}  // namespace execgraph::spirv::lowering
