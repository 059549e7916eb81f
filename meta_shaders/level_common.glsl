// Parts of a level's scheduling shared by the split passes (scatter.comp, write_args.comp) and the fused level pass
// (level.comp): docs/design.md, "One graph dispatch".
#ifndef EXECGRAPH_LEVEL_COMMON_GLSL
#define EXECGRAPH_LEVEL_COMMON_GLSL

#include "scratch_layout.glsl"

// 32-bit words read through a coherent reference: other workgroups' writes, made visible by their memoryBarrierBuffer()
// before the hand-off counter they incremented (the layer does not enable vulkanMemoryModel).
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CoherentWords {
    uint w[];
};

// The dispatch's report (layer/scheduler.h, ReportSlot; layer/dispatch_reports.cpp reads it): NodeStats[stats_count]
// (stats_field's low bits; with kReportStatsOnlyOnDrops, only when the header shows dropped work), then the GraphHeader,
// then the serial, last, after a fence, so that a host that sees the serial sees the rest. Made by one workgroup, all of
// whose invocations call it (it has workgroup barriers), once every write of the dispatch that the report holds is in
// scratch and visible to it: the finish pass's last workgroup, or the last workgroup of the pass that prepares the last
// level when that level's nodes have no outputs (so cannot drop anything) and the scheduler records no finish pass.
const uint kReportStatsOnlyOnDrops = 0x80000000u;  // keep in sync with kStatsOnlyOnDrops in layer/scheduler.cpp
// Keep in sync with kReportSlot*Offset in layer/scheduler.h.
const uint kReportSlotSerialWord = 0u;
const uint kReportSlotHeaderWord = 16u / 4u;
const uint kReportSlotStatsWord = kReportSlotHeaderWord + kGraphHeaderSize / 4u;

// `invocations` is the caller's gl_WorkGroupSize.x: this file is included before the shaders declare local_size, and
// glslang 12 folds a gl_WorkGroupSize read here to (1, 1, 1) without a word. That made every invocation copy the whole
// report to host memory, one word per loop step, and cost about 10 µs per graph dispatch on an H200 (docs/performance.md).
void WriteReport(uint64_t scratch, GraphHeader header, uint64_t slot_address, uint serial, uint stats_field, uint invocations) {
    const uint t = gl_LocalInvocationIndex;
    // What other workgroups wrote is visible to this one already (the caller's hand-off); what this workgroup wrote
    // needs to be visible to its own invocations only.
    groupMemoryBarrier();
    barrier();
    CoherentWords header_words = CoherentWords(scratch);
    CoherentWords stats = CoherentWords(scratch + header.node_stats_offset);
    Words slot = Words(slot_address);
    const uint stats_count = min(stats_field & ~kReportStatsOnlyOnDrops, header_words.w[kGraphHeaderNodeCountOffset / 4u]);
    const bool dropped = header_words.w[kGraphHeaderStatusFlagsOffset / 4u] != 0u ||
                         header_words.w[kGraphHeaderDroppedRecordsOffset / 4u] != 0u;
    if ((stats_field & kReportStatsOnlyOnDrops) == 0u || dropped) {
        for (uint i = t; i < stats_count * (kNodeStatsSize / 4u); i += invocations) slot.w[kReportSlotStatsWord + i] = stats.w[i];
    }
    for (uint i = t; i < kGraphHeaderSize / 4u; i += invocations) {
        uint word = header_words.w[i];
        if (i == kGraphHeaderStatusFlagsOffset / 4u) {
            // VUID-...-scratch-10194: a dispatch whose begin transfers rewrote the node and output tables (tables_tag is
            // then this graph's; layer/scheduler.cpp, HostLevelZero) ran without relying on initialization, so no pass
            // checked it. The report says what initialization was for: magic and graph_tag are written by it alone.
            // Where a pass did check, it has flagged the same already (a check passes only with tables_tag == graph_tag,
            // ScratchInitializedFor). Loaded with the status word, not before the copy: the report ends the dispatch's
            // critical path, and a load before it cost classify_8 about 0.4 µs on an H200 (docs/performance.md).
            const bool uninitialized = header_words.w[kGraphHeaderMagicOffset / 4u] != kScratchMagic ||
                                       header_words.w[kGraphHeaderGraphTagOffset / 4u] !=
                                           header_words.w[kGraphHeaderTablesTagOffset / 4u];
            if (uninitialized) word |= kStatusUninitialized;
        }
        slot.w[kReportSlotHeaderWord + i] = word;
    }
    memoryBarrierBuffer();
    barrier();
    if (t == 0u) slot.w[kReportSlotSerialWord] = serial;
}

