// The three dispatch commands end to end (vkd3d-proton test_workgraph_basic): several entry nodes per call,
// payloadCount 0, payload and info stride padding and stride 0 (every record aliases record 0), grids with a zero component, and
// repeated dispatches on one scratch without re-initialising it, within one command buffer and across submissions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <vector>

#include "graph_test_fixture.h"

namespace execgraph::test {
namespace {

// basic_grid: NumThreads(2,3,4), MaxDispatchGrid(2,2,2), record = uint3 grid; every thread adds 1 to its cell.
struct Grid {
    uint32_t x, y, z;
};
// static_broadcast_xor: fixed grid (3,3,2), record {v, w}; every thread adds v ^ w to its cell.
struct VW {
    uint32_t v, w;
};

class DispatchCommands : public GraphTest {
  protected:
    void SetUp() override {
        GraphTest::SetUp();
        uav_ = &Uav(2048);
        layout_ = context_.CreateStorageBufferLayout({uav_});
        set_ = context_.descriptor_set();
        graph_ = context_.CreateGraph(
            {{ReadModule("basic_grid"), "main", "Basic"}, {ReadModule("static_broadcast_xor"), "main", "Xor"}}, layout_);
        ASSERT_NE(graph_, VK_NULL_HANDLE) << context_.log().Problems();
        scratch_ = &PrepareScratch(graph_);
        basic_ = context_.NodeIndex(graph_, "Basic", 0);
        xor_ = context_.NodeIndex(graph_, "Xor", 0);
    }

    TestBuffer* uav_ = nullptr;
    TestBuffer* scratch_ = nullptr;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkPipeline graph_ = VK_NULL_HANDLE;
    uint32_t basic_ = 0;
    uint32_t xor_ = 0;
};

std::vector<uint32_t> Reference(const std::vector<Grid>& grids, uint32_t times, const std::vector<VW>& xors = {}) {
    std::vector<uint32_t> expected;
    for (uint32_t t = 0; t < times; ++t) {
        for (const Grid& g : grids) AddGridCells(expected, g.x, g.y, g.z, 1);
        for (const VW& r : xors) AddGridCells(expected, 3, 3, 2, r.v ^ r.w);
    }
    return expected;
}

TEST_F(DispatchCommands, PaddedStrideThreeDispatchesBackToBack) {
    // vkd3d: records (1,2,2), (2,1,1) at stride 16, three DispatchGraph calls with no barrier -> 120 cells, total 432.
    const std::vector<Grid> grids = {{1, 2, 2}, {2, 1, 1}};
    const std::vector<uint8_t> bytes = PackRecords(grids, 16);
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph_, layout_, set_);
        for (int i = 0; i < 3; ++i) DispatchHost(cmd, *scratch_, {{basic_, 2, bytes.data(), 16}});
    });
    const std::vector<uint32_t> expected = Reference(grids, 3);
    ASSERT_EQ(std::count_if(expected.begin(), expected.end(), [](uint32_t v) { return v != 0; }), 120);
    ASSERT_EQ(std::accumulate(expected.begin(), expected.end(), 0u), 432u);
    ExpectUav(*uav_, expected);

    // The same scratch again, in a new submission, without re-initialising it.
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph_, layout_, set_);
        for (int i = 0; i < 3; ++i) DispatchHost(cmd, *scratch_, {{basic_, 2, bytes.data(), 16}});
    });
    ExpectUav(*uav_, Reference(grids, 6));
}

TEST_F(DispatchCommands, StrideZeroAliasesRecordZero) {
    // Three records at stride 0 are three copies of record 0; the bytes after it must never be read.
    const std::vector<Grid> grids = {{2, 1, 2}, {1, 1, 1}, {1, 1, 1}};
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph_, layout_, set_);
        DispatchHost(cmd, *scratch_, {{basic_, 3, grids.data(), 0}});
    });
    ExpectUav(*uav_, Reference({grids[0]}, 3));
}

TEST_F(DispatchCommands, PayloadCountZeroAndZeroGridsRunNothing) {
    const std::vector<Grid> zero_grids = {{0, 2, 2}, {2, 0, 1}, {1, 1, 0}};
    const Grid real{2, 2, 2};
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph_, layout_, set_);
        DispatchHost(cmd, *scratch_, {{basic_, 0, &real, sizeof(Grid)}});
        DispatchHost(cmd, *scratch_, {{basic_, 3, zero_grids.data(), sizeof(Grid)}, {xor_, 0, &real, sizeof(VW)}});
    });
    ExpectUav(*uav_, {});
}

