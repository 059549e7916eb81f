// GLSL mirror of spirv_lowering/include/execgraph/runtime/scratch_layout.h (the single source of truth; docs/design.md,
// "Runtime contract"). tests/scheduler/layout_consistency_test.cpp checks both ways that this file and the C++ header
// agree: the k*Offset constants below against offsetof(), and the buffer_reference structs by writing every field from a
// shader and reading the bytes back through the C++ structs.
//
// Every meta shader reaches scratch through buffer device addresses from the scratch base address it receives in push
// constants; nothing is bound through descriptors.
#ifndef EXECGRAPH_SCRATCH_LAYOUT_GLSL
#define EXECGRAPH_SCRATCH_LAYOUT_GLSL

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require

const uint kInvalidNode = 0xFFFFFFFFu;
const uint kScratchMagic = 0x52475845u;
const uint kDispatchSplitWidth = 65535u;
// maxExecutionGraphWorkgroups / maxExecutionGraphWorkgroupCount as advertised (docs/design.md, "Advertised limits").
const uint kMaxGraphWorkgroups = 16777215u;
const uint kMaxGraphWorkgroupCount = 65535u;
// maxExecutionGraphDepth as advertised: levels per graph (GraphHeader.direct_level_consumer).
const uint kMaxLevels = 32u;

// StatusFlag
const uint kStatusHeapOverflow = 1u << 0;
const uint kStatusRecordListOverflow = 1u << 1;
const uint kStatusDepthLimit = 1u << 2;
const uint kStatusGridClamped = 1u << 3;
const uint kStatusInvalidNodeIndex = 1u << 4;
const uint kStatusUninitialized = 1u << 5;
const uint kStatusPayloadCountClamped = 1u << 6;
const uint kStatusFixedLevelExceeded = 1u << 7;

// spirv::LaunchKind
const uint kLaunchBroadcastStatic = 0u;
const uint kLaunchBroadcastDynamic = 1u;
const uint kLaunchCoalescing = 2u;
const uint kLaunchThread = 3u;

