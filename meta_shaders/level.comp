// Fused level pass (docs/design.md, "One graph dispatch", step 3): the work of prepare, scatter and write_args for one
// level in a single dispatch, so that a level needs one meta dispatch and two barriers. The scheduler uses it when the
// graph has at most kMaxNodes nodes and kMaxSharingNodes SharesInputWithAMDX nodes (layer/scheduler.cpp), and the
// three split passes otherwise; both leave scratch in the same state.
//
// The scheduler launches enough workgroups for a full record list; only as many as the level's producers asked for
// (HalfHeader::level_pass_workgroups, at least one) take part, and the rest return at once. Every taking part
// workgroup that has records to scatter
//   1. computes the exclusive prefix sum of the nodes' input counts (a sharing node's count includes its source's) into
//      shared memory itself, so no workgroup waits for another before scattering;
// and every taking part workgroup
//   2. clears part of the output half, which this level's nodes write only after the next barrier (its scatter
//      cursors start at zero for the next level; nothing in this pass reads that half);
//   3. scatters its grid-stride share of the input record list into the directory (one 64-bit atomic per record and
//      consumer, as in scatter.comp), unless the list serves as the directory of the level's sole consumer, or, in a
//      level of at most one workgroup's worth of records, of the one dispatch group of static broadcast nodes that
//      receives every record (then one workgroup takes part).
// The last workgroup to finish (a device-scope counter in the input HalfHeader; a single workgroup needs none) then
// writes what the split passes' prepare and write_args wrote: kept counts, directory bases, statistics, the nodes'
// indirect arguments and the header, and the dispatch groups' arguments and first workgroups. It is the only
// workgroup that writes the input half's per-node counts, because the others read them in step 1.
//
// Visibility without the Vulkan memory model (the layer does not enable vulkanMemoryModel): every invocation fences its
// stores with memoryBarrierBuffer() before its workgroup increments the counter, and the last workgroup fences after
// seeing the final count and reads what other workgroups wrote (cursors, directory entries) through coherent
// references or atomics. Where one workgroup takes part, workgroup-scope fences do (FenceBeforeCount).
#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "level_common.glsl"

// The workgroup size is specialization constant 0, at most 256 (s_scan, and the shared-count scatter's one invocation
// per node): 256 on GPUs, 8 on CPU devices (layer/scheduler.h, LevelPassWorkgroupSizeFor, says why).
layout(local_size_x_id = 0) in;
// The level pass that reads the node table first where nothing checked before it that the table is this graph's: no
// entry pass ran, and the host did not rewrite the whole table (layer/meta_pipelines.h, kLevelCheckingInitialization).
// It checks that scratch was initialized for the graph, as the entry pass does where that runs. Other level passes
// compile without the check.
layout(constant_id = 1) const bool kChecksInitialization = false;
// The level pass of a level whose record list is a dispatch group's directory (pc.list_directory_group names it): it
// scatters nothing, so this variant compiles without the scatter (layer/meta_pipelines.h, kLevelListDirectoryGroup). A
// CPU device runs every workgroup through all of a shader's code with its lanes masked off, so the scatter's code cost
// such levels there even though none of it ran.
layout(constant_id = 3) const bool kListDirectoryGroupPass = false;

layout(push_constant) uniform Params {
    uint64_t scratch;
    uint input_half;  // the half the previous step wrote: 0 or 1
    uint level;       // GraphHeader.level for the nodes of this level
    uint has_dispatch_groups;  // some node is in a dispatch group of two or more (GraphPlan::FormDispatchGroups)
    uint flags;          // kLevelSharedCounts, kLevelKeepStatistics (layer/scheduler.cpp)
    uint graph_tag;      // the graph the scratch must have been initialized for (kChecksInitialization)
    // The first member of the dispatch group of static broadcast nodes that receives every record of this level
    // (GraphPlan::list_directory_group), or kInvalidNode. Its workgroups read their record at group_directory_base +
    // workgroup / grid and find their member in it; RecordEntry::node lies where DirectoryEntry::first_workgroup_or_node
    // does, and such members read nothing else of an entry but the payload offset and depth, which both hold. So a
    // small level's record list serves as the group's directory in the order the producers appended it, and the pass
    // scatters nothing: one workgroup writes the counts, statistics and arguments.
    uint list_directory_group;
} pc;

// The bound of the per-node shared arrays is specialization constant 2: kFusedLevelMaxNodes, or
// kFusedLevelSmallGraphMaxNodes for the pipelines of graphs up to that size (layer/scheduler.h says why). Keep
// kMaxSharingNodes in sync with kFusedLevelMaxSharingNodes.
layout(constant_id = 2) const uint kMaxNodes = 2048u;
const uint kMaxSharingNodes = 64u;

shared uint s_end[kMaxNodes];  // inclusive prefix sum of the input counts: node n's range is [s_end[n-1], s_end[n])
                               // (later reused for the exclusive prefix sum of the workgroup counts)
