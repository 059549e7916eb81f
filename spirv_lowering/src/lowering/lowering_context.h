// SPDX-License-Identifier: Apache-2.0
// State shared by the lowering passes (one LowerNode call), and the instruction-emitting helpers they use.
//
// Runtime values every lowered construct needs (scratch address, half offsets, this invocation's directory entry...)
// are computed once in the entry point's prologue and kept in Private variables, so that the lowered AMDX
// instructions can be rewritten in place, in any function, and the runtime helpers can be ordinary functions
// (structured control flow is never split around the instruction being replaced).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "execgraph/runtime/scratch_layout.h"
#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/module.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/type_manager.h"

namespace execgraph::spirv::lowering {

// Byte offsets of the runtime structures (scratch_layout.h); static_asserts in lowering_context.cpp tie them to it.
namespace offsets {
inline constexpr std::uint32_t kHeaderNodeCount = 8;
inline constexpr std::uint32_t kHeaderInputHalf = 12;
inline constexpr std::uint32_t kHeaderStatusFlags = 20;
inline constexpr std::uint32_t kHeaderDroppedRecords = 24;
inline constexpr std::uint32_t kHeaderHeapHighWater = 28;
inline constexpr std::uint32_t kHeaderRecordCapacity = 32;
inline constexpr std::uint32_t kHeaderHeapCapacity = 36;
inline constexpr std::uint32_t kHeaderNodeTableOffset = 40;
inline constexpr std::uint32_t kHeaderOutputTableOffset = 44;
inline constexpr std::uint32_t kHeaderTrashOffset = 48;
inline constexpr std::uint32_t kHeaderLevel = offsetof(runtime::GraphHeader, level);
inline constexpr std::uint32_t kHeaderNodeStatsOffset = offsetof(runtime::GraphHeader, node_stats_offset);
inline constexpr std::uint32_t kHeaderLevelsRun = offsetof(runtime::GraphHeader, levels_run);
inline constexpr std::uint32_t kHeaderRecordHighWater = offsetof(runtime::GraphHeader, record_high_water);
inline constexpr std::uint32_t kHeaderLevelWorkgroups = offsetof(runtime::GraphHeader, level_workgroups);
inline constexpr std::uint32_t kHeaderMagic = offsetof(runtime::GraphHeader, magic);
inline constexpr std::uint32_t kHeaderGraphTag = offsetof(runtime::GraphHeader, graph_tag);
inline constexpr std::uint32_t kHeaderDispatchGraphTag = offsetof(runtime::GraphHeader, dispatch_graph_tag);
inline constexpr std::uint32_t kHeaderTablesTag = offsetof(runtime::GraphHeader, tables_tag);
inline constexpr std::uint32_t kNodeStatsRecords = offsetof(runtime::NodeStats, records);
inline constexpr std::uint32_t kNodeStatsDispatches = offsetof(runtime::NodeStats, dispatches);
inline constexpr std::uint32_t kNodeStatsWorkgroups = offsetof(runtime::NodeStats, workgroups);
inline constexpr std::uint32_t kNodeStatsSize = sizeof(runtime::NodeStats);
inline constexpr std::uint32_t kNodeStatsDroppedRecords = offsetof(runtime::NodeStats, dropped_records);
inline constexpr std::uint32_t kNodeStatsDropFlags = offsetof(runtime::NodeStats, drop_flags);
inline constexpr std::uint32_t kNodeStatsFirstDropLevelComplement = offsetof(runtime::NodeStats, first_drop_level_complement);
inline constexpr std::uint32_t kHalfHeapTop = 0;
inline constexpr std::uint32_t kHalfRecordCount = 4;
inline constexpr std::uint32_t kHalfNodes = sizeof(runtime::HalfHeader);
inline constexpr std::uint32_t kHalfLevelPassWorkgroups = offsetof(runtime::HalfHeader, level_pass_workgroups);
inline constexpr std::uint32_t kHalfLevelPassDone = offsetof(runtime::HalfHeader, level_pass_done);
inline constexpr std::uint32_t kNodeStateSize = sizeof(runtime::NodeState);
inline constexpr std::uint32_t kNodeStateRecordCount = 0;
inline constexpr std::uint32_t kNodeStateDirectoryBase = 4;
inline constexpr std::uint32_t kNodeStateWorkgroupCount = 8;
inline constexpr std::uint32_t kNodeStateGroupFirstWorkgroup = offsetof(runtime::NodeState, group_first_workgroup);
inline constexpr std::uint32_t kNodeStateGroupDirectoryBase = offsetof(runtime::NodeState, group_directory_base);
inline constexpr std::uint32_t kNodeStateGroupWorkgroups = offsetof(runtime::NodeState, group_workgroups);
inline constexpr std::uint32_t kNodeStateDispatch = offsetof(runtime::NodeState, dispatch);
inline constexpr std::uint32_t kRecordEntrySize = 16;
inline constexpr std::uint32_t kRecordEntryPayloadOffset = offsetof(runtime::RecordEntry, payload_offset);
inline constexpr std::uint32_t kRecordEntryRecursionDepth = offsetof(runtime::RecordEntry, recursion_depth);
inline constexpr std::uint32_t kRecordEntryNode = offsetof(runtime::RecordEntry, node);
inline constexpr std::uint32_t kRecordEntryReserved = offsetof(runtime::RecordEntry, reserved);
inline constexpr std::uint32_t kDirectoryEntrySize = 16;
inline constexpr std::uint32_t kDirectoryPayloadOffset = 0;
inline constexpr std::uint32_t kDirectoryRecursionDepth = 4;
inline constexpr std::uint32_t kDirectoryFirstWorkgroupOrNode = 8;
inline constexpr std::uint32_t kDirectoryFinishCounter = 12;
inline constexpr std::uint32_t kNodeStaticInfoSize = 64;
inline constexpr std::uint32_t kNodeStaticSharesInputWith = 40;
inline constexpr std::uint32_t kNodeStaticShaderIndex = 48;
inline constexpr std::uint32_t kNodeStaticOutputTableBase = offsetof(runtime::NodeStaticInfo, output_table_base);
inline constexpr std::uint32_t kNodeStaticDispatchGroupSize = offsetof(runtime::NodeStaticInfo, dispatch_group_size);
inline constexpr std::uint32_t kNodeStaticRecordsPerWorkgroup = offsetof(runtime::NodeStaticInfo, records_per_workgroup);
inline constexpr std::uint32_t kNodeStaticLaunch = offsetof(runtime::NodeStaticInfo, launch);
inline constexpr std::uint32_t kNodeStaticStaticGrid = offsetof(runtime::NodeStaticInfo, static_grid);
inline constexpr std::uint32_t kHeapAlignment = 16;
}  // namespace offsets

// Memory-semantics and scope values (SPIR-V spec §3.25, §3.27).
inline constexpr std::uint32_t kScopeDevice = 1;
inline constexpr std::uint32_t kScopeWorkgroup = 2;
inline constexpr std::uint32_t kScopeSubgroup = 3;
inline constexpr std::uint32_t kSemanticsAcquireRelease = 0x8;
inline constexpr std::uint32_t kSemanticsUniformMemory = 0x40;
inline constexpr std::uint32_t kSemanticsWorkgroupMemory = 0x100;
inline constexpr std::uint32_t kSemanticsOutputMemory = 0x1000;  // OutputMemory (SPV_KHR_vulkan_memory_model name)

// runtime::NodePushContext's fields, in order, as members of the push-constant block (from
// LoweringContext::push_constant_member on).
enum class PushContextMember : std::uint32_t {
    kScratchAddress,
    kNodeIndex,
    kOutputTableBase,
    kInputHalfOffset,
    kOutputHalfOffset,
    kLevel,
    kNextLevelConsumer,
    kCount,
};
// Byte offset of each member from LoweringOptions::context_offset.
inline constexpr std::uint32_t kPushContextMemberOffsets[] = {
    offsetof(runtime::NodePushContext, scratch_address),    offsetof(runtime::NodePushContext, node_index),
    offsetof(runtime::NodePushContext, output_table_base),  offsetof(runtime::NodePushContext, input_half_offset),
    offsetof(runtime::NodePushContext, output_half_offset), offsetof(runtime::NodePushContext, level),
    offsetof(runtime::NodePushContext, next_level_consumer),
};
static_assert(std::size(kPushContextMemberOffsets) == static_cast<std::size_t>(PushContextMember::kCount));
static_assert(sizeof(runtime::NodePushContext) == offsetof(runtime::NodePushContext, next_level_consumer) + 4);

// An allocation LowerOutputsPass lowered, for CoalesceRecordStoresPass.
struct LoweredAllocation {
    std::uint32_t result = 0;   // the allocation's result id: now the OpConvertUToPtr of its records' address
    std::uint32_t address = 0;  // the allocation helper's uint64 result
    std::uint32_t count = 0;    // the payload count, as the uint32 passed to the helper
    std::uint32_t output = 0;   // index into NodeInfo::outputs
    // Each invocation allocates for itself (Invocation visibility, or any in a thread node), in a block of the entry
    // function that every invocation runs exactly once (WorkgroupUniformBlocks).
    bool once_per_invocation = false;
};

struct LoweringContext {
    LoweringContext(const NodeInfo& node_info, const LoweringOptions& lowering_options)
        : info(node_info), options(lowering_options) {}

