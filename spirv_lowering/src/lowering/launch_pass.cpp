// SPDX-License-Identifier: Apache-2.0
// Per launch kind, the entry point's prologue (docs/design.md, "Lowered node semantics"):
//   * reads the scratch address and the level's halves from the pushed NodePushContext, and the layout of a half from
//     GraphHeader, into the Private context, with what allocations read before they reserve (the output table's offset,
//     the targets of outputs that are not node arrays; docs/design.md, "How a node receives its scheduler context");
//   * picks this workgroup's / invocation's record(s) from the linear workgroup WorkgroupId.y * 65535 + WorkgroupId.x
//     (kDispatchSplitWidth): static broadcast r = w / (gx*gy*gz) (of a whole dispatch group's directory range, whose
//     entries name their member); dynamic broadcast: binary search of the directory for the last entry with
//     first_workgroup <= w; coalescing: records [w*M, min((w+1)*M, count)); thread: w*B + local index. Other dispatch
//     groups first binary-search their member;
//   * returns at once for workgroups (invocations, for thread nodes) past the node's work: the dispatch is rounded up
//     to whole rows of kDispatchSplitWidth and thread batches;
//   * remaps the built-ins the node sees: WorkgroupId is the workgroup within the record's grid for broadcast nodes
//     and (0,0,0) for coalescing and thread nodes; GlobalInvocationId follows; thread nodes (batched B to a workgroup)
//     see LocalInvocationId/Index 0; NumWorkgroups is the record's grid; RemainingRecursionLevelsAMDX is
//     max_recursion - depth; ShaderIndexAMDX is the node's index.
// Built-ins are remapped by retargeting every use of the Input variable to a Private copy the prologue writes.
#include <algorithm>
#include <string>

#include "execgraph/spirv/decorations.h"
#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

// Result type info of a built-in variable's pointee: component count (1 or 3) and signedness, 32-bit ints only.
struct BuiltinShape {
    std::uint32_t pointee = 0;
    std::uint32_t components = 0;
    bool is_signed = false;
};

Result<BuiltinShape> ShapeOfBuiltin(const Module& module, std::uint32_t var) {
    BuiltinShape shape;
    PointerInfo(module, module.FindDef(var)->type_id(), nullptr, &shape.pointee);
    const Instruction* def = module.FindDef(shape.pointee);
    std::uint32_t scalar = shape.pointee;
    shape.components = 1;
    if (def != nullptr && def->opcode() == Op::OpTypeVector) {
        shape.components = def->Word(1);
        scalar = def->Word(0);
    }
    const Instruction* scalar_def = module.FindDef(scalar);
    if (scalar_def == nullptr || scalar_def->opcode() != Op::OpTypeInt || scalar_def->Word(0) != 32 ||
        (shape.components != 1 && shape.components != 3)) {
        return Error{kNoWordOffset, "built-in variable %" + std::to_string(var) + " is not a 32-bit integer scalar or 3-vector"};
    }
    shape.is_signed = scalar_def->Word(1) != 0;
    return shape;
}

}  // namespace