// Sizes and byte offsets; the consistency test compares each with sizeof()/offsetof() of the C++ structs.
const uint kGraphHeaderSize = 256u;
const uint kGraphHeaderMagicOffset = 0u;
const uint kGraphHeaderGraphTagOffset = 4u;
const uint kGraphHeaderNodeCountOffset = 8u;
const uint kGraphHeaderInputHalfOffset = 12u;
const uint kGraphHeaderLevelOffset = 16u;
const uint kGraphHeaderStatusFlagsOffset = 20u;
const uint kGraphHeaderDroppedRecordsOffset = 24u;
const uint kGraphHeaderHeapHighWaterOffset = 28u;
const uint kGraphHeaderRecordCapacityOffset = 32u;
const uint kGraphHeaderHeapCapacityOffset = 36u;
const uint kGraphHeaderNodeTableOffsetOffset = 40u;
const uint kGraphHeaderOutputTableOffsetOffset = 44u;
const uint kGraphHeaderTrashOffsetOffset = 48u;
const uint kGraphHeaderTrashSizeOffset = 52u;
const uint kGraphHeaderHalfOffsetOffset = 56u;
const uint kGraphHeaderNodeStatsOffsetOffset = 64u;
const uint kGraphHeaderLevelsRunOffset = 68u;
const uint kGraphHeaderRecordHighWaterOffset = 72u;
const uint kGraphHeaderLevelPassRecordsPerWorkgroupOffset = 76u;
const uint kGraphHeaderLevelWorkgroupsOffset = 80u;
const uint kGraphHeaderDirectLevelConsumerOffset = 88u;
const uint kGraphHeaderDispatchGraphTagOffset = 236u;
const uint kGraphHeaderTablesTagOffset = 240u;
const uint kNodeStatsSize = 32u;
const uint kNodeStatsRecordsOffset = 0u;
const uint kNodeStatsDispatchesOffset = 4u;
const uint kNodeStatsWorkgroupsOffset = 8u;
const uint kNodeStatsDroppedRecordsOffset = 12u;
const uint kNodeStatsDropFlagsOffset = 16u;
const uint kNodeStatsFirstDropLevelComplementOffset = 20u;
const uint kNodeStaticInfoSize = 64u;
const uint kNodeStaticInfoLaunchOffset = 0u;
const uint kNodeStaticInfoRecordStrideOffset = 4u;
const uint kNodeStaticInfoStaticGridOffset = 8u;
const uint kNodeStaticInfoGridOffsetOffset = 20u;
const uint kNodeStaticInfoGridComponentsOffset = 24u;
const uint kNodeStaticInfoGridComponentBitsOffset = 28u;
const uint kNodeStaticInfoRecordsPerWorkgroupOffset = 32u;
const uint kNodeStaticInfoMaxRecursionOffset = 36u;
const uint kNodeStaticInfoSharesInputWithOffset = 40u;
const uint kNodeStaticInfoIsApiEntryOffset = 44u;
const uint kNodeStaticInfoShaderIndexOffset = 48u;
const uint kNodeStaticInfoOutputTableBaseOffset = 52u;
const uint kNodeStaticInfoDispatchGroupFirstOffset = 56u;
const uint kNodeStaticInfoDispatchGroupSizeOffset = 60u;
const uint kHalfHeaderSize = 128u;  // kHalfHeaderBytes
const uint kHalfHeaderHeapTopOffset = 0u;
const uint kHalfHeaderRecordCountOffset = 4u;
const uint kHalfHeaderLevelPassDoneOffset = 8u;
const uint kHalfHeaderLevelPassWorkgroupsOffset = 12u;
const uint kHalfHeaderLevelPassDispatchYOffset = 16u;
const uint kHalfHeaderLevelPassDispatchZOffset = 20u;
const uint kNodeStateSize = 48u;
const uint kNodeStateRecordCountOffset = 0u;
const uint kNodeStateDirectoryBaseOffset = 4u;
const uint kNodeStateWorkgroupCountOffset = 8u;
const uint kNodeStateDispatchOffset = 12u;
const uint kNodeStateScatterCursorOffset = 24u;
const uint kNodeStateGroupFirstWorkgroupOffset = 32u;
const uint kNodeStateGroupDirectoryBaseOffset = 36u;
const uint kNodeStateGroupWorkgroupsOffset = 40u;
const uint kRecordEntrySize = 16u;
const uint kRecordEntryNodeOffset = 8u;
const uint kRecordEntryPayloadOffsetOffset = 0u;
const uint kRecordEntryRecursionDepthOffset = 4u;
const uint kDirectoryEntrySize = 16u;
const uint kDirectoryEntryPayloadOffsetOffset = 0u;
const uint kDirectoryEntryRecursionDepthOffset = 4u;
const uint kDirectoryEntryFirstWorkgroupOrNodeOffset = 8u;
const uint kDirectoryEntryFinishCounterOffset = 12u;

// Offset 0 of scratch.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer GraphHeader {
    uint magic;
    uint graph_tag;
    uint node_count;
    uint input_half;
    uint level;
    uint status_flags;
    uint dropped_records;
    uint heap_high_water;
    uint record_capacity;
    uint heap_capacity;
    uint node_table_offset;
    uint output_table_offset;
    uint trash_offset;
    uint trash_size;
    uint half_offset[2];
    uint node_stats_offset;
    uint levels_run;
    uint record_high_water;
    uint level_pass_records_per_workgroup;
    uint level_workgroups[2];
    uint direct_level_consumer[kMaxLevels];
    uint64_t report_slot;  // WriteReport (level_common.glsl): by the finish pass, or the preparer of report_level
    uint report_serial;
    uint report_stats;
    uint report_level;
    uint dispatch_graph_tag;  // the graph this dispatch runs (scratch_layout.h)
    uint tables_tag;  // the graph whose node and output tables scratch holds (scratch_layout.h)
    uint header_reserved[3];
};

struct NodeStats {
    uint records;
    uint dispatches;
    uint workgroups;
    uint dropped_records;
    uint drop_flags;
    uint first_drop_level_complement;
    uint reserved[2];
};

layout(buffer_reference, std430, buffer_reference_align = 16) buffer NodeStatsTable {
    NodeStats stats[];
};