    const NodeInfo& info;
    const LoweringOptions& options;
    std::unique_ptr<TypeManager> types;  // created by the runtime-context pass

    // Common types.
    std::uint32_t void_type = 0, bool_type = 0, u32 = 0, u64 = 0, v3u32 = 0;
    std::uint32_t psb_u32 = 0;  // OpTypePointer PhysicalStorageBuffer uint

    // Push constant: runtime::NodePushContext as members of the block, from member push_constant_member on, in the
    // order of PushContextMember.
    std::uint32_t push_constant_var = 0;
    std::uint32_t push_constant_member = 0;
    std::uint32_t push_constant_u64_pointer = 0;
    std::uint32_t push_constant_u32_pointer = 0;

    // Private variables filled by the prologue (all uint32 offsets are bytes from the scratch base unless noted).
    std::uint32_t var_scratch = 0;            // uint64 scratch base address
    std::uint32_t var_node_index = 0;         // this node's graph index (NodePushContext::node_index)
    // Scratch offset of this node's first output-table entry: GraphHeader::output_table_offset + 4 *
    // NodePushContext::output_table_base (NodeStaticInfo::output_table_base for a dispatch group's member).
    std::uint32_t var_output_table_start = 0;
    // Per output whose table has one entry (not a node array): that entry, the target's graph index or kInvalidNode,
    // loaded by the prologue (LaunchPass); 0 for other outputs.
    std::vector<std::uint32_t> var_sole_output_target;
    std::uint32_t var_input_half = 0;         // offset of the input half
    std::uint32_t var_output_half = 0;        // offset of the output half
    std::uint32_t var_records_offset = 0;     // RecordEntry list, from a half's start
    std::uint32_t var_directory_offset = 0;   // directory, from a half's start
    std::uint32_t var_heap_offset = 0;        // heap, from a half's start
    std::uint32_t var_directory_first = 0;    // absolute directory index of this invocation's record 0
    std::uint32_t var_input_count = 0;        // records this workgroup (coalescing) / invocation consumes
    std::uint32_t var_recursion_depth = 0;    // recursion depth of record 0
    std::uint32_t var_first_payload_offset = 0;  // heap offset of record 0's payload (its directory entry's first word)

