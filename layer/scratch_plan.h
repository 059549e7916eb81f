// Scratch sizing and layout for one execution graph (docs/design.md, "Scratch layout"; the binary layout itself is
// spirv_lowering/include/execgraph/runtime/scratch_layout.h).
//
// What the three sizes reported by vkGetExecutionGraphPipelineScratchSizeAMDX guarantee:
//   minSize          every half holds at least kMinRecordsPerHalf records and kMinHeapBytesPerHalf payload bytes, enough
//                    for any single entry dispatch within the spec limits (256 payloads of up to 1 KiB) plus generous
//                    fan-out, besides the fixed part (header, node table, output tables, trash, node statistics) and
//                    a guard of trash size after each half's heap.
//   sizeGranularity  64 KiB. Only minSize + k * sizeGranularity bytes are used (facts §11); every step adds capacity to
//                    both halves, split so that record entries and heap run out together when every record has the
//                    graph's largest input record (up to 96 bytes): kBytesPerRecord of entries per HeapBytesPerRecord()
//                    of heap.
//   maxSize          kMaxUsefulSize (256 MiB) or minSize if that is larger, rounded to a granularity step: per half,
//                    128 MiB / (32 + heap bytes per record) records, about 2.8 M for records of up to 16 bytes and 1 M
//                    for records of 96 bytes or more; more does not help real graphs and would push offsets towards the
//                    32-bit limit of the layout.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>

namespace execgraph {

// Offsets (bytes from the scratch base) and capacities of one scratch size. Mirrors what RecordDispatch writes into
// GraphHeader, plus the derived per-half offsets (the order of the HalfHeader comment in scratch_layout.h, also
// computed by scratch_layout.glsl's Half*Offset functions).
struct ScratchLayout {
    uint32_t node_count = 0;
    uint32_t output_table_entries = 0;
    uint32_t node_table_offset = 0;
    uint32_t output_table_offset = 0;
    uint32_t trash_offset = 0;
    uint32_t trash_size = 0;
    uint32_t node_stats_offset = 0;   // NodeStats[node_count], cleared by every dispatch
    uint32_t half_offset[2] = {0, 0};
    uint32_t half_size = 0;           // bytes of each half
    uint32_t record_capacity = 0;     // record-list and directory entries per half
    uint32_t heap_capacity = 0;       // heap bytes per half
    VkDeviceSize used_size = 0;       // minSize + k * sizeGranularity: every byte the layout touches is below this

    uint32_t NodeStatesOffset(uint32_t half) const;
    uint32_t NodeStateOffset(uint32_t half, uint32_t node) const;
    uint32_t DispatchArgsOffset(uint32_t half, uint32_t node) const;  // NodeState.dispatch: VkDispatchIndirectCommand
    uint32_t RecordsOffset(uint32_t half) const;
    uint32_t DirectoryOffset(uint32_t half) const;
    uint32_t HeapOffset(uint32_t half) const;
};

class ScratchPlan {
  public:
    static constexpr uint32_t kMinRecordsPerHalf = 4096;
    static constexpr uint32_t kMinHeapBytesPerHalf = 256 * 1024;
    static constexpr VkDeviceSize kGranularity = 64 * 1024;
    static constexpr VkDeviceSize kMaxUsefulSize = 256ull * 1024 * 1024;
    // Every record takes a 16-byte list entry and a 16-byte directory entry, and its payload in the heap.
    static constexpr uint32_t kBytesPerRecord = 32;
    // Heap bytes per record when the graph's records are not known, and at most: a quarter of each half's variable part
    // for entries. Graphs of larger records keep that split (their heap runs out first, as before minSize grew with
    // record size), so minSize does not depend on the records.
    static constexpr uint32_t kDefaultHeapBytesPerRecord = 96;

    // `max_record_stride`: the largest heap stride of any record the graph allocates (its nodes' input records and
    // outputs' records, NodeStaticInfo::record_stride and LoweringOptions::output_record_stride). Lowered
    // allocations round each allocation to 16 bytes, so a record takes at most that rounded up to 16 heap bytes; the split
    // uses it between 16 and kDefaultHeapBytesPerRecord.
    ScratchPlan(uint32_t node_count, uint32_t output_table_entries, uint32_t trash_size,
                uint32_t max_record_stride = kDefaultHeapBytesPerRecord);
    uint32_t HeapBytesPerRecord() const { return heap_bytes_per_record_; }
    // Whether every layout of a plan made with `max_record_stride` has a heap that holds record_capacity records of
    // that stride rounded up to 16 bytes: true up to kDefaultHeapBytesPerRecord, where HeapBytesPerRecord() is that
    // rounded stride (LayoutFor gives the heap at least record_capacity of them). Lowered allocations then reserve heap
    // bytes and record slots with one atomic (spirv::LoweringOptions::heap_holds_record_list).
    static bool HeapHoldsRecordList(uint32_t max_record_stride) {
        return (uint64_t{max_record_stride} + 15) / 16 * 16 <= kDefaultHeapBytesPerRecord;
    }

    VkDeviceSize MinSize() const { return min_size_; }
    VkDeviceSize MaxSize() const { return max_size_; }
    VkDeviceSize SizeGranularity() const { return kGranularity; }
    uint32_t node_count() const { return node_count_; }
    uint32_t output_table_entries() const { return output_table_entries_; }
    uint32_t trash_size() const { return trash_size_; }

    // The layout for a scratchSize the application passed; nullopt when it is below MinSize() (a VUID violation the
    // caller reports). Sizes between granularity steps, and sizes past MaxSize(), use the step below.
    std::optional<ScratchLayout> LayoutFor(VkDeviceSize scratch_size) const;

  private:
    uint32_t node_count_;
    uint32_t output_table_entries_;
    uint32_t trash_size_;
    uint32_t heap_bytes_per_record_;
    uint32_t fixed_size_ = 0;       // header, node table, output tables, trash, node stats; 64-byte aligned
    uint32_t half_fixed_size_ = 0;  // HalfHeader + NodeState[node_count], 64-byte aligned, plus the heap's end guard
    VkDeviceSize min_size_ = 0;
    VkDeviceSize max_size_ = 0;
};

}  // namespace execgraph
