// Records graph-scratch initialization and graph dispatches into a command buffer as plain Vulkan 1.3 compute work
// (docs/design.md, "One graph dispatch"): meta-shader passes, per-level indirect node dispatches, and the barriers
// between them. Everything goes through the next layer's DeviceDispatchTable, so it works inside the layer.
//
// Requirements on the device: Vulkan 1.3 with bufferDeviceAddress, shaderInt64 and shaderBufferInt64Atomics enabled, and
// synchronization2 enabled unless the recorder is told to use vkCmdPipelineBarrier instead (same dependencies). The
// scratch buffer needs STORAGE_BUFFER, INDIRECT_BUFFER, TRANSFER_DST and SHADER_DEVICE_ADDRESS usage; a report slot's
// buffer SHADER_DEVICE_ADDRESS usage.
//
// Barriers of one dispatch (global memory barriers; "C" = COMPUTE_SHADER, "I" = DRAW_INDIRECT, "T" = TRANSFER):
//   C|I writes          -> T write             before the begin transfers (the previous use of this scratch)
//   T write             -> C read/write        before the entry pass (or before level 0's level pass, where the begin
//                                              transfers wrote level 0's records: vkCmdDispatchGraphAMDX, no entry pass)
//                          (| I)               or before level 0's node dispatch, where they also prepared it
//                                              (its arguments: INDIRECT_COMMAND_READ)
//   per level L, fused (GraphPlan::UsesFusedLevelPass; one meta dispatch):
//                 C|I   -> C read/write        before the level pass (nodes' outputs; WAR on the output half's args it clears)
//                 C     -> C read/write | I    before the node dispatches (INDIRECT_COMMAND_READ of NodeState.dispatch)
//   per direct level L (GraphPlan::direct_level_consumer; no meta dispatch, the last workgroup of level L - 1 or of the
//   entry pass prepared it):
//                 C|I   -> C read/write | I    before the node dispatch (its args; WAR on the input half the hand-off cleared)
//   per level L, split (larger graphs; three meta dispatches):
//                 C|I   -> C read/write        before prepare (nodes' outputs; WAR on the args prepare clears)
//                 C     -> C read/write        before scatter
//                 C     -> C read/write        before write_args
//                 C     -> C read/write | I    before the node dispatches
//   C|I                 -> C read/write        before the finish pass, where it makes a leftover check. Without one it
//                                              only writes a report that the last level's preparer cannot write, and
//                                              follows the last level's node dispatches without a barrier: they have no
//                                              outputs, and the barrier before them ordered the preparer (RecordDispatch)
//   C|I|T writes        -> C read/write        at the end: the spec's graph dispatch accesses scratch in the compute stage
//                          (| HOST read)       with a report slot: the ring writes (finish pass or preparer), made available
//                                              to the host
// So a dispatch of L fused levels, D of them direct, records 2 + 2L - D + 2 barriers, one fewer without a leftover check
// (the finish pass then runs without a barrier, or not at all), and one fewer where the host wrote level 0 (level 0's
// pass follows the begin barrier), or two fewer where it also prepared level 0's dispatch (its node dispatch follows).
// The begin pair stays: the begin writes are transfers, which neither the application's barriers (the spec has it
// synchronise scratch in the compute stage, and a semaphore wait on COMPUTE_SHADER does not hold back transfers) nor the
// previous dispatch's end barrier (whose second scope is the compute stage) order, and the entry pass (or level 0's
// pass) reads them.
//
// Bind state: a dispatch leaves the compute pipeline and push constants of the meta and node pipelines bound; the
// caller restores the application's compute state afterwards (design.md, "How a node receives its scheduler context").
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dispatch_table.h"
#include "execgraph/runtime/scratch_layout.h"
#include "execgraph/vk_amdx_compat.h"
#include "meta_pipelines.h"
#include "scratch_plan.h"