    // What this invocation added to its output half's counters during the level, kept where a workgroup of one invocation
    // with the level hand-off reserves heap bytes and record slots with one 64-bit atomic (HandOffCountsKeptLocally):
    // where its level launched one workgroup, it is the level's only producer, so these are the half's final counts and
    // its last workgroup's hand-off (LevelHandOffPass) needs no round trip to read them back. 0 where not kept or until
    // the first allocation function is made (LowerOutputsPass creates them; the wrapper zeroes them).
    std::uint32_t var_hand_off_reserved = 0;  // uint64: heap bytes (low word) and record slots (high word)
    // 1 where this workgroup is its level's only one and the next level is direct (the wrapper sets it from the level's
    // launched workgroups and the pushed consumer before the node's code): the output half then holds only what this
    // invocation adds, nobody reads its counters before the hand-off rewrites the consumer's state and clears them, so
    // the allocations take their ranges from the kept sums without any atomic (LowerOutputsPass).
    std::uint32_t var_hand_off_sole_producer = 0;
    // Only where the graph's node-table and statistics offsets are known (LoweringOptions), so that the hand-off's loads
    // ahead of the node's code wait for no other load, and not for nodes that may prepare a dispatch group
    // (LoweringOptions::group_level_hand_off): the levels of a chain of node arrays launch a workgroup per record, so they
    // would pay for the kept counts and those loads (H100: `overhead_chain32x8` +2.8%) and never use them.
    bool HandOffCountsKeptLocally() const {
        return options.level_hand_off && !options.group_level_hand_off && options.heap_holds_record_list &&
               options.node_table_offset != 0 && options.node_stats_offset != 0 &&
               lowered_local_size[0] * lowered_local_size[1] * lowered_local_size[2] == 1;
    }

    // Invocations other than 0 have nothing to do in the node's code (LowerOutputsPass decides, OnlyInvocationZeroHasEffects):
    // the entry wrapper (LevelHandOffPass) calls the node's code in invocation 0 only.
    bool only_invocation_0_runs_node_code = false;
    // The lowered module's workgroup size: the node's own, the batch for thread nodes (LaunchPass), or one invocation
    // where the others have nothing to do (OneInvocationWorkgroupPass). LevelHandOffPass and LowerNode read it.
    std::array<std::uint32_t, 3> lowered_local_size{1, 1, 1};

