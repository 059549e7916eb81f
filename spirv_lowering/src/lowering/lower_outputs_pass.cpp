// SPDX-License-Identifier: Apache-2.0
// Output payloads (docs/design.md, "Lowered node semantics"):
//   * OpAllocateNodePayloadsAMDX calls a per-output helper that looks the target node up in the output table, bumps the
//     output half's heap and record list with atomics, bounds-checks both against the capacities, appends the record
//     entries (allocation = enqueue: the spec counts allocations as enqueued when the invocation / workgroup ends, and
//     DXC never enqueues empty outputs), counts the target's records, and on overflow or an invalid node flags the
//     status, counts the drop and returns the trash region. Same-address atomics are aggregated: an allocation every
//     invocation of a broadcast or coalescing workgroup provably reaches (WorkgroupUniformBlocks) reserves once per
//     workgroup, and counts each table entry's records in workgroup memory; others once per subgroup. Workgroup
//     visibility: invocation 0 allocates and shares the address through workgroup memory, or keeps it to itself where
//     only it touches the records (LeaderOnlyAllocations; thread nodes treat Workgroup as Invocation: each invocation is
//     its own group). The result is the PhysicalStorageBuffer pointer to the records.
//   * OpEnqueueNodePayloadsAMDX lowers to nothing.
//   * OpIsNodePayloadValidAMDX: the table has a node for the index and, for the node itself, RemainingRecursionLevels > 0.
//   * OpNodePayloadArrayLengthAMDX of an output: the allocation's (constant) payload count.
#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "execgraph/spirv/constant_eval.h"
#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

bool IsTerminator(Op op) {
    return op == Op::OpBranch || op == Op::OpBranchConditional || op == Op::OpSwitch || op == Op::OpReturn || op == Op::OpReturnValue ||
           op == Op::OpKill || op == Op::OpUnreachable || op == Op::OpTerminateInvocation;
}

bool LeavesFunction(Op op) {
    return op == Op::OpReturn || op == Op::OpReturnValue || op == Op::OpKill || op == Op::OpTerminateInvocation;
}

// The block's terminator and the merge instruction before it (nullptr when none); debug-line instructions may follow
// the terminator (BasicBlock).
std::pair<const Instruction*, const Instruction*> TerminatorAndMerge(const BasicBlock& block) {
    const std::vector<Instruction>& insts = block.instructions;
    for (std::size_t i = insts.size(); i-- > 1;) {
        if (!IsTerminator(insts[i].opcode())) continue;
        const Instruction* merge = nullptr;
        for (std::size_t j = i; j-- > 1;) {
            const Op op = insts[j].opcode();
            if (op == Op::OpLine || op == Op::OpNoLine || op == Op::OpExtInst) continue;
            if (op == Op::OpSelectionMerge || op == Op::OpLoopMerge) merge = &insts[j];
            break;
        }
        return {&insts[i], merge};
    }
    return {nullptr, nullptr};
}

// Blocks of `function`, from `body_label` on, that every invocation of a workgroup that enters the body runs exactly
// once: the first block, then each top-level construct's merge block, while no construct on the way holds a way out of
// the function. In structured control flow (SPIR-V §2.11) a construct is left only through its merge block or by
// leaving the function, so all invocations meet again at the merge. Loop headers are left out: they run once per
// iteration. Allocations in these blocks are in workgroup-uniform control flow, as facts §16 requires of all of them;
// this finds the ones that provably are, so that a shader breaking the rule still does not meet a workgroup barrier
// divergently.
std::unordered_set<std::uint32_t> WorkgroupUniformBlocks(const Function& function, std::uint32_t body_label) {
    std::unordered_map<std::uint32_t, const BasicBlock*> blocks;
    for (const BasicBlock& block : function.blocks) blocks[block.label_id()] = &block;
    // Whether a way out of the function is reachable from `header`'s successors without passing `merge`. Every
    // terminator operand that names a block counts as a successor (OpSwitch literals that happen to equal a label only
    // make the answer more cautious).
    auto construct_leaves_function = [&](const BasicBlock& header, std::uint32_t merge) {
        std::vector<const BasicBlock*> work{&header};
        std::unordered_set<std::uint32_t> seen{header.label_id(), merge};
        while (!work.empty()) {
            const BasicBlock* block = work.back();
            work.pop_back();
            const Instruction* terminator = TerminatorAndMerge(*block).first;
            if (terminator == nullptr || LeavesFunction(terminator->opcode())) return true;
            for (std::size_t i = 0; i < terminator->OperandWordCount(); ++i) {
                const auto next = blocks.find(terminator->Word(i));
                if (next != blocks.end() && seen.insert(next->first).second) work.push_back(next->second);
            }
        }
        return false;
    };
    std::unordered_set<std::uint32_t> uniform;
    std::unordered_set<std::uint32_t> visited;
    std::uint32_t label = body_label;
    while (visited.insert(label).second) {
        const auto found = blocks.find(label);
        if (found == blocks.end()) break;
        const auto [terminator, merge] = TerminatorAndMerge(*found->second);
        if (terminator == nullptr) break;
        if (merge == nullptr || merge->opcode() != Op::OpLoopMerge) uniform.insert(label);
        if (merge != nullptr) {
            if (construct_leaves_function(*found->second, merge->Word(0))) break;
            label = merge->Word(0);
        } else if (terminator->opcode() == Op::OpBranch) {
            label = terminator->Word(0);
        } else {
            break;
        }
    }
    return uniform;
}

// The components of LocalInvocationId that `id` being true proves zero, as a mask (bit c for component c; all three for
// LocalInvocationIndex == 0): `LocalInvocationIndex == 0`, `LocalInvocationId.c == 0`, `all(LocalInvocationId == 0)`
// and conjunctions of them. Where the proven components cover every dimension of the workgroup larger than one, only
// invocation 0 takes the condition's true edge. DXC compiles `if (SV_GroupIndex == 0)` to the first (dxc-spirv-shapes
// §3.2: AMD's classify shaders guard their group record's stores with it); HLSL 2021 turns `gtid.x == 0 && gtid.y == 0`
// into nested selections, whose masks LeaderOnlyAllocations combines along the dominating edges.
std::uint32_t ZeroComponents(const Module& module, const LoweringContext& ctx, std::uint32_t id, int depth = 0) {
    constexpr std::uint32_t kAll = 0b111;
    const Instruction* def = module.FindDef(id);
    if (def == nullptr || depth > 4) return 0;
    if (def->opcode() == Op::OpLogicalAnd) {
        return ZeroComponents(module, ctx, def->Word(0), depth + 1) | ZeroComponents(module, ctx, def->Word(1), depth + 1);
    }
    auto is_zero = [&](std::uint32_t operand) {
        const Instruction* constant = module.FindDef(operand);
        if (constant == nullptr) return false;
        if (constant->opcode() == Op::OpConstantNull) return true;
        if (constant->opcode() == Op::OpConstantComposite) {
            for (std::size_t i = 0; i < constant->OperandWordCount(); ++i) {
                Result<std::uint32_t> value = EvaluateUint32(module, constant->Word(i));
                if (!value.ok() || *value != 0) return false;
            }
            return true;
        }
        if (constant->opcode() != Op::OpConstant) return false;
        Result<std::uint32_t> value = EvaluateUint32(module, operand);
        return value.ok() && *value == 0;
    };
    auto without_bitcast = [&](std::uint32_t operand) {
        const Instruction* value = module.FindDef(operand);
        return value != nullptr && value->opcode() == Op::OpBitcast ? module.FindDef(value->Word(0)) : value;
    };
    auto loads = [](const Instruction* value, std::uint32_t variable) {
        return value != nullptr && value->opcode() == Op::OpLoad && value->Word(0) == variable;
    };
    // What `operand` == 0 proves.
    auto proven_by_zero = [&](std::uint32_t operand) -> std::uint32_t {
        const Instruction* value = without_bitcast(operand);
        if (value == nullptr) return 0;
        if (loads(value, ctx.builtin_local_invocation_index)) return kAll;
        if (loads(value, ctx.builtin_local_invocation_id)) return kAll;  // the whole vector (under OpAll)
        if (value->opcode() == Op::OpCompositeExtract && value->OperandWordCount() == 2 && value->Word(1) < 3 &&
            loads(without_bitcast(value->Word(0)), ctx.builtin_local_invocation_id)) {
            return 1u << value->Word(1);
        }
        return 0;
    };
    auto equal_to_zero = [&](const Instruction* compare) -> std::uint32_t {
        if (compare == nullptr || compare->opcode() != Op::OpIEqual) return 0;
        if (is_zero(compare->Word(0))) return proven_by_zero(compare->Word(1));
        if (is_zero(compare->Word(1))) return proven_by_zero(compare->Word(0));
        return 0;
    };
    if (def->opcode() == Op::OpAll) {
        const Instruction* compare = module.FindDef(def->Word(0));
        return compare != nullptr && compare->opcode() == Op::OpIEqual && module.FindDef(compare->type_id()) != nullptr &&
                       module.FindDef(compare->type_id())->opcode() == Op::OpTypeVector
                   ? equal_to_zero(compare)
                   : 0;
    }
    const std::uint32_t proven = equal_to_zero(def);
    // A scalar comparison of the whole LocalInvocationId vector is not SPIR-V; only OpAll above may prove all three.
    const Instruction* type = module.FindDef(def->type_id());
    return type != nullptr && type->opcode() == Op::OpTypeBool ? proven : 0;
}

