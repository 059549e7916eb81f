// DispatchReporter (layer/dispatch_reports.h) with the scheduler's finish pass writing its ring slots: what Poll reports
// after real dispatches, the ring's wraparound, reports from the header alone, and cancelled slots. The graph has no
// level, so every entry record is left over and charged to its node: each dispatch's drop counts are known exactly.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dispatch_reports.h"
#include "graph_reference.h"
#include "messages.h"

namespace execgraph::test {
namespace {

constexpr uint32_t kGraphTag = 5;
constexpr uint32_t kLaunchThread = 3;

// The messages a MessageSink emits, by id.
struct CollectedMessages {
    std::vector<std::pair<std::string, std::string>> messages;  // (id, text)

    std::vector<std::string> With(const std::string& id) const {
        std::vector<std::string> texts;
        for (const auto& [message_id, text] : messages) {
            if (message_id == id) texts.push_back(text);
        }
        return texts;
    }
    static VKAPI_ATTR VkBool32 VKAPI_CALL Callback(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user_data) {
        static_cast<CollectedMessages*>(user_data)->messages.emplace_back(data->pMessageIdName, data->pMessage);
        return VK_FALSE;
    }
};

class DispatchReportTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_EQ(gpu_.error(), "");
        graph_.Add(TestGraph::Batched(kLaunchThread, 32), 4);
        graph_.Add(TestGraph::Batched(kLaunchThread, 32), 4);
        plan_.graph_tag = kGraphTag;
        plan_.scratch_plan = ScratchPlan(2, 0, 0);
        plan_.nodes.resize(2);  // no level: nothing is dispatched, every entry record is left over
        for (NodeDispatchPlan& node : plan_.nodes) node.payload_size = 4;
        scratch_ = gpu_.CreateBuffer(plan_.scratch_plan.MinSize());
        gpu_.Run([&](VkCommandBuffer cmd) {
            const RecordResult init =
                gpu_.recorder().RecordInitialize(cmd, Binding(), plan_.scratch_plan, kGraphTag, graph_.nodes, {});
            ASSERT_EQ(init.result, VK_SUCCESS) << init.error;
        });
        VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
        messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                    VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
        messenger.pfnUserCallback = &CollectedMessages::Callback;
        messenger.pUserData = &collected_;
        sink_.AddMessenger(VK_NULL_HANDLE, messenger);
    }
    void TearDown() override {
        if (reporter_) reporter_->Destroy();
        gpu_.DestroyBuffer(&scratch_);
    }

    void CreateReporter(VkDeviceSize ring_size, uint32_t timestamp_queries = 0) {
        ReportOptions options;
        options.statistics = true;
        options.level_timestamps = timestamp_queries != 0;
        reporter_ = std::make_unique<DispatchReporter>(gpu_.device(), &gpu_.table(), gpu_.memory_properties(), options, ring_size,
                                                       std::max(timestamp_queries, 1u));
    }
    ScratchBinding Binding() const { return {scratch_.buffer, 0, scratch_.address, scratch_.size}; }

    // Records a dispatch of `node0_records` records for node 0 and 2 for node 1 with a reserved report slot. The host
    // infos are copied at record time, so they need not outlive the call.
    ReportSlot RecordDispatch(VkCommandBuffer cmd, uint32_t node0_records) {
        std::vector<TestInfo> infos(2);
        infos[0].node = 0;
        for (uint32_t i = 0; i < node0_records; ++i) infos[0].payloads.push_back({i});
        infos[1] = {1, {{100}, {101}}};
        HostInfos host = MakeHostInfos(graph_, infos);
        DispatchOptions options;
        options.report = reporter_->Reserve(plan_.node_count(), {"vkCmdDispatchGraphAMDX", "g", nullptr},
                                            DispatchTimestampCount(plan_.levels.size()));
        EXPECT_NE(options.report.address, 0u);
        const RecordResult result =
            gpu_.recorder().RecordDispatch(cmd, Binding(), plan_, EntrySource::HostInfos(host.count_info), options);
        EXPECT_EQ(result.result, VK_SUCCESS) << result.error;
        return options.report;
    }