struct NodeStaticInfo {
    uint launch;
    uint record_stride;
    uint static_grid[3];
    uint grid_offset;
    uint grid_components;
    uint grid_component_bits;
    uint records_per_workgroup;
    uint max_recursion;
    uint shares_input_with;
    uint is_api_entry;
    uint shader_index;
    uint output_table_base;
    uint dispatch_group_first;
    uint dispatch_group_size;
};

layout(buffer_reference, std430, buffer_reference_align = 8) buffer NodeTable {
    NodeStaticInfo infos[];
};

struct NodeState {
    uint record_count;
    uint directory_base;
    uint workgroup_count;
    uint dispatch[3];
    uint64_t scatter_cursor;
    uint group_first_workgroup;
    uint group_directory_base;
    uint group_workgroups;
    uint node_state_reserved;
};

// HalfHeader followed by NodeState[node_count]: one reference reaches both.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Half {
    uint heap_top;
    uint record_count;
    uint level_pass_done;  // workgroups of the fused level pass (level.comp) or the finish pass (finish.comp) that finished
    uint level_pass_workgroups;  // at least 1 once cleared here; with the two words after it, a CPU device's level pass
                                 // VkDispatchIndirectCommand (HalfHeader)
    uint level_pass_dispatch_y;
    uint level_pass_dispatch_z;
    uint half_header_padding[kHalfHeaderSize / 4u - 6u];  // HalfHeader::padding: the counters' own L2 line
    NodeState nodes[];
};

struct RecordEntry {
    uint payload_offset;
    uint recursion_depth;
    uint node;
    uint reserved;
};

layout(buffer_reference, std430, buffer_reference_align = 16) buffer RecordList {
    RecordEntry entries[];
};

struct DirectoryEntry {
    uint payload_offset;
    uint recursion_depth;
    uint first_workgroup_or_node;  // dynamic broadcast: first linear workgroup; other nodes: the entry's node
    uint finish_counter;
};

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Directory {
    DirectoryEntry entries[];
};

// 16-byte entries (RecordEntry, DirectoryEntry) as vectors. glslang emits a struct assignment through a reference as one
// OpStore of the struct (Aligned 16), but NVIDIA 580 runs it as if member by member (judged by time, not by its code):
// the level pass's scatter writes each invocation's entry to a place of its own, and `append_rate` (2.8 million entries)
// took 480 µs with the struct stores and 402 with one vector each on an H200 (docs/performance.md, 2026-11-27 evening).
// Loads of neighbouring entries by neighbouring invocations combine either way (a vector load measured no faster).
layout(buffer_reference, std430, buffer_reference_align = 16) buffer EntryVectors {
    uvec4 v[];
};

void StoreDirectoryEntry(Directory directory, uint index, DirectoryEntry entry) {
    EntryVectors(uint64_t(directory)).v[index] =
        uvec4(entry.payload_offset, entry.recursion_depth, entry.first_workgroup_or_node, entry.finish_counter);
}

void StoreRecordEntry(RecordList records, uint index, RecordEntry entry) {
    EntryVectors(uint64_t(records)).v[index] = uvec4(entry.payload_offset, entry.recursion_depth, entry.node, entry.reserved);
}

// A half's NodeState[node_count] as 16-byte vectors: the array starts 128 bytes into a 64-byte aligned half and
// kNodeStateSize is a multiple of 16 (static_asserts after HalfHeader and NodeState in scratch_layout.h).
layout(buffer_reference, std430, buffer_reference_align = 16) buffer NodeStateVectors {
    uvec4 v[];
};

// The same as 8-byte pairs (NodeState::dispatch[1..2] is pair 2 of each state).
layout(buffer_reference, std430, buffer_reference_align = 8) buffer NodeStatePairs {
    uvec2 v[];
};

// NodeStats[node_count] as 16-byte vectors (kNodeStatsSize is a multiple of 16; the table is 16-byte aligned).
layout(buffer_reference, std430, buffer_reference_align = 16) buffer NodeStatsVectors {
    uvec4 v[];
};

// 32-bit words at 4-byte aligned addresses: payloads, the heap, and the application's dispatch infos (whose addresses
// are only guaranteed executionGraphDispatchAddressAlignment = 4, so their 64-bit members are read as two words).
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words {
    uint w[];
};