Result<bool> LaunchPass::Run(Module& module) {
    const NodeInfo& info = ctx_.info;
    const LaunchKind launch = info.launch;
    const bool thread = launch == LaunchKind::kThread;
    const bool broadcast = launch == LaunchKind::kBroadcastStatic || launch == LaunchKind::kBroadcastDynamic;
    if (launch == LaunchKind::kBroadcastStatic && !info.static_grid) return Error{kNoWordOffset, "static broadcast node without a grid"};
    if (launch == LaunchKind::kBroadcastDynamic && !info.dispatch_grid) {
        return Error{kNoWordOffset, "dynamic broadcast node without a PayloadDispatchIndirectAMDX grid member"};
    }
    if (thread && ctx_.options.thread_batch_size == 0) return Error{kNoWordOffset, "thread_batch_size is 0"};
    if (launch == LaunchKind::kCoalescing && info.input_max_payloads == 0) return Error{kNoWordOffset, "coalescing node with 0 max payloads"};
    ctx_.lowered_local_size = info.local_size;  // a thread node's batch replaces it below

    // Thread nodes run B records per workgroup; a node that relies on its workgroup being one invocation cannot be
    // batched (its workgroup memory and barriers would be shared by unrelated records).
    if (thread) {
        bool uses_workgroup = false;
        for (const Instruction& inst : module.section(Section::kTypesValues)) {
            if (inst.opcode() == Op::OpVariable && inst.Word(0) == static_cast<std::uint32_t>(StorageClass::Workgroup)) uses_workgroup = true;
        }
        for (const Function& function : module.functions()) {
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) uses_workgroup |= inst.opcode() == Op::OpControlBarrier;
            }
        }
        if (uses_workgroup) {
            return Error{kNoWordOffset, "thread launch node uses workgroup memory or OpControlBarrier; batching thread nodes would "
                                        "share them between records (not supported)"};
        }
        for (const Instruction& inst : module.section(Section::kAnnotation)) {
            if ((inst.opcode() == Op::OpDecorate) && inst.Word(1) == static_cast<std::uint32_t>(Decoration::BuiltIn) &&
                inst.Word(2) == static_cast<std::uint32_t>(BuiltIn::WorkgroupSize)) {
                return Error{kNoWordOffset, "thread launch node declares a WorkgroupSize built-in; its batch size would differ"};
            }
        }
        // The lowered workgroup is the batch.
        SetLoweredLocalSize(module, ctx_, {ctx_.options.thread_batch_size, 1, 1});
    }

    // Real built-ins the prologue reads. Existing variables are reused (then retargeted away from the node's code).
    auto real_builtin = [&](BuiltIn builtin, std::uint32_t type) {
        const std::uint32_t existing = FindBuiltinVariable(module, builtin);
        return existing != 0 ? existing : CreateBuiltinVariable(module, ctx_, builtin, type);
    };
    ctx_.builtin_workgroup_id = real_builtin(BuiltIn::WorkgroupId, ctx_.v3u32);
    ctx_.builtin_local_invocation_index = real_builtin(BuiltIn::LocalInvocationIndex, ctx_.u32);
    ctx_.builtin_local_invocation_id = real_builtin(BuiltIn::LocalInvocationId, ctx_.v3u32);

    // Built-ins the node's own code sees through Private copies.
    struct Remap {
        BuiltIn builtin;
        std::uint32_t private_var = 0;
        BuiltinShape shape;
    };
    std::vector<Remap> remaps;
    std::vector<BuiltIn> remapped = {BuiltIn::WorkgroupId, BuiltIn::GlobalInvocationId, BuiltIn::NumWorkgroups,
                                     BuiltIn::RemainingRecursionLevelsAMDX, BuiltIn::ShaderIndexAMDX};
    if (thread) {
        remapped.push_back(BuiltIn::LocalInvocationId);
        remapped.push_back(BuiltIn::LocalInvocationIndex);
    }
    for (BuiltIn builtin : remapped) {
        const std::uint32_t var = FindBuiltinVariable(module, builtin);
        if (var == 0) continue;
        Result<BuiltinShape> shape = ShapeOfBuiltin(module, var);
        if (!shape) return shape.error();
        Remap remap{builtin, CreateGlobalVariable(module, ctx_, StorageClass::Private, shape->pointee), *shape};
        RetargetVariable(module, ctx_, var, remap.private_var, StorageClass::Private);
        remaps.push_back(remap);
    }

    // ---- Prologue ----
    Function* entry = FindFunction(module, info.entry_point_id);
    if (entry == nullptr || entry->blocks.empty()) return Error{kNoWordOffset, "entry point function has no body"};
    FunctionBuilder b(module, ctx_);
    Emitter& e = b.emit();
    const std::uint32_t first_label = b.NewLabel();
    b.StartBlock(first_label);
    // OpVariables must stay at the start of the function's first block.
    std::vector<Instruction>& original_entry = entry->blocks.front().instructions;
    auto first_non_variable = std::find_if(original_entry.begin() + 1, original_entry.end(), [](const Instruction& inst) {
        return inst.opcode() != Op::OpVariable && inst.opcode() != Op::OpLine && inst.opcode() != Op::OpNoLine;
    });
    for (auto it = original_entry.begin() + 1; it != first_non_variable; ++it) e.Append(std::move(*it));
    original_entry.erase(original_entry.begin() + 1, first_non_variable);
    const std::uint32_t original_label = entry->blocks.front().label_id();
    ctx_.entry_body_label = original_label;

    const std::uint32_t context_pointer =
        e.Emit(Op::OpAccessChain, ctx_.push_constant_u64_pointer, {ctx_.push_constant_var, e.U32(ctx_.push_constant_member)});
    e.Store(ctx_.var_scratch, e.Load(ctx_.u64, context_pointer));
    // The level's halves come pushed (NodePushContext), so the only header loads here are independent of each other.
    const std::uint32_t node_count = e.NodeCount();
    const std::uint32_t record_capacity = e.LoadScratchU32(e.U32(offsets::kHeaderRecordCapacity));
    // Loaded here, with the others, although only allocations use it: a node's own stores come before its allocations,
    // and a compiler cannot move a load of scratch above a store that might alias it, so a load at the allocation would
    // add a round trip to memory between the node's record and its reservation (a chain of single-record levels waits
    // for every one). The header is not written while nodes run.
    const std::uint32_t output_table_offset = e.LoadScratchU32(e.U32(offsets::kHeaderOutputTableOffset));
    auto output_table_start = [&](std::uint32_t table_base) { return e.Add(output_table_offset, e.Mul(table_base, e.U32(4))); };
    const std::uint32_t input_half = e.LoadPushContextU32(PushContextMember::kInputHalfOffset);
    const std::uint32_t output_half = e.LoadPushContextU32(PushContextMember::kOutputHalfOffset);
    // Arrays inside a half: NodeState[node_count] at +16, records, directory, then the 16-byte aligned heap.
    const std::uint32_t records_offset = e.Add(e.U32(offsets::kHalfNodes), e.Mul(node_count, e.U32(offsets::kNodeStateSize)));
    const std::uint32_t directory_offset = e.Add(records_offset, e.Mul(record_capacity, e.U32(offsets::kRecordEntrySize)));
    const std::uint32_t heap_offset =
        e.And(e.Add(e.Add(directory_offset, e.Mul(record_capacity, e.U32(offsets::kDirectoryEntrySize))), e.U32(offsets::kHeapAlignment - 1)),
              e.U32(~(offsets::kHeapAlignment - 1)));
    e.Store(ctx_.var_input_half, input_half);
    e.Store(ctx_.var_output_half, output_half);
    e.Store(ctx_.var_records_offset, records_offset);
    e.Store(ctx_.var_directory_offset, directory_offset);
    e.Store(ctx_.var_heap_offset, heap_offset);

    // The last index i in [0, count) with key(i) <= target, by binary search (key ascending; key(0) <= target is given).
    auto search_last_at_or_before = [&](std::uint32_t count, std::uint32_t target, auto key) {
        const std::uint32_t pre = b.current_label();
        const std::uint32_t header = b.NewLabel(), body = b.NewLabel(), merge = b.NewLabel();
        const std::uint32_t lo = module.TakeNextId(), hi = module.TakeNextId();
        const std::uint32_t next_lo = module.TakeNextId(), next_hi = module.TakeNextId();
        e.EmitVoid(Op::OpBranch, {header});
        b.StartBlock(header);
        Instruction lo_phi(Op::OpPhi, ctx_.u32, lo);
        lo_phi.AddId(e.U32(0)).AddId(pre).AddId(next_lo).AddId(body);
        e.Append(std::move(lo_phi));
        Instruction hi_phi(Op::OpPhi, ctx_.u32, hi);
        hi_phi.AddId(count).AddId(pre).AddId(next_hi).AddId(body);
        e.Append(std::move(hi_phi));
        const std::uint32_t searching = e.Less(e.Add(lo, e.U32(1)), hi);
        Instruction loop_merge(Op::OpLoopMerge);
        loop_merge.AddId(merge).AddId(body).AddWord(0, OperandKind::LoopControl);
        e.Append(std::move(loop_merge));
        e.EmitVoid(Op::OpBranchConditional, {searching, body, merge});
        b.StartBlock(body);
        const std::uint32_t mid = e.ShiftRight(e.Add(lo, hi), e.U32(1));
        const std::uint32_t at_or_before = e.LessEqual(key(mid), target);
        Instruction select_lo(Op::OpSelect, ctx_.u32, next_lo);
        select_lo.AddId(at_or_before).AddId(mid).AddId(lo);
        e.Append(std::move(select_lo));
        Instruction select_hi(Op::OpSelect, ctx_.u32, next_hi);
        select_hi.AddId(at_or_before).AddId(hi).AddId(mid);
        e.Append(std::move(select_hi));
        e.EmitVoid(Op::OpBranch, {header});
        b.StartBlock(merge);
        return lo;
    };
    // Workgroups (invocations, for thread nodes) past the node's work return at once: the dispatch is rounded up to
    // whole rows of kDispatchSplitWidth and thread batches.
    auto return_if = [&](std::uint32_t condition) {
        const std::uint32_t return_label = b.NewLabel(), continue_label = b.NewLabel();
        b.SelectionMerge(continue_label);
        e.EmitVoid(Op::OpBranchConditional, {condition, return_label, continue_label});
        b.StartBlock(return_label);
        e.EmitVoid(Op::OpReturn, {});
        b.StartBlock(continue_label);
    };
    auto node_state_at = [&](std::uint32_t node) {
        return e.Add(input_half, e.Add(e.U32(offsets::kHalfNodes), e.Mul(node, e.U32(offsets::kNodeStateSize))));
    };
    auto node_static_info_at = [&](std::uint32_t node) {
        return e.Add(e.NodeTableOffset(), e.Mul(node, e.U32(offsets::kNodeStaticInfoSize)));
    };
    auto directory_entry_at = [&](std::uint32_t index) {
        return e.Add(e.Add(input_half, directory_offset), e.Mul(index, e.U32(offsets::kDirectoryEntrySize)));
    };
    // The NodeState whose records `node` consumes: a SharesInputWithAMDX node consumes those of the node named in
    // NodeStaticInfo.shares_input_with.
    auto input_state_of = [&](std::uint32_t node) {
        if (!info.shares_input_with_name) return node_state_at(node);
        const std::uint32_t shared = e.LoadScratchU32(e.Add(node_static_info_at(node), e.U32(offsets::kNodeStaticSharesInputWith)));
        return node_state_at(e.SelectU32(e.NotEqual(shared, e.U32(runtime::kInvalidNode)), shared, node));
    };

    // Record 0's payload offset (InputRecordAddress reads it; the node's code loaded it again with a load of its own) and
    // recursion depth, from the entry at scratch offset `entry`. Two 4-byte loads: one 8-byte load ran a thread_launch
    // producer level 8% longer on lavapipe (llvmpipe gathers it lane by lane) and no faster on an H200.
    static_assert(offsets::kDirectoryPayloadOffset == 0 && offsets::kDirectoryRecursionDepth == 4 &&
                  offsets::kRecordEntryPayloadOffset == 0 && offsets::kRecordEntryRecursionDepth == 4);
    auto load_first_entry = [&](std::uint32_t entry) {
        e.Store(ctx_.var_first_payload_offset, e.LoadScratchU32(entry));
        e.Store(ctx_.var_recursion_depth, e.LoadScratchU32(e.Add(entry, e.U32(4))));
    };
    // Records by index (runtime::kLevelRecordsByIndex, set by the layer per level where this node is the level's one
    // consumer): the node's record r lies at heap offset r * its input stride, and the level's depth comes pushed, so
    // the record's payload address needs no load at all. Only nodes that read nothing else of an entry can be such a
    // consumer (the layer's ReadsRecordList): not dynamic broadcasts, which search their directory's workgroups, nor
    // static ones that count down an entry's finish_counter.
    const bool may_read_by_index =
        ctx_.options.records_by_index && ctx_.options.heap_holds_record_list &&
        (thread || launch == LaunchKind::kCoalescing || (launch == LaunchKind::kBroadcastStatic && !info.uses_finish_writing));
    const std::uint32_t pushed_level = e.LoadPushContextU32(PushContextMember::kLevel);
    const std::uint32_t by_index =
        may_read_by_index ? e.NotEqual(e.And(pushed_level, e.U32(runtime::kLevelRecordsByIndex)), e.U32(0)) : 0;
    // records_newest_first: the level's record r is read where record count - 1 - r would be (LoweringOptions).
    const bool newest_first = may_read_by_index && ctx_.options.records_newest_first;
    auto newest_first_index = [&](std::uint32_t count, std::uint32_t index) {
        return newest_first ? e.Sub(e.Sub(count, e.U32(1)), index) : index;
    };
    auto place_by_index = [&](std::uint32_t record) {
        e.Store(ctx_.var_first_payload_offset, e.Mul(record, e.U32(ctx_.options.input_record_stride)));
        e.Store(ctx_.var_recursion_depth, e.And(e.ShiftRight(pushed_level, e.U32(runtime::kLevelRecordsByIndexDepthShift)),
                                                e.U32(runtime::kLevelRecordsByIndexDepthMask)));
    };

    Result<BuiltinShape> workgroup_shape = ShapeOfBuiltin(module, ctx_.builtin_workgroup_id);
    if (!workgroup_shape) return workgroup_shape.error();
    std::uint32_t workgroup_id = e.Load(workgroup_shape->pointee, ctx_.builtin_workgroup_id);
    if (workgroup_shape->pointee != ctx_.v3u32) workgroup_id = e.Emit(Op::OpBitcast, ctx_.v3u32, {workgroup_id});
    const std::uint32_t dispatched_linear =
        e.Add(e.Mul(e.ExtractU32(workgroup_id, 1), e.U32(runtime::kDispatchSplitWidth)), e.ExtractU32(workgroup_id, 0));

    const std::uint32_t pushed_node = e.LoadPushContextU32(PushContextMember::kNodeIndex);
    const std::uint32_t pushed_table_base = e.LoadPushContextU32(PushContextMember::kOutputTableBase);
    e.Store(ctx_.var_node_index, pushed_node);
    e.Store(ctx_.var_output_table_start, output_table_start(pushed_table_base));
    // A dispatch-group dispatch (NodePushContext::output_table_base == kDispatchGroupMarker) runs the workgroups of every
    // member of the group that starts at node_index, one after the other (docs/design.md, "Dispatch groups").
    const std::uint32_t group_dispatch = e.Equal(pushed_table_base, e.U32(runtime::kDispatchGroupMarker));
    // A member of a group continues as that node: its graph index and its own output-table base.
    auto become_member = [&](std::uint32_t member) {
        e.Store(ctx_.var_node_index, member);
        e.Store(
            ctx_.var_output_table_start,
            output_table_start(e.LoadScratchU32(e.Add(node_static_info_at(member), e.U32(offsets::kNodeStaticOutputTableBase)))));
    };

    std::uint32_t directory_first = 0;
    std::uint32_t input_count = e.U32(1);
    std::uint32_t local_workgroup = 0;                  // linear workgroup within the record's grid (broadcast)
    std::uint32_t gx = 0, gy = 0, gz = 0;               // the record's grid
    if (launch == LaunchKind::kBroadcastStatic) {
        // Every record runs the same grid, so workgroup w runs record w / grid of the node's directory range, workgroup
        // w % grid within it.
        const auto& g = *info.static_grid;
        const std::uint64_t product = std::uint64_t{g[0]} * g[1] * g[2];
        if (product == 0 || product > 0xffffffffull) return Error{kNoWordOffset, "static grid is empty or too large"};
        const std::uint32_t grid_size = e.U32(static_cast<std::uint32_t>(product));
        const std::uint32_t record_in_dispatch = e.Div(dispatched_linear, grid_size);
        auto group_entry = [&]() {
            // The members' directory ranges lie one after the other (graph-node order) and every member's record
            // runs the same grid, so the group's workgroups run the range's records in order: the level pass wrote
            // where the range starts and how many workgroups it runs, and each entry names its member
            // (DirectoryEntry::first_workgroup_or_node). Three dependent loads where a member search takes
            // log2(members) more, for every workgroup of the group.
            const std::uint32_t first_state = node_state_at(pushed_node);
            const std::uint32_t group_workgroups = e.LoadScratchU32(e.Add(first_state, e.U32(offsets::kNodeStateGroupWorkgroups)));
            const std::uint32_t group_directory_base =
                e.LoadScratchU32(e.Add(first_state, e.U32(offsets::kNodeStateGroupDirectoryBase)));
            return_if(e.LessEqual(group_workgroups, dispatched_linear));
            const std::uint32_t entry_index = e.Add(group_directory_base, record_in_dispatch);
            become_member(e.LoadScratchU32(e.Add(directory_entry_at(entry_index), e.U32(offsets::kDirectoryFirstWorkgroupOrNode))));
            return entry_index;
        };
        auto own_entry = [&]() {
            const std::uint32_t state = input_state_of(pushed_node);
            const std::uint32_t record_count = e.LoadScratchU32(e.Add(state, e.U32(offsets::kNodeStateRecordCount)));
            const std::uint32_t directory_base = e.LoadScratchU32(e.Add(state, e.U32(offsets::kNodeStateDirectoryBase)));
            return_if(e.LessEqual(record_count, record_in_dispatch));
            return e.Add(directory_base, record_in_dispatch);
        };
        // A module that no other node shares is never dispatched as a group (LoweringOptions::dispatch_group_member).
        const bool member = ctx_.options.dispatch_group_member;
        // A workgroup of one invocation outside any dispatch group (a chain step) at a direct level
        // (runtime::kLevelRecordListIsDirectory in the pushed level) finds its entry in the input half's record list,
        // which its preparer made the node's directory and which starts after the half's node states: with the node
        // count a constant (LoweringOptions::node_count) its address needs no load, so the entry loads beside the record
        // count instead of after the directory base, one round trip less at every level of a chain. The count still
        // decides whether the workgroup runs; a workgroup past it reads a slot it ignores, and stays inside the half: a
        // dispatch's workgroups exceed its records' only in the last row of a dispatch over 65535 workgroups
        // (x = 65535, y rows), where records * grid > 65535, so record r <= records + 65534 / grid <= 2 * records: at
        // most the entry just past the directory (record_capacity entries) that follows the list, where the heap starts.
        // Not in larger workgroups, dispatch groups or thread nodes: there the branch
        // between the two ways cost more than it saved (H200: the 10240x5760 classification +5%, docs/performance.md).
        const bool from_list = !member && ctx_.options.node_count != 0 &&
                               std::uint64_t{info.local_size[0]} * info.local_size[1] * info.local_size[2] == 1;
        auto entry_from_list = [&]() {
            const std::uint32_t record_count =
                e.LoadScratchU32(e.Add(input_state_of(pushed_node), e.U32(offsets::kNodeStateRecordCount)));
            const std::uint32_t list_entry =
                e.Add(e.Add(input_half, records_offset), e.Mul(record_in_dispatch, e.U32(offsets::kRecordEntrySize)));
            load_first_entry(list_entry);
            return_if(e.LessEqual(record_count, record_in_dispatch));
            // The list lies record_capacity entries before the directory, so this index names the same entry there.
            return e.Sub(record_in_dispatch, record_capacity);
        };
        auto entry_from_directory = [&]() {
            const std::uint32_t first = member ? b.IfElseValue(group_dispatch, ctx_.u32, group_entry, own_entry) : own_entry();
            load_first_entry(directory_entry_at(first));
            return first;
        };
        auto entry_from_list_or_directory = [&]() {
            if (!from_list) return entry_from_directory();
            const std::uint32_t list_is_directory =
                e.NotEqual(e.And(pushed_level, e.U32(runtime::kLevelRecordListIsDirectory)), e.U32(0));
            return b.IfElseValue(list_is_directory, ctx_.u32, entry_from_list, entry_from_directory);
        };
        // By index, the level's one consumer is this node, dispatched alone (not as a group): its record r is the
        // level's, and nothing reads directory_first of a static broadcast node without finish_counter.
        auto record_by_index = [&]() {
            const std::uint32_t record_count =
                e.LoadScratchU32(e.Add(node_state_at(pushed_node), e.U32(offsets::kNodeStateRecordCount)));
            return_if(e.LessEqual(record_count, record_in_dispatch));
            const std::uint32_t record = newest_first_index(record_count, record_in_dispatch);
            place_by_index(record);
            return record;
        };
        directory_first = may_read_by_index ? b.IfElseValue(by_index, ctx_.u32, record_by_index, entry_from_list_or_directory)
                                            : entry_from_list_or_directory();
        local_workgroup = e.Mod(dispatched_linear, grid_size);
        gx = e.U32(g[0]);
        gy = e.U32(g[1]);
        gz = e.U32(g[2]);
    } else {
        // The level pass wrote each member's first workgroup within the group (NodeState::group_first_workgroup), so
        // the workgroup's member is the last one whose first workgroup is at or before it, and the member's own linear
        // workgroup is the difference. Members without work have no workgroups and are never found.
        auto member_linear = [&]() {
            const std::uint32_t group_size =
                e.Max(e.LoadScratchU32(e.Add(node_static_info_at(pushed_node), e.U32(offsets::kNodeStaticDispatchGroupSize))), e.U32(1));
            const std::uint32_t last_state = node_state_at(e.Sub(e.Add(pushed_node, group_size), e.U32(1)));
            const std::uint32_t group_workgroups = e.Add(e.LoadScratchU32(e.Add(last_state, e.U32(offsets::kNodeStateGroupFirstWorkgroup))),
                                                         e.LoadScratchU32(e.Add(last_state, e.U32(offsets::kNodeStateWorkgroupCount))));
            return_if(e.LessEqual(group_workgroups, dispatched_linear));
            const std::uint32_t member = e.Add(pushed_node, search_last_at_or_before(group_size, dispatched_linear, [&](std::uint32_t i) {
                return e.LoadScratchU32(e.Add(node_state_at(e.Add(pushed_node, i)), e.U32(offsets::kNodeStateGroupFirstWorkgroup)));
            }));
            become_member(member);
            return e.Sub(dispatched_linear, e.LoadScratchU32(e.Add(node_state_at(member), e.U32(offsets::kNodeStateGroupFirstWorkgroup))));
        };
        const std::uint32_t linear = ctx_.options.dispatch_group_member
                                         ? b.IfValue(group_dispatch, ctx_.u32, dispatched_linear, member_linear)
                                         : dispatched_linear;

        const std::uint32_t me = e.LoadU32Var(ctx_.var_node_index);
        const std::uint32_t state = input_state_of(me);
        const std::uint32_t record_count = e.LoadScratchU32(e.Add(state, e.U32(offsets::kNodeStateRecordCount)));
        const std::uint32_t directory_base = e.LoadScratchU32(e.Add(state, e.U32(offsets::kNodeStateDirectoryBase)));

        std::uint32_t local_index = 0;
        std::uint32_t past = 0;
        std::uint32_t batches = 0;  // a coalescing node's
        switch (launch) {
            case LaunchKind::kBroadcastDynamic: {
                // The scatter pass computed this node's workgroups (grids clamped to MaxNumWorkgroupsAMDX).
                const std::uint32_t workgroups = e.LoadScratchU32(e.Add(node_state_at(me), e.U32(offsets::kNodeStateWorkgroupCount)));
                past = e.LessEqual(workgroups, linear);
                break;
            }
            case LaunchKind::kCoalescing: {
                const std::uint32_t m = e.U32(info.input_max_payloads);
                batches = e.Div(e.Add(record_count, e.U32(info.input_max_payloads - 1)), m);
                past = e.LessEqual(batches, linear);
                break;
            }
            case LaunchKind::kThread: {
                local_index = e.Load(ctx_.u32, ctx_.builtin_local_invocation_index);
                const std::uint32_t record = e.Add(e.Mul(linear, e.U32(ctx_.options.thread_batch_size)), local_index);
                past = e.LessEqual(record_count, record);
                break;
            }
            case LaunchKind::kBroadcastStatic:
                return Error{kNoWordOffset, "internal: static broadcast launch handled above"};
        }
        return_if(past);

        switch (launch) {
            case LaunchKind::kBroadcastDynamic: {
                // Last directory entry of the node with first_workgroup <= linear.
                const std::uint32_t lo = search_last_at_or_before(record_count, linear, [&](std::uint32_t mid) {
                    return e.LoadScratchU32(e.Add(directory_entry_at(e.Add(directory_base, mid)), e.U32(offsets::kDirectoryFirstWorkgroupOrNode)));
                });
                directory_first = e.Add(directory_base, lo);
                const std::uint32_t entry_offset = directory_entry_at(directory_first);
                local_workgroup = e.Sub(linear, e.LoadScratchU32(e.Add(entry_offset, e.U32(offsets::kDirectoryFirstWorkgroupOrNode))));
                // The record's grid member (any offset, 1-3 components of 8/16/32 bits), missing components 1, clamped to
                // MaxNumWorkgroupsAMDX as the scatter pass does.
                const DispatchGridMember& member = *info.dispatch_grid;
                const std::uint32_t payload = e.LoadScratchU32(e.Add(entry_offset, e.U32(offsets::kDirectoryPayloadOffset)));
                const std::uint32_t record = e.Add(e.Add(input_half, heap_offset), payload);
                std::uint32_t components[3];
                for (std::uint32_t c = 0; c < 3; ++c) {
                    if (c >= member.component_count) {
                        components[c] = e.U32(1);
                        continue;
                    }
                    const std::uint32_t bytes = member.component_bits / 8;
                    const std::uint32_t byte = member.byte_offset + c * bytes;
                    std::uint32_t value = e.LoadScratchU32(e.Add(record, e.U32(byte & ~3u)));
                    if (bytes < 4) {
                        value = e.And(e.ShiftRight(value, e.U32((byte & 3u) * 8)), e.U32((1u << member.component_bits) - 1));
                    }
                    if (info.max_grid) value = e.Min(value, e.U32((*info.max_grid)[c]));
                    components[c] = value;
                }
                gx = components[0];
                gy = components[1];
                gz = components[2];
                break;
            }
            // By index, directory_first is the record's index in the level (InputRecordAddress), every record being this
            // node's.
            case LaunchKind::kCoalescing: {
                // Newest first by batch: the partial batch, if any, is then the first one read.
                const std::uint32_t m = e.U32(info.input_max_payloads);
                std::uint32_t first = e.Mul(linear, m);
                if (may_read_by_index) {
                    const std::uint32_t first_by_index = e.Mul(newest_first_index(batches, linear), m);
                    directory_first = e.SelectU32(by_index, first_by_index, e.Add(directory_base, first));
                    if (newest_first) first = e.SelectU32(by_index, first_by_index, first);
                } else {
                    directory_first = e.Add(directory_base, first);
                }
                input_count = e.Min(m, e.Sub(record_count, first));
                break;
            }
            case LaunchKind::kThread: {
                const std::uint32_t record = e.Add(e.Mul(linear, e.U32(ctx_.options.thread_batch_size)), local_index);
                directory_first = may_read_by_index ? e.SelectU32(by_index, newest_first_index(record_count, record),
                                                                  e.Add(directory_base, record))
                                                    : e.Add(directory_base, record);
                break;
            }
            case LaunchKind::kBroadcastStatic:
                break;
        }
    }
    // Outputs that are not node arrays have one table entry: loaded now, for the reason output_table_offset is.
    ctx_.var_sole_output_target.assign(ctx_.options.output_table_length.size(), 0);
    for (std::size_t output = 0; output < ctx_.options.output_table_length.size(); ++output) {
        if (ctx_.options.output_table_length[output] != 1) continue;
        const std::uint32_t var = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
        const std::uint32_t entry =
            e.Add(e.LoadU32Var(ctx_.var_output_table_start), e.U32(ctx_.options.output_table_index[output] * 4));
        e.Store(var, e.LoadScratchU32(entry));
        ctx_.var_sole_output_target[output] = var;
    }
    e.Store(ctx_.var_directory_first, directory_first);
    e.Store(ctx_.var_input_count, input_count);
    if (launch != LaunchKind::kBroadcastStatic) {
        auto load_directory_entry = [&]() { load_first_entry(directory_entry_at(directory_first)); };
        if (may_read_by_index) {
            b.IfElse(
                by_index, [&]() { place_by_index(directory_first); }, load_directory_entry);
        } else {
            load_directory_entry();
        }
    }
    const std::uint32_t depth = e.LoadU32Var(ctx_.var_recursion_depth);

    // Remapped built-in values.
    std::uint32_t zero3 = e.types().GetConstantNull(ctx_.v3u32);
    std::uint32_t group_id = zero3;
    std::uint32_t num_workgroups = e.types().GetConstantComposite(ctx_.v3u32, std::array{e.U32(1), e.U32(1), e.U32(1)});
    if (broadcast) {
        const std::uint32_t safe_x = e.Max(gx, e.U32(1));
        const std::uint32_t safe_y = e.Max(gy, e.U32(1));
        const std::uint32_t x = e.Mod(local_workgroup, safe_x);
        const std::uint32_t y = e.Mod(e.Div(local_workgroup, safe_x), safe_y);
        const std::uint32_t z = e.Div(local_workgroup, e.Mul(safe_x, safe_y));
        group_id = e.Emit(Op::OpCompositeConstruct, ctx_.v3u32, {x, y, z});
        num_workgroups = e.Emit(Op::OpCompositeConstruct, ctx_.v3u32, {gx, gy, gz});
    }
    const std::uint32_t max_recursion = e.U32(info.max_recursion.value_or(0));
    for (const Remap& remap : remaps) {
        std::uint32_t value = 0;
        switch (remap.builtin) {
            case BuiltIn::WorkgroupId:
                value = group_id;
                break;
            case BuiltIn::NumWorkgroups:
                value = num_workgroups;
                break;
            case BuiltIn::GlobalInvocationId: {
                if (thread) {
                    value = zero3;
                    break;
                }
                Result<BuiltinShape> lid_shape = ShapeOfBuiltin(module, ctx_.builtin_local_invocation_id);
                if (!lid_shape) return lid_shape.error();
                std::uint32_t lid = e.Load(lid_shape->pointee, ctx_.builtin_local_invocation_id);
                if (lid_shape->pointee != ctx_.v3u32) lid = e.Emit(Op::OpBitcast, ctx_.v3u32, {lid});
                const auto& ls = info.local_size;
                const std::uint32_t size = e.types().GetConstantComposite(ctx_.v3u32, std::array{e.U32(ls[0]), e.U32(ls[1]), e.U32(ls[2])});
                value = e.Emit(Op::OpIAdd, ctx_.v3u32, {e.Emit(Op::OpIMul, ctx_.v3u32, {group_id, size}), lid});
                break;
            }
            case BuiltIn::LocalInvocationId:
                value = zero3;
                break;
            case BuiltIn::LocalInvocationIndex:
                value = e.U32(0);
                break;
            case BuiltIn::RemainingRecursionLevelsAMDX:
                value = e.SelectU32(e.Less(depth, max_recursion), e.Sub(max_recursion, depth), e.U32(0));
                break;
            case BuiltIn::ShaderIndexAMDX:
                if (ctx_.options.shader_index) {
                    value = e.U32(*ctx_.options.shader_index);
                } else {
                    // The layer writes each node's index (after VkPipelineShaderStageNodeCreateInfoAMDX::index) into its
                    // NodeStaticInfo, so that one lowered module serves every node of an array.
                    const std::uint32_t table = e.NodeTableOffset();
                    value = e.LoadScratchU32(
                        e.Add(e.Add(table, e.Mul(e.LoadU32Var(ctx_.var_node_index), e.U32(offsets::kNodeStaticInfoSize))),
                              e.U32(offsets::kNodeStaticShaderIndex)));
                }
                break;
            default:
                return Error{kNoWordOffset, "internal: unexpected built-in remap"};
        }
        if (remap.shape.pointee != (remap.shape.components == 3 ? ctx_.v3u32 : ctx_.u32)) {
            value = e.Emit(Op::OpBitcast, remap.shape.pointee, {value});
        }
        if ((remap.shape.components == 3) != (remap.builtin != BuiltIn::LocalInvocationIndex && remap.builtin != BuiltIn::RemainingRecursionLevelsAMDX &&
                                              remap.builtin != BuiltIn::ShaderIndexAMDX)) {
            return Error{kNoWordOffset, "built-in variable of an unexpected shape"};
        }
        e.Store(remap.private_var, value);
    }
    e.EmitVoid(Op::OpBranch, {original_label});

    std::vector<BasicBlock> blocks = std::move(b.blocks());
    for (BasicBlock& block : entry->blocks) blocks.push_back(std::move(block));
    entry->blocks = std::move(blocks);
    return true;
}

}  // namespace execgraph::spirv::lowering