    // First block of the node's own code in the entry point, after the prologue the launch pass puts before it (which
    // only returns whole workgroups).
    std::uint32_t entry_body_label = 0;
    // The function the entry point names once a pass wrapped the node's (CoalesceRecordStoresPass); 0: info.entry_point_id.
    std::uint32_t entry_function = 0;
    std::uint32_t EntryFunction() const { return entry_function != 0 ? entry_function : info.entry_point_id; }
    // Allocations as LowerOutputsPass lowered them.
    std::vector<LoweredAllocation> lowered_allocations;

    // Real (unremapped) built-in Input variables the runtime code reads.
    std::uint32_t builtin_workgroup_id = 0;
    std::uint32_t builtin_local_invocation_index = 0;
    std::uint32_t builtin_local_invocation_id = 0;
    std::uint32_t builtin_subgroup_local_invocation_id = 0;  // created by the outputs pass where allocations need it

    // Helper functions (0 until created).
    std::uint32_t fn_input_record_address = 0;  // uint64 (uint index)

    // Output payload values and the Function variables that alias them (DXC's copies) -> the OpAllocateNodePayloadsAMDX
    // they come from; 0 when several allocations reach it.
    std::unordered_map<std::uint32_t, std::uint32_t> payload_source;

    // Payload array type -> PhysicalStorageBuffer pointer to its record buffer (see PayloadBufferPointer).
    std::unordered_map<std::uint32_t, std::uint32_t> payload_buffer_pointer;

    // Payload array type (OpTypeNodePayloadArrayAMDX) -> index into info.outputs, for outputs.
    std::unordered_map<std::uint32_t, std::uint32_t> output_of_array_type;

    // Helper functions defined while a pass iterates the module's functions; FlushPendingFunctions appends them.
    std::vector<Function> pending_functions;
};

void FlushPendingFunctions(Module& module, LoweringContext& ctx);

// Emits instructions into a vector (a block being built, or a temporary spliced in place of an AMDX instruction).
class Emitter {
  public:
    Emitter(Module& module, LoweringContext& context, std::vector<Instruction>* out)
        : module_(module), ctx_(context), out_(out) {}

    void SetOutput(std::vector<Instruction>* out) { out_ = out; }
    std::vector<Instruction>* output() const { return out_; }
    Module& module() { return module_; }
    TypeManager& types() { return *ctx_.types; }

    std::uint32_t Emit(Op op, std::uint32_t type, std::initializer_list<std::uint32_t> ids);
    void EmitVoid(Op op, std::initializer_list<std::uint32_t> ids);
    // Appends an already built instruction.
    void Append(Instruction inst) { out_->push_back(std::move(inst)); }

    std::uint32_t U32(std::uint32_t value) { return types().GetConstantUint(value, 32); }
    std::uint32_t U64(std::uint64_t value) { return types().GetConstantUint(value, 64); }
    std::uint32_t Bool(bool value) { return types().GetConstantBool(value); }