// The fence before a workgroup counts itself done in a hand-off (level, entry and finish passes): it makes the
// invocation's buffer writes visible to whichever workgroup finishes last. Where one workgroup takes part it is that
// workgroup, so workgroup scope is enough, which need not wait for the writes to reach L2 (the barrier() that follows
// makes them visible to the workgroup's other invocations). The last workgroup's own fence after the count is then not
// needed either: the caller skips it where `alone`.
void FenceBeforeCount(bool alone) {
    if (alone) {
        groupMemoryBarrier();
    } else {
        memoryBarrierBuffer();
    }
}

// Workgroups each record of static broadcast node `node` launches. Validated at pipeline creation against
// maxExecutionGraphWorkgroups.
uint StaticGridWorkgroups(NodeTable table, uint node) {
    return table.infos[node].static_grid[0] * table.infos[node].static_grid[1] * table.infos[node].static_grid[2];
}

uint GridComponent(Words payload, uint grid_offset, uint bits, uint i) {
    if (bits == 16u) {
        const uint byte_offset = grid_offset + 2u * i;
        return (payload.w[byte_offset >> 2u] >> ((byte_offset & 2u) * 8u)) & 0xFFFFu;
    }
    return payload.w[(grid_offset >> 2u) + i];
}

// Workgroups one record launches on `node`: 0 for coalescing and thread nodes, whose workgroups the args step derives
// from the record count. Clamps and drops are charged to `level`.
uint RecordWorkgroups(uint64_t scratch, GraphHeader header, NodeTable table, uint node, uint level, uint64_t payload_address) {
    const uint launch = table.infos[node].launch;
    if (launch == kLaunchBroadcastStatic) return StaticGridWorkgroups(table, node);
    if (launch != kLaunchBroadcastDynamic) return 0u;
    Words payload = Words(payload_address);
    const uint components = table.infos[node].grid_components;
    const uint grid_offset = table.infos[node].grid_offset;
    const uint bits = table.infos[node].grid_component_bits;
    uint64_t product = 1ul;
    bool clamped = false;
    for (uint i = 0u; i < 3u; ++i) {
        // A scalar or 2-vector grid member leaves the remaining dimensions 1 (facts 12.5).
        uint value = i < components ? GridComponent(payload, grid_offset, bits, i) : 1u;
        // static_grid holds MaxNumWorkgroupsAMDX for dynamic nodes; 0 means the node declared none, so the advertised
        // maxExecutionGraphWorkgroupCount applies (VUID-...-maxComputeWorkGroupCount-09186 makes larger grids invalid;
        // clamping keeps the dispatch inside what the lowered node can address).
        const uint maximum = table.infos[node].static_grid[i] == 0u ? kMaxGraphWorkgroupCount : table.infos[node].static_grid[i];
        if (value > maximum) {
            value = maximum;
            clamped = true;
        }
        product *= uint64_t(value);
    }
    if (clamped) ReportDrop(scratch, header, node, level, kStatusGridClamped, 0u);
    if (product > uint64_t(kMaxGraphWorkgroups)) {
        // Over maxExecutionGraphWorkgroups even after clamping: the record is dropped (0 workgroups). A zero-workgroup
        // entry is harmless: the lowered node's search takes the last entry whose first_workgroup <= its workgroup.
        ReportDrop(scratch, header, node, level, kStatusGridClamped, 1u);
        return 0u;
    }
    return uint(product);
}

// DirectoryEntry::first_workgroup_or_node for a record of `consumer` that starts at `first_workgroup` of the node's
// workgroups: dynamic broadcast nodes search their entries by first workgroup; every other node's entry names the node,
// which a dispatch group's workgroups read to find their member (scratch_layout.h).
uint FirstWorkgroupOrNode(NodeTable table, uint consumer, uint first_workgroup) {
    return table.infos[consumer].launch == kLaunchBroadcastDynamic ? first_workgroup : consumer;
}

// Workgroups of a coalescing node (NodeMaxPayloadsAMDX records per workgroup) or a thread node (the lowered batch size).
uint BatchedWorkgroups(NodeTable table, uint node, uint kept) {
    const uint per_workgroup = max(table.infos[node].records_per_workgroup, 1u);
    return kept / per_workgroup + (kept % per_workgroup != 0u ? 1u : 0u);
}