namespace execgraph {

// The application's scratch range: the buffer that holds `address` (found by the layer) and the offset of `address`
// in it. `size` is the scratchSize the application passed.
struct ScratchBinding {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;
    VkDeviceAddress address = 0;
    VkDeviceSize size = 0;
};

struct NodeDispatchPlan {
    VkPipeline pipeline = VK_NULL_HANDLE;     // the lowered node's compute pipeline
    VkPipelineLayout layout = VK_NULL_HANDLE;  // its layout (the application's ranges plus NodePushContext)
    uint32_t context_offset = 0;              // where NodePushContext is pushed (LoweringOptions::context_offset)
    uint32_t payload_size = 0;                // exact input record bytes; host-staged entries copy this many per payload
    uint32_t record_stride = 0;  // as NodeStaticInfo::record_stride (0: payload_size rounded up to 4), for host-written records
    uint32_t shares_input_with = runtime::kInvalidNode;  // as NodeStaticInfo::shares_input_with
    bool is_api_entry = false;  // as NodeStaticInfo::is_api_entry: host entries may name it (facts §12.3)
    const std::string* label = nullptr;  // its label with DispatchOptions::debug_labels, e.g. "shade[2]"; outlives recording
    bool has_outputs = true;             // false: the node declares no output, so it never enqueues a record
    uint32_t output_table_base = 0;      // NodePushContext::output_table_base: the node's first output-table entry
    // A thread or coalescing node, or a static broadcast node without OpFinishWritingNodePayloadAMDX: it reads only its
    // records' payload offsets and depths, so a level whose records are all its own can use the record list as its
    // directory and run as a direct level.
    bool reads_record_list = false;
    uint64_t static_grid_workgroups = 0;  // a static broadcast node: workgroups per record (the grid's product); else 0
    // Its outputs' entries in GraphPlan::output_table, which lie together from output_table_base (all its node arrays'
    // members): what its lowered code reads of that table.
    uint32_t output_table_entries = 0;
    // Its lowered module has the level hand-off (spirv::LoweringOptions::level_hand_off): its last workgroup of a level
    // can prepare a direct next level. A level is direct only where every node of the level before has it.
    bool level_hand_off = true;
    // ... and can prepare a dispatch group as the next level's consumer (spirv::LoweringOptions::group_level_hand_off):
    // a level whose consumer is a group is direct only where every node of the level before has this too.
    bool group_level_hand_off = false;
    // ... but its records run more invocations than kGroupHandOffMaxInvocationsPerRecordGpu (a classify node), so a
    // group consumer after it is direct only where the host knows the level is small (RecordDispatch,
    // kSmallProducerLevelMaxWorkgroups): every producer workgroup pays the hand-off's device-scope fence.
    bool group_hand_off_needs_small_level = false;
    // Nodes of one pipeline form a dispatch group only where this matches too: nodes lowered from different sources
    // share a pipeline where their lowered code is the same (a chain's steps), but were not lowered as group members.
    uint32_t group_key = 0;
    // Its group code can check initialization before it prepares a group consumer
    // (spirv::LoweringOptions::group_hand_off_checks_initialization): where it is level 0's host-prepared consumer, the
    // begin transfers may then rewrite only its own tables before a direct group level 1 (TablesRewrite).
    bool group_hand_off_checks_initialization = false;
    // The most records one record of this node can enqueue over all its outputs (NodeMaxPayloadsAMDX per workgroup, or
    // per invocation where its allocations are per invocation, times the workgroups a record runs), or UINT64_MAX where
    // nothing bounds it: what bounds a fixed level after this node's level (RecordDispatch, FixedLevelMaxWorkgroupsFor).
    uint64_t records_enqueued_per_record = UINT64_MAX;
    // Its records can be placed by index where it is a direct level's one consumer (runtime::kLevelRecordsByIndex,
    // docs/design.md "Records by index"): its module was lowered with spirv::LoweringOptions::records_by_index (as
    // every producer's must be: places_records_by_index), it reads only its records' payload offsets and depths
    // (reads_record_list), and every output that can name it allocates records of its input stride.
    bool input_by_index = false;
    // Its module has the allocations' code for records by index (spirv::LoweringOptions::records_by_index): a level
    // runs with records by index only where every node of the level before has it.
    bool places_records_by_index = false;
};

// Limits of the fused level pass (meta_shaders/level.comp keeps each graph node's directory range in shared memory and
// the sharing nodes in a shared list): graphs beyond them are scheduled with the split passes.
inline constexpr uint32_t kFusedLevelMaxNodes = 2048;
// Graphs of up to this many nodes get level passes whose per-node shared arrays hold only that many (MetaShader's
// *SmallGraph pipelines): 8.5 KiB of shared memory per workgroup instead of 20.5. On an H200 `append_rate`, whose
// 65-node level scatters about a million records with a thousand workgroups, ran 4.4% faster, presumably because more
// of them fit a multiprocessor at once; no other row moved by more than 0.4% (docs/performance.md).
inline constexpr uint32_t kFusedLevelSmallGraphMaxNodes = 512;
inline constexpr uint32_t kFusedLevelMaxSharingNodes = 64;
// The most members of a dispatch group that a direct level may have as its consumer where the dispatch keeps the
// statistics (RecordDispatch): the last workgroup of the level before then loops over them, one member after the other in
// one invocation, to write their statistics; larger groups get a level pass there. Without the statistics the hand-off
// reads nothing per member, so any group qualifies (a classify node's 1024 shading nodes: on an H200 `classify_1024`
// 57.6 -> 48.7 µs, docs/performance.md). Only nodes lowered with the hand-off's group code
// (LoweringOptions::group_level_hand_off; SelectLevelHandOffs says which) prepare such levels.
inline constexpr uint32_t kDirectLevelGroupMaxMembers = 64;
// A host-prepared level 0 rewrites the graph's node and output tables whole with its begin transfers up to this size
// (graphs of about 250 nodes), and beyond it only level 0's consumer's entries (layer/scheduler.cpp, TablesRewrite), after
// which level 1's preparer must check that scratch holds the graph's tables: a level pass, or for a direct group level 1
// the group code's check (spirv::LoweringOptions::group_hand_off_checks_initialization).
inline constexpr size_t kWholeTablesRewriteMaxBytes = 16384;
// Records each workgroup of the fused level pass scatters. The producers of a level count the
// workgroups its pass needs (HalfHeader::level_pass_workgroups: one per this many records, at least one), and the
// scheduler launches enough for a full record list, of which the rest return at once. A small level so runs one
// workgroup, without the hand-off between workgroups, and a level of half a million records runs a thousand, which
// scatter in parallel (on an H100, a fixed 32 workgroups spent about 0.1 ms per such level in their grid-stride loop).
// On a CPU device (lavapipe runs each workgroup's invocations as coroutines, switching at every barrier) every
// workgroup costs about 10 µs, and a workgroup that returns at once still runs all of the pass's code with its lanes
// masked off (about 26 µs a workgroup), so CPU devices dispatch the pass with exactly the workgroups the producers asked
// for (LevelPassDispatchedIndirectlyFor) and one per 16384 records: a large level's scatter runs on several threads
// (lavapipe's `append_rate`, 32 768 records to 64 nodes, ran its level pass in about 2.2 ms in one workgroup).
inline constexpr uint32_t kLevelPassRecordsPerWorkgroupGpu = 512;
inline constexpr uint32_t kLevelPassRecordsPerWorkgroupCpu = 16384;
inline constexpr uint32_t LevelPassRecordsPerWorkgroupFor(VkPhysicalDeviceType type) {
    return type == VK_PHYSICAL_DEVICE_TYPE_CPU ? kLevelPassRecordsPerWorkgroupCpu : kLevelPassRecordsPerWorkgroupGpu;
}

// Whether the fused level pass is dispatched indirectly, with the workgroups its level's producers asked for
// (HalfHeader::level_pass_workgroups and the two words after it, a VkDispatchIndirectCommand), rather than with enough
// workgroups for a full record list of which those past the asked count return at once. GPUs retire such workgroups for
// almost nothing and keep the direct dispatch, which waits for no indirect-argument read. CPU devices run every
// workgroup through all of the pass's code, so they dispatch indirectly.
inline constexpr bool LevelPassDispatchedIndirectlyFor(VkPhysicalDeviceType type) { return type == VK_PHYSICAL_DEVICE_TYPE_CPU; }

// Whether a dispatch's report (ReportSlot: the header and statistics copied into the host-visible ring) comes from a
// finish pass wherever the last level's nodes have no outputs, rather than from the pass that prepares the last level
// (the fused level pass, or the entry pass of a dispatch whose only level is direct). Either way such a finish pass is
// recorded right after the barrier before the last level's node dispatches, and runs beside them. GPUs take the
// finish pass: the preparer's copy into host memory, and its fence before the serial, kept the last level waiting for
// the preparer's end (on an H200 `classify_8` -2.8%, `classify_64` -2.6%, `classify_1024` -2.4%, and the 10240x5760
// classifications -0.2%; docs/performance.md, "Session of the own-state clears"). CPU devices keep the preparer's
// report: on lavapipe every dispatch costs 10 to 30 µs, and the extra pass took the classifications 2 to 6% longer.
// The `report_pass` setting overrides it.
inline constexpr bool FinishPassReportsFor(VkPhysicalDeviceType type) { return type != VK_PHYSICAL_DEVICE_TYPE_CPU; }

// Invocations of a fused level pass workgroup (specialization constant 0 of meta_shaders/level.comp). A CPU device
// (lavapipe's llvmpipe) runs a workgroup as SIMD groups of 8 lanes, and masks lanes off at a branch instead of jumping:
// every group runs the whole shader, its early returns and the branches no lane takes included. The level pass is
// large (its scatter variants and the last workgroup's bookkeeping), so on lavapipe a pass of 256 invocations took
// about 400 µs even for a level of two records; with 8 (one SIMD group) it takes about a quarter of that. On an H100,
// 256 was faster than 1024 in every workload measured (more warps per barrier and per workgroup-wide loop).
inline constexpr uint32_t kLevelPassWorkgroupSizeGpu = 256;
inline constexpr uint32_t kLevelPassWorkgroupSizeCpu = 8;
inline constexpr uint32_t LevelPassWorkgroupSizeFor(VkPhysicalDeviceType type) {
    return type == VK_PHYSICAL_DEVICE_TYPE_CPU ? kLevelPassWorkgroupSizeCpu : kLevelPassWorkgroupSizeGpu;
}

// Records per lowered workgroup of a thread node (LoweringOptions::thread_batch_size). Every workgroup of a level ends
// with the level hand-off's counter atomic (LevelHandOffPass), so larger batches take fewer of those. On an H100, 64
// against 32 took thread_launch from 742 to 701 µs, fan_out_tree from 269 to 251 and append_rate from 570 to 551, and
// recursion (a few records per level) from 124 to 128; 128 and 256 gained no more and slowed recursion further
// (docs/performance.md). lavapipe showed no difference beyond its noise, so CPU devices keep 32. Thread nodes without
// outputs run kLeafThreadBatchSize instead.
inline constexpr uint32_t kThreadBatchSizeGpu = 64;
inline constexpr uint32_t kThreadBatchSizeCpu = 32;
inline constexpr uint32_t ThreadBatchSizeFor(VkPhysicalDeviceType type) {
    return type == VK_PHYSICAL_DEVICE_TYPE_CPU ? kThreadBatchSizeCpu : kThreadBatchSizeGpu;
}
// The batch of a thread node that enqueues nothing (a leaf: no output at all), on every device type. Such a node has
// neither allocations nor a hand-off to prepare a level after it, so its workgroups cost their launch and prologue
// alone, and fewer of them do the same work sooner. What made larger batches slower, recursion (its levels grow from
// one record, and every workgroup of a level pays the hand-off), is a node with outputs, which keeps ThreadBatchSizeFor.
// H200, against 64: fan_out_tree -6.6% (-5.6% with 128), large_fan_out_tree -7.8% (-6.9%), thread_launch -1.5%, the
// rest unchanged; the batch of every node 128 took recursion +6.4% (docs/performance.md, "Session of the leaf
// batches"). Clamped, as the setting is, to the device's workgroup limits (maxComputeWorkGroupInvocations may be 128).
inline constexpr uint32_t kLeafThreadBatchSize = 256;

// Which nodes a device lowers with the level hand-off (spirv::LoweringOptions::level_hand_off), the code by which the
// last workgroup of a level prepares a direct next level: every node (std::nullopt), or only nodes that may precede a
// direct level and whose records run at most this many invocations (GraphPipeline building, SelectLevelHandOffs).
// - GPUs: every node. The H200 ran leaves without it no faster, and some slower (raster 3.8%, the 10240x5760
//   classifications 2%; cause not found: the hand-off's code is behind a branch on a push constant that such a node
//   never takes), docs/performance.md, "lavapipe: the level hand-off only where it pays".
// - CPU devices: 64. lavapipe's llvmpipe runs every SIMD group of 8 lanes of every workgroup through all of the
//   hand-off's code with its lanes masked off (about 0.16 µs a group), against about 10 to 20 µs for a level pass and its
//   barrier. A thread or coalescing node (one invocation per record), or a static broadcast node of at most 64
//   invocations per record (a chain step), gains from direct levels after it there; a 256-invocation broadcast node with
//   a dynamic grid of 64 workgroups spent 330 µs in masked hand-off code, and a leaf's hand-off is never used.
inline constexpr uint64_t kHandOffMaxInvocationsPerRecordCpu = 64;
inline constexpr std::optional<uint64_t> HandOffMaxInvocationsPerRecordFor(VkPhysicalDeviceType type) {
    return type == VK_PHYSICAL_DEVICE_TYPE_CPU ? std::optional<uint64_t>(kHandOffMaxInvocationsPerRecordCpu) : std::nullopt;
}
// Where the device sets no limit above (GPUs), every node may get the hand-off's group code
// (LoweringOptions::group_level_hand_off), which makes the level after it direct with a dispatch group as its consumer
// (GraphPlan::FormDispatchGroups). On an H200 a chain of 8-member node arrays ran 33% faster so (`overhead_chain32x8`
// 373.9 -> 251.7 µs), while a classification whose classify workgroups each count themselves (230 400 of them at
// 10240x5760) ran 3 to 4% slower with its shading level direct, although the 1080p one gained 4 to 6%
// (docs/performance.md, "Session of the own-state clears"). Chain steps and small producers run at most this many
// invocations per record and make such levels direct wherever they are; above it (a classify node's dynamic grid runs up
// to 65535^2 workgroups per record) only small levels (NodeDispatchPlan::group_hand_off_needs_small_level).
inline constexpr uint64_t kGroupHandOffMaxInvocationsPerRecordGpu = 64;
// Nodes above that limit get the group code too, and a group level after them is direct only where the host prepared
// level 0 (it knows every record's grid) and level 0 runs at most this many workgroups: each of them pays the
// hand-off's device-scope fence before it counts itself (about 0.12 ns of GPU time per workgroup on an H200, from the
// 10240x5760 classification's 3% on 230 400 workgroups), against about 4 µs for the level pass and barrier that a direct
// level saves (classify_8 and classify_64 at 1080p, 8160 workgroups, 5 to 6% faster; docs/performance.md).
inline constexpr uint32_t kSmallProducerLevelMaxWorkgroups = 16384;
// Fixed levels (runtime::kLevelNextFixedWorkgroupsShift; docs/design.md, "Fixed levels"): a direct level whose records
// the host can bound, from level 0's host-written records through each level's NodeDispatchPlan::records_enqueued_per_record,
// is dispatched with vkCmdDispatch of that many workgroups where they are at most FixedLevelMaxWorkgroupsFor, so that the barrier
// before it needs no DRAW_INDIRECT stage: on NVIDIA that barrier and the indirect dispatch after it cost more than a
// compute-to-compute barrier and a direct dispatch (bench/barrier_floor_bench.cpp; docs/performance.md, "Session of the fixed
// levels"), while each surplus workgroup only loads its record count and counts itself.
// - GPUs: 1024. On an H100 1023 surplus workgroups of a bare dispatch cost 0.24 µs against the DRAW_INDIRECT stage's
//   2.4 µs, and with lowered nodes (whose surplus workgroups also fence and count themselves) 1024 against 64 took the
//   binary trees 2.3 and 3.1% faster, recursion 0.8%, and no row slower (docs/performance.md, "Session of the anchor's
//   binary tree").
// - CPU devices: 64. llvmpipe runs each surplus workgroup's prologue and count on a CPU thread, and its barriers cost
//   little either way.
inline constexpr uint32_t kFixedLevelMaxWorkgroupsGpu = 1024;
inline constexpr uint32_t kFixedLevelMaxWorkgroupsCpu = 64;
inline constexpr uint32_t FixedLevelMaxWorkgroupsFor(VkPhysicalDeviceType type) {
    return type == VK_PHYSICAL_DEVICE_TYPE_CPU ? kFixedLevelMaxWorkgroupsCpu : kFixedLevelMaxWorkgroupsGpu;
}

// Whether a device reserves the Invocation-visibility allocations that every invocation of a broadcast or coalescing
// workgroup reaches once per workgroup (spirv::LoweringOptions::reserve_per_workgroup) or once per subgroup.
// - GPUs: per workgroup. Same-address atomics serialise in the L2; a producer of one record per invocation otherwise
//   spends much of its time there.
// - CPU devices: per subgroup. llvmpipe has no such contention, but runs every SIMD group of 8 lanes of a workgroup
//   through all of the workgroup path (three workgroup barriers, each a switch through the workgroup's coroutines, the
//   shared-memory atomics, and invocation 0's reservation with its lanes masked off): lavapipe's `thread_launch`
//   producer level, 64 workgroups of 256 invocations, took about 600 µs with it and 390 without (docs/performance.md).
inline constexpr bool ReservesPerWorkgroupFor(VkPhysicalDeviceType type) { return type != VK_PHYSICAL_DEVICE_TYPE_CPU; }

// Whether lowered nodes keep one-record allocations of two to eight 16-byte chunks in registers and write a subgroup's
// records transposed (spirv::LoweringOptions::coalesce_record_stores, docs/design.md "Coalesced record stores").
// - GPUs: yes. A store instruction costs by the memory segments its lanes touch; each lane writing its own 64-byte
//   record touched 32 pieces per instruction (docs/performance.md, "Session of the coalesced record stores").
// - CPU devices: no. llvmpipe runs every shuffle and every store through a buffer address as a loop over its lanes
//   (docs/performance.md, "lavapipe: where `thread_launch`'s producer level goes"), so the transpose only adds work.
inline constexpr bool CoalescesRecordStoresFor(VkPhysicalDeviceType type) { return type != VK_PHYSICAL_DEVICE_TYPE_CPU; }

// One indirect dispatch of a level: a node, or a dispatch group of consecutive nodes that share one lowered pipeline
// (docs/design.md, "Dispatch groups"), dispatched together through its first node's arguments.
struct LevelDispatch {
    uint32_t first_node = 0;
    uint32_t group_size = 1;  // 1: first_node alone, with its NodeDispatchPlan::label
    std::string group_label;  // group_size > 1 and debug labels: e.g. "shade[0] .. shade[7] (8 nodes)"
};

// Everything about a graph that RecordDispatch needs and that does not change between dispatches: built once when the
// graph pipeline is created (GraphPipeline::dispatch_plan) and recorded from directly.
struct GraphPlan {
    uint32_t graph_tag = 0;  // as written by RecordInitialize; a mismatch drops all entries with kStatusUninitialized
    ScratchPlan scratch_plan{0, 0, 0};
    std::vector<NodeDispatchPlan> nodes;  // indexed by graph node index; size() is the node count
    // levels[L]: the graph nodes that can have records at level L (static reachability, recursion unrolled), at most
    // maxExecutionGraphDepth levels. Every level runs the level pass(es); only these nodes are dispatched.
    std::vector<std::vector<uint32_t>> levels;
    // Schedule every level with the split passes (prepare, scatter, write_args: four barriers per level) even where the
    // fused level pass applies. For tests of the split passes; graphs beyond the fused limits use them anyway.
    bool force_split_level_passes = false;
    // Filled by FormDispatchGroups(); empty: every node of levels[L] is dispatched alone. Used only with the fused level
    // pass, which is what computes the groups' arguments.
    std::vector<uint32_t> dispatch_group_first, dispatch_group_size;  // per node, for NodeStaticInfo
    std::vector<std::vector<LevelDispatch>> level_dispatches;          // per level
    bool has_dispatch_groups = false;                                  // some group has two or more nodes
    // Filled by FormDispatchGroups(), per level: the node that receives every record of the level, when the level can
    // run as a direct level (docs/design.md, "Direct levels"), else kInvalidNode. A direct level has no level pass:
    // the last workgroup of the level before prepares it (spirv_lowering's LevelHandOffPass; for level 0, the entry
    // pass's), so it follows that level or the entry pass after one barrier.
    std::vector<uint32_t> direct_level_consumer;
    // Filled by FormDispatchGroups(), per level: the level is direct (direct_level_consumer) with a node of the level
    // before whose group hand-off needs a small level (NodeDispatchPlan::group_hand_off_needs_small_level); RecordDispatch
    // then runs it direct only after a level 0 of at most kSmallProducerLevelMaxWorkgroups workgroups that the host prepared.
    std::vector<uint8_t> direct_level_needs_small_producers;
    // Filled by FormDispatchGroups(), per level: the first member of the dispatch group that receives every record of
    // the level, when its members are static broadcast nodes that read only their records' payload offsets and depths
    // (NodeDispatchPlan::reads_record_list) and no node shares their input, else kInvalidNode. The level pass (one
    // workgroup) then lets the record list serve as the group's directory, in the order the producers appended, and
    // scatters nothing: the group's workgroups read their record at group_directory_base + workgroup / grid and find
    // their member in it (meta_shaders/level.comp, LevelParams::list_directory_group).
    std::vector<uint32_t> list_directory_group;
    // Whether direct level `level`'s consumer is the dispatch group list_directory_group[level] names (its first member)
    // rather than one node: the hand-off then prepares the whole group (runtime::kDirectLevelGroupConsumer).
    bool DirectLevelIsGroup(size_t level) const;
    // The node table and output table exactly as RecordInitialize writes them (empty: not known, as in tests that build
    // plans by hand). With them a vkCmdDispatchGraphAMDX whose level 0 is direct, or one dynamic broadcast node, can
    // rewrite both with its begin transfers and prepare level 0 on the host, so that no meta pass runs before level 0's
    // node (RecordDispatch; layer/scheduler.cpp, HostLevelZero).
    std::vector<runtime::NodeStaticInfo> node_table;
    std::vector<uint32_t> output_table;