    std::uint32_t Add(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpIAdd, ctx_.u32, {a, b}); }
    std::uint32_t Sub(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpISub, ctx_.u32, {a, b}); }
    std::uint32_t Mul(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpIMul, ctx_.u32, {a, b}); }
    std::uint32_t Div(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpUDiv, ctx_.u32, {a, b}); }
    std::uint32_t Mod(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpUMod, ctx_.u32, {a, b}); }
    std::uint32_t And(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpBitwiseAnd, ctx_.u32, {a, b}); }
    std::uint32_t Or(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpBitwiseOr, ctx_.u32, {a, b}); }
    std::uint32_t ShiftRight(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpShiftRightLogical, ctx_.u32, {a, b}); }
    std::uint32_t Less(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpULessThan, ctx_.bool_type, {a, b}); }
    std::uint32_t LessEqual(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpULessThanEqual, ctx_.bool_type, {a, b}); }
    std::uint32_t Equal(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpIEqual, ctx_.bool_type, {a, b}); }
    std::uint32_t NotEqual(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpINotEqual, ctx_.bool_type, {a, b}); }
    std::uint32_t LogicalAnd(std::uint32_t a, std::uint32_t b) { return Emit(Op::OpLogicalAnd, ctx_.bool_type, {a, b}); }
    std::uint32_t LogicalNot(std::uint32_t a) { return Emit(Op::OpLogicalNot, ctx_.bool_type, {a}); }
    std::uint32_t Select(std::uint32_t type, std::uint32_t c, std::uint32_t a, std::uint32_t b) {
        return Emit(Op::OpSelect, type, {c, a, b});
    }
    std::uint32_t SelectU32(std::uint32_t c, std::uint32_t a, std::uint32_t b) { return Select(ctx_.u32, c, a, b); }
    std::uint32_t Min(std::uint32_t a, std::uint32_t b) { return SelectU32(Less(a, b), a, b); }
    std::uint32_t Max(std::uint32_t a, std::uint32_t b) { return SelectU32(Less(a, b), b, a); }

    // Loads / stores of Private, Workgroup or Function variables (no memory operands needed).
    std::uint32_t Load(std::uint32_t type, std::uint32_t pointer) { return Emit(Op::OpLoad, type, {pointer}); }
    void Store(std::uint32_t pointer, std::uint32_t value) { EmitVoid(Op::OpStore, {pointer, value}); }
    std::uint32_t LoadU32Var(std::uint32_t var) { return Load(ctx_.u32, var); }
    // A uint32 member of runtime::NodePushContext (not kScratchAddress, the uint64).
    std::uint32_t LoadPushContextU32(PushContextMember member);
    // NodePushContext::level without its flag (runtime::kLevelRecordListIsDirectory): the level's number.
    std::uint32_t LoadPushedLevelNumber() {
        return And(LoadPushContextU32(PushContextMember::kLevel), U32(runtime::kLevelNumberMask));
    }

    // Scratch access: `offset` is a uint32 byte offset from the scratch base (an id).
    std::uint32_t ScratchAddress(std::uint32_t offset);
    std::uint32_t ScratchPointer(std::uint32_t offset);
    // A PhysicalStorageBuffer pointer to a vector of `components` uint32 at a scratch offset.
    std::uint32_t ScratchVectorPointer(std::uint32_t offset, std::uint32_t components);
    std::uint32_t LoadScratchU32(std::uint32_t offset);
    // GraphHeader::node_table_offset and node_stats_offset: constants where the layer passed them
    // (LoweringOptions::node_table_offset, node_stats_offset), so that what is read at them waits for no header load
    // (a node's ShaderIndexAMDX, a group member's table entry); else loaded from the header.
    std::uint32_t NodeTableOffset() {
        return ctx_.options.node_table_offset != 0 ? U32(ctx_.options.node_table_offset)
                                                   : LoadScratchU32(U32(offsets::kHeaderNodeTableOffset));
    }
    std::uint32_t NodeStatsOffset() {
        return ctx_.options.node_stats_offset != 0 ? U32(ctx_.options.node_stats_offset)
                                                   : LoadScratchU32(U32(offsets::kHeaderNodeStatsOffset));
    }
    // GraphHeader::node_count: a constant where the layer passed it (LoweringOptions::node_count), else loaded.
    std::uint32_t NodeCount() {
        return ctx_.options.node_count != 0 ? U32(ctx_.options.node_count) : LoadScratchU32(U32(offsets::kHeaderNodeCount));
    }
    void StoreScratchU32(std::uint32_t offset, std::uint32_t value);
    // Stores four uint32 words at a 16-byte aligned offset in one access (a RecordEntry), or two at an 8-byte aligned one.
    void StoreScratchU32x4(std::uint32_t offset, std::array<std::uint32_t, 4> words);
    void StoreScratchU32x2(std::uint32_t offset, std::array<std::uint32_t, 2> words);
    // Component `index` of a composite of uint32 (a vector of them).
    std::uint32_t ExtractU32(std::uint32_t composite, std::uint32_t index);
    // Loads four uint32 words at a 16-byte aligned offset in one access.
    std::array<std::uint32_t, 4> LoadScratchU32x4(std::uint32_t offset);
    // Device-scope relaxed atomics: ordering between producer and consumer levels comes from the scheduler's barriers.
    std::uint32_t AtomicScratch(Op op, std::uint32_t offset, std::uint32_t value);
    // The same on the uint64 at a scratch `offset` (8-byte aligned), e.g. HalfHeader's heap_top and record_count as one
    // word; adds the Int64Atomics capability (the layer requires shaderBufferInt64Atomics of emulating devices).
    std::uint32_t AtomicScratchU64(Op op, std::uint32_t offset, std::uint32_t value);
    // Charges `count` dropped records (StatusFlag bits `flags`) that level `level` loses to graph node `node`: the
    // header's totals and the node's NodeStats, as ReportDrop in meta_shaders/scratch_layout.glsl does. For drop paths.
    void ReportDrop(std::uint32_t node, std::uint32_t level, std::uint32_t flags, std::uint32_t count);
    // uint64 helpers: (high << 32) | low, and the two halves of a uint64.
    std::uint32_t PackU64(std::uint32_t low, std::uint32_t high);
    std::uint32_t LowU32(std::uint32_t value) { return Emit(Op::OpUConvert, ctx_.u32, {value}); }
    std::uint32_t HighU32(std::uint32_t value) { return LowU32(Emit(Op::OpShiftRightLogical, ctx_.u64, {value, U64(32)})); }
    // Workgroup-scope relaxed atomic on a uint32 Workgroup variable (or element pointer): the workgroup barriers around
    // its uses order it.
    std::uint32_t AtomicWorkgroup(Op op, std::uint32_t pointer, std::uint32_t value);

    // Subgroup operations over the invocations that execute them (GroupNonUniform*, Subgroup scope). Callers emit them
    // where every invocation that reached the enclosing call executes them, never under a per-invocation condition.
    //
    // There is deliberately no Reduce: a subgroup total is the inclusive scan's value in the highest active lane
    // (SubgroupHighestActiveLane). NVIDIA 580 (H200) compiled OpGroupNonUniformIAdd Reduce in a lowered node's workgroup
    // reservation to the reducing lane's own value in some builds: which builds depended on unrelated dead code elsewhere in the
    // module, and the result was lost or overlapping records (a 64-invocation node reserved 1 record instead of ~32) and
    // then a hung GPU. The scan form gave correct results in every one of those builds (docs/reliability.md, "Subgroup
    // reductions on NVIDIA").
    std::uint32_t SubgroupInclusiveAdd(std::uint32_t value) {
        return SubgroupArithmetic(Op::OpGroupNonUniformIAdd, GroupOperation::InclusiveScan, value);
    }
    // The subgroup id of the highest active invocation (a ballot of true, its most significant bit): the one whose
    // inclusive scan is the subgroup's total. Found where it is used, in the same convergence as the scan.
    std::uint32_t SubgroupHighestActiveLane();
    // `value` as the invocation with subgroup id `lane` holds it, in every invocation.
    std::uint32_t SubgroupShuffle(std::uint32_t value, std::uint32_t lane) {
        return Emit(Op::OpGroupNonUniformShuffle, ctx_.u32, {U32(kScopeSubgroup), value, lane});
    }
    // True only on the lowest-id active invocation.
    std::uint32_t SubgroupElect() { return Emit(Op::OpGroupNonUniformElect, ctx_.bool_type, {U32(kScopeSubgroup)}); }
    std::uint32_t SubgroupAllEqual(std::uint32_t value) {
        return Emit(Op::OpGroupNonUniformAllEqual, ctx_.bool_type, {U32(kScopeSubgroup), value});
    }

    // Workgroup-scope execution + memory barrier on workgroup memory (used to share one invocation's result).
    void WorkgroupBarrier();
    // OpMemoryBarrier at device scope over storage-buffer memory (GLSL memoryBarrierBuffer()): this invocation's earlier
    // writes are visible to, and its later reads see, other workgroups' writes ordered by the same kind of barrier.
    void DeviceMemoryBarrier();
    // The same at workgroup scope (GLSL groupMemoryBarrier() on storage buffers): orders this invocation's storage-buffer
    // accesses for the other invocations of its workgroup only, so it need not wait for its writes to reach the device's
    // memory as the device-scope fence does.
    void WorkgroupBufferMemoryBarrier();

    // Stores `value` in an Aligned access through a PhysicalStorageBuffer pointer.
    std::uint32_t LoadAligned(std::uint32_t type, std::uint32_t pointer, std::uint32_t alignment);
    void StoreAligned(std::uint32_t pointer, std::uint32_t value, std::uint32_t alignment);

  private:
    // A relaxed atomic `op` of result `type` on `pointer` at `scope` (a Scope value).
    std::uint32_t Atomic(Op op, std::uint32_t type, std::uint32_t pointer, std::uint32_t scope, std::uint32_t value);
    // A uint32 GroupNonUniform arithmetic instruction (IAdd, UMax...) with the given group operation.
    std::uint32_t SubgroupArithmetic(Op op, GroupOperation operation, std::uint32_t value);

    Module& module_;
    LoweringContext& ctx_;
    std::vector<Instruction>* out_;
};