shared uint s_total[kMaxNodes];  // last workgroup: the workgroups each node needs at this level
shared uint s_scan[256];
shared uint s_scan_total;
shared uint s_total_high;  // ScanWorkgroupTotals: the sums of the totals' upper and lower 16 bits
shared uint s_total_low;
shared uint s_sharing_count;
shared uvec2 s_sharing[kMaxSharingNodes];  // (consumer, source) of each sharing node
shared bool s_last;
// The scatter with per-node counts in shared memory (graphs of up to kSharedCountMaxNodes nodes): this round's records
// per node, then the node's global cursor before this workgroup's share.
const uint kSharedCountMaxNodes = 256u;
// Params.flags; keep in sync with kLevelSharedCounts and kLevelKeepStatistics in layer/scheduler.cpp.
const uint kLevelSharedCounts = 1u;    // scatter with per-node counts in shared memory where the graph allows (GPUs)
const uint kLevelKeepStatistics = 2u;  // update NodeStats' records, dispatches and workgroups (the `statistics` line)
shared uint s_round_records[kSharedCountMaxNodes];
shared uint64_t s_round_base[kSharedCountMaxNodes];

uint RangeBegin(uint n) { return n == 0u ? 0u : s_end[n - 1u]; }

// Whether node n, whose NodeStaticInfo names dispatch group (first, size), belongs to a group the scheduler dispatches
// as one (GraphPlan::FormDispatchGroups); a node outside any group names itself and 1.
bool IsDispatchGroupMember(uint first, uint size, uint n, uint node_count) {
    return size > 1u && first <= n && n - first < size && first + size <= node_count;
}

bool IsDispatchGroupFirst(NodeTable table, uint n, uint node_count) {
    return pc.has_dispatch_groups != 0u && table.infos[n].dispatch_group_first == n &&
           IsDispatchGroupMember(n, table.infos[n].dispatch_group_size, n, node_count);
}

// Directory entries node n keeps (record_capacity bounds the directory; sharing nodes can overflow it).
uint Kept(uint n, uint capacity) {
    const uint base = RangeBegin(n);
    return base >= capacity ? 0u : min(s_end[n] - base, capacity - base);
}

void Scatter(uint64_t scratch, GraphHeader header, NodeTable table, Half input_half, Directory directory, uint consumer,
             uint64_t payload_address, RecordEntry entry, uint capacity) {
    const uint workgroups = RecordWorkgroups(scratch, header, table, consumer, pc.level, payload_address);
    const uint64_t old = atomicAdd(input_half.nodes[consumer].scatter_cursor, (1ul << 32) | uint64_t(workgroups));
    const uint slot = uint(old >> 32);
    // Past the kept count: reported as dropped by the last workgroup.
    if (slot >= Kept(consumer, capacity)) return;
    StoreDirectoryEntry(directory, RangeBegin(consumer) + slot,
                        DirectoryEntry(entry.payload_offset, entry.recursion_depth, FirstWorkgroupOrNode(table, consumer, uint(old)), workgroups));
}

// Scatter() for a subgroup whose active invocations all scatter to `consumer`, the common case of a large level (a
// level's records mostly go to few nodes): one 64-bit atomic per subgroup instead of one per record. Same-address atomics
// serialise in the GPU's L2 (about one per clock), so a level of half a million records for one node spent about
// 0.5 ms in them on an H100. Each invocation's slot and first workgroup are the atomic's old value plus its exclusive
// prefix within the subgroup, which hands them out in the same order as per-record atomics would (what the dynamic
// broadcast lowering's binary search over first workgroups needs). Called only where every active invocation of the
// subgroup has the same `consumer` (subgroup operations act on the active invocations).
void ScatterAggregated(uint64_t scratch, GraphHeader header, NodeTable table, Half input_half, Directory directory,
                       uint consumer, uint64_t payload_address, RecordEntry entry, uint capacity) {
    const uint workgroups = RecordWorkgroups(scratch, header, table, consumer, pc.level, payload_address);
    const uvec4 active_lanes = subgroupBallot(true);
    const uint rank = subgroupBallotExclusiveBitCount(active_lanes);
    const uint records = subgroupBallotBitCount(active_lanes);
    // At most 128 invocations times maxExecutionGraphWorkgroups (2^24) each: fits 32 bits.
    const uint workgroups_before = subgroupExclusiveAdd(workgroups);
    const uint workgroups_total = subgroupAdd(workgroups);
    uint old_workgroups = 0u, old_records = 0u;
    if (subgroupElect()) {
        const uint64_t old = atomicAdd(input_half.nodes[consumer].scatter_cursor, (uint64_t(records) << 32) | uint64_t(workgroups_total));
        old_workgroups = uint(old);
        old_records = uint(old >> 32);
    }
    const uint slot = subgroupBroadcastFirst(old_records) + rank;
    const uint first_workgroup = subgroupBroadcastFirst(old_workgroups) + workgroups_before;
    if (slot >= Kept(consumer, capacity)) return;
    StoreDirectoryEntry(directory, RangeBegin(consumer) + slot,
                        DirectoryEntry(entry.payload_offset, entry.recursion_depth, FirstWorkgroupOrNode(table, consumer, first_workgroup), workgroups));
}

