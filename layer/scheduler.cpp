#include "scheduler.h"

#include "emulation_support.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <utility>

namespace execgraph {
namespace {

using runtime::GraphHeader;
using runtime::HalfHeader;
using runtime::kInvalidNode;
using runtime::NodePushContext;
using runtime::NodeState;

// Push-constant blocks of the meta shaders (meta_shaders/*.comp), std430.
struct EnqueueParams {
    uint64_t scratch;
    uint64_t count_info;
    uint32_t graph_tag;
    uint32_t pad;
};
struct PrepareParams {
    uint64_t scratch;
    uint32_t written_half;
    uint32_t level;
};
struct ScatterParams {
    uint64_t scratch;
    uint32_t source_node;
    uint32_t consumer_node;
};
struct WriteArgsParams {
    uint64_t scratch;
};
// GraphHeader::report_stats: copy the NodeStats only when the header shows dropped work (meta_shaders/level_common.glsl).
constexpr uint32_t kStatsOnlyOnDrops = 0x80000000u;
// LevelParams::flags; keep in sync with meta_shaders/level.comp.
constexpr uint32_t kLevelSharedCounts = 1u;    // scatter with per-node counts in shared memory (ScatterWithSharedCounts)
constexpr uint32_t kLevelKeepStatistics = 2u;  // update NodeStats' records, dispatches and workgroups
struct LevelParams {
    uint64_t scratch;
    uint32_t input_half;
    uint32_t level;
    uint32_t has_dispatch_groups;
    uint32_t flags;  // kLevelSharedCounts | kLevelKeepStatistics
    uint32_t graph_tag;      // level 0 checks that scratch was initialized for this graph (level.comp)
    uint32_t list_directory_group;  // GraphPlan::list_directory_group[level]: the record list is that group's directory
};
// The finish pass reads its report slot from the header (GraphHeader::report_slot), so that it records the same commands
// in every dispatch of a graph (prepared levels, below).
struct FinishParams {
    uint64_t scratch;
    uint32_t level;  // the level count; the written half is level % 2
    uint32_t leftover_check;
};
static_assert(sizeof(EnqueueParams) <= kMetaPushConstantSize && sizeof(PrepareParams) <= kMetaPushConstantSize &&
              sizeof(ScatterParams) <= kMetaPushConstantSize && sizeof(WriteArgsParams) <= kMetaPushConstantSize &&
              sizeof(LevelParams) <= kMetaPushConstantSize && sizeof(FinishParams) <= kMetaPushConstantSize);

// Workgroups of the grid-stride passes. The entry pass with a host-known count uses one workgroup per info up to
// kMaxEntryWorkgroups; the others loop, so these only trade parallelism against empty workgroups.
constexpr uint32_t kDeviceCountEntryWorkgroups = 256;
constexpr uint32_t kMaxEntryWorkgroups = 1024;
constexpr uint32_t kScatterWorkgroups = 128;
constexpr uint32_t kScatterWorkgroupSize = 64;
// The finish pass: with a leftover check, one invocation per node up to kMaxFinishWorkgroups workgroups, so a graph of up
// to 256 nodes, the common case, runs one workgroup (on a CPU device an idle workgroup costs its barriers); without one,
// a single workgroup (the report copy is the last workgroup's alone).
constexpr uint32_t kFinishWorkgroupSize = 256;
constexpr uint32_t kMaxFinishWorkgroups = 64;

constexpr VkDeviceSize kUpdateBufferMax = 65536;  // vkCmdUpdateBuffer dataSize limit
// The begin transfers zero a half's counters and node states and the per-node statistics with inline zeros
// (vkCmdUpdateBuffer) up to this many bytes, and with vkCmdFillBuffer beyond. On the H100 (NVIDIA 580) a fill cost far
// more GPU time than its bytes: zeroing half 1 of `overhead_single` (176 bytes) inline instead took its dispatch from 13.8
// to 11.3 µs, `classify_8` -4.1%, `fan_out_tree` -3.2%, `thread_launch` -2.7%, `recursion` -2.6% (docs/performance.md).
// Inline bytes cost recording time instead (about 0.2 µs per KiB there), and longer runs (a 1025-node graph's 49 KiB of
// node states) keep the fill: neither inline zeros up to 16 KiB nor a compute pass clearing them beside the transfers
// made the larger graphs faster on the H100.
constexpr VkDeviceSize kInlineZeroMaxBytes = 4096;

// NodeStaticInfo::launch of a dynamic broadcast node: spirv::LaunchKind::kBroadcastDynamic, kLaunchBroadcastDynamic in
// meta_shaders/scratch_layout.glsl (this file stays free of the SPIR-V headers, as the scheduler tests build it alone).
constexpr uint32_t kLaunchBroadcastDynamic = 1;

constexpr uint32_t AlignUp4(uint32_t value) { return (value + 3u) & ~3u; }

// The device-side form of a dispatch's entries: a VkDispatchGraphCountInfoAMDX (24 bytes) and, for kHostInfos, the
// infos and payloads it points to, laid out to be copied to `base` (half 1's heap, unused until level 0 writes it).
struct StagedEntries {
    std::vector<uint8_t> bytes;
    uint32_t dropped = 0;
    std::vector<uint32_t> dropped_per_node;  // empty unless payloads of known nodes were dropped
    uint32_t count = 0;  // infos the entry pass reads
};

void ChargeDrop(StagedEntries* staged, uint32_t node, uint32_t node_count, uint32_t count) {
    staged->dropped += count;
    if (node >= node_count || count == 0) return;
    if (staged->dropped_per_node.empty()) staged->dropped_per_node.resize(node_count, 0);
    staged->dropped_per_node[node] += count;
}

void Append(std::vector<uint8_t>* bytes, const void* data, size_t size) {
    const auto* begin = static_cast<const uint8_t*>(data);
    bytes->insert(bytes->end(), begin, begin + size);
}

StagedEntries StageEntries(const EntrySource& source, const GraphPlan& plan, VkDeviceAddress base, uint32_t capacity) {
    StagedEntries staged;
    const VkDispatchGraphCountInfoAMDX& count_info = source.count_info;
    if (source.kind == EntrySource::Kind::kHostCountInfo) {
        Append(&staged.bytes, &count_info, sizeof(count_info));
        staged.count = count_info.count;
        return staged;
    }
    // kHostInfos. The spec lets the implementation keep none of the host pointers (facts §12.2), so payloads are copied
    // now. Infos first (24-byte stride), then each valid info's payloads packed at its node's record stride.
    const auto* infos = static_cast<const uint8_t*>(count_info.infos.hostAddress);
    const uint32_t max_infos = capacity < sizeof(VkDispatchGraphCountInfoAMDX)
                                   ? 0
                                   : (capacity - sizeof(VkDispatchGraphCountInfoAMDX)) / sizeof(VkDispatchGraphInfoAMDX);
    const uint32_t count = std::min(count_info.count, max_infos);
    for (uint32_t i = count; i < count_info.count; ++i) {
        const auto* info = reinterpret_cast<const VkDispatchGraphInfoAMDX*>(infos + i * count_info.stride);
        ChargeDrop(&staged, info->nodeIndex, plan.node_count(), info->payloadCount);
    }
    staged.count = count;
    VkDispatchGraphCountInfoAMDX device_count_info{};
    device_count_info.count = count;
    device_count_info.infos.deviceAddress = base + sizeof(VkDispatchGraphCountInfoAMDX);
    device_count_info.stride = sizeof(VkDispatchGraphInfoAMDX);
    Append(&staged.bytes, &device_count_info, sizeof(device_count_info));

    const size_t infos_start = staged.bytes.size();
    staged.bytes.resize(infos_start + size_t(count) * sizeof(VkDispatchGraphInfoAMDX));
    for (uint32_t i = 0; i < count; ++i) {
        VkDispatchGraphInfoAMDX info;
        std::memcpy(&info, infos + i * count_info.stride, sizeof(info));
        VkDispatchGraphInfoAMDX device_info{};
        device_info.nodeIndex = info.nodeIndex;
        device_info.payloadCount = info.payloadCount;
        // Unknown nodes keep their count so that the entry pass flags and counts them like device-side infos.
        if (info.nodeIndex < plan.node_count() && info.payloadCount != 0) {
            const uint32_t payload_size = plan.nodes[info.nodeIndex].payload_size;
            const uint32_t record_stride = AlignUp4(payload_size);
            const size_t room = capacity - std::min<size_t>(capacity, staged.bytes.size());
            const uint32_t fits =
                record_stride == 0 ? info.payloadCount : static_cast<uint32_t>(std::min<size_t>(info.payloadCount, room / record_stride));
            ChargeDrop(&staged, info.nodeIndex, plan.node_count(), info.payloadCount - fits);
            device_info.payloadCount = fits;
            device_info.payloads.deviceAddress = base + staged.bytes.size();
            device_info.payloadStride = record_stride;
            const auto* payloads = static_cast<const uint8_t*>(info.payloads.hostAddress);
            for (uint32_t p = 0; p < fits; ++p) {
                const size_t at = staged.bytes.size();
                staged.bytes.resize(at + record_stride, 0);
                if (payload_size != 0) std::memcpy(staged.bytes.data() + at, payloads + p * info.payloadStride, payload_size);
            }
        }
        std::memcpy(staged.bytes.data() + infos_start + i * sizeof(VkDispatchGraphInfoAMDX), &device_info, sizeof(device_info));
    }
    return staged;
}

// Level 0 of a vkCmdDispatchGraphAMDX written by the host (docs/design.md, "One graph dispatch", step 2): what the entry
// pass would leave in half 0, laid out at record time, so that the dispatch needs neither the entry pass nor its barrier
// (about 5 µs of every such dispatch on an H200, docs/performance.md). The host knows every entry record. Half 0's
// HalfHeader, NodeStates and record list are contiguous; the begin transfers write them, in place of the fill that
// cleared them, as `writes`: vkCmdUpdateBuffer for the header, the entry nodes' states and the records, vkCmdFillBuffer
// for the long runs of NodeStates that stay zero. The payloads go into half 0's heap with one more vkCmdUpdateBuffer, in
// place of the staging copy. Records are placed in info order, which is one of the orders the entry pass's atomics could
// give.
//
// Where level 0 is direct (GraphPlan::direct_level_consumer; the entry pass's last workgroup would prepare it), or its
// only node is a dynamic broadcast node (whose level pass would only scatter its directory and write its arguments),
// the host prepares it too: the consumer's arguments and directory in its NodeState, its statistics, and the header
// words that meta_shaders/level_common.glsl's PrepareDirectLevel (or the level pass) writes. Its node dispatch then
// follows the begin barrier, and no meta pass runs before it. The entry pass's initialization check goes with the entry
// pass, so the begin transfers also rewrite the tables that level 0's dispatch reads (TablesRewrite): whatever scratch
// held, level 0 reads this graph's tables and stays inside scratch.
struct HostLevelZero {
    struct Write {
        uint32_t offset;  // from GraphHeader::half_offset[0]
        uint32_t size;
        bool zero;            // vkCmdFillBuffer with 0; else vkCmdUpdateBuffer from `data`
        uint32_t data_begin;  // into `data`
    };
    std::vector<Write> writes;  // ascending, disjoint, covering HalfHeader, NodeState[node_count] and the record list
    std::vector<uint8_t> data;
    std::vector<uint8_t> heap;  // the records' payloads, from half 0's heap
    // Working storage of LayOutHostLevelZero: the record list, and (node, records) per info with records.
    std::vector<runtime::RecordEntry> entries;
    std::vector<std::pair<uint32_t, uint32_t>> node_records;
    uint32_t update_bytes = 0;
    uint32_t records = 0;
    uint32_t heap_top = 0;
    // A direct level 0: its consumer (kInvalidNode: level 0 has a level pass) and the workgroups its dispatch runs.
    uint32_t prepared_consumer = kInvalidNode;
    uint32_t prepared_workgroups = 0;
};

// Which of the node and output tables (GraphPlan::node_table, output_table; about 64 bytes per node) the begin transfers
// of a host-prepared level 0 rewrite.
// - kAll: both tables, and GraphHeader::tables_tag. Every level then reads this graph's tables, so the whole dispatch
//   runs correctly even in scratch that was not initialized for the graph, and the report flags that (WriteReport); a
//   later dispatch that checks initialization finds tables rewritten for another graph and runs nothing
//   (ScratchInitializedFor).
// - kLevelZeroConsumer: only what level 0's dispatch reads, its consumer's NodeStaticInfo and output-table entries
//   (spirv_lowering's LaunchPass; nothing else where the consumer is in no dispatch group and hands no level off), and
//   not tables_tag. Level 1 then has a level pass, which checks initialization as the entry pass would
//   (MetaShader::kLevelCheckingInitialization) before it trusts the rest: in scratch not initialized for the graph,
//   level 0 runs and level 1's records are reported and dropped. For large graphs: on an H200 writing the 70 KB of
//   tables of a 1025-node classification graph cost most of what skipping its level 0's level pass saves. Rewriting
//   only its classification node's 4 KB (and filling its 32 KiB of zero statistics rather than writing them) took
//   `classify_8_of_1024` from 84.1 to 72.2 µs and `classify_1024` from 91.8 to 79.0 (docs/performance.md).
enum class TablesRewrite { kNone, kAll, kLevelZeroConsumer };
// Tables up to kWholeTablesRewriteMaxBytes (scheduler.h) are rewritten whole (kAll).
// Beyond it, graphs whose level 1 has no level pass to check initialization keep level 0's pass: 128 KiB holds the
// tables of about 2000 nodes.
constexpr size_t kRewrittenTablesMaxBytes = 131072;

// VkDispatchIndirectCommand for `total` workgroups, as level_common.glsl's DispatchShape: x at most kDispatchSplitWidth,
// y the rows.
std::array<uint32_t, 3> DispatchShape(uint32_t total) {
    if (total == 0) return {0, 0, 0};
    const uint32_t width = runtime::kDispatchSplitWidth;
    const uint32_t rows = total / width + (total % width != 0 ? 1 : 0);
    return {std::min(total, width), std::min(rows, width), 1};
}

// What goes through the command buffer (vkCmdUpdateBuffer's data travels inside it) is at most 64 KiB for the half and 64
// KiB for the payloads: 1024 entry records with 16 KiB of payloads took 27 µs less than the entry pass on an H200. Runs
// of more than kHostLevelZeroFillRunBytes of zero NodeStates are filled rather than written, and shorter ones written
// with their neighbours, because on an H200 both the bytes and the transfer commands cost (docs/performance.md): writing
// all 49 KiB of states of a 1025-node graph with one entry node took about 2 µs longer than filling all but that node's,
// and for a 65-node graph, filling its 3 KiB of zero states (two transfer commands more) about 2 µs longer than writing
// them.
constexpr size_t kHostLevelZeroMaxBytes = 65536;
constexpr uint32_t kHostLevelZeroFillRunBytes = 16384;

// Appends the bytes [offset, offset + size) of half 0 to `level`, either as data (merged into the previous update where
// it ends at `offset`) or as a zero fill.
void AppendHostWrite(HostLevelZero& level, uint32_t offset, const void* bytes, uint32_t size, bool zero) {
    if (size == 0) return;
    HostLevelZero::Write* last = level.writes.empty() ? nullptr : &level.writes.back();
    if (zero) {
        level.writes.push_back({offset, size, true, 0});
        return;
    }
    if (last == nullptr || last->zero || last->offset + last->size != offset) {
        level.writes.push_back({offset, 0, false, static_cast<uint32_t>(level.data.size())});
        last = &level.writes.back();
    }
    const auto* source = static_cast<const uint8_t*>(bytes);
    if (source != nullptr) {
        level.data.insert(level.data.end(), source, source + size);
    } else {
        level.data.resize(level.data.size() + size, 0);
    }
    last->size += size;
    level.update_bytes += size;
}

// Workgroups one record of a dynamic broadcast node launches, read from its host payload as the level pass's
// RecordWorkgroups (meta_shaders/level_common.glsl) reads it; nothing where that pass would clamp the grid (past
// MaxNumWorkgroupsAMDX, or the advertised limits without one) or drop the record, which it reports, or where the grid
// member lies outside the payload.
std::optional<uint32_t> HostRecordWorkgroups(const runtime::NodeStaticInfo& node, uint32_t payload_size, const uint8_t* payload) {
    const uint32_t bytes = node.grid_component_bits == 16 ? 2 : 4;
    if (node.grid_components == 0 || node.grid_components > 3 || uint64_t{node.grid_offset} + node.grid_components * bytes > payload_size) {
        return std::nullopt;
    }
    uint64_t product = 1;
    for (uint32_t i = 0; i < 3; ++i) {
        uint32_t value = 1;  // a scalar or 2-vector grid leaves the other dimensions 1 (facts 12.5)
        if (i < node.grid_components) {
            value = 0;
            std::memcpy(&value, payload + node.grid_offset + i * bytes, bytes);  // little-endian, as the device reads it
        }
        const uint32_t maximum = node.static_grid[i] == 0 ? kAdvertisedMaxWorkgroupCountPerDimension : node.static_grid[i];
        if (value > maximum) return std::nullopt;
        product *= value;
    }
    if (product > kAdvertisedMaxWorkgroups) return std::nullopt;
    return static_cast<uint32_t>(product);
}

// Lays level 0 out into `level`, whose vectors keep their storage from one call to the next (RecordDispatch passes a
// per-thread one, so that recording a dispatch allocates nothing here once a thread has recorded one of its size).
// Returns false where the entry pass must run instead: an info it would drop (unknown or non-entry node, which the
// layer rejects before recording but the scheduler's own callers may pass, or for a direct level 0 a node other than its
// consumer), records that do not fit the half (the entry pass reports the overflow) or more than kHostLevelZeroMaxBytes
// to write through the command buffer. `prepared_consumer`: level 0's consumer where the host prepares its dispatch
// (a direct level 0, or level 0's sole dynamic broadcast node: PreparableByHost), else kInvalidNode; nothing is also
// returned where a dynamic grid would be clamped or dropped, or launch no workgroup at all (its level pass reports the
// first two, and clears the half for the third).
bool LayOutHostLevelZero(const VkDispatchGraphCountInfoAMDX& count_info, const GraphPlan& plan, const ScratchLayout& layout,
                         uint32_t records_per_level_pass_workgroup, uint32_t prepared_consumer, HostLevelZero& level) {
    const uint32_t node_count = plan.node_count();
    const auto* infos = static_cast<const uint8_t*>(count_info.infos.hostAddress);
    // A dynamic broadcast consumer's records each launch their own grid, which the host reads from the payloads.
    const bool dynamic = prepared_consumer != kInvalidNode &&
                         plan.node_table[prepared_consumer].launch == kLaunchBroadcastDynamic;
    auto grid_workgroups = [&](const uint8_t* payload) -> std::optional<uint32_t> {
        return HostRecordWorkgroups(plan.node_table[prepared_consumer], plan.nodes[prepared_consumer].payload_size, payload);
    };
    // First pass: check and size, so that nothing is allocated for a set the entry pass takes.
    uint64_t records = 0, heap_bytes = 0, dynamic_workgroups = 0;
    for (uint32_t i = 0; i < count_info.count; ++i) {
        VkDispatchGraphInfoAMDX info;
        std::memcpy(&info, infos + size_t(i) * count_info.stride, sizeof(info));
        if (info.payloadCount == 0) continue;
        // The entry pass's `dispatchable` (meta_shaders/enqueue_entries.comp, facts §12.3).
        if (info.nodeIndex >= node_count || !plan.nodes[info.nodeIndex].is_api_entry ||
            plan.nodes[info.nodeIndex].shares_input_with != kInvalidNode || info.payloads.hostAddress == nullptr ||
            (prepared_consumer != kInvalidNode && info.nodeIndex != prepared_consumer)) {
            return false;
        }
        const NodeDispatchPlan& node = plan.nodes[info.nodeIndex];
        const uint32_t record_stride = std::max(node.record_stride, AlignUp4(node.payload_size));
        for (uint32_t p = 0; dynamic && p < info.payloadCount; ++p) {
            const std::optional<uint32_t> workgroups =
                grid_workgroups(static_cast<const uint8_t*>(info.payloads.hostAddress) + size_t(p) * info.payloadStride);
            if (!workgroups) return false;
            dynamic_workgroups += *workgroups;
            // The level's workgroups: one dispatch (DispatchShape) counted in 32 bits (first workgroups, the hand-off).
            if (dynamic_workgroups > uint64_t{runtime::kDispatchSplitWidth} * runtime::kDispatchSplitWidth) return false;
        }
        records += info.payloadCount;
        // Whole 16-byte units per record, as the entry pass and lowered allocations take them.
        heap_bytes += uint64_t(info.payloadCount) * ((record_stride + 15u) & ~15u);
    }
    const uint64_t list_bytes = records * sizeof(runtime::RecordEntry);
    if (records > layout.record_capacity || heap_bytes > layout.heap_capacity || list_bytes > kHostLevelZeroMaxBytes ||
        heap_bytes > kHostLevelZeroMaxBytes || (dynamic && dynamic_workgroups == 0)) {
        return false;
    }
    level.writes.clear();
    level.data.clear();
    level.data.reserve(sizeof(HalfHeader) + size_t(node_count) * sizeof(NodeState) + list_bytes);
    level.heap.assign(size_t(heap_bytes), 0);
    level.entries.resize(static_cast<size_t>(records));
    level.node_records.clear();
    level.update_bytes = 0;
    level.prepared_consumer = kInvalidNode;
    level.prepared_workgroups = 0;
    std::vector<runtime::RecordEntry>& entries = level.entries;
    std::vector<std::pair<uint32_t, uint32_t>>& node_records = level.node_records;  // (node, records) per info with records
    uint32_t slot = 0, heap_top = 0, first_workgroup = 0;
    for (uint32_t i = 0; i < count_info.count; ++i) {
        VkDispatchGraphInfoAMDX info;
        std::memcpy(&info, infos + size_t(i) * count_info.stride, sizeof(info));
        if (info.payloadCount == 0) continue;
        const NodeDispatchPlan& node = plan.nodes[info.nodeIndex];
        const uint32_t record_bytes = (std::max(node.record_stride, AlignUp4(node.payload_size)) + 15u) & ~15u;
        const auto* payloads = static_cast<const uint8_t*>(info.payloads.hostAddress);
        for (uint32_t p = 0; p < info.payloadCount; ++p) {
            if (node.payload_size != 0) {
                std::memcpy(level.heap.data() + heap_top, payloads + size_t(p) * info.payloadStride, node.payload_size);
            }
            // Entry records start a chain: recursion depth 0. For a dynamic broadcast consumer the record list is its
            // directory (as for a direct level; RecordEntry's members match DirectoryEntry's), so each entry holds what
            // the level pass's Scatter would write: the record's first workgroup in the level and, as the counter
            // OpFinishWritingNodePayloadAMDX counts down, its workgroups.
            if (dynamic) {
                const uint32_t workgroups = *grid_workgroups(payloads + size_t(p) * info.payloadStride);
                entries[slot++] = runtime::RecordEntry{heap_top, 0, first_workgroup, workgroups};
                first_workgroup += workgroups;
            } else {
                entries[slot++] = runtime::RecordEntry{heap_top, 0, info.nodeIndex, 0};
            }
            heap_top += record_bytes;
        }
        node_records.emplace_back(info.nodeIndex, info.payloadCount);
    }
    // Several infos may name one node; its state holds their sum.
    std::sort(node_records.begin(), node_records.end());

    level.records = slot;
    level.heap_top = heap_top;
    HalfHeader half{};
    half.heap_top = heap_top;
    half.record_count = slot;
    // One level-pass workgroup per records_per_level_pass_workgroup records, as the entry pass asks for them, and at least
    // one: a CPU device dispatches the pass by this word and the two after it (HalfHeader).
    const uint32_t per_workgroup = std::max(records_per_level_pass_workgroup, 1u);
    half.level_pass_workgroups = std::clamp((slot + per_workgroup - 1) / per_workgroup, 1u, runtime::kDispatchSplitWidth);
    half.level_pass_dispatch_y = 1;
    half.level_pass_dispatch_z = 1;
    AppendHostWrite(level, 0, &half, sizeof(half), false);
    uint32_t written_to = sizeof(HalfHeader);
    // Zero states between two written ones (or before the record list) are filled where the run is long, else written.
    auto zeros_up_to = [&](uint32_t offset) {
        AppendHostWrite(level, written_to, nullptr, offset - written_to, offset - written_to > kHostLevelZeroFillRunBytes);
        written_to = offset;
    };
    for (size_t i = 0; i < node_records.size();) {
        NodeState state{};
        const uint32_t node = node_records[i].first;
        for (; i < node_records.size() && node_records[i].first == node; ++i) state.record_count += node_records[i].second;
        if (node == prepared_consumer) {
            // PrepareDirectLevel (meta_shaders/level_common.glsl), or the level pass for a dynamic broadcast consumer:
            // the record list is the consumer's directory, and a static broadcast consumer runs its grid per record, a
            // dynamic one each record's own, a thread or coalescing one a batch of records per workgroup. The scheduler
            // makes level 0 direct only where these fit one dispatch (RecordDispatch, is_direct); dynamic grids are
            // checked above.
            const uint64_t grid = plan.nodes[node].static_grid_workgroups;
            const uint32_t per_workgroup = std::max(plan.node_table[node].records_per_workgroup, 1u);
            level.prepared_workgroups = dynamic     ? first_workgroup
                                        : grid != 0 ? static_cast<uint32_t>(state.record_count * grid)
                                                    : (state.record_count + per_workgroup - 1) / per_workgroup;
            // The record list lies record_capacity entries before the directory; indices wrap in 32 bits, as the
            // lowered nodes' offsets do.
            state.directory_base = 0u - layout.record_capacity;
            // As the level pass's Scatter leaves it: records in the high half, workgroups in the low.
            if (dynamic) state.scatter_cursor = (uint64_t{state.record_count} << 32) | first_workgroup;
            state.workgroup_count = level.prepared_workgroups;
            const std::array<uint32_t, 3> shape = DispatchShape(level.prepared_workgroups);
            std::copy(shape.begin(), shape.end(), state.dispatch);
        }
        const uint32_t offset = static_cast<uint32_t>(sizeof(HalfHeader) + size_t(node) * sizeof(NodeState));
        zeros_up_to(offset);
        AppendHostWrite(level, offset, &state, sizeof(state), false);
        written_to = offset + sizeof(NodeState);
    }
    zeros_up_to(static_cast<uint32_t>(sizeof(HalfHeader) + size_t(node_count) * sizeof(NodeState)));
    AppendHostWrite(level, written_to, entries.data(), static_cast<uint32_t>(list_bytes), false);
    if (level.update_bytes > kHostLevelZeroMaxBytes) return false;
    level.prepared_consumer = prepared_consumer;
    return true;
}

// The GraphHeader fields that depend on the scratch size (everything but magic, graph_tag and the counters the meta
// shaders maintain).
GraphHeader HeaderFor(const ScratchLayout& layout) {
    GraphHeader header{};
    header.node_count = layout.node_count;
    header.record_capacity = layout.record_capacity;
    header.heap_capacity = layout.heap_capacity;
    header.node_table_offset = layout.node_table_offset;
    header.output_table_offset = layout.output_table_offset;
    header.trash_offset = layout.trash_offset;
    header.trash_size = layout.trash_size;
    header.node_stats_offset = layout.node_stats_offset;
    header.half_offset[0] = layout.half_offset[0];
    header.half_offset[1] = layout.half_offset[1];
    return header;
}

// Accesses of whatever used this scratch before: the spec's graph commands access it in the compute stage
// (facts §11), and the node dispatches of a previous graph dispatch also read their arguments in DRAW_INDIRECT.
constexpr VkPipelineStageFlags2 kPriorStages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT;
constexpr VkAccessFlags2 kShaderReadWrite = VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;

// Whether a level's one node dispatch covers exactly the states its last workgroup clears under
// runtime::kDirectLevelClearsOwnStates: a node dispatched alone pushes its own output-table base and clears its own state
// (a group member dispatched alone too), a group's dispatch pushes kDispatchGroupMarker and clears as many states as its
// first member's NodeStaticInfo counts.
bool ClearsOnlyItsOwnStates(const GraphPlan& plan, const LevelDispatch& dispatch) {
    if (dispatch.group_size == 1) return true;
    return dispatch.first_node < plan.node_table.size() &&
           plan.node_table[dispatch.first_node].dispatch_group_size == dispatch.group_size;
}

}  // namespace

SchedulerRecorder::SchedulerRecorder(const DeviceDispatchTable* dispatch, MetaPipelines* pipelines, bool use_synchronization2,
                                     uint32_t level_pass_records_per_workgroup, bool indirect_level_pass, bool finish_pass_reports)
    : dispatch_(dispatch),
      pipelines_(pipelines),
      use_synchronization2_(use_synchronization2),
      level_pass_records_per_workgroup_(level_pass_records_per_workgroup),
      indirect_level_pass_(indirect_level_pass),
      finish_pass_reports_(finish_pass_reports) {}

void SchedulerRecorder::ClearHalves(VkCommandBuffer cmd, const ScratchBinding& scratch, const ScratchLayout& layout,
                                    uint32_t first_half) const {
    for (uint32_t half = first_half; half < 2; ++half) {
        const VkDeviceSize at = scratch.offset + layout.half_offset[half];
        const VkDeviceSize states = VkDeviceSize(layout.node_count) * sizeof(NodeState);
        if (!indirect_level_pass_) {
            ZeroBytes(cmd, scratch.buffer, at, sizeof(HalfHeader) + states);
            continue;
        }
        HalfHeader cleared{};
        cleared.level_pass_workgroups = 1;
        cleared.level_pass_dispatch_y = 1;
        cleared.level_pass_dispatch_z = 1;
        UpdateBuffer(cmd, scratch.buffer, at, &cleared, sizeof(cleared));
        if (states != 0) ZeroBytes(cmd, scratch.buffer, at + sizeof(HalfHeader), states);
    }
}

void SchedulerRecorder::ZeroBytes(VkCommandBuffer cmd, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size) const {
    static constexpr std::array<uint8_t, kInlineZeroMaxBytes> kZeros{};
    if (size <= kInlineZeroMaxBytes) {
        UpdateBuffer(cmd, buffer, offset, kZeros.data(), static_cast<size_t>(size));
    } else {
        dispatch_->CmdFillBuffer(cmd, buffer, offset, size, 0);
    }
}

void SchedulerRecorder::UpdateBuffer(VkCommandBuffer cmd, VkBuffer buffer, VkDeviceSize offset, const void* data, size_t size) const {
    // Callers pass 4-byte multiples at 4-byte aligned offsets (VUID-vkCmdUpdateBuffer-dstOffset-00036, -dataSize-00038).
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (size_t done = 0; done < size;) {
        const VkDeviceSize chunk = std::min<VkDeviceSize>(kUpdateBufferMax, size - done);
        dispatch_->CmdUpdateBuffer(cmd, buffer, offset + done, chunk, bytes + done);
        done += chunk;
    }
}

void SchedulerRecorder::Barrier(VkCommandBuffer cmd, VkPipelineStageFlags2 src_stages, VkAccessFlags2 src_access,
                                VkPipelineStageFlags2 dst_stages, VkAccessFlags2 dst_access) const {
    // Global memory barriers: every pass touches scratch by device address, and the application's dispatch data too.
    if (!use_synchronization2_) {
        // The stages used here have the same bits in both APIs; the storage accesses map to SHADER_READ/WRITE.
        auto to_v1 = [](VkAccessFlags2 access) {
            VkAccessFlags v1 = static_cast<VkAccessFlags>(access & (VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT |
                                                                    VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_HOST_READ_BIT));
            if (access & VK_ACCESS_2_SHADER_STORAGE_READ_BIT) v1 |= VK_ACCESS_SHADER_READ_BIT;
            if (access & VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT) v1 |= VK_ACCESS_SHADER_WRITE_BIT;
            return v1;
        };
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        barrier.srcAccessMask = to_v1(src_access);
        barrier.dstAccessMask = to_v1(dst_access);
        dispatch_->CmdPipelineBarrier(cmd, static_cast<VkPipelineStageFlags>(src_stages), static_cast<VkPipelineStageFlags>(dst_stages), 0,
                                      1, &barrier, 0, nullptr, 0, nullptr);
        return;
    }
    VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    barrier.srcStageMask = src_stages;
    barrier.srcAccessMask = src_access;
    barrier.dstStageMask = dst_stages;
    barrier.dstAccessMask = dst_access;
    VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dependency.memoryBarrierCount = 1;
    dependency.pMemoryBarriers = &barrier;
    dispatch_->CmdPipelineBarrier2(cmd, &dependency);
}

void SchedulerRecorder::RunMeta(VkCommandBuffer cmd, VkPipeline pipeline, VkPipelineLayout layout, const void* params,
                                uint32_t params_size, uint32_t workgroups) const {
    dispatch_->CmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    dispatch_->CmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, params_size, params);
    dispatch_->CmdDispatch(cmd, workgroups, 1, 1);
}