// Builds a whole function out of blocks (helpers, and the entry point's prologue).
class FunctionBuilder {
  public:
    FunctionBuilder(Module& module, LoweringContext& context) : module_(module), ctx_(context), emit_(module, context, nullptr) {}

    // Starts a new block with a fresh or given label; subsequent Emit calls go there.
    std::uint32_t NewLabel() { return module_.TakeNextId(); }
    void StartBlock(std::uint32_t label);
    Emitter& emit() { return emit_; }
    std::vector<BasicBlock>& blocks() { return blocks_; }
    std::uint32_t current_label() const { return blocks_.back().label_id(); }

    // if (condition) { then_body(); } as a structured selection; continues in the merge block.
    template <typename Body>
    void If(std::uint32_t condition, Body then_body) {
        const std::uint32_t then_label = NewLabel();
        const std::uint32_t merge_label = NewLabel();
        SelectionMerge(merge_label);
        emit_.EmitVoid(Op::OpBranchConditional, {condition, then_label, merge_label});
        StartBlock(then_label);
        then_body();
        emit_.EmitVoid(Op::OpBranch, {merge_label});
        StartBlock(merge_label);
    }

    // if (condition) { then_body(); } else { else_body(); } as a structured selection; continues in the merge block.
    template <typename Then, typename Else>
    void IfElse(std::uint32_t condition, Then then_body, Else else_body) {
        const std::uint32_t then_label = NewLabel(), else_label = NewLabel(), merge_label = NewLabel();
        SelectionMerge(merge_label);
        emit_.EmitVoid(Op::OpBranchConditional, {condition, then_label, else_label});
        StartBlock(then_label);
        then_body();
        emit_.EmitVoid(Op::OpBranch, {merge_label});
        StartBlock(else_label);
        else_body();
        emit_.EmitVoid(Op::OpBranch, {merge_label});
        StartBlock(merge_label);
    }