// Workgroups each record of `node` launches when that is the same for all its records (a static grid, or 0 for coalescing
// and thread nodes, whose workgroups come from their record count); kInvalidNode for dynamic broadcast nodes.
uint UniformRecordWorkgroups(NodeTable table, uint node) {
    const uint launch = table.infos[node].launch;
    if (launch == kLaunchBroadcastDynamic) return kInvalidNode;
    return launch == kLaunchBroadcastStatic ? StaticGridWorkgroups(table, node) : 0u;
}

// ScatterWithSharedCounts' record e of the level (kInvalidNode past the level's records, or for a corrupt node index).
RecordEntry SharedCountEntry(uint64_t scratch, GraphHeader header, RecordList records, uint e, uint record_count, uint node_count) {
    RecordEntry entry = RecordEntry(0u, 0u, kInvalidNode, 0u);
    if (e < record_count) {
        entry = records.entries[e];
        if (entry.node >= node_count) {
            // Producers validate node indices before appending; this guards NodeState against a corrupt list.
            ReportDrop(scratch, header, kInvalidNode, pc.level, kStatusInvalidNodeIndex, 1u);
            entry.node = kInvalidNode;
        }
    }
    return entry;
}

// ScatterWithSharedCounts' directory entry for `entry`, at its round's slot in its node's range, and its copies for
// the nodes that share its node's input.
void SharedCountStore(uint64_t scratch, GraphHeader header, NodeTable table, Half input_half, Directory directory, uint64_t heap,
                      RecordEntry entry, uint per_record, uint round_slot, uint sharing_count, uint capacity) {
    const uint node = entry.node;
    if (per_record != kInvalidNode) {
        const uint slot = uint(s_round_base[node] >> 32) + round_slot;
        // Past the kept count: reported as dropped by the last workgroup. These nodes' entries name their node
        // (FirstWorkgroupOrNode: only dynamic broadcast nodes, which take the per-record path, store workgroups).
        if (slot < Kept(node, capacity)) {
            StoreDirectoryEntry(directory, RangeBegin(node) + slot, DirectoryEntry(entry.payload_offset, entry.recursion_depth, node, per_record));
        }
    } else if (node != kInvalidNode) {
        Scatter(scratch, header, table, input_half, directory, node, heap + entry.payload_offset, entry, capacity);
    }
    for (uint i = 0u; node != kInvalidNode && i < sharing_count; ++i) {
        if (s_sharing[i].y != node) continue;
        Scatter(scratch, header, table, input_half, directory, s_sharing[i].x, heap + entry.payload_offset, entry, capacity);
    }
}

// One round of ScatterWithSharedCounts from record `round`: one record per invocation, or two where `two_records`.
// Called with a constant `two_records` in each of two loops, so that the compiler makes the one-record round of the
// small levels what it was before the second record existed (with `two_records` a variable, overhead_chain32x8, whose
// level passes run one-record rounds, took 2.5% longer on an H200).
void SharedCountRound(uint64_t scratch, GraphHeader header, NodeTable table, Half input_half, Directory directory,
                      RecordList records, uint64_t heap, uint record_count, uint node_count, uint sharing_count, uint capacity,
                      uint round, bool two_records) {
    const uint t = gl_LocalInvocationIndex;
    if (t < node_count) s_round_records[t] = 0u;
    barrier();
    // Two records in named variables rather than an array: indexed in a loop, an array may live in memory.
    const RecordEntry first = SharedCountEntry(scratch, header, records, round + t, record_count, node_count);
    RecordEntry second = RecordEntry(0u, 0u, kInvalidNode, 0u);
    if (two_records) second = SharedCountEntry(scratch, header, records, round + gl_WorkGroupSize.x + t, record_count, node_count);
    const uint first_per_record = first.node != kInvalidNode ? UniformRecordWorkgroups(table, first.node) : kInvalidNode;
    const uint second_per_record = second.node != kInvalidNode ? UniformRecordWorkgroups(table, second.node) : kInvalidNode;
    const uint first_slot = first_per_record != kInvalidNode ? atomicAdd(s_round_records[first.node], 1u) : 0u;
    const uint second_slot = second_per_record != kInvalidNode ? atomicAdd(s_round_records[second.node], 1u) : 0u;
    barrier();
    if (t < node_count && s_round_records[t] != 0u) {
        const uint count = s_round_records[t];
        const uint workgroups = count * UniformRecordWorkgroups(table, t);
        s_round_base[t] = atomicAdd(input_half.nodes[t].scatter_cursor, (uint64_t(count) << 32) | uint64_t(workgroups));
    }
    barrier();
    SharedCountStore(scratch, header, table, input_half, directory, heap, first, first_per_record, first_slot, sharing_count, capacity);
    if (two_records) {
        SharedCountStore(scratch, header, table, input_half, directory, heap, second, second_per_record, second_slot, sharing_count,
                         capacity);
    }
    barrier();  // the next round rewrites s_round_records and s_round_base
}