// The blocks of `function` that only invocation 0 of the workgroup runs: those that true edges of leader conditions
// (ZeroComponents) dominate, where the proven components cover every dimension of the workgroup larger than one.
std::unordered_set<std::uint32_t> LeaderBlocks(const Module& module, const LoweringContext& ctx, const Function& function) {
    std::unordered_set<std::uint32_t> leader_blocks;
    if (function.blocks.empty()) return leader_blocks;
    const auto& size = ctx.info.local_size;
    std::unordered_map<std::uint32_t, const BasicBlock*> blocks;
    for (const BasicBlock& block : function.blocks) blocks[block.label_id()] = &block;
    auto successors = [&](const BasicBlock& block) {
        std::vector<std::uint32_t> next;
        const Instruction* terminator = TerminatorAndMerge(block).first;
        if (terminator == nullptr) return next;
        for (std::size_t i = 0; i < terminator->OperandWordCount(); ++i) {
            if (blocks.count(terminator->Word(i)) != 0) next.push_back(terminator->Word(i));
        }
        return next;
    };
    // Blocks reachable from the function's first block without entering `avoid` (0: none).
    auto reachable = [&](std::uint32_t avoid) {
        std::unordered_set<std::uint32_t> seen;
        std::vector<std::uint32_t> work{function.blocks.front().label_id()};
        if (work.back() == avoid) return seen;
        seen.insert(work.back());
        while (!work.empty()) {
            const BasicBlock* block = blocks[work.back()];
            work.pop_back();
            for (std::uint32_t next : successors(*block)) {
                if (next != avoid && seen.insert(next).second) work.push_back(next);
            }
        }
        return seen;
    };
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> predecessors;
    for (const BasicBlock& block : function.blocks) {
        for (std::uint32_t next : successors(block)) predecessors[next].push_back(block.label_id());
    }
    // For each block, the LocalInvocationId components that the true edges dominating it prove zero (ZeroComponents): an
    // edge dominates the blocks its target dominates, where the edge is the target's only way in. Only invocation 0
    // runs a block whose components cover every dimension of the workgroup larger than one.
    std::uint32_t needed = 0;
    for (std::uint32_t c = 0; c < 3; ++c) needed |= size[c] > 1 ? 1u << c : 0u;
    const std::unordered_set<std::uint32_t> all = reachable(0);
    std::unordered_map<std::uint32_t, std::uint32_t> proven_zero;
    for (const BasicBlock& block : function.blocks) {
        const Instruction* terminator = TerminatorAndMerge(block).first;
        if (terminator == nullptr || terminator->opcode() != Op::OpBranchConditional) continue;
        const std::uint32_t taken = terminator->Word(1);
        const std::uint32_t components = ZeroComponents(module, ctx, terminator->Word(0));
        if (taken == terminator->Word(2) || components == 0) continue;
        const std::vector<std::uint32_t>& in = predecessors[taken];
        if (in.size() != 1 || in.front() != block.label_id()) continue;
        const std::unordered_set<std::uint32_t> avoiding = reachable(taken);
        for (std::uint32_t label : all) {
            if (avoiding.count(label) == 0) proven_zero[label] |= components;
        }
    }
    for (const auto& [label, components] : proven_zero) {
        if ((components & needed) == needed) leader_blocks.insert(label);
    }
    return leader_blocks;
}

// Workgroup-visibility allocations of `function` whose records only invocation 0 of the workgroup accesses, so that no
// other invocation needs their address: every load, store or atomic through the allocation (directly, through
// access chains, or through DXC's Function-variable alias, dxc-spirv-shapes §3.2) lies in a block that only invocation 0
// reaches (ZeroComponents, along the true edges that dominate it), and the pointer goes nowhere else but into the enqueue and the
// array-length query, which lower to nothing and a constant. Invocation 0 is the one that allocates (DefineWorkgroupAllocate), so
// these need no broadcast through workgroup memory and no workgroup barrier: the other invocations may finish while it
// reserves. The spec gives the allocation no barrier semantics of its own (facts §16 only requires that all invocations
// reach it), so dropping ours changes nothing an application can rely on. Anything the analysis does not understand
// (a phi or select of the pointer, a call, a store of it elsewhere) keeps the broadcast. In a workgroup of one
// invocation every allocation qualifies.
std::unordered_set<std::uint32_t> LeaderOnlyAllocations(const Module& module, const LoweringContext& ctx,
                                                        const Function& function) {
    std::unordered_set<std::uint32_t> result;
    if (function.blocks.empty()) return result;
    const auto& size = ctx.info.local_size;
    const bool single_invocation = size[0] * size[1] * size[2] == 1;
    const std::unordered_set<std::uint32_t> leader_blocks = LeaderBlocks(module, ctx, function);

    auto is_alias_variable = [&](std::uint32_t id) {
        const Instruction* def = module.FindDef(id);
        std::uint32_t pointee = 0;
        StorageClass storage_class{};
        if (def == nullptr || def->opcode() != Op::OpVariable || !PointerInfo(module, def->type_id(), &storage_class, &pointee))
            return false;
        const Instruction* pointee_def = module.FindDef(pointee);
        return storage_class == StorageClass::Function && pointee_def != nullptr &&
               pointee_def->opcode() == Op::OpTypeNodePayloadArrayAMDX;
    };
    auto is_access_chain = [](Op op) {
        return op == Op::OpAccessChain || op == Op::OpInBoundsAccessChain || op == Op::OpPtrAccessChain ||
               op == Op::OpInBoundsPtrAccessChain;
    };
    for (const BasicBlock& block : function.blocks) {
        for (const Instruction& allocation : block.instructions) {
            if (allocation.opcode() != Op::OpAllocateNodePayloadsAMDX) continue;
            Result<std::uint32_t> scope = EvaluateUint32(module, allocation.Word(0));
            if (!scope.ok() || *scope != static_cast<std::uint32_t>(AllocationScope::kWorkgroup)) continue;
            if (single_invocation) {  // invocation 0 is the workgroup (the chains of overhead_chain32, for one)
                result.insert(allocation.result_id());
                continue;
            }
            // The allocation, its copies and aliases (ResolvePayloadAliasesPass), and pointers derived from them.
            std::unordered_set<std::uint32_t> derived;
            for (const auto& [id, source] : ctx.payload_source) {
                if (source == allocation.result_id()) derived.insert(id);
            }
            derived.insert(allocation.result_id());
            for (bool grew = true; grew;) {
                grew = false;
                for (const BasicBlock& b : function.blocks) {
                    for (const Instruction& inst : b.instructions) {
                        const bool from_derived = inst.OperandWordCount() != 0 && derived.count(inst.Word(0)) != 0;
                        const bool copies = is_access_chain(inst.opcode()) || inst.opcode() == Op::OpCopyObject ||
                                            (inst.opcode() == Op::OpLoad && is_alias_variable(inst.Word(0)));
                        if (from_derived && copies && derived.insert(inst.result_id()).second) grew = true;
                    }
                }
            }
            bool leader_only = true;
            for (const BasicBlock& b : function.blocks) {
                const bool in_leader_block = leader_blocks.count(b.label_id()) != 0;
                for (const Instruction& inst : b.instructions) {
                    std::size_t uses = 0;
                    for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) uses += derived.count(inst.Word(i));
                    if (uses == 0) continue;
                    const Op op = inst.opcode();
                    const bool pointer_first = derived.count(inst.Word(0)) != 0;
                    if (op == Op::OpEnqueueNodePayloadsAMDX || op == Op::OpNodePayloadArrayLengthAMDX || op == Op::OpCopyObject)
                        continue;
                    if (is_access_chain(op) && pointer_first && uses == 1) continue;
                    if (op == Op::OpLoad && is_alias_variable(inst.Word(0))) continue;  // the pointer itself, not its records
                    if (op == Op::OpStore && is_alias_variable(inst.Word(0))) {
                        // Copying the pointer into its alias; an alias that also holds another value is not followed.
                        const auto source = ctx.payload_source.find(inst.Word(0));
                        if (source != ctx.payload_source.end() && source->second == allocation.result_id() &&
                            derived.count(inst.Word(1)) != 0) {
                            continue;
                        }
                        leader_only = false;
                        break;
                    }
                    const bool memory_access =
                        op == Op::OpLoad || op == Op::OpStore || OpcodeName(static_cast<std::uint32_t>(op)).starts_with("OpAtomic");
                    if (!(memory_access && pointer_first && uses == 1 && in_leader_block)) {
                        leader_only = false;
                        break;
                    }
                }
                if (!leader_only) break;
            }
            if (leader_only) result.insert(allocation.result_id());
        }
    }
    return result;
}