    // for (i = 0; i < count; ++i) body(i); continues in the merge block.
    template <typename Body>
    void For(std::uint32_t count, Body body) {
        const std::uint32_t pre_label = current_label();
        const std::uint32_t header = NewLabel(), body_label = NewLabel(), cont = NewLabel(), merge = NewLabel();
        const std::uint32_t i = module_.TakeNextId();
        const std::uint32_t next = module_.TakeNextId();
        emit_.EmitVoid(Op::OpBranch, {header});
        StartBlock(header);
        Instruction phi(Op::OpPhi, ctx_.u32, i);
        phi.AddId(emit_.U32(0)).AddId(pre_label).AddId(next).AddId(cont);
        emit_.Append(std::move(phi));
        const std::uint32_t more = emit_.Less(i, count);
        Instruction loop_merge(Op::OpLoopMerge);
        loop_merge.AddId(merge).AddId(cont).AddWord(0, OperandKind::LoopControl);
        emit_.Append(std::move(loop_merge));
        emit_.EmitVoid(Op::OpBranchConditional, {more, body_label, merge});
        StartBlock(body_label);
        body(i);
        emit_.EmitVoid(Op::OpBranch, {cont});
        StartBlock(cont);
        Instruction add(Op::OpIAdd, ctx_.u32, next);
        add.AddId(i).AddId(emit_.U32(1));
        emit_.Append(std::move(add));
        emit_.EmitVoid(Op::OpBranch, {header});
        StartBlock(merge);
    }

    // value = condition ? then_body() : otherwise, as a structured selection with an OpPhi in the merge block;
    // then_body returns a `type` id defined in the then-branch.
    template <typename Body>
    std::uint32_t IfValue(std::uint32_t condition, std::uint32_t type, std::uint32_t otherwise, Body then_body) {
        const std::uint32_t before_label = current_label();
        std::uint32_t value = 0, then_end_label = 0;
        If(condition, [&]() {
            value = then_body();
            then_end_label = current_label();
        });
        Instruction phi(Op::OpPhi, type, module_.TakeNextId());
        phi.AddId(value).AddId(then_end_label).AddId(otherwise).AddId(before_label);
        const std::uint32_t result = phi.result_id();
        emit_.Append(std::move(phi));
        return result;
    }

    // value = condition ? then_body() : else_body(), as a structured selection with an OpPhi in the merge block; each
    // body returns a `type` id defined in its branch (and may return from the function on some of its paths).
    template <typename Then, typename Else>
    std::uint32_t IfElseValue(std::uint32_t condition, std::uint32_t type, Then then_body, Else else_body) {
        const std::uint32_t then_label = NewLabel(), else_label = NewLabel(), merge_label = NewLabel();
        SelectionMerge(merge_label);
        emit_.EmitVoid(Op::OpBranchConditional, {condition, then_label, else_label});
        StartBlock(then_label);
        const std::uint32_t then_value = then_body();
        const std::uint32_t then_end_label = current_label();
        emit_.EmitVoid(Op::OpBranch, {merge_label});
        StartBlock(else_label);
        const std::uint32_t else_value = else_body();
        const std::uint32_t else_end_label = current_label();
        emit_.EmitVoid(Op::OpBranch, {merge_label});
        StartBlock(merge_label);
        Instruction phi(Op::OpPhi, type, module_.TakeNextId());
        phi.AddId(then_value).AddId(then_end_label).AddId(else_value).AddId(else_end_label);
        const std::uint32_t result = phi.result_id();
        emit_.Append(std::move(phi));
        return result;
    }

