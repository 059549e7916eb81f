// The runtime contract between lowered node shaders, the scheduler's meta shaders and the layer: how a graph dispatch
// lays out the application's scratch memory. meta_shaders/scratch_layout.glsl mirrors this file; a test checks they agree.
// docs/design.md, "Runtime contract", explains the flow.
//
// All offsets are bytes. Everything is reached through buffer device addresses from the scratch base address, which
// every lowered node and meta shader receives in its push constants (NodePushContext).
#pragma once

#include <cstdint>

namespace execgraph::runtime {

inline constexpr uint32_t kInvalidNode = 0xFFFFFFFFu;
inline constexpr uint32_t kScratchMagic = 0x52475845u;  // "EXGR": written by vkCmdInitializeGraphScratchMemoryAMDX

// Pushed after the application's own push constants, at an 8-byte aligned offset (LoweringOptions::context_offset).
// The node-specific words come here rather than as constants of the lowered module, so that nodes lowered from the same
// source share one module and one VkPipeline (docs/design.md, "How a node receives its scheduler context"). The
// level's words are known when the dispatch is recorded (level L reads half L % 2, and which levels are direct is fixed
// per plan), so a lowered workgroup starts from them instead of loading them from GraphHeader: every such load is a
// round trip that all of the workgroup's later loads wait for.
struct NodePushContext {
    uint64_t scratch_address;
    uint32_t node_index;         // the node's graph index (NodeState/NodeStaticInfo/NodeStats index); for a dispatch
                                 // group, its first node
    uint32_t output_table_base;  // the node's first entry in the output table; output i starts at
                                 // output_table_base + LoweringOptions::output_table_index[i]. kDispatchGroupMarker: the
                                 // dispatch runs the whole dispatch group that starts at node_index (see NodeState)
    uint32_t input_half_offset;   // GraphHeader::half_offset[level % 2]: the HalfHeader this level reads
    uint32_t output_half_offset;  // GraphHeader::half_offset[1 - level % 2]: the half this level's outputs go to
    uint32_t level;               // GraphHeader::level while this dispatch runs, | kLevelRecordListIsDirectory, | the next
                                  // level's fixed workgroups << kLevelNextFixedWorkgroupsShift
    uint32_t next_level_consumer;  // GraphHeader::direct_level_consumer[level + 1] (kInvalidNode past the last level),
                                   // | kDirectLevelGroupConsumer where that level is a dispatch group's
};
static_assert(sizeof(NodePushContext) == 32);

// Set in NodePushContext::level where the level is direct (GraphPlan::direct_level_consumer): whoever prepared it (the
// last workgroup of the level before, the entry pass or the host) made the input half's record list, from entry 0 on,
// the directory of the level's consumer or of its dispatch group (docs/design.md, "Direct levels"), so the consumer may
// find its entry there without loading its directory base first. Levels stay far below it (kMaxLevels).
inline constexpr uint32_t kLevelRecordListIsDirectory = 0x80000000u;
// Set in NodePushContext::level where the level is direct with one consumer (not a dispatch group) whose records the
// level before placed by index (kDirectLevelRecordsByIndex): record r of the level lies at heap offset r * the
// consumer's input record stride (LoweringOptions::input_record_stride) and has no RecordEntry, and every record's
// recursion depth is the same, in the bits from kLevelRecordsByIndexDepthShift (docs/design.md, "Records by index").
inline constexpr uint32_t kLevelRecordsByIndex = 0x40000000u;
inline constexpr uint32_t kLevelRecordsByIndexDepthShift = 24;
inline constexpr uint32_t kLevelRecordsByIndexDepthMask = 0x3Fu;
// Bits 8 to 23 of NodePushContext::level: where the next level is a fixed level, the workgroups the scheduler records
// its node dispatch with (vkCmdDispatch), else 0. A fixed level is a direct level whose consumer's records have a bound
// the host knows (level 0's host-written records, times what each record of the levels before may enqueue:
// NodeMaxPayloadsAMDX), small enough to launch whole whether or not the records are there; its surplus workgroups return
// at once. Its dispatch reads no arguments, so the barrier before it has no DRAW_INDIRECT stage (docs/design.md, "Fixed
// levels"). The level hand-off that prepares it launches exactly these workgroups (GraphHeader::level_workgroups) and
// drops, reported, the records they cannot run (a shader that enqueued more than its NodeMaxPayloadsAMDX allow).
inline constexpr uint32_t kLevelNextFixedWorkgroupsShift = 8;
inline constexpr uint32_t kLevelNextFixedWorkgroupsMax =
    (1u << (kLevelRecordsByIndexDepthShift - kLevelNextFixedWorkgroupsShift)) - 1;
// The level's number: levels stay below kMaxLevels.
inline constexpr uint32_t kLevelNumberMask = (1u << kLevelNextFixedWorkgroupsShift) - 1;
// Set in NodePushContext::next_level_consumer where the next level is direct with a dispatch group of static broadcast
// members as its consumer (the rest of the word is the group's first member): every record of that level reaches one of
// them, the record list is the group's directory, and the level hand-off writes the group's arguments and each member's
// statistics (docs/design.md, "Direct levels"). Graph node indices stay far below it (kFusedLevelMaxNodes).
inline constexpr uint32_t kDirectLevelGroupConsumer = 0x80000000u;
// Set with a direct consumer where the dispatch's report keeps the statistics line's per-node records, dispatches and
// workgroups (as the level pass's kLevelKeepStatistics): only then does the hand-off update the consumer's NodeStats, or
// visit a group's members one after the other in one invocation for theirs. Nothing else reads those three words (a
// drop report reads the drop words, which the allocations count with atomics), so without the statistics setting a
// chain step neither loads nor stores them. The group's arguments come from the half's record count alone.
inline constexpr uint32_t kDirectLevelStatistics = 0x40000000u;
// Set in NodePushContext::next_level_consumer where this level is the one node dispatch that pushes it (one node, or one
// dispatch group). The input half then holds no NodeState but that node's or group's that is not already clear: the
// level's preparer writes the states of nodes with records at the level, its producers counted records only for
// nodes of the level (levels list every node a record can reach), and the halves start clear and are cleared after
// every level. So the last workgroup clears only those (1 or the group's size) instead of all node_count states: one
// invocation of a chain step cleared a 256-node graph's 768 vectors one after the other at every level.
inline constexpr uint32_t kDirectLevelClearsOwnStates = 0x20000000u;
// Set with a group consumer where the dispatch's begin rewrote only level 0's consumer's tables (the scheduler's
// TablesRewrite::kLevelZeroConsumer), so that nothing has yet checked that scratch holds this graph's node and output
// tables, which level 1's members read. The last workgroup then checks it as a level pass would (GraphHeader's magic,
// graph_tag and tables_tag against dispatch_graph_tag) and, where scratch was not initialized for the graph, runs no
// workgroup at level 1 and reports its records dropped (kStatusUninitialized) instead of running nodes on stale tables.
inline constexpr uint32_t kDirectLevelChecksInitialization = 0x10000000u;
// Set with a single direct consumer (not a dispatch group) where the scheduler runs the next level with records by
// index (kLevelRecordsByIndex): every record this level allocates is that consumer's, so an allocation places its
// records at heap offset slot * stride, from the record slots its reservation took, and writes no RecordEntry. The heap
// offset then needs no list entry to carry it, and the consumer none to find it: a 16-byte store per record fewer here
// and a dependent load fewer before every record's payload there. The layer sets it only where every output that can
// reach the consumer allocates with the consumer's input stride, the graph reserves heap and list with one atomic
// (LoweringOptions::heap_holds_record_list), and the records' depths are known to the host (docs/design.md, "Records by
// index").
inline constexpr uint32_t kDirectLevelRecordsByIndex = 0x08000000u;
inline constexpr uint32_t kDirectLevelConsumerMask =
    ~(kDirectLevelGroupConsumer | kDirectLevelStatistics | kDirectLevelClearsOwnStates | kDirectLevelChecksInitialization |
      kDirectLevelRecordsByIndex);

// NodePushContext::output_table_base of a dispatch-group dispatch. No real table base reaches it (the output table is
// indexed with 32-bit entries in scratch, far below 4 G entries).
inline constexpr uint32_t kDispatchGroupMarker = 0xFFFFFFFFu;

// status_flags bits: set by whoever drops work; read back and reported by the layer (nothing is lost silently).
enum StatusFlag : uint32_t {
    kStatusHeapOverflow = 1u << 0,         // payload heap full: records dropped
    kStatusRecordListOverflow = 1u << 1,   // record list full: records dropped
    kStatusDepthLimit = 1u << 2,           // records left when the last level ran
    kStatusGridClamped = 1u << 3,          // a dynamic grid exceeded MaxNumWorkgroupsAMDX or the advertised limits
    kStatusInvalidNodeIndex = 1u << 4,     // an allocation or entry named no node in the graph
    kStatusUninitialized = 1u << 5,        // scratch was not initialized for this graph
    kStatusPayloadCountClamped = 1u << 6,  // an allocation asked for more records than NodeMaxPayloadsAMDX (or 256)
    kStatusFixedLevelExceeded = 1u << 7,   // a fixed level got more records than its producers' NodeMaxPayloadsAMDX allow
};

// maxExecutionGraphShaderPayloadCount as advertised: the most records one allocation can deliver, whatever its output's
// NodeMaxPayloadsAMDX says (lowered allocations clamp to min(NodeMaxPayloadsAMDX, this)).
inline constexpr uint32_t kMaxPayloadsPerAllocation = 256;

// Offset 0 of scratch. Written at the start of every graph dispatch (vkCmdUpdateBuffer) except the fields the
// meta shaders maintain (input_half, level, status, counters).
struct GraphHeader {
    uint32_t magic;             // kScratchMagic once initialized
    uint32_t graph_tag;         // identifies the execution graph pipeline scratch was initialized for
    uint32_t node_count;
    uint32_t input_half;        // which half the nodes of the current level read (0 or 1); the other half receives outputs
    uint32_t level;             // current level, 0 for the entry nodes
    uint32_t status_flags;      // StatusFlag bits
    uint32_t dropped_records;   // total records dropped (atomic)
    uint32_t heap_high_water;   // largest heap_top of either half in this dispatch (atomicMax; past heap_capacity on overflow)
    uint32_t record_capacity;   // record-list and directory entries per half
    uint32_t heap_capacity;     // payload heap bytes per half
    uint32_t node_table_offset;  // NodeStaticInfo[node_count], from scratch base
    uint32_t output_table_offset;  // uint32 target-node entries, from scratch base
    uint32_t trash_offset;      // where dropped allocations write, from scratch base
    uint32_t trash_size;
    uint32_t half_offset[2];    // HalfHeader of each half, from scratch base
    uint32_t node_stats_offset;  // NodeStats[node_count], from scratch base
    uint32_t levels_run;         // levels of this dispatch that had records (prepare pass)
    uint32_t record_high_water;  // largest record_count of either half in this dispatch (prepare pass; past capacity on overflow)
    // Records each fused level-pass workgroup scatters: producers size the level pass that reads their half by it
    // (HalfHeader::level_pass_workgroups). Written at the start of every dispatch.
    uint32_t level_pass_records_per_workgroup;
    // Direct levels (docs/design.md, "Direct levels"): workgroups launched by the node dispatches of the level that reads
    // half h, written by whoever prepares that level (the level pass, or the previous level's last workgroup). The
    // lowered nodes count their finished workgroups against it (HalfHeader::level_pass_done of their input half).
    uint32_t level_workgroups[2];
    // For each level L < kMaxLevels: the node that consumes all of level L's records when the scheduler runs L as a
    // direct level (no level pass: the last workgroup of level L - 1 prepares it), else kInvalidNode. Written at the
    // start of every dispatch.
    uint32_t direct_level_consumer[32];
    // The dispatch's report (layer/scheduler.h, ReportSlot), which the finish pass writes, or where there is none the pass
    // that prepares level `report_level` (kInvalidNode when the finish pass writes it; WriteReport in
    // meta_shaders/level_common.glsl): the ring slot's address (0: none), its serial, and the NodeStats it takes (count, |
    // kStatsOnlyOnDrops). Written at the start of every dispatch, so that the passes that write the report record the
    // same commands in every dispatch.
    uint64_t report_slot;
    uint32_t report_serial;
    uint32_t report_stats;
    uint32_t report_level;
    // The graph this dispatch runs (its pipeline's tag), written at the start of every dispatch. A level hand-off that
    // checks initialization (kDirectLevelChecksInitialization) compares graph_tag and tables_tag with it.
    uint32_t dispatch_graph_tag;
    // The graph whose node table and output table scratch holds: written with graph_tag by initialization, and by a
    // dispatch whose begin transfers rewrite both tables (layer/scheduler.cpp, HostLevelZero with a direct level 0).
    // graph_tag alone then still says what initialization was for, and a check for this graph needs both to match:
    // after another graph's dispatch rewrote the tables of scratch initialized for this one, they are not this graph's.
    uint32_t tables_tag;
    uint32_t reserved[3];
};
static_assert(sizeof(GraphHeader) == 256);
// maxExecutionGraphDepth as advertised: a graph has at most this many levels (GraphHeader::direct_level_consumer).
inline constexpr uint32_t kMaxLevels = 32;
static_assert(kMaxLevels - 1 <= kLevelNumberMask, "level numbers must fit below the fixed workgroups in NodePushContext::level");
static_assert(kMaxLevels - 1 <= kLevelRecordsByIndexDepthMask,
              "a recursion depth (below kMaxLevels) must fit its bits of the level");
static_assert((kLevelRecordsByIndexDepthMask << kLevelRecordsByIndexDepthShift) < kLevelRecordsByIndex);
static_assert(sizeof(GraphHeader::direct_level_consumer) == kMaxLevels * sizeof(uint32_t));

// Per node and per dispatch (cleared at the start of every graph dispatch): what the node ran and what it lost. The layer
// reads these back after each dispatch for the dropped-work report and the `statistics` setting (docs/reliability.md).
// A drop is charged to the node that loses the records (the allocation's target, the entry's node, the node whose grid
// or level overflowed), except allocations that name no node or ask for too many records: those are charged to the
// allocating node.
struct NodeStats {
    uint32_t records;          // records this node consumed, summed over levels (prepare pass)
    uint32_t dispatches;       // levels in which this node ran at least one workgroup (args pass)
    uint32_t workgroups;       // workgroups it ran, summed over levels, saturating at 0xFFFFFFFF (args pass)
    uint32_t dropped_records;  // records charged to this node that were dropped (atomicAdd)
    uint32_t drop_flags;       // StatusFlag bits of those drops, and kStatusGridClamped for grids cut without a drop (atomicOr)
    uint32_t first_drop_level_complement;  // ~(lowest level with a drop) by atomicMax, so that zero-filled means "none"
    uint32_t reserved[2];
};
static_assert(sizeof(NodeStats) == 32);

// Per node, written at initialization; read by the meta shaders (and usable by lowered shaders).
struct NodeStaticInfo {
    uint32_t launch;                 // spirv::LaunchKind
    uint32_t record_stride;          // input record bytes in the heap (size rounded up to 4; 0 for empty records)
    uint32_t static_grid[3];         // kBroadcastStatic grid; max grid for kBroadcastDynamic
    uint32_t grid_offset;            // kBroadcastDynamic: byte offset of the grid member in the record
    uint32_t grid_components;        // 1..3
    uint32_t grid_component_bits;    // 16 or 32
    uint32_t records_per_workgroup;  // kCoalescing: NodeMaxPayloadsAMDX; kThread: the batch size; else 0
    uint32_t max_recursion;          // MaxNodeRecursionAMDX, 0 if none
    uint32_t shares_input_with;      // graph node whose records this node also consumes, or kInvalidNode
    uint32_t is_api_entry;
    uint32_t shader_index;  // BuiltIn ShaderIndexAMDX: the node's array index (API override applied)
    uint32_t output_table_base;  // as NodePushContext::output_table_base; read by dispatch-group dispatches
    // Dispatch group (docs/design.md, "Dispatch groups"): consecutive graph nodes that share one lowered pipeline and are
    // dispatched together, with one indirect dispatch per level, so that nodes without work cost nothing. Every member
    // holds the group's first node and size; a node outside any group holds itself and 1 (0 is read as 1).
    uint32_t dispatch_group_first;
    uint32_t dispatch_group_size;
};
static_assert(sizeof(NodeStaticInfo) == 64);

// sizeof(HalfHeader): one L2 line of counters (see its padding).
inline constexpr uint32_t kHalfHeaderBytes = 128;

// Start of each half. Producers (nodes of level L, or the entry pass) write the half that is not input_half.
struct HalfHeader {
    uint32_t heap_top;      // bytes allocated in this half's heap (atomic bump)
    uint32_t record_count;  // entries appended to this half's record list (atomic)
    uint32_t level_pass_done;  // workgroups of the fused level pass (or the finish pass) that finished reading this half
                               // (atomic; 0 between passes)
    // Workgroups of the fused level pass that reads this half: 1 when the half is cleared (0 only where the scheduler
    // zero-fills a GPU's halves), and each producer that appends past a multiple of
    // GraphHeader::level_pass_records_per_workgroup raises it to cover its records (atomicMax), so that the pass runs
    // one workgroup per that many records (at least one). On GPUs the scheduler launches enough workgroups for a full
    // record list and the others return at once; a CPU device runs every workgroup through all of the pass's code, so
    // there the pass is dispatched indirectly, with this word and the two after it as its VkDispatchIndirectCommand.
    uint32_t level_pass_workgroups;
    uint32_t level_pass_dispatch_y;  // 1 where the level pass is dispatched indirectly (CPU devices), else unused
    uint32_t level_pass_dispatch_z;  // 1 likewise
    // The counters above take one atomic from every producing workgroup or subgroup of a level. Padded to a whole L2
    // line (128 bytes on the GPUs measured), they share no line with the NodeState array, whose words the level's
    // other atomics hit: packed (16 bytes), the fan-out rows ran 4 to 6% slower on an H200 (docs/performance.md).
    uint32_t padding[kHalfHeaderBytes / 4 - 6];
    // followed by: NodeState nodes[node_count]; RecordEntry records[record_capacity];
    //              DirectoryEntry directory[record_capacity]; heap bytes[heap_capacity] (16-byte aligned)
};
static_assert(sizeof(HalfHeader) == kHalfHeaderBytes);
// Halves start 64-byte aligned (ScratchPlan), so the NodeState array starts 16-byte aligned and is cleared in 16-byte
// stores (ClearNodeStates in meta_shaders/scratch_layout.glsl, the lowered level hand-off).
static_assert(sizeof(HalfHeader) % 16 == 0);

struct NodeState {
    uint32_t record_count;     // producers: atomicAdd per allocated record for this node
    uint32_t directory_base;   // prepare pass: exclusive prefix sum of record_count in graph-node order
    uint32_t workgroup_count;  // scatter pass: workgroups this node needs at this level
    uint32_t dispatch[3];      // VkDispatchIndirectCommand for this node (x ≤ 65535; y splits larger counts)
    uint64_t scatter_cursor;   // scatter pass: high 32 bits count records, low 32 bits count workgroups (one 64-bit atomic)
    // Level pass, for members of a dispatch group: the node's first workgroup within its group's dispatch (the exclusive
    // prefix sum of the members' workgroup_count). The first member's dispatch[] then holds the whole group's
    // VkDispatchIndirectCommand, and a lowered node finds its member by binary search over these.
    uint32_t group_first_workgroup;
    // Level pass, for the first member of a dispatch group of static broadcast nodes, whose workgroups run each record's
    // grid one record after the other in directory order: where the group's directory range starts (the members' ranges
    // lie one after the other, in member order) and how many workgroups the group runs. A workgroup w of the group's
    // dispatch then reads directory entry group_directory_base + w / grid, whose DirectoryEntry::first_workgroup_or_node
    // names its member: no search over the members.
    uint32_t group_directory_base;
    uint32_t group_workgroups;
    uint32_t reserved;
};
static_assert(sizeof(NodeState) == 48 && sizeof(NodeState) % 16 == 0);

// The first three members match DirectoryEntry's, so that a level whose records all go to one thread or coalescing node
// uses its record list as that node's directory (those nodes read nothing else of their entries; level.comp), and a
// direct level's static broadcast consumer does too (docs/design.md, "Direct levels").
struct RecordEntry {
    uint32_t payload_offset;   // from the start of this half's heap
    uint32_t recursion_depth;  // how many self-enqueues led here (RemainingRecursionLevels = max_recursion - depth)
    uint32_t node;             // graph node index that consumes the record
    uint32_t reserved;         // 0 (read as DirectoryEntry::finish_counter when the list is the directory)
};
static_assert(sizeof(RecordEntry) == 16);

struct DirectoryEntry {
    uint32_t payload_offset;
    uint32_t recursion_depth;
    // Dynamic broadcast nodes: the first linear workgroup of this record (ascending within a node), which the node's
    // workgroups search for theirs. Every other node: the graph node the entry belongs to, as RecordEntry::node (a
    // static broadcast record's first workgroup is its slot times the grid, so nothing needs it stored; a workgroup of a
    // dispatch group reads its member here).
    uint32_t first_workgroup_or_node;
    uint32_t finish_counter;   // workgroups of this record that have not yet called OpFinishWritingNodePayloadAMDX
};
static_assert(sizeof(DirectoryEntry) == 16);

// Dispatch shape for `workgroups` linear workgroups: x ≤ 65535 (the spec's guaranteed maxComputeWorkGroupCount),
// y = ceil(workgroups / 65535). A shader's linear workgroup is WorkgroupId.y * 65535 + WorkgroupId.x, and workgroups
// past the total return at once (uniformly for the whole workgroup).
inline constexpr uint32_t kDispatchSplitWidth = 65535;

}  // namespace execgraph::runtime