void SchedulerRecorder::RecordSplitLevelPasses(VkCommandBuffer cmd, const GraphPlan& plan, VkDeviceAddress scratch,
                                               uint32_t input_half, uint32_t level, const SplitPipelines& pipelines,
                                               uint32_t scatter_workgroups) const {
    const PrepareParams prepare_params{scratch, input_half, level};
    RunMeta(cmd, pipelines.prepare, pipelines.layout, &prepare_params, sizeof(prepare_params), 1);

    Barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, kShaderReadWrite);
    const ScatterParams scatter_params{scratch, kInvalidNode, kInvalidNode};
    RunMeta(cmd, pipelines.scatter, pipelines.layout, &scatter_params, sizeof(scatter_params), scatter_workgroups);
    // Sharing nodes fill their own directory ranges from their source's records (prepare gave every sharing node its
    // range, so every one is filled, dispatched at this level or not). These passes touch other nodes' cursors and
    // ranges than the main pass, so they need no barrier between them.
    for (uint32_t node = 0; node < plan.node_count(); ++node) {
        if (plan.nodes[node].shares_input_with == kInvalidNode) continue;
        const ScatterParams shared_params{scratch, plan.nodes[node].shares_input_with, node};
        RunMeta(cmd, pipelines.scatter, pipelines.layout, &shared_params, sizeof(shared_params), scatter_workgroups);
    }

    Barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, kShaderReadWrite);
    const WriteArgsParams args_params{scratch};
    RunMeta(cmd, pipelines.write_args, pipelines.layout, &args_params, sizeof(args_params), 1);
}