    // Groups runs of consecutive nodes with the same pipeline, layout and context offset that do not share another
    // node's input, when the graph uses the fused level pass, and lists each level's dispatches. Call once nodes, levels
    // and labels are final.
    void FormDispatchGroups();
    uint32_t node_count() const { return static_cast<uint32_t>(nodes.size()); }
    uint32_t sharing_node_count() const;
    // One meta dispatch and two barriers per level (level.comp), rather than three and four.
    bool UsesFusedLevelPass() const;
    // Records can be left after the last level: there are entries but no level, or a node of the last level has an
    // output. Otherwise the leftover check has nothing to find and the finish pass skips it (and is not recorded at all
    // without a report slot).
    bool NeedsLeftoverCheck() const;
};

// Where a dispatch's report goes (layer/dispatch_reports.h: DispatchReporter::Reserve hands these out): a slot of a
// host-visible ring, written through a buffer device address by the finish pass or, where the last level's nodes have
// no outputs, by the meta pass that prepares that level (RecordDispatch; meta_shaders/level_common.glsl, WriteReport).
// Slot layout: the serial (one uint32_t, written last, after everything else is in place), GraphHeader at
// kReportSlotHeaderOffset, then NodeStats[stats_count] at kReportSlotStatsOffset.
struct ReportSlot {
    VkDeviceAddress address = 0;  // 16-byte aligned; 0: no report
    uint32_t serial = 0;          // nonzero
    uint32_t stats_count = 0;     // the graph's node count, or 0 for a report from the header alone
    // Copy the NodeStats only when the dispatch dropped work (the header says so): without the `statistics` setting
    // nothing else reads them, and writing a large graph's statistics into host memory costs the finish pass about
    // 14 µs for 1024 nodes on an H100.
    bool stats_only_on_drops = false;
    // With the `level_timestamps` setting: DispatchTimestampCount(levels) timestamp queries of this pool from
    // first_timestamp on, which the dispatch resets and writes (VK_NULL_HANDLE: none).
    VkQueryPool timestamp_pool = VK_NULL_HANDLE;
    uint32_t first_timestamp = 0;
};
// The timestamps of one dispatch of a plan with `levels` levels, each written with VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
// so at the moment all work recorded before it has completed:
//   [0]            before the dispatch's first command (the application's earlier work done)
//   [1 + 2 L]      level L begins: the step before it (begin transfers and entry pass for L = 0, else level L - 1's node
//                  dispatches) has completed
//   [2 + 2 L]      level L is prepared: its level pass (or split passes) has completed; right after [1 + 2 L] for a
//                  level without one (a direct level, or a level 0 the host prepared)
//   [1 + 2 levels] after the dispatch's last barrier: the last level and the finish pass have completed
inline constexpr uint32_t DispatchTimestampCount(size_t levels) { return 2 * static_cast<uint32_t>(levels) + 2; }
inline constexpr VkDeviceSize kReportSlotHeaderOffset = 16;  // keep in sync with meta_shaders/level_common.glsl
inline constexpr VkDeviceSize kReportSlotStatsOffset = kReportSlotHeaderOffset + sizeof(runtime::GraphHeader);
inline constexpr VkDeviceSize ReportSlotSize(uint32_t stats_count) {
    return (kReportSlotStatsOffset + VkDeviceSize(stats_count) * sizeof(runtime::NodeStats) + 15) / 16 * 16;
}

// Prepared levels for RecordDispatch (the `prepared_levels` setting; layer/prepared_levels.h says why): the levels'
// commands are recorded through the table Begin returns, which captures them, and Execute puts them into the command
// buffer, as one vkCmdExecuteCommands of a prepared secondary command buffer where it can.
class PreparedLevelRecorder {
  public:
    virtual ~PreparedLevelRecorder() = default;
    virtual const DeviceDispatchTable* Begin() = 0;
    // Called after the dispatch's last command: a secondary executed leaves the command buffer's state undefined, which
    // the caller binds again as after any dispatch.
    virtual void Execute(VkCommandBuffer cmd) = 0;
};
// A dispatch prepares its levels only where it has at least this many: below it the capture and the lookup cost about
// what they save.
inline constexpr uint32_t kPreparedLevelsMin = 2;

// What changes between dispatches of one graph.
struct DispatchOptions {
    // Called before the first node dispatch of each level and before every node whose layout or context offset differs
    // from the previous node's, after the node's pipeline is bound and before its NodePushContext is pushed: binds the
    // application's descriptor sets and pushes its constants with the node's layout. May be empty. Nodes that share a
    // layout keep what it pushed (push constants survive pipeline binds between identical layouts), so it must push the
    // same for all of them. The meta passes between levels push their own constants (with the meta layout) into the
    // same push-constant bytes, hence once per level; descriptor sets stay bound (meta layouts have no sets), so they are
    // bound where `bind_sets` says so: at the first call of a dispatch, and again after prepared levels left the command
    // buffer's state undefined. Records through `commands` (a capture table while levels are being prepared).
    std::function<void(const DeviceDispatchTable& commands, VkCommandBuffer, uint32_t node, bool bind_sets)> bind_node_state;
    // Wrap each level in a "level N" debug-utils label region and each node dispatch in one named NodeDispatchPlan::label
    // (a dispatch group's in its LevelDispatch::group_label),
    // so that debuggers show the graph as named compute dispatches. Only when the application enabled VK_EXT_debug_utils
    // on its instance (the label commands are not valid otherwise) and the dispatch table has both label commands.
    bool debug_labels = false;
    // Where the dispatch writes its GraphHeader and NodeStats (address 0: nowhere).
    ReportSlot report;
    // Run the plan's direct levels without a level pass (GraphPlan::direct_level_consumer); false: every level has one
    // (the `direct_levels` setting, for comparisons and as a way around a suspected problem).
    bool direct_levels = true;
    // Dispatch a direct level whose workgroups the host can bound by at most this many with that many workgroups, without
    // indirect arguments (FixedLevelMaxWorkgroupsFor; 0: never, the `fixed_levels` setting off).
    uint32_t fixed_level_max_workgroups = 0;
    // The latest vkCmdInitializeGraphScratchMemoryAMDX the application recorded for this scratch address was for this
    // graph (ScratchBufferRegistry::LatestInitializationIs). A dispatch whose report could say nothing else then writes
    // none: one level, prepared by the host on tables it rewrote, of nodes without outputs, without statistics. Such a
    // report flags only scratch that was not initialized for the graph, which cannot change what the dispatch does.
    bool initialization_recorded = false;
    // Where set, everything from the first level to the end barrier goes through it (PreparedLevelRecorder), in
    // dispatches of at least kPreparedLevelsMin levels. Not with level timestamps, whose queries differ per dispatch.
    PreparedLevelRecorder* prepared_levels = nullptr;
};

// Where the entry records of a dispatch come from (facts §12.2).
struct EntrySource {
    enum class Kind {
        kDeviceCountInfo,  // vkCmdDispatchGraphIndirectCountAMDX: count info, infos and payloads in device memory
        kHostCountInfo,    // vkCmdDispatchGraphIndirectAMDX: count info on the host, infos and payloads on the device
        kHostInfos,        // vkCmdDispatchGraphAMDX: everything on the host, copied into scratch at record time
    };
    Kind kind = Kind::kDeviceCountInfo;
    VkDeviceAddress count_info_address = 0;     // kDeviceCountInfo
    VkDispatchGraphCountInfoAMDX count_info{};  // kHostCountInfo, kHostInfos (only read during the Record call)

