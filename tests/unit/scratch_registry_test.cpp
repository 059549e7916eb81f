// ScratchBufferRegistry's record of scratch initializations (layer/device_objects.h), which lets a graph dispatch leave
// out a report that could only flag scratch not initialized for its graph (layer/scheduler.cpp, DispatchOptions::
// initialization_recorded). Every answer that wrongly says "initialized" would hide that message, so these cases check
// that overlapping initializations and destroyed buffers are forgotten.
#include <gtest/gtest.h>

#include "device_objects.h"

namespace execgraph {
namespace {

constexpr VkDeviceSize kMiB = 1 << 20;

// A handle value for a buffer the registry only compares.
VkBuffer FakeBuffer(uint64_t value) { return reinterpret_cast<VkBuffer>(static_cast<uintptr_t>(value)); }

TEST(ScratchInitializations, TheLatestInitializationAtAnAddressNamesItsGraph) {
    ScratchBufferRegistry registry;
    EXPECT_FALSE(registry.LatestInitializationIs(0x100000, 7));
    registry.RecordInitialization(0x100000, kMiB, 7);
    EXPECT_TRUE(registry.LatestInitializationIs(0x100000, 7));
    EXPECT_FALSE(registry.LatestInitializationIs(0x100000, 8)) << "another graph";
    EXPECT_FALSE(registry.LatestInitializationIs(0x100040, 7)) << "another address inside the range: its header is elsewhere";
    // Initialized again for another graph: the first graph's initialization no longer holds.
    registry.RecordInitialization(0x100000, kMiB, 8);
    EXPECT_TRUE(registry.LatestInitializationIs(0x100000, 8));
    EXPECT_FALSE(registry.LatestInitializationIs(0x100000, 7));
}

TEST(ScratchInitializations, AnOverlappingInitializationForgetsTheOnesItOverlaps) {
    ScratchBufferRegistry registry;
    registry.RecordInitialization(0x100000, kMiB, 1);  // [1 MiB, 2 MiB)
    registry.RecordInitialization(0x200000, kMiB, 2);  // [2 MiB, 3 MiB): adjacent, both kept
    registry.RecordInitialization(0x300000, kMiB, 3);  // [3 MiB, 4 MiB)
    EXPECT_TRUE(registry.LatestInitializationIs(0x100000, 1));
    EXPECT_TRUE(registry.LatestInitializationIs(0x200000, 2));
    EXPECT_TRUE(registry.LatestInitializationIs(0x300000, 3));
    // [1.5 MiB, 2.5 MiB) overlaps the end of the first and the start of the second, not the third.
    registry.RecordInitialization(0x180000, kMiB, 4);
    EXPECT_FALSE(registry.LatestInitializationIs(0x100000, 1)) << "overlapped from its start";
    EXPECT_FALSE(registry.LatestInitializationIs(0x200000, 2)) << "overlapped at its start";
    EXPECT_TRUE(registry.LatestInitializationIs(0x300000, 3));
    EXPECT_TRUE(registry.LatestInitializationIs(0x180000, 4));
    // One range covering all of them.
    registry.RecordInitialization(0x0, 16 * kMiB, 5);
    EXPECT_FALSE(registry.LatestInitializationIs(0x180000, 4));
    EXPECT_FALSE(registry.LatestInitializationIs(0x300000, 3));
    EXPECT_TRUE(registry.LatestInitializationIs(0x0, 5));
}

TEST(ScratchInitializations, ADestroyedBufferForgetsTheInitializationsInIt) {
    ScratchBufferRegistry registry;
    registry.AddBuffer(FakeBuffer(1), 4 * kMiB);
    registry.RecordAddress(FakeBuffer(1), 0x400000);  // [4 MiB, 8 MiB)
    registry.AddBuffer(FakeBuffer(2), 4 * kMiB);
    registry.RecordAddress(FakeBuffer(2), 0x800000);  // [8 MiB, 12 MiB)
    registry.RecordInitialization(0x400000, kMiB, 1);
    registry.RecordInitialization(0x700000, kMiB, 2);  // the buffer's last MiB
    registry.RecordInitialization(0x800000, kMiB, 3);
    registry.RemoveBuffer(FakeBuffer(1));
    // A buffer created later may get the same addresses, with memory nobody initialized.
    EXPECT_FALSE(registry.LatestInitializationIs(0x400000, 1));
    EXPECT_FALSE(registry.LatestInitializationIs(0x700000, 2));
    EXPECT_TRUE(registry.LatestInitializationIs(0x800000, 3)) << "the other buffer's";
    EXPECT_FALSE(registry.Find(0x400000, kMiB).has_value());
    EXPECT_TRUE(registry.Find(0x800000, kMiB).has_value());
}

}  // namespace
}  // namespace execgraph