    // The statistics lines Poll emitted since the last call.
    std::vector<std::string> PollStatistics() {
        collected_.messages.clear();
        reporter_->Poll(sink_);
        return collected_.With(message_id::kStatistics);
    }

    static std::string DroppedByNode(uint32_t node0, uint32_t node1) {
        return "\"dropped_by_node\":{\"#0\":" + std::to_string(node0) + ",\"#1\":" + std::to_string(node1) + "}";
    }

    GpuHarness gpu_;
    TestGraph graph_;
    GraphPlan plan_;
    GpuBuffer scratch_;
    MessageSink sink_{false};
    CollectedMessages collected_;
    std::unique_ptr<DispatchReporter> reporter_;
};

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "missing " << (part) << " in: " << (text)

// A ring of four slots, six dispatches polled one by one: the fifth and sixth reuse the first slots, and every dispatch
// is reported exactly once with its own counts, from the finish pass's copy of its header and NodeStats.
TEST_F(DispatchReportTest, RingWrapsAroundAndEveryDispatchIsReportedOnce) {
    CreateReporter(4 * ReportSlotSize(2));
    VkDeviceAddress first_slot = 0;
    for (uint32_t i = 0; i < 6; ++i) {
        ReportSlot slot;
        gpu_.Run([&](VkCommandBuffer cmd) { slot = RecordDispatch(cmd, i + 1); });
        if (i == 0) first_slot = slot.address;
        if (i == 4) {
            EXPECT_EQ(slot.address, first_slot) << "the fifth dispatch wraps around";
        }
        const std::vector<std::string> lines = PollStatistics();
        ASSERT_EQ(lines.size(), 1u) << "dispatch " << i;
        EXPECT_CONTAINS(lines[0], "\"dropped\":" + std::to_string(i + 3));
        EXPECT_CONTAINS(lines[0], DroppedByNode(i + 1, 2));
        EXPECT_CONTAINS(lines[0], "\"overflow\":[\"depth_limit\"]");
        const std::vector<std::string> dropped = collected_.With(message_id::kDroppedWork);
        ASSERT_EQ(dropped.size(), 1u);
        EXPECT_CONTAINS(dropped[0], "Node #0: " + std::to_string(i + 1) + " records dropped from level 0");
        EXPECT_TRUE(PollStatistics().empty()) << "reported once";
    }
    EXPECT_EQ(gpu_.log().Problems(), "");
}

// Five dispatches in one command buffer on a ring of four slots: the fifth takes over the first one's slot before
// anything is polled, so the first is not reported (its bytes are gone) and the other four are, in order.
TEST_F(DispatchReportTest, OverwrittenSlotsAreNotReported) {
    CreateReporter(4 * ReportSlotSize(2));
    gpu_.Run([&](VkCommandBuffer cmd) {
        for (uint32_t i = 0; i < 5; ++i) RecordDispatch(cmd, i + 1);
    });
    const std::vector<std::string> lines = PollStatistics();
    ASSERT_EQ(lines.size(), 4u);
    for (uint32_t i = 0; i < 4; ++i) EXPECT_CONTAINS(lines[i], DroppedByNode(i + 2, 2));
}

// A graph whose NodeStats would take more than a quarter of the ring is reported from its header alone: the totals,
// no per-node attribution.
TEST_F(DispatchReportTest, LargeGraphsAreReportedFromTheHeaderAlone) {
    CreateReporter(1024);  // a quarter (256 bytes) holds the slot's serial and header but not two NodeStats
    ReportSlot slot;
    gpu_.Run([&](VkCommandBuffer cmd) { slot = RecordDispatch(cmd, 3); });
    EXPECT_EQ(slot.stats_count, 0u);
    const std::vector<std::string> lines = PollStatistics();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_CONTAINS(lines[0], "\"dropped\":5");
    EXPECT_CONTAINS(lines[0], "\"dropped_by_node\":{}");
    const std::vector<std::string> dropped = collected_.With(message_id::kDroppedWork);
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_CONTAINS(dropped[0], "5 records were dropped");
    EXPECT_EQ(dropped[0].find("Node #"), std::string::npos) << dropped[0];
}