// Step 3 for graphs of up to kSharedCountMaxNodes nodes, in rounds of one or two records per invocation: records count
// per node in shared memory, then one 64-bit atomic per node and workgroup takes the round's slots and workgroups from
// the node's cursor. A level's records spread over many nodes (a classify pass, appends by hash) otherwise take one
// global atomic each on a few cursors, which serialise in L2. Where one record per launched invocation does not cover
// the level (a large level: its producers ask for one workgroup per level_pass_records_per_workgroup records, twice
// the workgroup's size), each invocation takes two records per round, so that a workgroup takes its records in one
// round, with half the barriers and half the cursor atomics of two rounds (H200: append_rate's pass of 2.8 million
// records to 64 nodes 130 -> 112 us, the workload -6.6%; docs/performance.md). Records of dynamic broadcast nodes, whose
// workgroups differ per record, and the copies for sharing nodes keep the per-record atomic. Slot and first workgroup
// come from one counter, so they keep the order Scatter gives them. Called in workgroup-uniform control flow.
void ScatterWithSharedCounts(uint64_t scratch, GraphHeader header, NodeTable table, Half input_half, Directory directory,
                             RecordList records, uint64_t heap, uint record_count, uint invocations, uint node_count,
                             uint sharing_count, uint capacity) {
    // The same in every workgroup of the pass, so the rounds' barriers stay in uniform control flow.
    if (record_count > invocations) {
        for (uint round = gl_WorkGroupID.x * 2u * gl_WorkGroupSize.x; round < record_count; round += 2u * invocations) {
            SharedCountRound(scratch, header, table, input_half, directory, records, heap, record_count, node_count, sharing_count,
                             capacity, round, true);
        }
    } else {
        for (uint round = gl_WorkGroupID.x * gl_WorkGroupSize.x; round < record_count; round += invocations) {
            SharedCountRound(scratch, header, table, input_half, directory, records, heap, record_count, node_count, sharing_count,
                             capacity, round, false);
        }
    }
}

// Inclusive prefix sum of `value` over the workgroup's invocations, and in `total` the sum of all: a subgroup scan,
// then a scan of the subgroups' sums (a few on a GPU; one invocation adds them up). Two barriers where a Hillis-Steele
// scan over shared memory takes sixteen. Called in workgroup-uniform control flow; s_scan is free again on return.
uint WorkgroupInclusiveAdd(uint value, out uint total) {
    const uint inclusive = subgroupInclusiveAdd(value);
    if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u) s_scan[gl_SubgroupID] = inclusive;
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
        uint running = 0u;
        for (uint i = 0u; i < gl_NumSubgroups; ++i) {
            const uint sum = s_scan[i];
            s_scan[i] = running;
            running += sum;
        }
        s_scan_total = running;
    }
    barrier();
    const uint result = inclusive + s_scan[gl_SubgroupID];
    total = s_scan_total;
    barrier();  // s_scan and s_scan_total are rewritten by the next call
    return result;
}