TEST_F(DispatchCommands, SeveralEntryNodesPerCallWithAllThreeCommands) {
    // One count info with three infos (two nodes, one of them twice, one info with payloadCount 0), issued through
    // vkCmdDispatchGraphAMDX (host), vkCmdDispatchGraphIndirectAMDX (device infos and payloads) and
    // vkCmdDispatchGraphIndirectCountAMDX (everything in device memory).
    const std::vector<Grid> grids = {{1, 2, 2}, {2, 1, 1}};
    const std::vector<VW> xors = {{19, 800}, {400, 90}};
    const std::vector<uint8_t> grid_bytes = PackRecords(grids, 20);
    const std::vector<uint8_t> xor_bytes = PackRecords(xors);
    const Grid third{2, 2, 1};

    TestBuffer& device_data =
        Own(context_.CreateBuffer(4096, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    auto* bytes = device_data.As<uint8_t>();
    std::memcpy(bytes + 1024, grid_bytes.data(), grid_bytes.size());
    std::memcpy(bytes + 2048, xor_bytes.data(), xor_bytes.size());
    std::memcpy(bytes + 3072, &third, sizeof(third));
    VkDispatchGraphInfoAMDX infos[4] = {{basic_, 2, {}, 20}, {xor_, 2, {}, sizeof(VW)}, {basic_, 0, {}, 12}, {basic_, 1, {}, 12}};
    infos[0].payloads.deviceAddress = device_data.address + 1024;
    infos[1].payloads.deviceAddress = device_data.address + 2048;
    infos[2].payloads.deviceAddress = device_data.address + 3072;
    infos[3].payloads.deviceAddress = device_data.address + 3072;
    std::memcpy(bytes + 256, infos, sizeof(infos));
    VkDispatchGraphCountInfoAMDX count_info{4, {}, sizeof(VkDispatchGraphInfoAMDX)};
    count_info.infos.deviceAddress = device_data.address + 256;
    std::memcpy(bytes, &count_info, sizeof(count_info));

    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph_, layout_, set_);
        DispatchHost(cmd, *scratch_,
                     {{basic_, 2, grid_bytes.data(), 20},
                      {xor_, 2, xor_bytes.data(), sizeof(VW)},
                      {basic_, 0, &third, 12},
                      {basic_, 1, &third, 12}});
        context_.vkCmdDispatchGraphIndirectAMDX(cmd, scratch_->address, scratch_->size, &count_info);
        context_.vkCmdDispatchGraphIndirectCountAMDX(cmd, scratch_->address, scratch_->size, device_data.address);
    });
    ExpectUav(*uav_, Reference({grids[0], grids[1], third}, 3, xors));
}

TEST_F(DispatchCommands, IndirectCountWithInfoStridePaddingAndStrideZeroPayloads) {
    // Infos 48 bytes apart in device memory, and device payloads at stride 0.
    TestBuffer& device_data =
        Own(context_.CreateBuffer(4096, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT));
    auto* bytes = device_data.As<uint8_t>();
    std::memset(bytes, 0xA5, 4096);
    const Grid grid{1, 1, 2};
    const VW vw{7, 1};
    std::memcpy(bytes + 1024, &grid, sizeof(grid));
    std::memcpy(bytes + 2048, &vw, sizeof(vw));
    VkDispatchGraphInfoAMDX infos[2] = {{basic_, 4, {}, 0}, {xor_, 2, {}, 0}};
    infos[0].payloads.deviceAddress = device_data.address + 1024;
    infos[1].payloads.deviceAddress = device_data.address + 2048;
    std::memcpy(bytes + 256, &infos[0], sizeof(infos[0]));
    std::memcpy(bytes + 256 + 48, &infos[1], sizeof(infos[1]));
    VkDispatchGraphCountInfoAMDX count_info{2, {}, 48};
    count_info.infos.deviceAddress = device_data.address + 256;
    std::memcpy(bytes, &count_info, sizeof(count_info));
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph_, layout_, set_);
        context_.vkCmdDispatchGraphIndirectCountAMDX(cmd, scratch_->address, scratch_->size, device_data.address);
    });
    ExpectUav(*uav_, Reference({grid, grid, grid, grid}, 1, {vw, vw}));
}

TEST_F(DispatchCommands, HostInfosAtAPaddedCountInfoStride) {
    // vkCmdDispatchGraphAMDX with its host infos 40 bytes apart (VkDispatchGraphCountInfoAMDX::stride > 24): the bytes
    // between infos hold a pattern that would read as a bogus node index and payload count if the stride were ignored.
    constexpr size_t kInfoStride = 40;
    const std::vector<Grid> grids = {{2, 1, 1}, {1, 2, 2}};
    const std::vector<VW> xors = {{5, 3}, {64, 1}, {0, 9}};
    std::vector<uint8_t> infos(3 * kInfoStride, 0xA5);
    const VkDispatchGraphInfoAMDX entries[3] = {
        {basic_, 2, {}, sizeof(Grid)}, {xor_, 3, {}, sizeof(VW)}, {basic_, 1, {}, sizeof(Grid)}};
    for (uint32_t i = 0; i < 3; ++i) std::memcpy(infos.data() + i * kInfoStride, &entries[i], sizeof(entries[i]));
    auto set_payloads = [&](uint32_t i, const void* payloads) {
        std::memcpy(infos.data() + i * kInfoStride + offsetof(VkDispatchGraphInfoAMDX, payloads), &payloads, sizeof(payloads));
    };
    set_payloads(0, grids.data());
    set_payloads(1, xors.data());
    set_payloads(2, &grids[1]);
    VkDispatchGraphCountInfoAMDX count_info{3, {}, kInfoStride};
    count_info.infos.hostAddress = infos.data();
    context_.Submit([&](VkCommandBuffer cmd) {
        BindGraph(cmd, graph_, layout_, set_);
        context_.vkCmdDispatchGraphAMDX(cmd, scratch_->address, scratch_->size, &count_info);
    });
    ExpectUav(*uav_, Reference({grids[0], grids[1], grids[1]}, 1, xors));
}

}  // namespace
}  // namespace execgraph::test
