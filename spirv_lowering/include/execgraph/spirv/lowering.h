// SPDX-License-Identifier: Apache-2.0
// Lowers one SPV_AMDX_shader_enqueue node (one entry point of an AMDX module) to plain Vulkan 1.3 compute SPIR-V that
// implements the node against the scratch-memory runtime contract (docs/design.md, "Runtime contract" and "Lowered
// node semantics"; the binary layout is execgraph/runtime/scratch_layout.h).
//
// What the lowered shader needs from the device: bufferDeviceAddress, shaderInt64, and scalarBlockLayout when
// LoweredNode::requires_scalar_block_layout is set (DXC lays records out with scalar rules), plus
// storageBuffer16BitAccess / storageBuffer8BitAccess when records hold 16- or 8-bit members.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "execgraph/runtime/scratch_layout.h"
#include "execgraph/spirv/module.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/result.h"

namespace execgraph::spirv {

// Nothing here names a particular graph node: the node's graph index and the base of its output tables arrive at
// dispatch time in runtime::NodePushContext, so every node with equal options and source shares one lowered module.
struct LoweringOptions {
    std::uint32_t context_offset = 0;    // byte offset of runtime::NodePushContext in the push-constant block (8-aligned)
    // Per NodeInfo::outputs[i]: first uint32 entry of its table, relative to NodePushContext::output_table_base (itself
    // relative to GraphHeader::output_table_offset). The table is indexed by the allocation's Node Index operand (the
    // array index; the linker folds PayloadNodeBaseIndexAMDX in).
    std::vector<std::uint32_t> output_table_index;
    std::vector<std::uint32_t> output_table_length;   // per output: entries (array index -> graph node, kInvalidNode = none)
    std::vector<std::uint32_t> output_record_stride;  // per output: heap bytes per record (0 only for empty records)
    std::uint32_t input_record_stride = 0;
    std::uint32_t thread_batch_size = 32;  // lowered workgroup size for kThread nodes
    // GraphHeader::level_pass_records_per_workgroup of the device the node runs on: allocations size the next level
    // pass by it (HalfHeader::level_pass_workgroups). A constant of the module rather than a load from scratch, because
    // that load sat on the critical path of every producer (about 3 µs per level of a chain on an H100).
    std::uint32_t level_pass_records_per_workgroup = 512;
    // Set where a half's heap holds record_capacity records of every output's stride rounded up to 16 bytes (the layer's
    // ScratchPlan guarantees it for graphs whose records are all at most kDefaultHeapBytesPerRecord bytes): a reservation
    // whose records fit the record list then fits the heap, so one 64-bit atomic on HalfHeader's adjacent heap_top and
    // record_count reserves both, instead of a second atomic that waits for the first. Unset, the record count is taken
    // only after the heap range fits.
    bool heap_holds_record_list = false;
    // With heap_holds_record_list: give allocations and the node's prologue the code for levels whose records are placed
    // by index (runtime::kDirectLevelRecordsByIndex, runtime::kLevelRecordsByIndex; docs/design.md, "Records by
    // index"), behind branches on push constants the layer sets per level. Producers then write no RecordEntry for the
    // next level's single consumer and place record slot r at heap offset r * the output's stride; that consumer finds
    // its record r at r * input_record_stride, with no entry to load first.
    bool records_by_index = false;
    // With records_by_index: a level's consumer reads its records by index newest first, record count - 1 - r where it
    // would read r (thread nodes by record, coalescing nodes by batch, static broadcast nodes by record; the spec orders no
    // records within a level). Producers reserve slots in about the order they write them, so the newest records are the
    // ones still in the GPU's L2 cache when the next level starts: read first, they come from there, where records read
    // oldest first evict them before their turn once a level's records exceed the cache (docs/performance.md).
    bool records_newest_first = false;
    // Give the node the level hand-off (LevelHandOffPass, docs/design.md "Direct levels"): the code by which the last
    // workgroup of a level prepares a direct next level. Without it the layer never makes the level after the node
    // direct. lavapipe's llvmpipe runs every SIMD group of 8 lanes through every branch with its lanes masked off, so
    // there the hand-off's code cost each group of every workgroup about 0.16 µs even where it was never used; GPUs
    // skip it at a branch on a push constant (docs/performance.md, "lavapipe: the level hand-off only where it pays").
    bool level_hand_off = true;
    // Give the node the code a dispatch-group dispatch runs (docs/design.md, "Dispatch groups": the member search, or a
    // static broadcast group's directory range), behind a branch on NodePushContext::output_table_base. Unset where no
    // other node of the graph shares the node's lowered module: the layer then never dispatches it as a group.
    bool dispatch_group_member = true;
    // Reserve an Invocation-visibility allocation that every invocation of a broadcast or coalescing workgroup reaches
    // once per workgroup: subgroups take their ranges with workgroup-memory atomics between three workgroup barriers, and
    // invocation 0 makes the reservation. GPUs serialise same-address atomics in the L2, so one per workgroup instead of
    // one per subgroup pays there. Unset, such allocations reserve once per subgroup, as all others do: llvmpipe runs
    // every SIMD group of a workgroup through the workgroup path's barriers, shared atomics and invocation 0's code with
    // its lanes masked off, and has no atomic contention to save (lavapipe's `thread_launch` producer level: about 35%
    // of its time, docs/performance.md).
    bool reserve_per_workgroup = true;
    // The scheduler dispatches level passes indirectly, from HalfHeader::level_pass_workgroups (CPU devices, the layer's
    // LevelPassDispatchedIndirectlyFor), so the level hand-off clears that word to 1, never 0: a level pass dispatched
    // with no workgroups would leave the next level's half uncleared. Unset, it clears it to 0 as the zero-filled halves
    // of GPUs hold it (on an H100, the chains ran about 0.5% slower with the 1 stored there).
    bool indirect_level_pass = false;
    // With level_hand_off: the hand-off can also prepare a direct level whose consumer is a dispatch group of static
    // broadcast members (runtime::kDirectLevelGroupConsumer): it then sums the members' records and writes each
    // member's statistics and the group's arguments. Set only for nodes whose outputs name such a group and whose records
    // run few invocations (the layer's SelectLevelHandOffs): code a node never runs still costs on llvmpipe, which runs
    // it with its lanes masked off (lavapipe's single chain ran 12% slower with it in every node), and on GPUs a level
    // after a classify node's 230 400 workgroups, each fencing its writes before it counts itself, ran 3 to 4% slower
    // direct (docs/performance.md).
    bool group_level_hand_off = false;
    // With group_level_hand_off: the group code can also check that scratch holds this graph's tables before it prepares
    // the group (runtime::kDirectLevelChecksInitialization), for a level 0 whose dispatch rewrote only its own tables.
    // Set only for API entries of graphs too large to rewrite whole (the layer's SelectLevelHandOffs): in the steps of a
    // chain of node arrays, which never need it, the check's code made every level about 0.25 µs slower on an H200
    // (docs/performance.md).
    bool group_hand_off_checks_initialization = false;
    // Where the graph's node table and statistics lie in scratch (GraphHeader::node_table_offset, node_stats_offset),
    // when the caller knows them (they depend on the graph alone, not on the scratch size); 0: the lowered code loads
    // them from the header. With them a one-invocation workgroup's level hand-off loads what it needs of the next level's
    // consumer at its start, with no round trip for the offsets, and keeps its level's counts itself
    // (docs/design.md, "Direct levels").
    std::uint32_t node_table_offset = 0;
    std::uint32_t node_stats_offset = 0;
    // The graph's node count (GraphHeader::node_count), likewise; 0: loaded from the header. With it a half's record list
    // lies at a constant offset from the half (after its node states), so that a chain step at a direct level can load
    // its record's entry before anything else returns (LaunchPass).
    std::uint32_t node_count = 0;
    // Keep the record of an allocation of at most one record per invocation, two to eight 16-byte chunks long, in the
    // invocation's registers and write a subgroup's records at the end, transposed across its lanes so that each store
    // instruction writes contiguous bytes (CoalesceRecordStoresPass, docs/design.md "Coalesced record stores"). Set for
    // GPUs, whose store instructions cost by the memory segments they touch; a CPU device runs every shuffle as a loop
    // over its lanes (the layer's record_store_coalescing setting).
    bool coalesce_record_stores = true;
    // What BuiltIn ShaderIndexAMDX reads when set (tools and tests). Unset, as the layer leaves it: the running node's
    // NodeStaticInfo::shader_index, where the layer writes its index (VkPipelineShaderStageNodeCreateInfoAMDX::index
    // overriding the module's ShaderIndexAMDX), so that the nodes of an array share one lowered module.
    std::optional<std::uint32_t> shader_index;
    bool validate = true;                  // run spvValidate (Vulkan 1.3) on the result; fail with its message
    bool optimize = false;                 // run SPIRV-Tools' performance passes on the result
};

struct LoweredNode {
    std::vector<std::uint32_t> words;
    // The lowered workgroup size: the node's own; the batch size, 1, 1 for thread nodes; 1, 1, 1 where only invocation 0
    // runs the node's code (unless the module declares NumSubgroups or a WorkgroupSize built-in).
    std::array<std::uint32_t, 3> local_size{1, 1, 1};
    // The records' explicit layout only validates under VK_EXT_scalar_block_layout rules (the device must enable
    // scalarBlockLayout). Set only when `validate` ran.
    bool requires_scalar_block_layout = false;
    // Only invocation 0 of each workgroup runs the node's code: nothing the others would run has an effect (stores
    // outside Function and Private variables, atomics, barriers, group operations), so they skip it, or, where
    // local_size is 1, 1, 1, do not exist.
    bool only_invocation_0_runs_node_code = false;
};

// The most records one allocation on `output` delivers: its NodeMaxPayloadsAMDX, at most maxExecutionGraphShaderPayloadCount.
// Lowered allocations clamp their count to it (reporting the excess) and record indices to it, and the layer sizes the
// trash region for it, so no node write leaves scratch (docs/reliability.md).
inline std::uint32_t OutputRecordLimit(const NodeOutputInfo& output) {
    return output.max_payloads == 0
               ? 1u
               : (output.max_payloads < runtime::kMaxPayloadsPerAllocation ? output.max_payloads
                                                                           : runtime::kMaxPayloadsPerAllocation);
}

// Whether some function of `module` takes a node payload as a parameter (DXC -Od keeps the node function and helpers
// that take record objects as calls; dxc-spirv-shapes §3.2 "Entry-point wrappers").
bool HasPayloadParameterFunctions(const Module& module);
// Inlines every call of such a function, innermost first, and removes the callees it leaves uncalled, so that payloads
// never cross a call (src/lowering/inline_payload_functions.cpp says how). AnalyzeNode and LowerNode do it on their
// copies of a module that needs it. Fails, naming the function, for a callee that returns from several places where
// its call is not the last thing its caller does, and for a call in a loop header block; the module is then left
// part-way, so callers inline a copy.
Status InlinePayloadFunctions(Module& module);

// Lowers `info.entry_point_name` of `module` (which AnalyzeNode described as `info`). Never returns invalid SPIR-V:
// unsupported shapes fail with an Error that names the construct, and with `validate` the result is checked.
Result<LoweredNode> LowerNode(const Module& module, const NodeInfo& info, const LoweringOptions& options);

// The options a lowered module was made with that become constants of its code, as one line of text
// ("execgraph-lowering-options context_offset=0 ... outputs=0:4:16"). LowerNode records it in the module as an
// OpModuleProcessed, so that a file lowered for another device or graph can be told apart from the module it is meant to
// replace (CheckLoweredReplacement): the settings that differ between devices (thread_batch_size,
// level_pass_records_per_workgroup) leave a module valid and plausible, only sized for the other device.
std::string LoweringOptionsRecord(const LoweringOptions& options);

// Checks a module meant to replace `lowered` (the lowering of entry point `entry_point`) when someone investigates a
// driver with hand-edited lowered shaders (the layer's replace_shaders_path): it must be SPIR-V that passes Vulkan 1.3
// validation (with scalar block layout) and has no AMDX left, and keep what the layer relies on: a GLCompute entry point
// of that name with the same LocalSize (thread nodes run `local_size[0]` records per workgroup), and, where both modules
// carry a LoweringOptionsRecord, the same one (a module dumped on a CPU device sizes level passes for one workgroup and
// ran a GPU's classification three times slower, docs/debugging.md). A file without the record (made by another
// compiler) is accepted. The push-constant context and scratch layout cannot be checked here; they are the replacement's
// author's to keep.
Status CheckLoweredReplacement(std::span<const std::uint32_t> words, const std::string& entry_point, const LoweredNode& lowered);

}  // namespace execgraph::spirv