    static EntrySource DeviceCountInfo(VkDeviceAddress address) {
        EntrySource source;
        source.kind = Kind::kDeviceCountInfo;
        source.count_info_address = address;
        return source;
    }
    static EntrySource HostCountInfo(const VkDispatchGraphCountInfoAMDX& count_info) {
        EntrySource source;
        source.kind = Kind::kHostCountInfo;
        source.count_info = count_info;
        return source;
    }
    static EntrySource HostInfos(const VkDispatchGraphCountInfoAMDX& count_info) {
        EntrySource source;
        source.kind = Kind::kHostInfos;
        source.count_info = count_info;
        return source;
    }
};

struct RecordResult {
    VkResult result = VK_SUCCESS;  // not VK_SUCCESS: nothing was recorded, `error` says why
    std::string error;
    // kHostInfos only: payloads that did not fit the staging area (half 1's heap). They are also in the dispatch's
    // GraphHeader (dropped_records, kStatusHeapOverflow), like every other drop.
    uint32_t host_dropped_records = 0;
    // kHostInfos only: the begin transfers wrote level 0's records and no entry pass was recorded (HostLevelZero in
    // scheduler.cpp).
    bool host_wrote_level_zero = false;
    // ... and the host also prepared level 0's dispatch (a direct level 0, or one dynamic broadcast node) and rewrote the
    // tables it reads, so level 0 runs correctly whatever scratch held. With all of both tables rewritten, so does the
    // rest of the dispatch; with only level 0's, level 1's pass checks initialization. Either way the report flags scratch
    // that was not initialized for the graph.
    bool host_prepared_level_zero = false;
    // The dispatch wrote nothing into DispatchOptions::report's slot (DispatchOptions::initialization_recorded): the caller
    // releases the slot.
    bool report_left_out = false;
};

// Stateless apart from the references it holds; one per device, usable from any thread (each call records into the
// command buffer it is given, which the application externally synchronizes).
class SchedulerRecorder {
  public:
    // `use_synchronization2`: record barriers with vkCmdPipelineBarrier2 (needs the synchronization2 feature enabled on
    // the device) or, when false, the equivalent vkCmdPipelineBarrier.
    // `level_pass_records_per_workgroup`: GraphHeader::level_pass_records_per_workgroup (LevelPassRecordsPerWorkgroupFor).
    // `indirect_level_pass`: dispatch the fused level pass indirectly (LevelPassDispatchedIndirectlyFor).
    // `finish_pass_reports`: a finish pass writes every report (FinishPassReportsFor), not the last level's preparer.
    SchedulerRecorder(const DeviceDispatchTable* dispatch, MetaPipelines* pipelines, bool use_synchronization2 = true,
                      uint32_t level_pass_records_per_workgroup = kLevelPassRecordsPerWorkgroupGpu,
                      bool indirect_level_pass = false, bool finish_pass_reports = false);