namespace {
// "level N", built once for the levels a graph can have (maxExecutionGraphDepth), so that a dispatch with labels
// formats no strings: with prepared levels every dispatch records its labels into the capture it compares.
const std::string& LevelLabel(uint32_t level) {
    static const std::vector<std::string> labels = [] {
        std::vector<std::string> texts;
        for (uint32_t l = 0; l <= runtime::kMaxLevels; ++l) texts.push_back("level " + std::to_string(l));
        return texts;
    }();
    if (level < labels.size()) return labels[level];
    thread_local std::string text;
    text = "level " + std::to_string(level);
    return text;
}
}  // namespace

void SchedulerRecorder::BeginLabel(VkCommandBuffer cmd, const std::string& text) const {
    VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
    label.pLabelName = text.c_str();
    dispatch_->CmdBeginDebugUtilsLabelEXT(cmd, &label);
}

RecordResult SchedulerRecorder::RecordInitialize(VkCommandBuffer cmd, const ScratchBinding& scratch, const ScratchPlan& plan,
                                                 uint32_t graph_tag, std::span<const runtime::NodeStaticInfo> nodes,
                                                 std::span<const uint32_t> output_table) {
    RecordResult result;
    const std::optional<ScratchLayout> layout = plan.LayoutFor(scratch.size);
    if (!layout) {
        result.result = VK_ERROR_INITIALIZATION_FAILED;
        result.error = "scratchSize " + std::to_string(scratch.size) + " is below the graph's minSize " + std::to_string(plan.MinSize());
        return result;
    }
    if (nodes.size() != plan.node_count() || output_table.size() != plan.output_table_entries()) {
        result.result = VK_ERROR_INITIALIZATION_FAILED;
        result.error = "node table or output table size does not match the scratch plan";
        return result;
    }
    Barrier(cmd, kPriorStages, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
    GraphHeader header = HeaderFor(*layout);
    header.magic = runtime::kScratchMagic;
    header.graph_tag = graph_tag;
    header.dispatch_graph_tag = graph_tag;
    header.tables_tag = graph_tag;
    UpdateBuffer(cmd, scratch.buffer, scratch.offset, &header, sizeof(header));
    if (!nodes.empty()) {
        UpdateBuffer(cmd, scratch.buffer, scratch.offset + layout->node_table_offset, nodes.data(), nodes.size_bytes());
    }
    if (!output_table.empty()) {
        UpdateBuffer(cmd, scratch.buffer, scratch.offset + layout->output_table_offset, output_table.data(), output_table.size_bytes());
    }
    ClearHalves(cmd, scratch, *layout, 0);
    // Later graph commands (ours start with transfers too) and the application's compute-stage accesses.
    Barrier(cmd, VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_TRANSFER_BIT,
            kShaderReadWrite | VK_ACCESS_2_TRANSFER_WRITE_BIT);
    return result;
}

uint32_t GraphPlan::sharing_node_count() const {
    return static_cast<uint32_t>(std::count_if(
        nodes.begin(), nodes.end(), [](const NodeDispatchPlan& node) { return node.shares_input_with != kInvalidNode; }));
}

bool GraphPlan::UsesFusedLevelPass() const {
    return !force_split_level_passes && node_count() <= kFusedLevelMaxNodes && sharing_node_count() <= kFusedLevelMaxSharingNodes;
}

void GraphPlan::FormDispatchGroups() {
    const uint32_t count = node_count();
    dispatch_group_first.resize(count);
    dispatch_group_size.assign(count, 1);
    for (uint32_t n = 0; n < count; ++n) dispatch_group_first[n] = n;
    level_dispatches.clear();
    has_dispatch_groups = false;
    direct_level_consumer.assign(levels.size(), kInvalidNode);
    direct_level_needs_small_producers.assign(levels.size(), 0);
    list_directory_group.assign(levels.size(), kInvalidNode);
    if (!UsesFusedLevelPass()) return;
    // Direct levels need the fused level pass's bookkeeping (GraphHeader::level_workgroups) on the levels that have one,
    // a sole consumer whose directory the record list can be (NodeDispatchPlan::reads_record_list) that shares no
    // input, and after level 0 (which the host or the entry pass prepares) the hand-off in every node of the level before.
    for (size_t level = 0; level < levels.size() && level < runtime::kMaxLevels; ++level) {
        if (levels[level].size() != 1 || levels[level][0] >= count) continue;
        if (level > 0 && !std::all_of(levels[level - 1].begin(), levels[level - 1].end(),
                                      [this, count](uint32_t n) { return n < count && nodes[n].level_hand_off; })) {
            continue;
        }
        const uint32_t consumer = levels[level][0];
        const bool shared = std::any_of(nodes.begin(), nodes.end(),
                                        [consumer](const NodeDispatchPlan& node) { return node.shares_input_with == consumer; });
        if (nodes[consumer].reads_record_list && nodes[consumer].shares_input_with == kInvalidNode && !shared) {
            direct_level_consumer[level] = consumer;
        }
    }
    // A group needs one pipeline (the dispatch binds one) and one push-constant layout; a node that shares another's
    // input reads its source's NodeState, which the group search does not cover.
    auto groupable = [this](uint32_t n) { return nodes[n].pipeline != VK_NULL_HANDLE && nodes[n].shares_input_with == kInvalidNode; };
    for (uint32_t first = 0; first < count;) {
        uint32_t end = first + 1;
        while (end < count && groupable(first) && groupable(end) && nodes[end].pipeline == nodes[first].pipeline &&
               nodes[end].group_key == nodes[first].group_key && nodes[end].layout == nodes[first].layout &&
               nodes[end].context_offset == nodes[first].context_offset) {
            ++end;
        }
        for (uint32_t n = first; n < end; ++n) {
            dispatch_group_first[n] = first;
            dispatch_group_size[n] = end - first;
        }
        has_dispatch_groups |= end - first > 1;
        first = end;
    }
    level_dispatches.resize(levels.size());
    for (size_t level = 0; level < levels.size(); ++level) {
        // A level that can have records for one member of a group only dispatches that member on its own: its arguments
        // are its own (the level pass writes every node's, and a group's total is then that member's), and its
        // workgroups need no search for their member.
        std::vector<uint32_t> members_at_level(count, 0);
        for (uint32_t node : levels[level]) {
            if (node < count) ++members_at_level[dispatch_group_first[node]];
        }
        std::vector<bool> listed(count, false);
        for (uint32_t node : levels[level]) {
            if (node >= count) continue;  // RecordDispatch reports it
            const uint32_t first = dispatch_group_first[node], size = dispatch_group_size[node];
            if (members_at_level[first] == 1) {
                level_dispatches[level].push_back(LevelDispatch{node, 1, {}});
                continue;
            }
            if (listed[first]) continue;
            listed[first] = true;
            LevelDispatch dispatch{first, size, {}};
            if (size > 1 && nodes[first].label != nullptr && nodes[first + size - 1].label != nullptr) {
                dispatch.group_label = *nodes[first].label + " .. " + *nodes[first + size - 1].label + " (" + std::to_string(size) + " nodes)";
            }
            level_dispatches[level].push_back(std::move(dispatch));
        }
    }
    // Levels whose records can only reach the members of one group of static broadcast nodes (AMD's classify shape: a
    // classify node feeding a node array) keep their records where the producers appended them. The members must all
    // read only their records' offsets and depths, and no node may read another's input (a group shares none itself).
    std::vector<bool> input_shared(count, false);
    for (const NodeDispatchPlan& node : nodes) {
        if (node.shares_input_with < count) input_shared[node.shares_input_with] = true;
    }
    for (size_t level = 0; level < levels.size(); ++level) {
        if (level_dispatches[level].size() != 1 || level_dispatches[level][0].group_size < 2) continue;
        const uint32_t first = level_dispatches[level][0].first_node, size = level_dispatches[level][0].group_size;
        bool qualifies = true;
        for (uint32_t m = first; m < first + size && qualifies; ++m) {
            qualifies = nodes[m].reads_record_list && nodes[m].static_grid_workgroups != 0 && !input_shared[m];
        }
        if (qualifies) list_directory_group[level] = first;
    }
    // Such a level can be direct too, after level 0 (which the host or the entry pass prepares for single consumers
    // only): the last workgroup of the level before writes the group's arguments, and with the statistics each member's,
    // looping over the members (LevelHandOffPass; RecordDispatch gives groups of more than kDirectLevelGroupMaxMembers a
    // level pass there). Every node of the level before needs the hand-off, as for a single consumer.
    for (size_t level = 1; level < levels.size() && level < runtime::kMaxLevels; ++level) {
        const uint32_t first = list_directory_group[level];
        if (first == kInvalidNode || direct_level_consumer[level] != kInvalidNode) continue;
        if (std::all_of(levels[level - 1].begin(), levels[level - 1].end(), [this, count](uint32_t n) {
                return n < count && nodes[n].level_hand_off && nodes[n].group_level_hand_off;
            })) {
            direct_level_consumer[level] = first;
            direct_level_needs_small_producers[level] =
                std::any_of(levels[level - 1].begin(), levels[level - 1].end(),
                            [this](uint32_t n) { return nodes[n].group_hand_off_needs_small_level; });
        }
    }
}

bool GraphPlan::DirectLevelIsGroup(size_t level) const {
    return level < direct_level_consumer.size() && direct_level_consumer[level] != kInvalidNode &&
           level < list_directory_group.size() && list_directory_group[level] == direct_level_consumer[level];
}

bool GraphPlan::NeedsLeftoverCheck() const {
    if (levels.empty()) return true;
    return std::any_of(levels.back().begin(), levels.back().end(),
                       [this](uint32_t node) { return node >= nodes.size() || nodes[node].has_outputs; });
}

RecordResult SchedulerRecorder::RecordDispatch(VkCommandBuffer cmd, const ScratchBinding& scratch, const GraphPlan& plan,
                                               const EntrySource& entries, const DispatchOptions& options) {
    RecordResult result;
    auto fail = [&result](std::string error) {
        result.result = VK_ERROR_INITIALIZATION_FAILED;
        result.error = std::move(error);
        return result;
    };
    // Everything is checked before anything is recorded, so a failed call leaves the command buffer untouched.
    const std::optional<ScratchLayout> layout = plan.scratch_plan.LayoutFor(scratch.size);
    if (!layout) {
        return fail("scratchSize " + std::to_string(scratch.size) + " is below the graph's minSize " +
                    std::to_string(plan.scratch_plan.MinSize()));
    }
    const uint32_t node_count = plan.node_count();
    if (node_count != plan.scratch_plan.node_count()) return fail("GraphPlan::nodes does not match the scratch plan's node count");
    for (size_t level = 0; level < plan.levels.size(); ++level) {
        for (uint32_t node : plan.levels[level]) {
            if (node >= node_count) return fail("level " + std::to_string(level) + " names node " + std::to_string(node));
            if (plan.nodes[node].pipeline == VK_NULL_HANDLE || plan.nodes[node].layout == VK_NULL_HANDLE) {
                return fail("node " + std::to_string(node) + " has no pipeline");
            }
        }
    }
    for (uint32_t node = 0; node < node_count; ++node) {
        const uint32_t source = plan.nodes[node].shares_input_with;
        if (source != kInvalidNode && (source >= node_count || source == node)) {
            return fail("node " + std::to_string(node) + " shares input with invalid node " + std::to_string(source));
        }
    }
    const ReportSlot& requested_report = options.report;
    const bool stats_count_ok = requested_report.stats_count == 0 || requested_report.stats_count == node_count;
    if (requested_report.address != 0 && (requested_report.address % 16 != 0 || requested_report.serial == 0 || !stats_count_ok)) {
        return fail("the report slot must be 16-byte aligned, have a nonzero serial and hold the graph's " +
                    std::to_string(node_count) + " NodeStats or none");
    }
    const bool fused = plan.UsesFusedLevelPass();
    const bool leftover_check = plan.NeedsLeftoverCheck();
    // Set once level 0 is laid out: the host prepared it, and it runs at most kSmallProducerLevelMaxWorkgroups
    // workgroups (GraphPlan::direct_level_needs_small_producers). Until then, such a level 1 counts as not direct.
    bool small_level_zero = false;
    // NodeStats' records, dispatches and workgroups are kept (kLevelKeepStatistics): always without a report (scheduler
    // tests), else with the `statistics` setting.
    const bool statistics_kept = requested_report.address == 0 || !requested_report.stats_only_on_drops;
    auto is_direct = [&](uint32_t level) {
        if (!options.direct_levels || !fused || level >= plan.direct_level_consumer.size()) return false;
        const uint32_t consumer = plan.direct_level_consumer[level];
        if (consumer == kInvalidNode) return false;
        if (statistics_kept && plan.DirectLevelIsGroup(level) && plan.dispatch_group_size[consumer] > kDirectLevelGroupMaxMembers) {
            return false;
        }
        if (level < plan.direct_level_needs_small_producers.size() && plan.direct_level_needs_small_producers[level] != 0 &&
            !(level == 1 && small_level_zero)) {
            return false;
        }
        // The hand-off dispatches a static broadcast consumer with records * grid workgroups; where a full record list
        // could need more than one dispatch holds (65535 x 65535), the level pass runs it instead (it clamps and reports).
        constexpr uint64_t kMostWorkgroups = uint64_t{runtime::kDispatchSplitWidth} * runtime::kDispatchSplitWidth;
        return uint64_t{layout->record_capacity} * plan.nodes[consumer].static_grid_workgroups <= kMostWorkgroups;
    };
    // Records by index (runtime::kLevelRecordsByIndex; docs/design.md, "Records by index"): a direct level after level 0
    // whose one consumer (not a group) can take them, and whose records' recursion depth the host knows, runs with its
    // records placed at slot * stride; its word of NodePushContext::level gets the flag and that depth, 0 elsewhere. Level
    // 0's records are the host's or the entry pass's, which write entries. Every record of a direct level is its
    // consumer's, made at the level before: a consumer that does not enqueue itself gets depth 0 from every producer;
    // one that does gets the level before's depth plus one where that level holds only it, and records of mixed depths
    // (it and other producers before it) keep their entries.
    auto records_by_index_word = [&](uint32_t level) -> uint32_t {
        if (level == 0 || level >= plan.levels.size() || !is_direct(level) || plan.DirectLevelIsGroup(level)) return 0;
        const uint32_t consumer = plan.direct_level_consumer[level];
        if (consumer >= plan.nodes.size() || !plan.nodes[consumer].input_by_index) return 0;
        const std::vector<uint32_t>& level_before = plan.levels[level - 1];
        if (!std::all_of(level_before.begin(), level_before.end(),
                         [&](uint32_t n) { return n < plan.nodes.size() && plan.nodes[n].places_records_by_index; })) {
            return 0;
        }
        uint32_t depth = 0;
        if (consumer < plan.node_table.size() && plan.node_table[consumer].max_recursion != 0) {
            for (uint32_t before = level; before > 0; --before) {
                const std::vector<uint32_t>& producers = plan.levels[before - 1];
                if (std::find(producers.begin(), producers.end(), consumer) == producers.end()) break;
                if (producers.size() != 1) return 0;
                ++depth;
            }
        }
        if (depth > runtime::kLevelRecordsByIndexDepthMask) return 0;
        return runtime::kLevelRecordsByIndex | depth << runtime::kLevelRecordsByIndexDepthShift;
    };
    // Host entries become level 0 directly (HostLevelZero) where they fit; else they are staged for the entry pass. The
    // host also prepares level 0's dispatch where the plan has the tables to rewrite and level 0 is direct, or has one
    // dynamic broadcast node (outside any dispatch group and with no node sharing its input), whose level pass would
    // only write that node's directory and arguments.
    // Laid out in storage of this thread's, which keeps its capacity from one dispatch to the next (LayOutHostLevelZero).
    thread_local HostLevelZero host_level_zero_storage;
    HostLevelZero* host_level_zero = nullptr;
    TablesRewrite tables_rewrite = TablesRewrite::kNone;
    if (entries.kind == EntrySource::Kind::kHostInfos && fused && !plan.levels.empty()) {
        // The tables follow the header (ScratchPlan), so one vkCmdUpdateBuffer writes the header's words and both.
        const uint64_t node_table_bytes = uint64_t{node_count} * sizeof(runtime::NodeStaticInfo);
        const uint64_t tables_bytes = node_table_bytes + plan.output_table.size() * sizeof(uint32_t);
        const bool tables_known = plan.node_table.size() == node_count &&
                                  plan.output_table.size() == plan.scratch_plan.output_table_entries() &&
                                  layout->node_table_offset == sizeof(GraphHeader) &&
                                  layout->output_table_offset == layout->node_table_offset + node_table_bytes;
        // TablesRewrite for level 0's consumer, or kNone where the host cannot prepare level 0.
        auto rewrite_for = [&](uint32_t consumer) {
            if (!tables_known) return TablesRewrite::kNone;
            // Level 1 checks initialization where it has a level pass, and where it is a direct group level whose
            // preparer, this consumer, checks in its hand-off (runtime::kDirectLevelChecksInitialization).
            const bool hand_off_checks = plan.DirectLevelIsGroup(1) && plan.nodes[consumer].group_hand_off_checks_initialization;
            const bool level_one_checks =
                plan.levels.size() >= 2 && (!is_direct(1) || hand_off_checks) && plan.node_table[consumer].dispatch_group_size <= 1;
            if (level_one_checks && tables_bytes > kWholeTablesRewriteMaxBytes) return TablesRewrite::kLevelZeroConsumer;
            return tables_bytes <= kRewrittenTablesMaxBytes ? TablesRewrite::kAll : TablesRewrite::kNone;
        };
        const uint32_t sole = plan.levels[0].size() == 1 ? plan.levels[0][0] : kInvalidNode;
        const bool sole_dynamic = tables_known && options.direct_levels && sole < node_count &&
                                  plan.node_table[sole].launch == kLaunchBroadcastDynamic &&
                                  plan.node_table[sole].dispatch_group_size <= 1 && plan.sharing_node_count() == 0;
        const uint32_t consumer = is_direct(0) ? plan.direct_level_consumer[0] : sole_dynamic ? sole : kInvalidNode;
        if (consumer != kInvalidNode && tables_known &&
            LayOutHostLevelZero(entries.count_info, plan, *layout, level_pass_records_per_workgroup_, consumer,
                                host_level_zero_storage)) {
            // A group level 1 that needs a small level 0 (GraphPlan::direct_level_needs_small_producers) is direct
            // where the host prepared level 0 and it is small, and whether it is decides which rewrite level 0 needs.
            small_level_zero = host_level_zero_storage.prepared_workgroups <= kSmallProducerLevelMaxWorkgroups;
            tables_rewrite = rewrite_for(consumer);
            if (tables_rewrite != TablesRewrite::kNone) host_level_zero = &host_level_zero_storage;
        }
        if (!host_level_zero && !is_direct(0) &&
            LayOutHostLevelZero(entries.count_info, plan, *layout, level_pass_records_per_workgroup_, kInvalidNode,
                                host_level_zero_storage)) {
            host_level_zero = &host_level_zero_storage;
        }
    }
    const bool host_prepared_level_zero = host_level_zero && host_level_zero->prepared_consumer != kInvalidNode;
    // As rewrite_for assumed above, so deciding level 1 now changes nothing laid out there.
    small_level_zero = host_prepared_level_zero && host_level_zero->prepared_workgroups <= kSmallProducerLevelMaxWorkgroups;
    if (!host_prepared_level_zero) tables_rewrite = TablesRewrite::kNone;
    // Fixed levels (DispatchOptions::fixed_level_max_workgroups; runtime::kLevelNextFixedWorkgroupsShift says what they
    // are): fixed_workgroups[L] is the workgroups of level L's one node dispatch, recorded with vkCmdDispatch, or 0 where
    // it stays indirect. Level 0 qualifies where the host prepared it: its workgroups are exact. Level L > 0 where it is
    // direct with one node as its consumer and level L - 1 is fixed: then L - 1 always runs a workgroup whose hand-off
    // prepares L, and L's records are at most L - 1's bound times what each of them may enqueue. The bound stops where a
    // node has none, the records would pass the record list's capacity (a surplus workgroup of a static broadcast consumer
    // reads the list entry of its would-be record) or the workgroups the limit. A fixed level runs all of them, but
    // compute-to-compute (fixed_workgroups[0] also drops DRAW_INDIRECT from the begin transfers' barrier).
    std::array<uint32_t, runtime::kMaxLevels> fixed_workgroups{};
    const auto dispatched_alone = [&](uint32_t level, uint32_t consumer) {
        return fused && level < plan.level_dispatches.size() && plan.level_dispatches[level].size() == 1 &&
               plan.level_dispatches[level][0].first_node == consumer && plan.level_dispatches[level][0].group_size == 1;
    };
    if (options.fixed_level_max_workgroups != 0 && host_prepared_level_zero && plan.node_table.size() == node_count &&
        host_level_zero->prepared_workgroups != 0 && host_level_zero->prepared_workgroups <= runtime::kDispatchSplitWidth &&
        dispatched_alone(0, host_level_zero->prepared_consumer)) {
        fixed_workgroups[0] = host_level_zero->prepared_workgroups;
        uint64_t records = host_level_zero->records;
        uint32_t producer = host_level_zero->prepared_consumer;
        const uint32_t most =
            std::min({options.fixed_level_max_workgroups, runtime::kLevelNextFixedWorkgroupsMax, runtime::kDispatchSplitWidth});
        for (uint32_t level = 1; level < plan.levels.size() && level < runtime::kMaxLevels; ++level) {
            if (!is_direct(level) || plan.DirectLevelIsGroup(level)) break;
            const uint32_t consumer = plan.direct_level_consumer[level];
            if (!dispatched_alone(level, consumer)) break;
            const uint64_t per_record = plan.nodes[producer].records_enqueued_per_record;
            if (per_record != 0 && records > layout->record_capacity / per_record) break;
            records *= per_record;
            const uint64_t grid = plan.nodes[consumer].static_grid_workgroups;
            const uint64_t per_workgroup = std::max(plan.node_table[consumer].records_per_workgroup, 1u);
            const uint64_t workgroups = grid != 0 ? records * grid : (records + per_workgroup - 1) / per_workgroup;
            if (workgroups == 0 || workgroups > most) break;
            fixed_workgroups[level] = static_cast<uint32_t>(workgroups);
            producer = consumer;
        }
    }
    // The level whose pass checks that scratch was initialized for this graph (MetaShader::kLevelCheckingInitialization),
    // as the entry pass would have: level 0 where the host wrote its records but left its preparation to its level pass,
    // level 1 where level 0's dispatch had only its own tables rewritten and level 1 is not direct. (kInvalidNode: the
    // entry pass checks, level 0's hand-off does (a direct group level 1), or every level reads rewritten tables.)
    const bool level_one_hand_off_checks = tables_rewrite == TablesRewrite::kLevelZeroConsumer && is_direct(1);
    const uint32_t checking_level = host_level_zero && !host_prepared_level_zero ? 0u
                                    : tables_rewrite == TablesRewrite::kLevelZeroConsumer && !level_one_hand_off_checks
                                        ? 1u
                                        : kInvalidNode;
    // A report that could only flag scratch not initialized for the graph is left out where the application recorded
    // that initialization (DispatchOptions::initialization_recorded): the dispatch's one level was prepared on the host,
    // which never lays out records it would drop (LayOutHostLevelZero), on tables the begin transfers rewrote whole, and its
    // nodes have no outputs (no leftover check), so nothing can be dropped, clamped or flagged but that; without the
    // `statistics` setting (and so without timestamps) no other field is read. Its finish pass is one dispatch of two,
    // and its host-visible writes the end barrier's host stage: on an H100 `overhead_single` 17.5 -> 13.8 µs, on lavapipe
    // 113 -> 64 (docs/performance.md).
    const bool report_only_checks_initialization = !leftover_check && plan.levels.size() == 1 && host_prepared_level_zero &&
                                                   tables_rewrite == TablesRewrite::kAll && requested_report.stats_only_on_drops &&
                                                   requested_report.timestamp_pool == VK_NULL_HANDLE;
    const ReportSlot no_report{};
    const ReportSlot& report = report_only_checks_initialization && options.initialization_recorded ? no_report : requested_report;
    result.report_left_out = requested_report.address != 0 && report.address == 0;
    // The report without a finish pass (its barrier and dispatch cost about 5 µs of every graph dispatch on an H200; the
    // fold saves 2.6 to 3.6 µs, docs/performance.md): without a leftover check the last level's nodes have no outputs, so
    // they cannot drop anything, and the header and statistics are final once the last level is prepared. Its preparer
    // writes the report where that is a meta pass that always runs: the fused level pass of the last level, or the entry
    // pass when the only level is direct. (A direct last level after other levels is prepared by a lowered node's last
    // workgroup, which runs only if that level had any; the finish pass stays there, as for the split passes, and where
    // the host prepared level 0 and it is the only level.) Devices whose finish pass reports (FinishPassReportsFor: GPUs)
    // use it for every report, recorded beside the last level's nodes, so that their level pass writes no host memory.
    const uint32_t last_level = plan.levels.empty() ? 0 : static_cast<uint32_t>(plan.levels.size() - 1);
    const bool report_by_preparer = report.address != 0 && !leftover_check && fused && !plan.levels.empty() &&
                                    !(last_level == 0 && host_prepared_level_zero) && (!is_direct(last_level) || last_level == 0) &&
                                    !finish_pass_reports_;
    const bool finish_pass = leftover_check || (report.address != 0 && !report_by_preparer);
    VkPipeline enqueue = VK_NULL_HANDLE, prepare = VK_NULL_HANDLE, scatter = VK_NULL_HANDLE, write_args = VK_NULL_HANDLE,
               level_pass = VK_NULL_HANDLE, checking_level_pass = VK_NULL_HANDLE, list_directory_pass = VK_NULL_HANDLE,
               finish = VK_NULL_HANDLE;
    const bool small_graph = node_count <= kFusedLevelSmallGraphMaxNodes;
    const bool has_list_directory_levels = std::any_of(plan.list_directory_group.begin(), plan.list_directory_group.end(),
                                                       [](uint32_t node) { return node != kInvalidNode; });
    const std::pair<MetaShader, VkPipeline*> fused_pipelines[] = {
        {MetaShader::kEnqueueEntries, &enqueue},
        {small_graph ? MetaShader::kLevelSmallGraph : MetaShader::kLevel, &level_pass},
        {small_graph ? MetaShader::kLevelCheckingInitializationSmallGraph : MetaShader::kLevelCheckingInitialization,
         &checking_level_pass},
        {small_graph ? MetaShader::kLevelListDirectoryGroupSmallGraph : MetaShader::kLevelListDirectoryGroup, &list_directory_pass},
        {MetaShader::kFinish, &finish}};
    const std::pair<MetaShader, VkPipeline*> split_pipelines[] = {{MetaShader::kEnqueueEntries, &enqueue},
                                                                  {MetaShader::kPrepare, &prepare},
                                                                  {MetaShader::kScatter, &scatter},
                                                                  {MetaShader::kWriteArgs, &write_args},
                                                                  {MetaShader::kFinish, &finish}};
    for (auto [shader, pipeline] : fused ? std::span<const std::pair<MetaShader, VkPipeline*>>(fused_pipelines)
                                         : std::span<const std::pair<MetaShader, VkPipeline*>>(split_pipelines)) {
        if (shader == MetaShader::kFinish && !finish_pass) continue;
        if (shader == MetaShader::kEnqueueEntries && host_level_zero) continue;
        if (&checking_level_pass == pipeline && checking_level == kInvalidNode) continue;
        if (&list_directory_pass == pipeline && !has_list_directory_levels) continue;
        const VkResult created = pipelines_->Get(shader, pipeline);
        if (created != VK_SUCCESS) {
            result.result = created;
            result.error = "creating a scheduler meta pipeline failed";
            return result;
        }
    }

    // What the barriers before a fused level pass add where the pass reads its workgroup count (indirect_level_pass_).
    const VkPipelineStageFlags2 level_pass_indirect_stage = indirect_level_pass_ ? VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT : 0;
    const VkAccessFlags2 level_pass_indirect_access = indirect_level_pass_ ? VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT : 0;

    // 1. Begin (transfers). Host entries for the entry pass are staged in half 1's heap, free until level 0's nodes write
    // it.
    const VkDeviceAddress staging = scratch.address + layout->HeapOffset(1);
    StagedEntries staged;
    VkDeviceAddress count_info_address = entries.count_info_address;
    uint32_t entry_workgroups = kDeviceCountEntryWorkgroups;
    if (entries.kind != EntrySource::Kind::kDeviceCountInfo && !host_level_zero) {
        staged = StageEntries(entries, plan, staging, layout->heap_capacity);
        count_info_address = staging;
        entry_workgroups = std::clamp(staged.count, 1u, kMaxEntryWorkgroups);
    }
    result.host_dropped_records = staged.dropped;
    result.host_wrote_level_zero = host_level_zero != nullptr;
    result.host_prepared_level_zero = host_prepared_level_zero;
    const VkPipelineLayout meta_layout = pipelines_->layout();

    // The `level_timestamps` queries (DispatchTimestampCount lists them). Each is written with ALL_COMMANDS, so at the
    // moment everything recorded before it has completed; the reset orders itself before the writes (query commands on
    // the same queries execute in submission order).
    const bool timestamps = report.timestamp_pool != VK_NULL_HANDLE && dispatch_->CmdResetQueryPool != nullptr &&
                            dispatch_->CmdWriteTimestamp2 != nullptr;
    auto write_timestamp = [&](uint32_t index) {
        if (timestamps) {
            dispatch_->CmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, report.timestamp_pool,
                                          report.first_timestamp + index);
        }
    };
    if (timestamps) {
        dispatch_->CmdResetQueryPool(cmd, report.timestamp_pool, report.first_timestamp, DispatchTimestampCount(plan.levels.size()));
    }
    write_timestamp(0);

    Barrier(cmd, kPriorStages, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
    GraphHeader header = HeaderFor(*layout);
    header.dispatch_graph_tag = plan.graph_tag;
    header.status_flags = staged.dropped != 0 ? uint32_t{runtime::kStatusHeapOverflow} : 0u;
    header.level_pass_records_per_workgroup = std::max(level_pass_records_per_workgroup_, 1u);
    header.dropped_records = staged.dropped;
    std::fill(std::begin(header.direct_level_consumer), std::end(header.direct_level_consumer), kInvalidNode);
    for (uint32_t level = 0; level < plan.levels.size() && level < runtime::kMaxLevels; ++level) {
        if (is_direct(level)) header.direct_level_consumer[level] = plan.direct_level_consumer[level];
    }
    // Whoever writes the report finds it in the header, written with the begin writes: the preparer, so that the entry
    // and level passes' push-constant blocks stay at 24 bytes, and the finish pass, so that its commands are the same in
    // every dispatch of the graph. report_level names the level whose preparer writes it (kInvalidNode: the finish pass).
    header.report_level = report_by_preparer ? last_level : kInvalidNode;
    if (report.address != 0) {
        header.report_slot = report.address;
        header.report_serial = report.serial;
        header.report_stats = report.stats_count | (report.stats_only_on_drops ? kStatsOnlyOnDrops : 0u);
    }
    // Everything after graph_tag up to tables_tag (magic and graph_tag belong to initialization, tables_tag to whoever
    // wrote the tables); counters and high-water marks start at 0.
    constexpr size_t kHeaderBegin = offsetof(GraphHeader, node_count), kHeaderEnd = offsetof(GraphHeader, tables_tag);
    if (host_prepared_level_zero) {
        // What PrepareDirectLevel (meta_shaders/level_common.glsl) writes into the header for level 0.
        const std::array<uint32_t, 3> shape = DispatchShape(host_level_zero->prepared_workgroups);
        header.level_workgroups[0] = shape[0] * shape[1] * shape[2];
        header.input_half = 0;
        header.level = 0;
        header.levels_run = host_level_zero->records != 0 ? 1 : 0;
        header.heap_high_water = host_level_zero->heap_top;
        header.record_high_water = host_level_zero->records;
    }
    const uint32_t consumer = host_prepared_level_zero ? host_level_zero->prepared_consumer : kInvalidNode;
    if (tables_rewrite == TablesRewrite::kAll) {
        // The tables with their tag follow the header: one vkCmdUpdateBuffer from node_count to the output table's end.
        header.tables_tag = plan.graph_tag;
        // Every byte is written below; a thread's vector keeps its storage from one dispatch to the next.
        thread_local std::vector<uint8_t> bytes;
        bytes.resize(layout->output_table_offset + plan.output_table.size() * sizeof(uint32_t) - kHeaderBegin);
        std::memcpy(bytes.data(), reinterpret_cast<const uint8_t*>(&header) + kHeaderBegin, sizeof(GraphHeader) - kHeaderBegin);
        // std::copy rather than memcpy: a graph without outputs has an empty output table, whose data() may be null.
        std::copy(reinterpret_cast<const uint8_t*>(plan.node_table.data()),
                  reinterpret_cast<const uint8_t*>(plan.node_table.data() + plan.node_table.size()),
                  bytes.begin() + (layout->node_table_offset - kHeaderBegin));
        std::copy(reinterpret_cast<const uint8_t*>(plan.output_table.data()),
                  reinterpret_cast<const uint8_t*>(plan.output_table.data() + plan.output_table.size()),
                  bytes.begin() + (layout->output_table_offset - kHeaderBegin));
        UpdateBuffer(cmd, scratch.buffer, scratch.offset + kHeaderBegin, bytes.data(), bytes.size());
    } else {
        UpdateBuffer(cmd, scratch.buffer, scratch.offset + kHeaderBegin, reinterpret_cast<const uint8_t*>(&header) + kHeaderBegin,
                     kHeaderEnd - kHeaderBegin);
    }
    if (tables_rewrite == TablesRewrite::kLevelZeroConsumer) {
        // The consumer's NodeStaticInfo and its outputs' entries, which lie together from its output_table_base.
        UpdateBuffer(cmd, scratch.buffer,
                     scratch.offset + layout->node_table_offset + VkDeviceSize(consumer) * sizeof(runtime::NodeStaticInfo),
                     &plan.node_table[consumer], sizeof(runtime::NodeStaticInfo));
        const uint32_t table_base = plan.node_table[consumer].output_table_base;
        const uint32_t entries_count = plan.nodes[consumer].output_table_entries;
        if (entries_count != 0) {
            UpdateBuffer(cmd, scratch.buffer,
                         scratch.offset + layout->output_table_offset + VkDeviceSize(table_base) * sizeof(uint32_t),
                         plan.output_table.data() + table_base, size_t(entries_count) * sizeof(uint32_t));
        }
    }
    // Per-node statistics start at zero, except host entries that did not fit the staging area: charged to their node, and
    // a direct level 0 prepared on the host: its consumer's (WriteDispatchArgs and PrepareDirectLevel).
    const VkDeviceSize stats_offset = scratch.offset + layout->node_stats_offset;
    if (node_count != 0) {
        if (host_prepared_level_zero) {
            // The consumer's entry, and the zeros around it: filled where a run is longer than kHostLevelZeroFillRunBytes
            // (a 1025-node graph has 32 KiB of them), written with the entry otherwise, as for half 0's NodeStates.
            constexpr VkDeviceSize kEntry = sizeof(runtime::NodeStats);
            uint32_t first = 0, end = node_count;  // the nodes whose entries are written
            if (consumer * kEntry > kHostLevelZeroFillRunBytes) {
                dispatch_->CmdFillBuffer(cmd, scratch.buffer, stats_offset, consumer * kEntry, 0);
                first = consumer;
            }
            if ((node_count - consumer - 1) * kEntry > kHostLevelZeroFillRunBytes) {
                dispatch_->CmdFillBuffer(cmd, scratch.buffer, stats_offset + (consumer + 1) * kEntry,
                                         (node_count - consumer - 1) * kEntry, 0);
                end = consumer + 1;
            }
            thread_local std::vector<runtime::NodeStats> stats;
            stats.assign(end - first, runtime::NodeStats{});
            runtime::NodeStats& consumer_stats = stats[consumer - first];
            consumer_stats.records = host_level_zero->records;
            consumer_stats.dispatches = host_level_zero->prepared_workgroups != 0 ? 1 : 0;
            consumer_stats.workgroups = host_level_zero->prepared_workgroups;
            UpdateBuffer(cmd, scratch.buffer, stats_offset + first * kEntry, stats.data(), stats.size() * kEntry);
        } else if (staged.dropped_per_node.empty()) {
            ZeroBytes(cmd, scratch.buffer, stats_offset, VkDeviceSize(node_count) * sizeof(runtime::NodeStats));
        } else {
            std::vector<runtime::NodeStats> stats(node_count);
            for (uint32_t node = 0; node < node_count; ++node) {
                if (staged.dropped_per_node[node] == 0) continue;
                stats[node].dropped_records = staged.dropped_per_node[node];
                stats[node].drop_flags = runtime::kStatusHeapOverflow;
                stats[node].first_drop_level_complement = ~0u;  // level 0
            }
            UpdateBuffer(cmd, scratch.buffer, stats_offset, stats.data(), stats.size() * sizeof(stats[0]));
        }
    }
    // Both halves' counters start cleared; a host-written half 0 is written whole instead (the regions of transfers
    // between two barriers must not overlap).
    ClearHalves(cmd, scratch, *layout, host_level_zero ? 1 : 0);
    if (host_level_zero) {
        for (const HostLevelZero::Write& write : host_level_zero->writes) {
            const VkDeviceSize at = scratch.offset + layout->half_offset[0] + write.offset;
            if (write.zero) {
                dispatch_->CmdFillBuffer(cmd, scratch.buffer, at, write.size, 0);
            } else {
                UpdateBuffer(cmd, scratch.buffer, at, host_level_zero->data.data() + write.data_begin, write.size);
            }
        }
        if (!host_level_zero->heap.empty()) {
            UpdateBuffer(cmd, scratch.buffer, scratch.offset + layout->HeapOffset(0), host_level_zero->heap.data(),
                         host_level_zero->heap.size());
        }
    }
    if (!staged.bytes.empty()) UpdateBuffer(cmd, scratch.buffer, scratch.offset + layout->HeapOffset(1), staged.bytes.data(), staged.bytes.size());
    // A direct level 0 prepared here is dispatched next, with the arguments these transfers wrote (a fixed one reads none).
    if (host_prepared_level_zero) {
        const bool reads_arguments = fixed_workgroups[0] == 0;
        Barrier(cmd, VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | (reads_arguments ? VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT : 0),
                kShaderReadWrite | (reads_arguments ? VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT : 0));
    } else {
        // An indirect level pass (a CPU device's) reads its workgroup count from the counters these transfers cleared or
        // wrote.
        Barrier(cmd, VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | level_pass_indirect_stage, kShaderReadWrite | level_pass_indirect_access);
    }

    // 2. Entries into half 0, unless the begin transfers wrote them: then level 0's pass follows the begin barrier, and
    // checks that scratch was initialized for this graph as the entry pass would have, or level 0 is direct and its node
    // dispatch follows (the transfers rewrote the tables it reads, and the report makes the check).
    if (!host_level_zero) {
        const EnqueueParams enqueue_params{scratch.address, count_info_address, plan.graph_tag, 0};
        RunMeta(cmd, enqueue, meta_layout, &enqueue_params, sizeof(enqueue_params), entry_workgroups);
    }

    // 3. Levels. Level L reads half L % 2 (the entry pass wrote half 0) and writes the other.
    const bool labels =
        options.debug_labels && dispatch_->CmdBeginDebugUtilsLabelEXT != nullptr && dispatch_->CmdEndDebugUtilsLabelEXT != nullptr;
    const uint32_t scatter_workgroups =
        std::clamp((layout->record_capacity + kScatterWorkgroupSize - 1) / kScatterWorkgroupSize, 1u, kScatterWorkgroups);
    const uint32_t level_workgroups = std::clamp(
        (layout->record_capacity + level_pass_records_per_workgroup_ - 1) / std::max(level_pass_records_per_workgroup_, 1u), 1u,
        runtime::kDispatchSplitWidth);
    // Without groups the level pass skips the scan that places the members' workgroups.
    const uint32_t has_dispatch_groups = plan.has_dispatch_groups ? 1u : 0u;
    // The shared-count scatter costs three workgroup barriers per 256 records, which a CPU device runs as switches through
    // the workgroup's invocations (lavapipe: `append_rate` at smoke size 17 ms -> 61 ms), so only GPU-sized level passes
    // use it (kLevelPassRecordsPerWorkgroupGpu, or the setting below the CPU value, as the tests of wide passes set it).
    const uint32_t shared_counts = level_pass_records_per_workgroup_ < kLevelPassRecordsPerWorkgroupCpu ? kLevelSharedCounts : 0u;
    // NodeStats' records, dispatches and workgroups are read by the `statistics` line only: a dispatch whose report asks
    // for the statistics only on drops (the setting is off) has the level pass leave them alone, one load fewer on its
    // path. Without a report (scheduler tests) they are kept; a report left out (above) was asked for without them.
    const uint32_t keep_statistics = statistics_kept ? kLevelKeepStatistics : 0u;
    // What the node dispatches left bound; a meta pass (the level pass) replaces it. Direct levels have none, so their
    // nodes bind and push only what differs from the previous level's.
    VkPipelineLayout pushed_layout = VK_NULL_HANDLE;
    uint32_t pushed_context_offset = 0;
    VkPipeline bound_pipeline = VK_NULL_HANDLE;
    // 4. The finish pass: records the last level wrote have no level to run them (counted and flagged, charged to level
    // levels.size(), one past the last level that ran), and the report slot gets the header and statistics, serial last.
    // Without a leftover check the pass only writes the report. The last level's nodes have no outputs then, so they
    // write neither the header nor the statistics: both are final once that level is prepared, which the barrier before
    // its node dispatches already orders. So the pass is recorded right after that barrier, without one of its own, and
    // runs beside those nodes (on an H200 a barrier and a wait for the last level cost about 3 µs of every such
    // dispatch; recorded before the node dispatches rather than after them, it also leaves nothing to run after a large
    // last level: `thread_launch` and `fan_out_tree` -2.5%, `large_fan_out_tree` -3.7%; docs/performance.md).
    auto record_finish = [&]() {
        const FinishParams finish_params{scratch.address, static_cast<uint32_t>(plan.levels.size()), leftover_check ? 1u : 0u};
        const uint32_t finish_workgroups =
            leftover_check ? std::clamp((node_count + kFinishWorkgroupSize - 1) / kFinishWorkgroupSize, 1u, kMaxFinishWorkgroups)
                           : 1u;
        RunMeta(cmd, finish, meta_layout, &finish_params, sizeof(finish_params), finish_workgroups);
    };
    const bool finish_beside_last_level = finish_pass && !leftover_check && !plan.levels.empty();
    // Prepared levels (DispatchOptions::prepared_levels): everything from the first level to the end barrier is captured
    // and put into the command buffer as a prepared secondary. What differs between dispatches of a graph (the host's
    // records, the report slot and serial) is written by the begin transfers above, so the captured commands are the same
    // from one dispatch to the next, and the last level's node dispatches and the finish pass are prepared too (on the
    // H100 host `overhead_chain32x8` recorded in about 15 µs instead of 17 to 21 with that level recorded directly).
    const bool prepares_levels = options.prepared_levels != nullptr && !timestamps && plan.levels.size() >= kPreparedLevelsMin;
    const DeviceDispatchTable* direct_dispatch = dispatch_;
    bool bind_sets = true;  // the application's descriptor sets are not bound in what is being recorded
    if (prepares_levels) dispatch_ = options.prepared_levels->Begin();
    for (uint32_t level = 0; level < plan.levels.size(); ++level) {
        const uint32_t input_half = level % 2;
        // The consumer the last workgroup of this level prepares the next level for, as in GraphHeader::direct_level_consumer.
        // Its statistics, or a group consumer's (runtime::kDirectLevelGroupConsumer) members', are updated only where kept.
        const uint32_t statistics_flag = keep_statistics != 0 ? runtime::kDirectLevelStatistics : 0u;
        const uint32_t group_flags = runtime::kDirectLevelGroupConsumer | statistics_flag;
        // Where this level is one node dispatch, its last workgroup need clear only that node's or group's states
        // (runtime::kDirectLevelClearsOwnStates).
        const bool one_dispatch = fused && level < plan.level_dispatches.size() && plan.level_dispatches[level].size() == 1 &&
                                  ClearsOnlyItsOwnStates(plan, plan.level_dispatches[level][0]);
        const uint32_t own_states_flag = one_dispatch ? runtime::kDirectLevelClearsOwnStates : 0u;
        // A direct level's preparer made the record list its consumer's directory (runtime::kLevelRecordListIsDirectory).
        // The next level's fixed workgroups, which its preparer (this level's hand-off) launches (fixed_workgroups).
        const uint32_t next_fixed = level + 1 < runtime::kMaxLevels ? fixed_workgroups[level + 1] : 0u;
        const uint32_t pushed_level = level | (is_direct(level) ? runtime::kLevelRecordListIsDirectory : 0u) |
                                      next_fixed << runtime::kLevelNextFixedWorkgroupsShift | records_by_index_word(level);
        const uint32_t next_by_index = records_by_index_word(level + 1) != 0 ? runtime::kDirectLevelRecordsByIndex : 0u;
        const uint32_t fixed = level < runtime::kMaxLevels ? fixed_workgroups[level] : 0u;
        // Level 0's hand-off checks initialization for a direct level 1 where the begin rewrote only level 0's tables
        // (runtime::kDirectLevelChecksInitialization; rewrite_for allows that only for a group level 1).
        const uint32_t checks_flag = level == 0 && level_one_hand_off_checks ? runtime::kDirectLevelChecksInitialization : 0u;
        const uint32_t next_level_consumer =
            !is_direct(level + 1) ? kInvalidNode
            : plan.DirectLevelIsGroup(level + 1)
                ? plan.direct_level_consumer[level + 1] | group_flags | own_states_flag | checks_flag
                : plan.direct_level_consumer[level + 1] | statistics_flag | own_states_flag | next_by_index;
        if (labels) BeginLabel(cmd, LevelLabel(level));
        write_timestamp(1 + 2 * level);
        if (level == 0 && host_prepared_level_zero) {
            // The begin transfers prepared it, and their barrier orders them before its node dispatch.
            write_timestamp(2 + 2 * level);
        } else if (is_direct(level)) {
            // Prepared by the last workgroup of the previous level (its arguments, and the cleared half it writes):
            // one barrier, after those writes and the previous level's indirect reads of the arguments it cleared. A
            // fixed level reads no arguments, so nothing after the barrier is in DRAW_INDIRECT.
            Barrier(cmd, kPriorStages, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | (fixed == 0 ? VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT : 0),
                    kShaderReadWrite | (fixed == 0 ? VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT : 0));
            write_timestamp(2 + 2 * level);
        } else {
            // The previous step's writes (entry pass or nodes), and its indirect reads of the args this level's pass clears.
            // Level 0 written by the begin transfers follows their barrier.
            if (level != 0 || !host_level_zero) {
                Barrier(cmd, kPriorStages, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                        VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | level_pass_indirect_stage,
                        kShaderReadWrite | level_pass_indirect_access);
            }
            if (fused) {
                // Enough workgroups for a full record list; those past what the producers asked for return at once (a CPU
                // device dispatches just those, indirectly). Where the record list is the group's directory, one
                // workgroup does the whole pass (meta_shaders/level.comp).
                const uint32_t list_directory_group =
                    level < plan.list_directory_group.size() ? plan.list_directory_group[level] : kInvalidNode;
                const LevelParams level_params{scratch.address, input_half,    level, has_dispatch_groups, shared_counts | keep_statistics,
                                               plan.graph_tag,  list_directory_group};
                // A level whose record list is a group's directory runs the pass compiled without the scatter (MetaShader::
                // kLevelListDirectoryGroup), unless it is the one that checks initialization.
                const VkPipeline pass = level == checking_level                ? checking_level_pass
                                        : list_directory_group != kInvalidNode ? list_directory_pass
                                                                               : level_pass;
                if (list_directory_group != kInvalidNode) {
                    RunMeta(cmd, pass, meta_layout, &level_params, sizeof(level_params), 1u);
                } else if (indirect_level_pass_) {
                    // Exactly the workgroups the producers asked for (HalfHeader::level_pass_workgroups, at least 1).
                    dispatch_->CmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pass);
                    dispatch_->CmdPushConstants(cmd, meta_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(level_params),
                                                &level_params);
                    dispatch_->CmdDispatchIndirect(
                        cmd, scratch.buffer,
                        scratch.offset + layout->half_offset[input_half] + offsetof(HalfHeader, level_pass_workgroups));
                } else {
                    RunMeta(cmd, pass, meta_layout, &level_params, sizeof(level_params), level_workgroups);
                }
            } else {
                RecordSplitLevelPasses(cmd, plan, scratch.address, input_half, level, {prepare, scatter, write_args, meta_layout},
                                       scatter_workgroups);
            }
            write_timestamp(2 + 2 * level);
            Barrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT,
                    kShaderReadWrite | VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT);
            pushed_layout = VK_NULL_HANDLE;
            pushed_context_offset = 0;
            bound_pipeline = VK_NULL_HANDLE;
        }
        if (finish_beside_last_level && level == last_level) {
            // Step 4, beside the last level's nodes, labelled as what it does; it binds and pushes its own state.
            if (labels) BeginLabel(cmd, "report");
            record_finish();
            if (labels) dispatch_->CmdEndDebugUtilsLabelEXT(cmd);
            pushed_layout = VK_NULL_HANDLE;
            pushed_context_offset = 0;
            bound_pipeline = VK_NULL_HANDLE;
        }
        // Nodes of one level are not ordered with each other (facts §12.3), so no barriers between them.
        // Push constants survive pipeline binds between layouts with identical push-constant ranges, so the application's
        // state is bound for the first node after a level pass (which disturbed it) and again only where the layout
        // changes: in the layer every node has the graph's lowered layout, so once per level pass. Each node's own
        // NodePushContext (its graph index and output-table base) is pushed per node; the pipeline is bound only where it
        // changes, as the nodes of an array share one.
        auto record_node_dispatch = [&](uint32_t node, uint32_t group_size, const std::string* label) {
            const NodeDispatchPlan& node_plan = plan.nodes[node];
            if (labels && label != nullptr) BeginLabel(cmd, *label);
            if (node_plan.pipeline != bound_pipeline) {
                dispatch_->CmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, node_plan.pipeline);
                bound_pipeline = node_plan.pipeline;
            }
            if (node_plan.layout != pushed_layout || node_plan.context_offset != pushed_context_offset) {
                if (options.bind_node_state) {
                    options.bind_node_state(*dispatch_, cmd, node, bind_sets);
                    bind_sets = false;
                }
                pushed_layout = node_plan.layout;
                pushed_context_offset = node_plan.context_offset;
            }
            // A group's members find their node and output-table base themselves (NodeStaticInfo, NodeState). The level's
            // words are what the level pass or hand-off also writes into the header: pushed, a lowered workgroup need
            // not wait for header loads before it can address its half (scratch_layout.h, NodePushContext).
            const NodePushContext context{scratch.address,
                                          node,
                                          group_size > 1 ? runtime::kDispatchGroupMarker : node_plan.output_table_base,
                                          layout->half_offset[input_half],
                                          layout->half_offset[1 - input_half],
                                          pushed_level,
                                          next_level_consumer};
            dispatch_->CmdPushConstants(cmd, node_plan.layout, VK_SHADER_STAGE_COMPUTE_BIT, node_plan.context_offset,
                                        sizeof(context), &context);
            if (fixed != 0) {
                // fixed_workgroups: only a level of this one dispatch is fixed, at most kDispatchSplitWidth workgroups.
                dispatch_->CmdDispatch(cmd, fixed, 1, 1);
            } else {
                dispatch_->CmdDispatchIndirect(cmd, scratch.buffer, scratch.offset + layout->DispatchArgsOffset(input_half, node));
            }
            if (labels && label != nullptr) dispatch_->CmdEndDebugUtilsLabelEXT(cmd);
        };
        if (fused && level < plan.level_dispatches.size()) {
            for (const LevelDispatch& dispatch : plan.level_dispatches[level]) {
                const std::string* label = dispatch.group_size == 1        ? plan.nodes[dispatch.first_node].label
                                           : dispatch.group_label.empty() ? nullptr
                                                                          : &dispatch.group_label;
                record_node_dispatch(dispatch.first_node, dispatch.group_size, label);
            }
        } else {
            for (uint32_t node : plan.levels[level]) record_node_dispatch(node, 1, plan.nodes[node].label);
        }
        if (labels) dispatch_->CmdEndDebugUtilsLabelEXT(cmd);
    }

    // Step 4 after the last level: with a leftover check, which must see what the last level wrote (or without levels).
    if (finish_pass && !finish_beside_last_level) {
        if (leftover_check) {
            Barrier(cmd, kPriorStages, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, kShaderReadWrite);
        }
        record_finish();
    }
    // The spec's graph dispatch accesses scratch in the compute stage (facts §11); this makes our accesses, which
    // include indirect reads and transfers, complete before later compute-stage work. With a report, it also makes the
    // finish pass's writes to the ring available to the host (a memory domain operation), which reads them once the
    // serial is there.
    VkPipelineStageFlags2 end_stages = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
    VkAccessFlags2 end_access = kShaderReadWrite;
    if (report.address != 0) {
        end_stages |= VK_PIPELINE_STAGE_2_HOST_BIT;
        end_access |= VK_ACCESS_2_HOST_READ_BIT;
    }
    Barrier(cmd, kPriorStages | VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT,
            end_stages, end_access);
    write_timestamp(1 + 2 * static_cast<uint32_t>(plan.levels.size()));
    if (prepares_levels) {
        // Nothing follows in this dispatch, so the state the secondary leaves undefined needs nothing bound here: the
        // caller puts back the application's compute state (graph_dispatch.cpp).
        dispatch_ = direct_dispatch;
        options.prepared_levels->Execute(cmd);
    }
    return result;
}

}  // namespace execgraph