// Whether invocations other than 0 may skip the node's code (prologue included) and go straight to the level hand-off:
// nothing they would run can be observed by the application, by invocation 0, or by a later level. Outside the blocks
// only invocation 0 runs (LeaderBlocks), the code may only compute, load, write Function or Private variables, call
// functions that do the same, and allocate through LeaderOnlyAllocations (which leave the other invocations out anyway).
// Anything that talks to other invocations or memory (stores elsewhere, atomics, barriers, subgroup and other group
// operations, whose results in invocation 0 depend on who else takes part, image writes, debug printf, finishing an
// input record) keeps every invocation. The benchmark's classify node and AMD's classify shape when written this way
// (`if (SV_GroupIndex == 0)` around the record, everything before it pure) qualify; shaders that use every invocation
// for per-pixel work, groupshared reductions or barriers do not. The spec has nothing for idle invocations to do: an
// invocation's effects are its stores, atomics and allocations, and a Workgroup allocation only asks that all
// invocations reach it (facts §16), which the lowering's leader-only allocation does not depend on.
bool OnlyInvocationZeroHasEffects(const Module& module, const LoweringContext& ctx, const Function& function,
                                  const std::unordered_set<std::uint32_t>& leader_only_allocations) {
    const auto& size = ctx.info.local_size;
    if (size[0] * size[1] * size[2] <= 1) return false;  // nobody to skip
    auto storage_class_of = [&](std::uint32_t pointer) -> std::optional<StorageClass> {
        const Instruction* def = module.FindDef(pointer);
        StorageClass storage_class{};
        if (def == nullptr || !PointerInfo(module, def->type_id(), &storage_class, nullptr)) return std::nullopt;
        return storage_class;
    };
    auto invocation_local = [&](std::uint32_t pointer) {
        const std::optional<StorageClass> storage_class = storage_class_of(pointer);
        return storage_class && (*storage_class == StorageClass::Function || *storage_class == StorageClass::Private);
    };
    std::unordered_set<std::uint32_t> callees_checked;
    std::function<bool(const Function&, const std::unordered_set<std::uint32_t>&, int)> pure;
    pure = [&](const Function& fn, const std::unordered_set<std::uint32_t>& exempt_blocks, int depth) {
        for (const BasicBlock& block : fn.blocks) {
            if (exempt_blocks.count(block.label_id()) != 0) continue;
            for (const Instruction& inst : block.instructions) {
                const Op op = inst.opcode();
                const std::string_view name = OpcodeName(static_cast<std::uint32_t>(op));
                switch (op) {
                    case Op::OpStore:
                    case Op::OpCopyMemory:
                    case Op::OpCopyMemorySized:
                        if (!invocation_local(inst.Word(0))) return false;
                        continue;
                    case Op::OpFunctionCall: {
                        const std::uint32_t callee_id = inst.Word(0);
                        if (callees_checked.count(callee_id) != 0) continue;
                        const Function* callee = FindFunction(module, callee_id);
                        if (callee == nullptr || depth > 8 || !pure(*callee, {}, depth + 1)) return false;
                        callees_checked.insert(callee_id);
                        continue;
                    }
                    case Op::OpExtInst: {
                        const Instruction* set = module.FindDef(inst.Word(0));
                        const std::string set_name = set != nullptr ? set->StringAt(0) : std::string();
                        if (set_name != "GLSL.std.450" && !set_name.starts_with("NonSemantic.Shader.DebugInfo")) return false;
                        continue;
                    }
                    case Op::OpAllocateNodePayloadsAMDX:
                        if (leader_only_allocations.count(inst.result_id()) == 0) return false;
                        continue;
                    case Op::OpControlBarrier:
                    case Op::OpMemoryBarrier:
                    case Op::OpImageWrite:
                    case Op::OpFinishWritingNodePayloadAMDX:
                        return false;
                    default:
                        break;
                }
                // Atomics write; group, subgroup and cooperative operations, and derivatives, combine invocations.
                for (std::string_view prefix : {"OpAtomic", "OpGroup", "OpSubgroup", "OpCooperative", "OpDPd", "OpFwidth"}) {
                    if (name.starts_with(prefix)) return false;
                }
                if (name.find("ImplicitLod") != std::string_view::npos || name.find("QueryLod") != std::string_view::npos ||
                    name.find("Interlock") != std::string_view::npos || name.empty()) {
                    return false;
                }
            }
        }
        return true;
    };
    return pure(function, LeaderBlocks(module, ctx, function), 0);
}

class OutputHelpers {
  public:
    OutputHelpers(Module& module, LoweringContext& ctx) : module_(module), ctx_(ctx) {}