// Where the parts of half `h` start, in bytes from the scratch base. The HalfHeader comment in scratch_layout.h fixes
// the order: NodeState[node_count], RecordEntry[record_capacity], DirectoryEntry[record_capacity], heap. Since
// sizeof(HalfHeader) = 128 and every element size is a multiple of 16, the heap stays 16-byte aligned when the half is.
// VUID-vkCmdDispatchGraphAMDX-scratch-10194 (facts §11): scratch must hold graph `tag`'s initialization. Its tables must
// also still be that graph's: a dispatch of another graph (itself invalid, and reported) may have rewritten them
// (GraphHeader::tables_tag). Where this fails, the node and output tables cannot be trusted, so nothing may run.
bool ScratchInitializedFor(GraphHeader header, uint tag) {
    return header.magic == kScratchMagic && header.graph_tag == tag && header.tables_tag == tag;
}

uint HalfNodesOffset(GraphHeader header, uint h) {
    return header.half_offset[h] + kHalfHeaderSize;
}
uint HalfRecordsOffset(GraphHeader header, uint h) {
    return HalfNodesOffset(header, h) + header.node_count * kNodeStateSize;
}
uint HalfDirectoryOffset(GraphHeader header, uint h) {
    return HalfRecordsOffset(header, h) + header.record_capacity * kRecordEntrySize;
}
uint HalfHeapOffset(GraphHeader header, uint h) {
    return HalfDirectoryOffset(header, h) + header.record_capacity * kDirectoryEntrySize;
}

Half HalfAt(uint64_t scratch, GraphHeader header, uint h) {
    return Half(scratch + header.half_offset[h]);
}
RecordList RecordsAt(uint64_t scratch, GraphHeader header, uint h) {
    return RecordList(scratch + HalfRecordsOffset(header, h));
}
Directory DirectoryAt(uint64_t scratch, GraphHeader header, uint h) {
    return Directory(scratch + HalfDirectoryOffset(header, h));
}
uint64_t HeapAddress(uint64_t scratch, GraphHeader header, uint h) {
    return scratch + HalfHeapOffset(header, h);
}

// Zeroes every NodeState of half h, invocation `invocation` of `invocations` taking every invocations-th 16 bytes, so
// that neighbouring invocations store neighbouring bytes and a subgroup's stores combine. Clearing the states field by
// field at their 48-byte stride made a memory transaction per node and field, about 4.5 µs of every level pass of a
// 1025-node graph on an H100 (docs/performance.md).
void ClearNodeStates(uint64_t scratch, GraphHeader header, uint h, uint invocation, uint invocations) {
    NodeStateVectors states = NodeStateVectors(scratch + HalfNodesOffset(header, h));
    const uint vectors = header.node_count * (kNodeStateSize / 16u);
    for (uint i = invocation; i < vectors; i += invocations) states.v[i] = uvec4(0u);
}

// A 64-bit value stored as two little-endian words at a 4-byte aligned address.
uint64_t LoadU64(Words words, uint word_index) {
    return packUint2x32(uvec2(words.w[word_index], words.w[word_index + 1u]));
}

NodeStatsTable NodeStatsAt(uint64_t scratch, GraphHeader header) {
    return NodeStatsTable(scratch + header.node_stats_offset);
}

// Records dropped (or, with count 0, work cut short) by whoever detects it, charged to `node` (kInvalidNode: to no
// node, e.g. an entry naming no node) at `level`, the level running when it happened (0 for the entry pass, the level
// count for the check after the last level). The layer reads the header and NodeStats back and reports them.
void ReportDrop(uint64_t scratch, GraphHeader header, uint node, uint level, uint flag, uint count) {
    atomicOr(header.status_flags, flag);
    if (count != 0u) atomicAdd(header.dropped_records, count);
    if (node >= header.node_count) return;
    NodeStatsTable table = NodeStatsAt(scratch, header);
    if (count != 0u) atomicAdd(table.stats[node].dropped_records, count);
    atomicOr(table.stats[node].drop_flags, flag);
    atomicMax(table.stats[node].first_drop_level_complement, ~level);
}

#endif  // EXECGRAPH_SCRATCH_LAYOUT_GLSL