    void SelectionMerge(std::uint32_t merge_label);

    // Defines a complete function (appended to the module by FlushPendingFunctions): `return_type (parameter_types...)`; returns the function id.
    // `body` receives the parameter ids and must end every path with a terminator.
    template <typename Body>
    std::uint32_t DefineFunction(std::uint32_t return_type, std::span<const std::uint32_t> parameter_types, Body body) {
        Function function;
        const std::uint32_t function_id = module_.TakeNextId();
        Instruction def(Op::OpFunction, return_type, function_id);
        def.AddWord(0, OperandKind::FunctionControl).AddId(emit_.types().GetFunction(return_type, parameter_types));
        function.header.push_back(std::move(def));
        std::vector<std::uint32_t> parameters;
        for (std::uint32_t type : parameter_types) {
            parameters.push_back(module_.TakeNextId());
            function.header.push_back(Instruction(Op::OpFunctionParameter, type, parameters.back()));
        }
        blocks_.clear();
        StartBlock(NewLabel());
        body(std::span<const std::uint32_t>(parameters));
        function.blocks = std::move(blocks_);
        blocks_.clear();
        ctx_.pending_functions.push_back(std::move(function));
        return function_id;
    }

  private:
    Module& module_;
    LoweringContext& ctx_;
    Emitter emit_;
    std::vector<BasicBlock> blocks_;
};

// An output payload array value after lowering: a PhysicalStorageBuffer pointer to `struct { Record r[]; }` (Block,
// ArrayStride = the heap record stride), so that `array[i].member` keeps its shape as `buffer.r[i].member`.
Result<std::uint32_t> PayloadBufferPointer(Module& module, LoweringContext& ctx, std::uint32_t array_type);

// `id` as a 32-bit unsigned integer for the runtime helpers' parameters: DXC may index and count with signed or
// 64-bit integers. Emits OpBitcast / OpUConvert into `out` when needed; 0 when `id` is no integer.
std::uint32_t ToUint32(Module& module, LoweringContext& ctx, const std::unordered_map<std::uint32_t, std::uint32_t>& result_types,
                       std::vector<Instruction>& out, std::uint32_t id);

// Small module queries shared by the passes.
const Instruction* FindEntryPointFunction(const Module& module, std::uint32_t function_id, Function** out_function);
Function* FindFunction(Module& module, std::uint32_t function_id);
const Function* FindFunction(const Module& module, std::uint32_t function_id);
// Module-scope Input variable decorated BuiltIn `builtin`, or 0.
std::uint32_t FindBuiltinVariable(const Module& module, BuiltIn builtin);
// Creates an Input variable of `type` decorated BuiltIn `builtin`.
std::uint32_t CreateBuiltinVariable(Module& module, LoweringContext& ctx, BuiltIn builtin, std::uint32_t type);
// Makes `size` the lowered workgroup size: the entry point's LocalSize and LocalSizeId modes give way to one LocalSize,
// and ctx.lowered_local_size follows.
void SetLoweredLocalSize(Module& module, LoweringContext& ctx, const std::array<std::uint32_t, 3>& size);
// Makes `wrapper` (a function that calls `entry`) the entry point in `entry`'s place, with its execution modes: an entry
// point may not also be called (SPIR-V 2.16.1).
void RetargetEntryPoint(Module& module, std::uint32_t entry, std::uint32_t wrapper);
// Creates a module-scope variable in `storage_class` holding `type`.
std::uint32_t CreateGlobalVariable(Module& module, LoweringContext& ctx, StorageClass storage_class, std::uint32_t type,
                                   std::uint32_t initializer = 0);
// Storage class and pointee of a pointer type, or false when `type_id` is no OpTypePointer.
bool PointerInfo(const Module& module, std::uint32_t type_id, StorageClass* storage_class, std::uint32_t* pointee);
// Largest scalar size in bytes inside `type_id` (the guaranteed alignment of a value of that type under scalar layout).
std::uint32_t ScalarAlignment(const Module& module, std::uint32_t type_id);
// Result id -> result type for every instruction of the module.
std::unordered_map<std::uint32_t, std::uint32_t> CollectResultTypes(const Module& module);
// Replaces every use (not definitions) of ids in `map` inside functions, and retypes nothing.
void ReplaceUsesInFunctions(Module& module, const std::unordered_map<std::uint32_t, std::uint32_t>& map);
// Moves every use of the variable `from` to the variable `to` (in `storage_class`) and retypes the access chains and
// copies derived from it to pointers of the same pointee in `storage_class`.
void RetargetVariable(Module& module, LoweringContext& ctx, std::uint32_t from, std::uint32_t to, StorageClass storage_class);

}  // namespace execgraph::spirv::lowering