    // The helper an allocation calls: [0] one invocation's allocation with per-subgroup reservations, [1] Workgroup
    // visibility (invocation 0 calls [0] and shares the address), [2] Invocation visibility reserved per workgroup, for
    // allocations in workgroup-uniform control flow (`uniform`), [3] Workgroup visibility whose records only invocation 0
    // accesses (`leader_only`, LeaderOnlyAllocations: invocation 0 calls [0] and shares nothing).
    std::uint32_t Allocate(std::uint32_t output, bool workgroup, bool uniform, bool leader_only) {
        std::array<std::uint32_t, 4>& fns = allocate_[output];
        if (!workgroup && uniform && ReservesPerWorkgroup()) {
            if (fns[2] == 0) fns[2] = DefineInvocationAllocate(output, true);
            return fns[2];
        }
        if (fns[0] == 0) fns[0] = DefineInvocationAllocate(output, false);
        if (!workgroup) return fns[0];
        if (leader_only) {
            if (fns[3] == 0) fns[3] = DefineLeaderAllocate(fns[0]);
            return fns[3];
        }
        if (fns[1] == 0) fns[1] = DefineWorkgroupAllocate(fns[0]);
        return fns[1];
    }

    std::uint32_t IsValid(std::uint32_t output) {
        std::uint32_t& fn = valid_[output];
        if (fn == 0) fn = DefineIsValid(output);
        return fn;
    }

  private:
    // Invocations of the lowered workgroup (thread nodes: the batch).
    std::uint32_t WorkgroupInvocations() const {
        const auto& size = ctx_.info.local_size;
        return ctx_.info.launch == LaunchKind::kThread ? ctx_.options.thread_batch_size : size[0] * size[1] * size[2];
    }

    // Whether Invocation-visibility allocations in workgroup-uniform control flow (WorkgroupUniformBlocks) reserve once
    // per workgroup: all of a broadcast or coalescing node's invocations reach them and may meet at workgroup barriers
    // there. Not in thread nodes: in the spec each invocation is its own workgroup, and the lowering batches unrelated
    // records into one. Not where the options ask for subgroup reservations (LoweringOptions::reserve_per_workgroup).
    bool ReservesPerWorkgroup() const {
        return ctx_.options.reserve_per_workgroup && ctx_.info.launch != LaunchKind::kThread && WorkgroupInvocations() > 1;
    }

    // Address of entry `index` (< the table's length) of the output's table.
    std::uint32_t TableEntry(Emitter& e, std::uint32_t output, std::uint32_t index) {
        return e.Add(e.LoadU32Var(ctx_.var_output_table_start),
                     e.Mul(e.Add(index, e.U32(ctx_.options.output_table_index[output])), e.U32(4)));
    }

    // Looks up entry `index` of the output's table: returns (valid, target) with target 0 when invalid.
    std::pair<std::uint32_t, std::uint32_t> LookUp(Emitter& e, std::uint32_t output, std::uint32_t index) {
        const std::uint32_t length = ctx_.options.output_table_length[output];
        if (length == 0) return {e.Bool(false), e.U32(0)};
        const std::uint32_t in_range = e.Less(index, e.U32(length));
        const std::uint32_t sole = output < ctx_.var_sole_output_target.size() ? ctx_.var_sole_output_target[output] : 0;
        const std::uint32_t raw =
            sole != 0 ? e.LoadU32Var(sole) : e.LoadScratchU32(TableEntry(e, output, e.SelectU32(in_range, index, e.U32(0))));
        const std::uint32_t valid = e.LogicalAnd(in_range, e.NotEqual(raw, e.U32(runtime::kInvalidNode)));
        return {valid, e.SelectU32(valid, raw, e.U32(0))};
    }

    // Workgroup memory of one output's per-workgroup reservation (ReservesPerWorkgroup).
    struct WorkgroupReservation {
        std::uint32_t heap_bytes = 0;    // the workgroup's heap bytes, then (leader) its base in the half's heap
        std::uint32_t records = 0;       // the workgroup's records, then (leader) its first record slot
        std::uint32_t heap_base = 0;     // base the leader got from the half's heap top
        std::uint32_t record_base = 0;   // first slot the leader got from the half's record count
        std::uint32_t heap_fits = 0;     // 1 when the whole workgroup's heap range fits
        std::uint32_t node_records = 0;  // uint[table length]: records per table entry, or 0 when counted per subgroup
    };

    // Outputs whose table has at most this many entries count each entry's records in workgroup memory, so a workgroup
    // adds to each target's record count once (what hand-written binning does with shared-memory counters). All of a
    // node's outputs together use at most kWorkgroupCounterBudget such counters (2 KiB), so that the node's own
    // workgroup memory keeps nearly all of the 16 KiB every device has (maxComputeSharedMemorySize); the rest count per
    // subgroup.
    static constexpr std::uint32_t kMaxWorkgroupCountedEntries = 256;
    static constexpr std::uint32_t kWorkgroupCounterBudget = 512;

    WorkgroupReservation CreateWorkgroupReservation(std::uint32_t output) {
        WorkgroupReservation r;
        auto scalar = [&]() { return CreateGlobalVariable(module_, ctx_, StorageClass::Workgroup, ctx_.u32); };
        r.heap_bytes = scalar();
        r.records = scalar();
        r.heap_base = scalar();
        r.record_base = scalar();
        r.heap_fits = scalar();
        const std::uint32_t length = ctx_.options.output_table_length[output];
        if (length != 0 && length <= kMaxWorkgroupCountedEntries && workgroup_counters_ + length <= kWorkgroupCounterBudget) {
            workgroup_counters_ += length;
            r.node_records = CreateGlobalVariable(module_, ctx_, StorageClass::Workgroup, ctx_.types->GetArray(ctx_.u32, ctx_.types->GetConstantUint(length)));
        }
        return r;
    }

    // Reads a workgroup counter that this invocation zeroed and other subgroups then added to, after the workgroup
    // barrier that orders those adds before the read. With an atomic, not a load: for a plain load NVIDIA 580's compiler
    // returned the reader's own zero plus its own add, as if no other invocation had written (the compute rasteriser's
    // setup node lost most of its records).
    std::uint32_t ReadWorkgroupCounter(Emitter& e, std::uint32_t counter) { return e.AtomicWorkgroup(Op::OpAtomicIAdd, counter, e.U32(0)); }

    // The graph node record count `target` has in `half` (HalfHeader::nodes[target].record_count).
    std::uint32_t NodeRecordCount(Emitter& e, std::uint32_t half, std::uint32_t target) {
        return e.Add(half, e.Add(e.U32(offsets::kHalfNodes + offsets::kNodeStateRecordCount), e.Mul(target, e.U32(offsets::kNodeStateSize))));
    }

    // The invocation's SubgroupLocalInvocationId as a uint, from the node's own built-in variable if it has one.
    std::uint32_t SubgroupLane(Emitter& e) {
        if (ctx_.builtin_subgroup_local_invocation_id == 0) {
            const std::uint32_t existing = FindBuiltinVariable(module_, BuiltIn::SubgroupLocalInvocationId);
            ctx_.builtin_subgroup_local_invocation_id =
                existing != 0 ? existing : CreateBuiltinVariable(module_, ctx_, BuiltIn::SubgroupLocalInvocationId, ctx_.u32);
        }
        std::uint32_t type = ctx_.u32;
        PointerInfo(module_, module_.FindDef(ctx_.builtin_subgroup_local_invocation_id)->type_id(), nullptr, &type);
        const std::uint32_t lane = e.Load(type, ctx_.builtin_subgroup_local_invocation_id);
        return type == ctx_.u32 ? lane : e.Emit(Op::OpBitcast, ctx_.u32, {lane});  // a signed int built-in (32 bits)
    }