// Node n's workgroup count and VkDispatchIndirectCommand for this level, and its statistics. x stays within the 65535
// every device supports (maxComputeWorkGroupCount) and y carries the rest; the lowered node computes its linear
// workgroup as WorkgroupId.y * 65535 + WorkgroupId.x and returns past workgroup_count (scratch_layout.h,
// kDispatchSplitWidth). Called by the one invocation that owns node n.
uvec3 DispatchShape(uint total) {
    if (total == 0u) return uvec3(0u);
    const uint rows = total / kDispatchSplitWidth + (total % kDispatchSplitWidth != 0u ? 1u : 0u);
    return uvec3(min(total, kDispatchSplitWidth), min(rows, kDispatchSplitWidth), 1u);
}

// The workgroups a dispatch of DispatchShape(total) launches (rounded up to whole rows; the surplus returns at once).
uint LaunchedWorkgroups(uint total) {
    const uvec3 shape = DispatchShape(total);
    return shape.x * shape.y * shape.z;
}

uvec3 SplitDispatch(uint64_t scratch, GraphHeader header, uint n, uint level, uint total) {
    // Rows are clamped only past 65535 * 65535 workgroups in one node (or dispatch group) and level.
    if (total / kDispatchSplitWidth + (total % kDispatchSplitWidth != 0u ? 1u : 0u) > kDispatchSplitWidth) {
        ReportDrop(scratch, header, n, level, kStatusGridClamped, 0u);
    }
    return DispatchShape(total);
}

void WriteDispatchArgs(uint64_t scratch, GraphHeader header, Half input_half, uint n, uint level, uint total) {
    const uvec3 dispatch = SplitDispatch(scratch, header, n, level, total);
    if (total != 0u) {
        NodeStatsTable stats = NodeStatsAt(scratch, header);
        stats.stats[n].dispatches += 1u;
        const uint before = stats.stats[n].workgroups;
        stats.stats[n].workgroups = before + min(total, 0xFFFFFFFFu - before);
    }
    input_half.nodes[n].workgroup_count = total;
    input_half.nodes[n].dispatch[0] = dispatch.x;
    input_half.nodes[n].dispatch[1] = dispatch.y;
    input_half.nodes[n].dispatch[2] = dispatch.z;
}

// The dispatch of the dispatch group whose first node is `first`: `total` workgroups, all its members' together. Replaces
// the first node's own VkDispatchIndirectCommand (WriteDispatchArgs, called before); its statistics stay its own.
void WriteGroupDispatchArgs(uint64_t scratch, GraphHeader header, Half input_half, uint first, uint level, uint total) {
    const uvec3 dispatch = SplitDispatch(scratch, header, first, level, total);
    input_half.nodes[first].dispatch[0] = dispatch.x;
    input_half.nodes[first].dispatch[1] = dispatch.y;
    input_half.nodes[first].dispatch[2] = dispatch.z;
}

// Prepares level `level`, a direct level (docs/design.md, "Direct levels") whose records, all of them `consumer`'s, half
// `h` (`input_half`) holds: the consumer's arguments, directory (the record list itself, as level.comp's SoleConsumer) and statistics,
// and the header, as the lowered nodes' level hand-off (spirv_lowering's LevelHandOffPass) prepares the direct levels
// after the first. Called by one invocation once every producer of the level is done; the counters they bumped are read
// with atomics.
void PrepareDirectLevel(uint64_t scratch, GraphHeader header, NodeTable table, Half input_half, uint h, uint consumer, uint level) {
    const uint records = atomicAdd(input_half.nodes[consumer].record_count, 0u);
    uint workgroups;
    if (table.infos[consumer].launch == kLaunchBroadcastStatic) {
        // The scheduler makes such a level direct only where a full record list's workgroups fit one dispatch.
        workgroups = records * table.infos[consumer].static_grid[0] * table.infos[consumer].static_grid[1] *
                     table.infos[consumer].static_grid[2];
    } else {
        workgroups = BatchedWorkgroups(table, consumer, records);
    }
    WriteDispatchArgs(scratch, header, input_half, consumer, level, workgroups);
    input_half.nodes[consumer].directory_base = 0u - header.record_capacity;
    NodeStatsTable stats = NodeStatsAt(scratch, header);
    stats.stats[consumer].records += records;
    header.level_workgroups[h] = LaunchedWorkgroups(workgroups);
    header.input_half = h;
    header.level = level;
    if (records != 0u) header.levels_run = level + 1u;
    atomicMax(header.heap_high_water, atomicAdd(input_half.heap_top, 0u));
    atomicMax(header.record_high_water, atomicAdd(input_half.record_count, 0u));
}

#endif  // EXECGRAPH_LEVEL_COMMON_GLSL