// A slot given back with Cancel (the layer does so when recording the dispatch failed) is never reported.
TEST_F(DispatchReportTest, CancelledSlotsAreNotReported) {
    CreateReporter(DispatchReporter::kRingSize);
    gpu_.Run([&](VkCommandBuffer cmd) {
        reporter_->Cancel(RecordDispatch(cmd, 1));
        RecordDispatch(cmd, 2);
    });
    const std::vector<std::string> lines = PollStatistics();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_CONTAINS(lines[0], DroppedByNode(2, 2));
}

// With level timestamps, each dispatch takes DispatchTimestampCount queries of the reporter's pool, as a ring: three
// dispatches in one command buffer on a pool of four queries (two per dispatch of this level-less plan), so the third
// takes over the first one's queries. All three are reported (the drops above all), the first without GPU times.
TEST_F(DispatchReportTest, DispatchesWhoseTimestampsWereTakenOverAreReportedWithoutTimes) {
    CreateReporter(DispatchReporter::kRingSize, 4);
    std::vector<ReportSlot> slots;
    gpu_.Run([&](VkCommandBuffer cmd) {
        for (uint32_t i = 0; i < 3; ++i) slots.push_back(RecordDispatch(cmd, i + 1));
    });
    ASSERT_EQ(slots.size(), 3u);
    for (const ReportSlot& slot : slots) EXPECT_NE(slot.timestamp_pool, VK_NULL_HANDLE);
    EXPECT_EQ(slots[0].first_timestamp, 0u);
    EXPECT_EQ(slots[1].first_timestamp, 2u);
    EXPECT_EQ(slots[2].first_timestamp, 0u) << "the third wraps around";
    const std::vector<std::string> lines = PollStatistics();
    ASSERT_EQ(lines.size(), 3u);
    for (uint32_t i = 0; i < 3; ++i) EXPECT_CONTAINS(lines[i], DroppedByNode(i + 1, 2));
    EXPECT_EQ(lines[0].find("gpu_us"), std::string::npos) << lines[0];
    for (uint32_t i = 1; i < 3; ++i) {
        EXPECT_CONTAINS(lines[i], "\"gpu_us\":");
        EXPECT_CONTAINS(lines[i], "\"level_gpu_us\":[],\"level_pass_gpu_us\":[]");
    }
    EXPECT_EQ(collected_.With(message_id::kDroppedWork).size(), 3u);
    EXPECT_EQ(gpu_.log().Problems(), "");
}

// The statistics line's GPU times from the timestamps (DispatchTimestampCount's order), to two decimals: the whole
// dispatch, the setup before level 0, each level up to the next one's start (the last up to the end), and each level's
// pass.
TEST(DispatchStatistics, TimesFromTheTimestamps) {
    DispatchReadback readback;
    readback.timestamps_us = {0.0, 3.0, 3.5, 10.25, 12.0, 20.0, 20.0, 31.13};
    const std::string line = FormatStatistics({"vkCmdDispatchGraphAMDX", "g", nullptr}, readback);
    EXPECT_CONTAINS(line,
                    "\"gpu_us\":31.13,\"setup_gpu_us\":3.00,\"level_gpu_us\":[7.25,9.75,11.13],"
                    "\"level_pass_gpu_us\":[0.50,1.75,0.00]}");
    readback.timestamps_us.clear();
    EXPECT_EQ(FormatStatistics({"vkCmdDispatchGraphAMDX", "g", nullptr}, readback).find("gpu_us"), std::string::npos);
}

}  // namespace
}  // namespace execgraph::test