    // One invocation's allocation of `count` records for table entry `index` of `output`. Per-half counters (heap top,
    // record count, next level pass size) take one atomic per subgroup, or with `per_workgroup` (ReservesPerWorkgroup)
    // one per workgroup: same-address atomics serialise in the L2, and a producer of one record per invocation otherwise
    // spends most of its time there. No heap high-water mark here: the passes that retire a half (level pass, level
    // hand-off, finish pass) take the maximum of its heap top, which counts every byte asked for.
    std::uint32_t DefineInvocationAllocate(std::uint32_t output, bool per_workgroup) {
        FunctionBuilder b(module_, ctx_);
        const std::uint32_t stride = ctx_.options.output_record_stride[output];
        const std::uint32_t limit = OutputRecordLimit(ctx_.info.outputs[output]);
        const std::uint32_t table_length = ctx_.options.output_table_length[output];
        const WorkgroupReservation shared = per_workgroup ? CreateWorkgroupReservation(output) : WorkgroupReservation{};
        const std::uint32_t shared_u32_pointer = ctx_.types->GetPointer(StorageClass::Workgroup, ctx_.u32);
        const std::uint32_t params[] = {ctx_.u32, ctx_.u32};
        // Where one invocation runs every allocation (a workgroup of one invocation, or a node whose code only invocation
        // 0 runs), its subgroup has one active lane, so the subgroup operations below are identities: a scan of a value is
        // the value, the highest active lane is this one, a shuffle from it returns the value. Emitted, each still took
        // its latency, several of them between the reservation's atomic and the stores that wait for its result.
        const bool one_lane = WorkgroupInvocations() == 1 || ctx_.only_invocation_0_runs_node_code;
        // A workgroup of one invocation keeps what it adds to its output half's counters for its level hand-off
        // (LoweringContext::HandOffCountsKeptLocally): two additions beside atomics whose results it would otherwise
        // read back after its code, one round trip at the end of every level of a chain of single-record levels.
        const bool keep_counts = ctx_.HandOffCountsKeptLocally();
        if (keep_counts && ctx_.var_hand_off_reserved == 0) {
            ctx_.var_hand_off_reserved = CreateGlobalVariable(module_, ctx_, StorageClass::Private, ctx_.u64);
            ctx_.var_hand_off_sole_producer = CreateGlobalVariable(module_, ctx_, StorageClass::Private, ctx_.u32);
        }
        return b.DefineFunction(ctx_.u64, params, [&](std::span<const std::uint32_t> p) {
            Emitter& e = b.emit();
            auto inclusive_add = [&](std::uint32_t value) { return one_lane ? value : e.SubgroupInclusiveAdd(value); };
            // With one lane, the lane id is never read (is_lane and shuffle ignore it), so no id stands for it.
            auto highest_lane = [&]() { return one_lane ? 0u : e.SubgroupHighestActiveLane(); };
            auto is_lane = [&](std::uint32_t lane) { return one_lane ? e.Bool(true) : e.Equal(SubgroupLane(e), lane); };
            auto shuffle = [&](std::uint32_t value, std::uint32_t lane) {
                return one_lane ? value : e.SubgroupShuffle(value, lane);
            };
            auto elect = [&]() { return one_lane ? e.Bool(true) : e.SubgroupElect(); };
            auto all_equal = [&](std::uint32_t value) { return one_lane ? e.Bool(true) : e.SubgroupAllEqual(value); };
            // A count above NodeMaxPayloadsAMDX is undefined behaviour (facts §16); the excess is dropped and reported
            // against this node, and what remains never exceeds what the trash region and the heap guard hold.
            const std::uint32_t requested = p[0];
            const std::uint32_t over_limit = e.Less(e.U32(limit), requested);
            const std::uint32_t count = e.SelectU32(over_limit, e.U32(limit), requested);
            b.If(over_limit, [&]() {
                e.ReportDrop(e.LoadU32Var(ctx_.var_node_index), e.LoadPushedLevelNumber(),
                             e.U32(runtime::kStatusPayloadCountClamped), e.Sub(requested, e.U32(limit)));
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
            // Whole 16-byte units keep heap_top 16-aligned, so every record is aligned to its own alignment.
            const std::uint32_t bytes =
                stride == 0 ? e.U32(0)
                            : e.SelectU32(valid, e.And(e.Add(e.Mul(count, e.U32(stride)), e.U32(offsets::kHeapAlignment - 1)), e.U32(~(offsets::kHeapAlignment - 1))),
                                          e.U32(0));
            // With heap_holds_record_list one 64-bit atomic reserves heap bytes (low word) and record slots (high word):
            // every reservation adds at most its records times a stride the heap holds record_capacity of, so the heap
            // range of records that fit the list always fits, and no heap check is needed.
            const bool merged = ctx_.options.heap_holds_record_list;
            static_assert(offsets::kHalfHeapTop % 8 == 0 && offsets::kHalfRecordCount == offsets::kHalfHeapTop + 4,
                          "heap_top and record_count form one little-endian uint64");
            auto reserve_both = [&](std::uint32_t heap_bytes, std::uint32_t records) {
                const std::uint32_t both = e.PackU64(heap_bytes, records);
                auto atomic = [&]() {
                    return e.AtomicScratchU64(Op::OpAtomicIAdd, e.Add(half, e.U32(offsets::kHalfHeapTop)), both);
                };
                if (!keep_counts) return atomic();
                const std::uint32_t kept = e.Load(ctx_.u64, ctx_.var_hand_off_reserved);
                e.Store(ctx_.var_hand_off_reserved, e.Emit(Op::OpIAdd, ctx_.u64, {kept, both}));
                // The level's only producer before a direct level (LoweringContext::var_hand_off_sole_producer): the half
                // started clear and holds only what this invocation reserved, so the range starts at the kept sum, with
                // no round trip before the records' stores (a chain step's level waits for every one).
                return b.IfElseValue(
                    e.NotEqual(e.LoadU32Var(ctx_.var_hand_off_sole_producer), e.U32(0)), ctx_.u64, [&]() { return kept; }, atomic);
            };
            // Records counted for `node` in this half, except for the next level's direct consumer where that is one
            // node, not a dispatch group: it is the only node records of that level reach (GraphPlan::
            // direct_level_consumer), so its count is the half's record count, as many as the list holds, and its
            // level hand-off takes it from there (LevelHandOffPass). That spares a same-address atomic per subgroup
            // (per workgroup, reserving per workgroup) at every level before a direct level, beside the reservation's
            // own, which a GPU's L2 serialises (H100: `fan_out_tree` -3.6%; docs/performance.md).
            auto count_records = [&](std::uint32_t node, std::uint32_t records) {
                const std::uint32_t next_consumer = e.LoadPushContextU32(PushContextMember::kNextLevelConsumer);
                const std::uint32_t single_consumer =
                    e.Equal(e.And(next_consumer, e.U32(runtime::kDirectLevelGroupConsumer)), e.U32(0));
                const std::uint32_t counted_by_half =
                    e.LogicalAnd(single_consumer, e.Equal(node, e.And(next_consumer, e.U32(runtime::kDirectLevelConsumerMask))));
                b.If(e.LogicalNot(counted_by_half),
                     [&]() { e.AtomicScratch(Op::OpAtomicIAdd, NodeRecordCount(e, half, node), records); });
            };
            const std::uint32_t heap_capacity = stride == 0 || merged ? 0 : e.LoadScratchU32(e.U32(offsets::kHeaderHeapCapacity));
            const std::uint32_t record_capacity = e.LoadScratchU32(e.U32(offsets::kHeaderRecordCapacity));
            auto heap_range_fits = [&](std::uint32_t first, std::uint32_t size) {
                return e.LogicalAnd(e.LessEqual(first, heap_capacity), e.LessEqual(size, e.Sub(heap_capacity, first)));
            };
            // The next level pass gets one workgroup per level_pass_records_per_workgroup records of this half
            // (HalfHeader::level_pass_workgroups): the reservation whose slots cross into a new such block raises the count
            // to cover its end, and the maximum covers the last record. The first small_level records (16 blocks) come in
            // blocks of half that size: a small level's pass is a chain of round trips per record an invocation
            // scatters, so one record per invocation (256 on GPUs) finishes it sooner, while a large level's pass is
            // bound by its atomics and stores, not by its workgroups' count. blocks() grows with the records, so the
            // maximum over the reservations still covers the last record. Where the next level is direct
            // (NodePushContext::next_level_consumer), no level pass reads this half, and its preparer resets the count.
            const std::uint32_t next_level_has_pass =
                e.Equal(e.LoadPushContextU32(PushContextMember::kNextLevelConsumer), e.U32(runtime::kInvalidNode));
            auto raise_level_pass_workgroups = [&](std::uint32_t first_slot, std::uint32_t slots) {
                const std::uint32_t end = e.Min(e.Add(first_slot, slots), record_capacity);
                const std::uint32_t begin = e.Min(first_slot, end);
                const std::uint32_t per_workgroup = std::clamp<std::uint32_t>(ctx_.options.level_pass_records_per_workgroup, 1, 1u << 24);
                const std::uint32_t small_per_workgroup = std::max<std::uint32_t>(per_workgroup / 2, 1);
                const std::uint32_t small_level = 16 * per_workgroup;
                const std::uint32_t small_blocks = (small_level + small_per_workgroup - 1) / small_per_workgroup;
                auto ceil_div = [&](std::uint32_t records, std::uint32_t divisor) {
                    return e.Div(e.Add(records, e.U32(divisor - 1)), e.U32(divisor));
                };
                auto blocks = [&](std::uint32_t records) {
                    const std::uint32_t small = ceil_div(e.Min(records, e.U32(small_level)), small_per_workgroup);
                    const std::uint32_t beyond = e.Sub(e.Max(records, e.U32(small_level)), e.U32(small_level));
                    const std::uint32_t large = e.Add(e.U32(small_blocks), ceil_div(beyond, per_workgroup));
                    return e.Min(e.SelectU32(e.LessEqual(records, e.U32(small_level)), small, large),
                                 e.U32(runtime::kDispatchSplitWidth));
                };
                const std::uint32_t workgroups = blocks(end);
                b.If(e.LogicalAnd(next_level_has_pass, e.Less(blocks(begin), workgroups)), [&]() {
                    e.AtomicScratch(Op::OpAtomicUMax, e.Add(half, e.U32(offsets::kHalfLevelPassWorkgroups)), workgroups);
                });
            };
            // All subgroup operations run at this function's top level (or in workgroup-uniform branches), so they see
            // exactly the invocations that called it; per-lane conditions only mask the values. Each use of a subgroup
            // result elects its invocation right where it uses it, with no barrier or branch in between: the set of
            // invocations that execute a subgroup operation together is only that of the code around it (without
            // maximal reconvergence, an implementation need not run invocations that split before a workgroup barrier
            // together again after it).
            std::uint32_t heap_old = e.U32(0), heap_ok = valid, records_added = 0, record_old = 0;
            // Each table entry's workgroup counter (WorkgroupReservation::node_records) belongs to invocations
            // local_index + k * workgroup size, which zero it before the reservation and read it after: the same
            // invocation, so consecutive allocations need no extra barrier between them.
            // The invocation's range of a subgroup-wide count: the highest active invocation, whose inclusive scan of
            // `value` is the subgroup's total, adds it with `add_total` (which returns the count before, the subgroup's
            // `base`), and each invocation's range starts at that plus its exclusive prefix (its inclusive scan less its
            // own value). So the subgroup's ranges are contiguous in lane order, from `base` to `base + total`. No
            // subgroup Reduce: NVIDIA 580 miscompiled it here (lowering_context.h); a reduce would also add a step before
            // the atomic, where the scan's last lane already holds the total.
            struct SubgroupRange {
                std::uint32_t start, base, total;
            };
            // A subgroup that asks for nothing adds nothing: its lanes' ranges are empty, so where they start does not
            // matter. The leaves of a recursion allocate zero records in every lane, and same-address atomics serialise
            // in the L2 (`recursion` 107.5 -> 100.7 µs on an H200, docs/performance.md).
            auto subgroup_range = [&](std::uint32_t value, auto add_total) {
                const std::uint32_t inclusive = inclusive_add(value);
                const std::uint32_t highest = highest_lane();
                const std::uint32_t adds = e.LogicalAnd(is_lane(highest), e.NotEqual(inclusive, e.U32(0)));
                const std::uint32_t before = b.IfValue(adds, ctx_.u32, e.U32(0), [&]() { return add_total(inclusive); });
                const std::uint32_t base = shuffle(before, highest);
                return SubgroupRange{e.Add(base, e.Sub(inclusive, value)), base, shuffle(inclusive, highest)};
            };
            // Where the subgroup's record slots were reserved as one range (per subgroup): its start and length (ids).
            bool subgroup_records_in_one_range = false;
            std::uint32_t subgroup_record_base = 0, subgroup_record_total = 0;
            const std::uint32_t workgroup_size = WorkgroupInvocations();
            auto for_owned_entries = [&](auto body) {
                const std::uint32_t rounds = (table_length + workgroup_size - 1) / workgroup_size;
                b.For(e.U32(rounds), [&](std::uint32_t round) {
                    const std::uint32_t entry = e.Add(e.Load(ctx_.u32, ctx_.builtin_local_invocation_index), e.Mul(round, e.U32(workgroup_size)));
                    b.If(e.Less(entry, e.U32(table_length)), [&]() {
                        body(entry, e.Emit(Op::OpAccessChain, shared_u32_pointer, {shared.node_records, entry}));
                    });
                });
            };
            if (per_workgroup) {
                // One reservation per workgroup: subgroups take their ranges of the workgroup's totals with workgroup-
                // memory atomics, then invocation 0 reserves the totals in the half. Lanes keep the subgroup's lane
                // order, subgroups the order their atomics happened in.
                const std::uint32_t leader = e.Equal(e.Load(ctx_.u32, ctx_.builtin_local_invocation_index), e.U32(0));
                b.If(leader, [&]() {
                    e.Store(shared.heap_bytes, e.U32(0));
                    e.Store(shared.records, e.U32(0));
                });
                if (shared.node_records != 0) for_owned_entries([&](std::uint32_t, std::uint32_t counter) { e.Store(counter, e.U32(0)); });
                e.WorkgroupBarrier();
                // Records of lanes whose heap range fails are not listed; until the leader knows, every valid lane
                // asks for all of its records (if the whole range fits, that is the answer).
                const std::uint32_t asked = e.SelectU32(valid, count, e.U32(0));
                auto workgroup_range = [&](std::uint32_t counter, std::uint32_t value) {
                    return subgroup_range(value,
                                          [&](std::uint32_t total) { return e.AtomicWorkgroup(Op::OpAtomicIAdd, counter, total); })
                        .start;
                };
                const std::uint32_t local_heap = stride == 0 ? e.U32(0) : workgroup_range(shared.heap_bytes, bytes);
                const std::uint32_t local_records = workgroup_range(shared.records, asked);
                e.WorkgroupBarrier();
                b.If(leader, [&]() {
                    const std::uint32_t heap_total = ReadWorkgroupCounter(e, shared.heap_bytes);
                    const std::uint32_t record_total = ReadWorkgroupCounter(e, shared.records);
                    if (merged) {
                        const std::uint32_t both = b.IfValue(e.NotEqual(e.Or(heap_total, record_total), e.U32(0)), ctx_.u64,
                                                             e.U64(0), [&]() { return reserve_both(heap_total, record_total); });
                        const std::uint32_t first = e.HighU32(both);
                        e.Store(shared.heap_base, e.LowU32(both));
                        e.Store(shared.record_base, first);
                        raise_level_pass_workgroups(first, record_total);
                        return;
                    }
                    std::uint32_t base = e.U32(0), fits = e.Bool(true);
                    if (stride != 0) {
                        base = b.IfValue(e.NotEqual(heap_total, e.U32(0)), ctx_.u32, e.U32(0), [&]() {
                            return e.AtomicScratch(Op::OpAtomicIAdd, e.Add(half, e.U32(offsets::kHalfHeapTop)), heap_total);
                        });
                        fits = heap_range_fits(base, heap_total);
                    }
                    e.Store(shared.heap_base, base);
                    e.Store(shared.heap_fits, e.SelectU32(fits, e.U32(1), e.U32(0)));
                    b.If(fits, [&]() {
                        const std::uint32_t first = b.IfValue(e.NotEqual(record_total, e.U32(0)), ctx_.u32, e.U32(0), [&]() {
                            return e.AtomicScratch(Op::OpAtomicIAdd, e.Add(half, e.U32(offsets::kHalfRecordCount)), record_total);
                        });
                        e.Store(shared.record_base, first);
                        raise_level_pass_workgroups(first, record_total);
                    });
                });
                e.WorkgroupBarrier();
                heap_old = e.Add(e.Load(ctx_.u32, shared.heap_base), local_heap);
                if (stride != 0 && !merged) heap_ok = e.LogicalAnd(valid, heap_range_fits(heap_old, bytes));
                records_added = e.SelectU32(heap_ok, count, e.U32(0));
                // The workgroup's heap range does not fit (the half overflows; workgroup-uniform): only the lanes whose
                // own range fits list records, so the record range is reserved again for just those. Merged, it always fits.
                const std::uint32_t overflowed = merged ? 0 : e.Equal(e.Load(ctx_.u32, shared.heap_fits), e.U32(0));
                const std::uint32_t lane_records = merged ? local_records : b.IfValue(overflowed, ctx_.u32, local_records, [&]() {
                    b.If(leader, [&]() { e.Store(shared.records, e.U32(0)); });
                    e.WorkgroupBarrier();
                    const std::uint32_t retaken = workgroup_range(shared.records, records_added);
                    e.WorkgroupBarrier();
                    b.If(leader, [&]() {
                        const std::uint32_t record_total = ReadWorkgroupCounter(e, shared.records);
                        const std::uint32_t first = b.IfValue(e.NotEqual(record_total, e.U32(0)), ctx_.u32, e.U32(0), [&]() {
                            return e.AtomicScratch(Op::OpAtomicIAdd, e.Add(half, e.U32(offsets::kHalfRecordCount)), record_total);
                        });
                        e.Store(shared.record_base, first);
                        raise_level_pass_workgroups(first, record_total);
                    });
                    e.WorkgroupBarrier();
                    return retaken;
                });
                record_old = e.Add(e.Load(ctx_.u32, shared.record_base), lane_records);
            } else {
                // Same-address atomics serialise in the L2, so the per-half counters are bumped once per subgroup: the
                // highest active invocation adds the subgroup's total and every invocation takes its range at the
                // exclusive prefix of the lanes below it. Heap ranges and record slots come from the same lane order.
                auto aggregated_add = [&](std::uint32_t offset, std::uint32_t value) {
                    return subgroup_range(value, [&](std::uint32_t total) { return e.AtomicScratch(Op::OpAtomicIAdd, offset, total); });
                };
                if (merged) {
                    records_added = e.SelectU32(valid, count, e.U32(0));
                    // As subgroup_range, both counts at once.
                    const std::uint32_t byte_inclusive = inclusive_add(bytes);
                    const std::uint32_t record_inclusive = inclusive_add(records_added);
                    const std::uint32_t highest = highest_lane();
                    // As subgroup_range: a subgroup that asks for no bytes and no records reserves nothing.
                    const std::uint32_t reserves =
                        e.LogicalAnd(is_lane(highest), e.NotEqual(e.Or(byte_inclusive, record_inclusive), e.U32(0)));
                    const std::uint32_t before = b.IfValue(reserves, ctx_.u64, e.U64(0),
                                                           [&]() { return reserve_both(byte_inclusive, record_inclusive); });
                    heap_old = e.Add(shuffle(e.LowU32(before), highest), e.Sub(byte_inclusive, bytes));
                    subgroup_record_base = shuffle(e.HighU32(before), highest);
                    subgroup_record_total = shuffle(record_inclusive, highest);
                    subgroup_records_in_one_range = true;
                    record_old = e.Add(subgroup_record_base, e.Sub(record_inclusive, records_added));
                } else {
                    if (stride != 0) {
                        heap_old = aggregated_add(e.Add(half, e.U32(offsets::kHalfHeapTop)), bytes).start;
                        heap_ok = e.LogicalAnd(valid, heap_range_fits(heap_old, bytes));
                    }
                    records_added = e.SelectU32(heap_ok, count, e.U32(0));
                    const SubgroupRange records = aggregated_add(e.Add(half, e.U32(offsets::kHalfRecordCount)), records_added);
                    record_old = records.start;
                    subgroup_record_base = records.base;
                    subgroup_record_total = records.total;
                    subgroup_records_in_one_range = true;
                }
                // The subgroup's slots are [base, base + total): the end of its records (0 without any) sizes the next
                // level pass, with no subgroup operation of its own.
                const std::uint32_t subgroup_end = e.SelectU32(e.NotEqual(subgroup_record_total, e.U32(0)),
                                                               e.Add(subgroup_record_base, subgroup_record_total), e.U32(0));
                const std::uint32_t subgroup_begin = e.Min(subgroup_record_base, subgroup_end);
                b.If(elect(), [&]() { raise_level_pass_workgroups(subgroup_begin, e.Sub(subgroup_end, subgroup_begin)); });
            }
            const std::uint32_t room = e.SelectU32(e.Less(record_old, record_capacity), e.Sub(record_capacity, record_old), e.U32(0));
            const std::uint32_t delivered = e.SelectU32(heap_ok, e.Min(count, room), e.U32(0));
            const std::uint32_t dropped = e.Sub(count, delivered);
            const std::uint32_t flags = e.Or(
                e.Or(e.SelectU32(looked_up.first, e.SelectU32(past_recursion, e.U32(runtime::kStatusDepthLimit), e.U32(0)),
                                 e.U32(runtime::kStatusInvalidNodeIndex)),
                     e.SelectU32(e.LogicalAnd(valid, e.LogicalNot(heap_ok)), e.U32(runtime::kStatusHeapOverflow), e.U32(0))),
                e.SelectU32(e.LogicalAnd(heap_ok, e.Less(delivered, count)), e.U32(runtime::kStatusRecordListOverflow), e.U32(0)));
            // Records lost for a real node are charged to it; an index that names no node is this node's fault.
            const std::uint32_t charged = e.SelectU32(looked_up.first, target, e.LoadU32Var(ctx_.var_node_index));
            b.If(e.NotEqual(dropped, e.U32(0)), [&]() { e.ReportDrop(charged, e.LoadPushedLevelNumber(), flags, dropped); });
            if (shared.node_records != 0) {
                // Each table entry's records are summed in workgroup memory and added to its node once per workgroup
                // (delivered > 0 implies a valid entry, so `p[1]` indexes the table).
                b.If(e.NotEqual(delivered, e.U32(0)), [&]() {
                    e.AtomicWorkgroup(Op::OpAtomicIAdd, e.Emit(Op::OpAccessChain, shared_u32_pointer, {shared.node_records, p[1]}), delivered);
                });
                e.WorkgroupBarrier();
                for_owned_entries([&](std::uint32_t entry, std::uint32_t counter) {
                    const std::uint32_t entry_records = ReadWorkgroupCounter(e, counter);
                    b.If(e.NotEqual(entry_records, e.U32(0)),
                         [&]() { count_records(e.LoadScratchU32(TableEntry(e, output, entry)), entry_records); });
                });
            } else {
                // The target's record count: one atomic per subgroup when every calling lane names the same node (the
                // common case), else one per lane. Both subgroup operations run unconditionally; only the atomic is
                // masked.
                const std::uint32_t same_target = all_equal(target);
                // Per subgroup, the lanes' slots are contiguous from the subgroup's base, so what the list holds of them
                // is its part of [base, base + total) below the capacity; per workgroup, the lanes' delivered counts are
                // summed.
                const std::uint32_t subgroup_delivered =
                    subgroup_records_in_one_range
                        ? e.Sub(e.Min(e.Add(subgroup_record_base, subgroup_record_total), record_capacity),
                                e.Min(subgroup_record_base, record_capacity))
                        : shuffle(inclusive_add(delivered), highest_lane());
                const std::uint32_t target_add = e.SelectU32(same_target, subgroup_delivered, delivered);
                const std::uint32_t adds = e.Select(ctx_.bool_type, same_target, elect(), e.Bool(true));
                b.If(e.LogicalAnd(adds, e.NotEqual(target_add, e.U32(0))), [&]() { count_records(target, target_add); });
            }
            // Self-enqueues carry the depth one further (RemainingRecursionLevels = max_recursion - depth).
            const std::uint32_t depth = e.SelectU32(e.Equal(target, e.LoadU32Var(ctx_.var_node_index)),
                                                    e.Add(e.LoadU32Var(ctx_.var_recursion_depth), e.U32(1)), e.U32(0));
            const std::uint32_t records = e.Add(half, e.LoadU32Var(ctx_.var_records_offset));
            // One 16-byte store per entry: record lists start 16-byte aligned in a half (after the 16-byte NodeStates).
            static_assert(offsets::kRecordEntrySize == 16 && offsets::kRecordEntryPayloadOffset == 0 && offsets::kRecordEntryRecursionDepth == 4 &&
                          offsets::kRecordEntryNode == 8 && offsets::kRecordEntryReserved == 12);
            static_assert(offsets::kHalfNodes % 16 == 0 && offsets::kNodeStateSize % 16 == 0);
            auto store_entries = [&]() {
                b.For(delivered, [&](std::uint32_t i) {
                    const std::uint32_t slot = e.Add(records, e.Mul(e.Add(record_old, i), e.U32(offsets::kRecordEntrySize)));
                    e.StoreScratchU32x4(slot, {e.Add(heap_old, e.Mul(i, e.U32(stride))), depth, target, e.U32(0)});
                });
            };
            // Records by index (runtime::kDirectLevelRecordsByIndex, pushed by the layer only where the next level's one
            // consumer is every record's target and its input stride is this output's): record slot r's payload lies at
            // r * stride, where the consumer looks for it, so no entry carries the offset. A slot the list holds (r below
            // record_capacity) has its payload below record_capacity * stride, which the heap holds (heap_holds_record_list);
            // a lane whose records the list holds only in part writes the rest past it, into the guard, as it does with
            // entries.
            const bool may_place_by_index = merged && ctx_.options.records_by_index;
            std::uint32_t heap_place = heap_old;
            if (may_place_by_index) {
                // kInvalidNode (no direct next level) has every bit set, the group bit too, which never comes with this one.
                constexpr std::uint32_t kBits = runtime::kDirectLevelRecordsByIndex | runtime::kDirectLevelGroupConsumer;
                const std::uint32_t by_index =
                    e.Equal(e.And(e.LoadPushContextU32(PushContextMember::kNextLevelConsumer), e.U32(kBits)),
                            e.U32(runtime::kDirectLevelRecordsByIndex));
                b.If(e.LogicalNot(by_index), store_entries);
                heap_place = e.SelectU32(by_index, e.Mul(record_old, e.U32(stride)), heap_old);
            } else {
                store_entries();
            }
            const std::uint32_t heap_address = e.ScratchAddress(e.Add(e.Add(half, e.LoadU32Var(ctx_.var_heap_offset)), heap_place));
            const std::uint32_t trash_address = e.ScratchAddress(e.LoadScratchU32(e.U32(offsets::kHeaderTrashOffset)));
            // Merged, a valid range past the heap's end is possible only for records that do not fit the list either;
            // records that were delivered always lie inside the heap (the writes past them reach at most the guard).
            const std::uint32_t in_heap = merged ? e.NotEqual(delivered, e.U32(0)) : heap_ok;
            e.EmitVoid(Op::OpReturnValue, {e.Select(ctx_.u64, in_heap, heap_address, trash_address)});
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

    // Workgroup visibility where only invocation 0 touches the records (LeaderOnlyAllocations). The others get the
    // trash region's address rather than an undefined one, so that a use the analysis missed would still never write
    // into the payload ring, and go on without waiting for invocation 0's reservation. On the H200 the two barriers of
    // the shared path cost a 230 400-workgroup classify node about 11% (docs/performance.md). Loading the trash offset
    // in the prologue instead, with the other header words, measured the same.
    std::uint32_t DefineLeaderAllocate(std::uint32_t invocation_allocate) {
        FunctionBuilder b(module_, ctx_);
        const std::uint32_t params[] = {ctx_.u32, ctx_.u32};
        if (WorkgroupInvocations() == 1) {  // no other invocation to answer
            return b.DefineFunction(ctx_.u64, params, [&](std::span<const std::uint32_t> p) {
                b.emit().EmitVoid(Op::OpReturnValue,
                                  {b.emit().Emit(Op::OpFunctionCall, ctx_.u64, {invocation_allocate, p[0], p[1]})});
            });
        }
        return b.DefineFunction(ctx_.u64, params, [&](std::span<const std::uint32_t> p) {
            Emitter& e = b.emit();
            const std::uint32_t leader = e.Equal(e.Load(ctx_.u32, ctx_.builtin_local_invocation_index), e.U32(0));
            const std::uint32_t address = b.IfElseValue(
                leader, ctx_.u64,
                [&]() {
                    return e.Emit(Op::OpFunctionCall, ctx_.u64, {invocation_allocate, p[0], p[1]});
                },
                [&]() { return e.ScratchAddress(e.LoadScratchU32(e.U32(offsets::kHeaderTrashOffset))); });
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
    std::unordered_map<std::uint32_t, std::array<std::uint32_t, 4>> allocate_;
    std::uint32_t workgroup_counters_ = 0;  // per-entry workgroup counters created so far (kWorkgroupCounterBudget)
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
    const Function* entry = FindFunction(module, ctx_.info.entry_point_id);
    if (entry == nullptr) return Error{kNoWordOffset, "entry point function not found"};
    // Allocations in called functions keep per-subgroup reservations and shared addresses: their calls are not analysed.
    const std::unordered_set<std::uint32_t> leader_only =
        ctx_.info.launch != LaunchKind::kThread ? LeaderOnlyAllocations(module, ctx_, *entry) : std::unordered_set<std::uint32_t>{};
    // Decided on the code as it is now (prologue and input lowered, outputs not yet): the allocations' helpers would
    // read as atomics. LevelHandOffPass acts on it.
    ctx_.only_invocation_0_runs_node_code =
        ctx_.info.launch != LaunchKind::kThread && OnlyInvocationZeroHasEffects(module, ctx_, *entry, leader_only);
    for (Function& function : module.mutable_functions()) {
        const std::unordered_set<std::uint32_t> uniform_blocks =
            &function == entry ? WorkgroupUniformBlocks(function, ctx_.entry_body_label) : std::unordered_set<std::uint32_t>{};
        for (BasicBlock& block : function.blocks) {
            const bool uniform = uniform_blocks.count(block.label_id()) != 0;
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
                        call.AddId(helpers.Allocate(*output, workgroup, uniform, leader_only.count(inst.result_id()) != 0))
                            .AddId(count)
                            .AddId(index);
                        const std::uint32_t address = call.result_id();
                        rewritten.push_back(std::move(call));
                        ctx_.lowered_allocations.push_back(LoweredAllocation{inst.result_id(), address, count, *output,
                                                                             !workgroup && uniform && &function == entry});
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
