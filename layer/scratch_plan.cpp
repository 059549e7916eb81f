#include "scratch_plan.h"

#include <algorithm>

#include "execgraph/runtime/scratch_layout.h"

namespace execgraph {
namespace {

using runtime::DirectoryEntry;
using runtime::GraphHeader;
using runtime::HalfHeader;
using runtime::NodeState;
using runtime::NodeStaticInfo;
using runtime::NodeStats;
using runtime::RecordEntry;

constexpr uint64_t AlignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

}  // namespace

uint32_t ScratchLayout::NodeStatesOffset(uint32_t half) const { return half_offset[half] + sizeof(HalfHeader); }
uint32_t ScratchLayout::NodeStateOffset(uint32_t half, uint32_t node) const {
    return NodeStatesOffset(half) + node * sizeof(NodeState);
}
uint32_t ScratchLayout::DispatchArgsOffset(uint32_t half, uint32_t node) const {
    return NodeStateOffset(half, node) + offsetof(NodeState, dispatch);
}
uint32_t ScratchLayout::RecordsOffset(uint32_t half) const { return NodeStatesOffset(half) + node_count * sizeof(NodeState); }
uint32_t ScratchLayout::DirectoryOffset(uint32_t half) const { return RecordsOffset(half) + record_capacity * sizeof(RecordEntry); }
uint32_t ScratchLayout::HeapOffset(uint32_t half) const { return DirectoryOffset(half) + record_capacity * sizeof(DirectoryEntry); }

ScratchPlan::ScratchPlan(uint32_t node_count, uint32_t output_table_entries, uint32_t trash_size, uint32_t max_record_stride)
    : node_count_(node_count),
      output_table_entries_(output_table_entries),
      trash_size_(trash_size),
      heap_bytes_per_record_(static_cast<uint32_t>(std::clamp<uint64_t>(AlignUp(max_record_stride, 16), 16, kDefaultHeapBytesPerRecord))) {
    static_assert(sizeof(HalfHeader) % 16 == 0 && sizeof(NodeState) % 16 == 0 && sizeof(RecordEntry) == 16 &&
                      sizeof(DirectoryEntry) == 16 && kBytesPerRecord == sizeof(RecordEntry) + sizeof(DirectoryEntry),
                  "the heap must stay 16-byte aligned within a half");
    // Halves start 64-byte aligned (the scratch address is, VUID-...-scratch-09144), so every NodeState.scatter_cursor
    // is 8-byte aligned for its 64-bit atomic and every heap 16-byte aligned.
    uint64_t fixed = sizeof(GraphHeader) + uint64_t(node_count) * sizeof(NodeStaticInfo);
    fixed = AlignUp(fixed + uint64_t(output_table_entries) * sizeof(uint32_t), 16);
    fixed = AlignUp(fixed + trash_size, 16);
    fixed = AlignUp(fixed + uint64_t(node_count) * sizeof(NodeStats), 64);
    fixed_size_ = static_cast<uint32_t>(std::min<uint64_t>(fixed, UINT32_MAX));
    // Each half ends with a guard of trash_size bytes after its heap: a node that writes past the records it allocated
    // (up to the output's record limit, which the lowering clamps indices to) still writes inside scratch.
    half_fixed_size_ =
        static_cast<uint32_t>(AlignUp(sizeof(HalfHeader) + uint64_t(node_count) * sizeof(NodeState), 64) + AlignUp(trash_size, 64));

    // The variable part of a half giving at least kMinRecordsPerHalf records and kMinHeapBytesPerHalf heap bytes with
    // the split of LayoutFor (one record's entries per HeapBytesPerRecord() of heap).
    const uint64_t unit = kBytesPerRecord + heap_bytes_per_record_;
    const uint64_t for_records = uint64_t(kMinRecordsPerHalf) * unit;
    const uint64_t for_heap = AlignUp(uint64_t(kMinHeapBytesPerHalf) * unit / heap_bytes_per_record_, unit);
    const uint64_t variable = std::max(for_records, for_heap);
    min_size_ = fixed + 2 * (half_fixed_size_ + variable);
    const uint64_t steps = min_size_ >= kMaxUsefulSize ? 0 : (kMaxUsefulSize - min_size_ + kGranularity - 1) / kGranularity;
    max_size_ = min_size_ + steps * kGranularity;
}

std::optional<ScratchLayout> ScratchPlan::LayoutFor(VkDeviceSize scratch_size) const {
    if (scratch_size < min_size_ || min_size_ > UINT32_MAX) return std::nullopt;
    const VkDeviceSize usable = std::min(scratch_size, max_size_);
    const VkDeviceSize used = min_size_ + (usable - min_size_) / kGranularity * kGranularity;

    ScratchLayout layout;
    layout.node_count = node_count_;
    layout.output_table_entries = output_table_entries_;
    layout.node_table_offset = sizeof(GraphHeader);
    layout.output_table_offset = layout.node_table_offset + node_count_ * sizeof(NodeStaticInfo);
    layout.trash_offset = static_cast<uint32_t>(AlignUp(layout.output_table_offset + uint64_t(output_table_entries_) * 4, 16));
    layout.trash_size = trash_size_;
    layout.node_stats_offset = static_cast<uint32_t>(AlignUp(uint64_t(layout.trash_offset) + trash_size_, 16));
    // Each half gets half of what is left, in 64-byte units so that the second half stays aligned.
    const uint64_t half_size = (used - fixed_size_) / 2 / 64 * 64;
    layout.half_size = static_cast<uint32_t>(half_size);
    layout.half_offset[0] = fixed_size_;
    layout.half_offset[1] = static_cast<uint32_t>(fixed_size_ + half_size);
    const uint64_t variable = half_size - half_fixed_size_;
    layout.record_capacity = static_cast<uint32_t>(variable / (kBytesPerRecord + heap_bytes_per_record_));
    // The heap takes the rest up to the end of the half (HeapOffset is past the NodeStates, so subtract exactly those).
    const uint64_t heap_start_in_half = sizeof(HalfHeader) + uint64_t(node_count_) * sizeof(NodeState) +
                                        uint64_t(layout.record_capacity) * kBytesPerRecord;
    layout.heap_capacity = static_cast<uint32_t>((half_size - heap_start_in_half - AlignUp(trash_size_, 64)) / 16 * 16);
    layout.used_size = used;
    return layout;
}

}  // namespace execgraph