    // vkCmdInitializeGraphScratchMemoryAMDX: writes the GraphHeader (magic, graph_tag, capacities for scratch.size,
    // cleared counters and status), NodeStaticInfo[] and the output tables, and clears both halves' counters. Uses
    // vkCmdUpdateBuffer, bracketed by barriers so that it orders like the spec's compute-stage accesses.
    RecordResult RecordInitialize(VkCommandBuffer cmd, const ScratchBinding& scratch, const ScratchPlan& plan, uint32_t graph_tag,
                                  std::span<const runtime::NodeStaticInfo> nodes, std::span<const uint32_t> output_table);

    // vkCmdDispatchGraph*AMDX: begin (header, counters, staged entries), the entry pass, then per level the level pass
    // (or prepare -> scatter -> write_args) -> node dispatches, then the finish pass (leftover check, report) where one is
    // needed. The header's status, counters and high-water marks and the NodeStats array are reset at the start of each
    // dispatch, so after it they describe this dispatch alone.
    RecordResult RecordDispatch(VkCommandBuffer cmd, const ScratchBinding& scratch, const GraphPlan& plan,
                                const EntrySource& entries, const DispatchOptions& options = {});

  private:
    void UpdateBuffer(VkCommandBuffer cmd, VkBuffer buffer, VkDeviceSize offset, const void* data, size_t size) const;
    // Zeroes [offset, offset + size) (4-byte multiples): with inline zeros through vkCmdUpdateBuffer up to
    // kInlineZeroMaxBytes, with vkCmdFillBuffer beyond (scheduler.cpp says why).
    void ZeroBytes(VkCommandBuffer cmd, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size) const;
    void Barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stages, VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stages,
                 VkAccessFlags2 dst_access) const;
    void RunMeta(VkCommandBuffer cmd, VkPipeline pipeline, VkPipelineLayout layout, const void* params, uint32_t params_size,
                 uint32_t workgroups) const;
    void BeginLabel(VkCommandBuffer cmd, const std::string& text) const;
    // Clears the counters and node states of halves first_half..1 (transfers). With indirect level passes the counters'
    // level_pass_workgroups and the two words after it start at 1, the pass's VkDispatchIndirectCommand; else all zero.
    void ClearHalves(VkCommandBuffer cmd, const ScratchBinding& scratch, const ScratchLayout& layout, uint32_t first_half) const;
    struct SplitPipelines {
        VkPipeline prepare, scatter, write_args;
        VkPipelineLayout layout;
    };
    // prepare -> barrier -> scatter (+ one per sharing node) -> barrier -> write_args: the level's scheduling for graphs
    // beyond the fused level pass's limits.
    void RecordSplitLevelPasses(VkCommandBuffer cmd, const GraphPlan& plan, VkDeviceAddress scratch, uint32_t input_half,
                                uint32_t level, const SplitPipelines& pipelines, uint32_t scatter_workgroups) const;

    const DeviceDispatchTable* dispatch_;
    MetaPipelines* pipelines_;
    bool use_synchronization2_;
    uint32_t level_pass_records_per_workgroup_;
    bool indirect_level_pass_;
    bool finish_pass_reports_;
};

}  // namespace execgraph