// The nodes [x, y) whose per-node work this invocation does in the scans below: a contiguous run of node_count divided
// by the workgroup size (rounded up), so that a scan over the whole graph is one workgroup scan of the runs' sums,
// whatever the node count. Scanning in chunks of 256 nodes made each chunk wait for its loads and barriers before the
// next started: about 1 µs per chunk, five chunks per scan for a 1025-node graph on an H100.
uvec2 NodeRun(uint node_count) {
    const uint per_invocation = (node_count + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
    const uint begin = min(gl_LocalInvocationIndex * per_invocation, node_count);
    return uvec2(begin, min(begin + per_invocation, node_count));
}

// Step 1: node n's input range [RangeBegin(n), s_end[n]) and the sharing list, for the whole graph. Returns the level's
// total input count. With `discard_counts` (level 0 of scratch not initialized for this graph) every count is zero.
// Called in workgroup-uniform control flow.
uint ScanInputCounts(Half input_half, NodeTable table, uint node_count, bool discard_counts) {
    const uint t = gl_LocalInvocationIndex;
    if (t == 0u) s_sharing_count = 0u;
    barrier();
    const uvec2 run = NodeRun(node_count);
    uint run_total = 0u;
    for (uint n = run.x; n < run.y; ++n) {
        uint count = discard_counts ? 0u : input_half.nodes[n].record_count;
        const uint source = table.infos[n].shares_input_with;
        if (source < node_count && source != n) {
            count += discard_counts ? 0u : input_half.nodes[source].record_count;
            const uint index = atomicAdd(s_sharing_count, 1u);
            if (index < kMaxSharingNodes) s_sharing[index] = uvec2(n, source);
        }
        s_end[n] = count;  // this invocation's own entries, turned into the prefix sum below
        run_total += count;
    }
    uint level_total;
    uint running = WorkgroupInclusiveAdd(run_total, level_total) - run_total;
    for (uint n = run.x; n < run.y; ++n) {
        running += s_end[n];
        s_end[n] = running;
    }
    barrier();  // s_end and s_sharing_count are complete
    return level_total;
}

// The node that consumes every record of the level, when that node is a thread or coalescing node and no node shares
// input: its directory is then the record list itself (RecordEntry begins with DirectoryEntry's payload_offset and
// recursion_depth, the only fields such nodes read), so the level scatters nothing. Else kInvalidNode. The whole list
// is the node's when the node's count is the level's total and the list holds exactly that many entries. Called after
// ScanInputCounts; every workgroup gets the same answer.
uint SoleConsumer(RecordList records, NodeTable table, uint node_count, uint level_records, uint record_count, uint sharing_count) {
    if (sharing_count != 0u || level_records == 0u || level_records != record_count) return kInvalidNode;
    const uint node = records.entries[0].node;
    if (node >= node_count || s_end[node] - RangeBegin(node) != level_records) return kInvalidNode;
    const uint launch = table.infos[node].launch;
    return launch == kLaunchThread || launch == kLaunchCoalescing ? node : kInvalidNode;
}

// Last workgroup: s_end[n] = exclusive prefix sum of s_total over the graph's nodes (mod 2^32), for the members' first
// workgroups within their dispatch groups (a difference of two prefix sums). Returns whether the level's total reached
// 2^32, the only case in which such a difference can wrap: each invocation sums its totals' upper and lower 16 bits
// apart (at most kMaxNodes * 65535 each), and the workgroup adds those up. One workgroup scan over the invocations'
// runs of nodes (NodeRun) where a Hillis-Steele scan of 64-bit sums took sixteen barriers per 256 nodes, about 3 µs of
// each level pass of a 1025-node graph on an H100. Called in workgroup-uniform control flow.
bool ScanWorkgroupTotals(uint node_count) {
    if (gl_LocalInvocationIndex == 0u) {
        s_total_high = 0u;
        s_total_low = 0u;
    }
    const uvec2 run = NodeRun(node_count);
    uint run_total = 0u, high = 0u, low = 0u;
    for (uint n = run.x; n < run.y; ++n) {
        const uint total = s_total[n];
        run_total += total;
        high += total >> 16u;
        low += total & 0xFFFFu;
    }
    uint level_total;
    uint running = WorkgroupInclusiveAdd(run_total, level_total) - run_total;  // its barriers order the zeroing above
    for (uint n = run.x; n < run.y; ++n) {
        s_end[n] = running;
        running += s_total[n];
    }
    high = subgroupAdd(high);
    low = subgroupAdd(low);
    if (subgroupElect()) {
        atomicAdd(s_total_high, high);
        atomicAdd(s_total_low, low);
    }
    barrier();  // s_end and the sums are complete
    const uint64_t exact = (uint64_t(s_total_high) << 16u) + uint64_t(s_total_low);
    return exact > 0xFFFFFFFFul;
}

void main() {
    GraphHeader header = GraphHeader(pc.scratch);
    const uint t = gl_LocalInvocationIndex;
    const uint h = pc.input_half;
    const uint node_count = header.node_count;
    const uint capacity = header.record_capacity;
    Half input_half = HalfAt(pc.scratch, header, h);
    Half output_half = HalfAt(pc.scratch, header, 1u - h);
    NodeTable table = NodeTable(pc.scratch + header.node_table_offset);
    // Read with the other header words rather than at the end, where the load would sit on the level's critical path.
    const bool writes_report = header.report_level == pc.level;
    const uint64_t report_slot = header.report_slot;

    // The workgroups that take part: as many as the producers asked for (HalfHeader::level_pass_workgroups, one per
    // GraphHeader::level_pass_records_per_workgroup records), at least one, at most as many as were launched; the rest
    // return at once. (Dispatching the pass indirectly with that count would need the barrier before it to include
    // DRAW_INDIRECT, which cost about 2.5 µs more per level on an H100 than these idle workgroups. CPU devices, which run
    // an idle workgroup through all of this code, do dispatch it so: layer/scheduler.h, LevelPassDispatchedIndirectlyFor.)
    // Where the record list is the group's directory (pc.list_directory_group), one workgroup writes the members' counts
    // and arguments and nothing is scattered, whatever the level's size: its work grows with the nodes, not the records.
    // The group's workgroups then run in the producers' order instead of member by member; on an H200 the shading of
    // the 10240x5760 classification took no longer that way (docs/performance.md, 2026-11-27 night: an earlier try had
    // also scattered every record with this one workgroup, which is what made it slow).
    const bool list_is_group_directory = kListDirectoryGroupPass || pc.list_directory_group != kInvalidNode;
    const uint workgroups = list_is_group_directory ? 1u : clamp(input_half.level_pass_workgroups, 1u, gl_NumWorkGroups.x);
    if (gl_WorkGroupID.x >= workgroups) return;

    // VUID-...-scratch-10194: scratch must hold this graph's initialization. The entry pass checks it where it runs; for
    // vkCmdDispatchGraphAMDX the host may have written level 0's records itself (layer/scheduler.cpp, HostLevelZero), and
    // then this pass is the first to read the node table: level 0's, or level 1's where the host also prepared level 0
    // and rewrote only the tables level 0 reads. Without this graph's tables nothing more may run: the level's records
    // are reported, charged to their nodes as the entry pass charges them, and the level proceeds as an empty one. The
    // flag is set even without records, so that the report names the missing initialization.
    const bool uninitialized = kChecksInitialization && !ScratchInitializedFor(header, pc.graph_tag);
    if (uninitialized && gl_WorkGroupID.x == 0u) {
        if (t == 0u) ReportDrop(pc.scratch, header, kInvalidNode, pc.level, kStatusUninitialized, 0u);
        for (uint n = t; n < node_count; n += gl_WorkGroupSize.x) {
            const uint count = input_half.nodes[n].record_count;
            if (count != 0u) ReportDrop(pc.scratch, header, n, pc.level, kStatusUninitialized, count);
        }
    }

    // 1. Only workgroups with records to scatter need the ranges now; the last workgroup computes them if it has not.
    // On a CPU device (lavapipe) every barrier of the scan costs a switch through the workgroup's invocations, so
    // skipping it in idle workgroups matters for small levels.
    // The producers of this level are done, so the half's counters are final: loaded now, the last workgroup's high-water
    // marks need no load at the end of the pass, where it would add a round trip to memory to every level.
    const uint input_records = input_half.record_count;
    const uint input_heap_top = input_half.heap_top;
    const uint record_count = uninitialized ? 0u : min(input_records, capacity);
    const bool scatters = !list_is_group_directory && record_count > gl_WorkGroupID.x * gl_WorkGroupSize.x;
    uint level_records = 0u;
    if (scatters) level_records = ScanInputCounts(input_half, table, node_count, uninitialized);
    const uint sharing_count = scatters ? min(s_sharing_count, kMaxSharingNodes) : 0u;

    // 2. The output half receives this level's outputs.
    const uint invocations = workgroups * gl_WorkGroupSize.x;
    ClearNodeStates(pc.scratch, header, 1u - h, gl_GlobalInvocationID.x, invocations);
    if (gl_GlobalInvocationID.x == 0u) {
        output_half.heap_top = 0u;
        output_half.record_count = 0u;
        output_half.level_pass_workgroups = 1u;  // producers raise it; at least 1, as a CPU device dispatches by it
    }

    // 3. Scatter, grid-stride: each entry to its node and to every node that shares its node's input; nothing when the
    // record list serves as the sole consumer's or the group's directory.
    RecordList records = RecordsAt(pc.scratch, header, h);
    const uint sole_consumer = scatters ? SoleConsumer(records, table, node_count, level_records, record_count, sharing_count) : kInvalidNode;
    Directory directory = DirectoryAt(pc.scratch, header, h);
    const uint64_t heap = HeapAddress(pc.scratch, header, h);
    const bool shared_counts = (pc.flags & kLevelSharedCounts) != 0u && node_count <= min(kSharedCountMaxNodes, gl_WorkGroupSize.x);
    const bool scatter = sole_consumer == kInvalidNode && !list_is_group_directory;
    if (scatter && shared_counts) {
        ScatterWithSharedCounts(pc.scratch, header, table, input_half, directory, records, heap, record_count, invocations,
                                node_count, sharing_count, capacity);
    }
    for (uint e = gl_GlobalInvocationID.x; scatter && !shared_counts && e < record_count; e += invocations) {
        const RecordEntry entry = records.entries[e];
        if (entry.node >= node_count) {
            // Producers validate node indices before appending; this guards NodeState against a corrupt list.
            ReportDrop(pc.scratch, header, kInvalidNode, pc.level, kStatusInvalidNodeIndex, 1u);
            continue;
        }
        if (subgroupAllEqual(entry.node)) {
            ScatterAggregated(pc.scratch, header, table, input_half, directory, entry.node, heap + entry.payload_offset, entry,
                              capacity);
        } else {
            Scatter(pc.scratch, header, table, input_half, directory, entry.node, heap + entry.payload_offset, entry, capacity);
        }
        for (uint i = 0u; i < sharing_count; ++i) {
            if (s_sharing[i].y != entry.node) continue;
            Scatter(pc.scratch, header, table, input_half, directory, s_sharing[i].x, heap + entry.payload_offset, entry, capacity);
        }
    }

    // The last workgroup to get here finishes the level. A single workgroup is the last one without the device-scope
    // hand-off (a round trip to L2 in every small level) and without device-scope fences.
    const bool alone = workgroups == 1u;
    FenceBeforeCount(alone);
    barrier();
    if (t == 0u) s_last = alone || atomicAdd(input_half.level_pass_done, 1u) == workgroups - 1u;
    barrier();
    if (!s_last) return;
    if (!alone) memoryBarrierBuffer();
    if (!scatters) level_records = ScanInputCounts(input_half, table, node_count, uninitialized);
    // A group's members are static broadcast nodes, which SoleConsumer never names: skipping it where the record list is
    // the group's directory saves its two dependent loads (the first entry's node, then that node's launch).
    const uint list_directory_node =
        list_is_group_directory ? kInvalidNode
                                : SoleConsumer(records, table, node_count, level_records, record_count, min(s_sharing_count, kMaxSharingNodes));

    NodeStatsTable stats = NodeStatsAt(pc.scratch, header);
    const bool keep_statistics = (pc.flags & kLevelKeepStatistics) != 0u;
    const uint64_t directory_address = pc.scratch + HalfDirectoryOffset(header, h);
    NodeStatsVectors stats_vectors = NodeStatsVectors(pc.scratch + header.node_stats_offset);
    NodeStateVectors state_vectors = NodeStateVectors(pc.scratch + HalfNodesOffset(header, h));
    NodeStatePairs state_pairs = NodeStatePairs(pc.scratch + HalfNodesOffset(header, h));
    for (uint n = t; n < node_count; n += gl_WorkGroupSize.x) {
        const uint base = RangeBegin(n);
        const uint count = s_end[n] - base;
        const uint kept = Kept(n, capacity);
        // Sharing nodes can need more directory entries than the record list holds; the excess is dropped (and was
        // skipped by the scatter) so that no node writes outside its directory range.
        // A node without records keeps the cleared state the previous level pass (or the dispatch's begin) left in this
        // half: nothing to write, and no round trips to memory for it (a 1024-node graph has about a thousand per level).
        s_total[n] = 0u;
        // A dispatch group's workgroups run its members' records in directory order (the lowered prologue of a static
        // broadcast group reads its record at group_directory_base + workgroup / grid), so the first member holds
        // where the group's range starts, whether or not it has records itself.
        // Where the record list is the group's directory (pc.list_directory_group), its range is the whole list: the list
        // lies record_capacity entries before the directory, and indices wrap in 32 bits as the lowered nodes' offsets do.
        if (IsDispatchGroupFirst(table, n, node_count)) {
            input_half.nodes[n].group_directory_base = list_is_group_directory ? 0u - capacity : min(base, capacity);
        }
        if (count == 0u) continue;
        // What this node's statistics held before this level (records, dispatches, workgroups, dropped records): node n
        // belongs to this invocation alone, and no other workgroup writes its statistics while this one runs. Only the
        // `statistics` line reads the first three; without it they are left alone, and the loop waits for no load of
        // its own (the dropped count, which reports need, is kept by ReportDrop either way).
        const uvec4 node_stats = keep_statistics ? stats_vectors.v[n * (kNodeStatsSize / 16u)] : uvec4(0u);
        const uint launch = table.infos[n].launch;
        uint total;
        if (list_is_group_directory) {
            total = kept * StaticGridWorkgroups(table, n);  // nothing was scattered: no cursor to read
        } else if (launch == kLaunchBroadcastStatic || launch == kLaunchBroadcastDynamic) {
            const uint64_t cursor = atomicAdd(input_half.nodes[n].scatter_cursor, 0ul);
            total = uint(cursor);
            if (uint(cursor >> 32) > kept) {
                // The cursor also counted the workgroups of the dropped tail, which come last: stop at the end of the
                // last kept record. A static grid's records all launch the grid; a dynamic one's last kept entry says
                // where it ends (written by another workgroup, hence the coherent read).
                total = 0u;
                if (launch == kLaunchBroadcastStatic) {
                    total = kept * StaticGridWorkgroups(table, n);
                } else if (kept != 0u) {
                    CoherentWords last = CoherentWords(directory_address + uint64_t(base + kept - 1u) * kDirectoryEntrySize);
                    total = last.w[kDirectoryEntryFirstWorkgroupOrNodeOffset / 4u] + last.w[kDirectoryEntryFinishCounterOffset / 4u];
                }
            }
        } else {
            total = BatchedWorkgroups(table, n, kept);
        }
        s_total[n] = total;

        // The node's state and statistics in three vector stores where WriteDispatchArgs and the statistics took nine
        // stores of one field each. This one workgroup writes them for every node with records, 1024 of a 1024-material
        // classification's 1025, whose lanes' nodes lie 48 bytes apart: `classify_1024` 68.0 -> 64.6 µs on an H200
        // (docs/performance.md, 2026-11-27 evening). A dispatch group's first member gets the group's arguments over its
        // own below. The sole consumer's entry i is record list entry i: the record list lies record_capacity entries
        // before the directory, and directory indices wrap in 32 bits as the lowered nodes' offsets do. A total of 0
        // leaves the arguments as cleared.
        const uvec3 dispatch = total != 0u ? SplitDispatch(pc.scratch, header, n, pc.level, total) : uvec3(0u);
        const uint directory_base = n == list_directory_node ? 0u - capacity : min(base, capacity);
        state_vectors.v[n * (kNodeStateSize / 16u)] = uvec4(kept, directory_base, total, dispatch.x);
        state_pairs.v[n * (kNodeStateSize / 8u) + 2u] = dispatch.yz;  // NodeState::dispatch[1..2]; the cursor stays
        const uint dispatched = total != 0u ? 1u : 0u;
        const uint workgroups = min(total, 0xFFFFFFFFu - node_stats.z);  // saturates, as WriteDispatchArgs
        if (kept == count) {
            if (keep_statistics) {
                stats_vectors.v[n * (kNodeStatsSize / 16u)] =
                    uvec4(node_stats.x + kept, node_stats.y + dispatched, node_stats.z + workgroups, node_stats.w);
            }
        } else {
            // The drop report adds to the dropped records, which the vector above would overwrite with the old count.
            ReportDrop(pc.scratch, header, n, pc.level, kStatusRecordListOverflow, count - kept);
            if (keep_statistics) {
                stats.stats[n].records = node_stats.x + kept;
                stats.stats[n].dispatches = node_stats.y + dispatched;
                stats.stats[n].workgroups = node_stats.z + workgroups;
            }
        }
    }

    // Dispatch groups (docs/design.md, "Dispatch groups"): the scheduler dispatches a group's first node with the whole
    // group's workgroups, and each member finds its workgroups by its first workgroup within the group.
    barrier();  // s_total is complete, and nothing reads s_end's input ranges any more
    const bool overflow = pc.has_dispatch_groups != 0u && ScanWorkgroupTotals(node_count);
    uint launched = 0u;  // workgroups the scheduler's dispatches of this level launch, for the nodes of this invocation
    for (uint n = t; n < node_count; n += gl_WorkGroupSize.x) {
        const uint first = table.infos[n].dispatch_group_first;
        const uint size = table.infos[n].dispatch_group_size;
        const bool grouped = pc.has_dispatch_groups != 0u && IsDispatchGroupMember(first, size, n, node_count);
        // A node outside any group is dispatched on its own (with no workgroups when it has no records).
        if (!grouped) {
            launched += LaunchedWorkgroups(s_total[n]);
            continue;
        }
        // Every member's first workgroup, empty ones included: the lowered nodes' binary search needs them ascending.
        input_half.nodes[n].group_first_workgroup = s_end[n] - s_end[first];
        if (n != first) continue;
        uint64_t group_total = uint64_t(s_end[first + size - 1u] - s_end[first]) + uint64_t(s_total[first + size - 1u]);
        if (overflow) {
            // Only when the level's workgroups reached 2^32: sum exactly; a group that really has that many cannot be
            // dispatched (its members' first workgroups would wrap), so its records are dropped and reported.
            group_total = 0ul;
            for (uint m = first; m < first + size; ++m) group_total += uint64_t(s_total[m]);
            if (group_total > 0xFFFFFFFFul) {
                for (uint m = first; m < first + size; ++m) {
                    ReportDrop(pc.scratch, header, m, pc.level, kStatusGridClamped, input_half.nodes[m].record_count);
                }
                group_total = 0ul;
            }
        }
        WriteGroupDispatchArgs(pc.scratch, header, input_half, n, pc.level, uint(group_total));
        input_half.nodes[n].group_workgroups = uint(group_total);
        launched += LaunchedWorkgroups(uint(group_total));
    }
    // Direct levels (docs/design.md): the last of these workgroups prepares the next level when that one is direct. It
    // counts against this total (mod 2^32, as its counter). Every node with records at this level is one the scheduler
    // dispatches at it: levels list every node a record can reach, and the entry pass accepts entry nodes only.
    uint launched_total;
    WorkgroupInclusiveAdd(launched, launched_total);
    if (t == 0u) {
        header.level_workgroups[h] = launched_total;
        atomicMax(header.heap_high_water, input_heap_top);
        atomicMax(header.record_high_water, input_records);
        input_half.level_pass_done = 0u;  // every other workgroup has counted
        header.input_half = h;
        header.level = pc.level;
        if (level_records != 0u) header.levels_run = pc.level + 1u;
    }
    if (launched_total == 0u) {
        // Nothing runs at this level (its records, if any, launch no workgroups: dynamic grids of 0), so nothing will
        // clear this half for the next level's outputs when the next level is direct: clear it now. Its arguments are
        // all zero, so the dispatches that follow read the same.
        ClearNodeStates(pc.scratch, header, h, t, gl_WorkGroupSize.x);
        if (t == 0u) {
            input_half.heap_top = 0u;
            input_half.record_count = 0u;
            input_half.level_pass_workgroups = 1u;  // at least 1 (HalfHeader)
        }
    }
    // Where the scheduler records no finish pass, the pass of the last level writes the report: that level's nodes have
    // no outputs (else there would be a leftover check), so they cannot drop anything, and with this level's statistics
    // and arguments written the report is final. The header's words are uniform across the workgroup.
    if (writes_report && report_slot != 0ul) {
        WriteReport(pc.scratch, header, report_slot, header.report_serial, header.report_stats, gl_WorkGroupSize.x);
    }
}
