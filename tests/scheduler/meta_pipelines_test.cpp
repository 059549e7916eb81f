// MetaPipelines: lazy creation, caching, concurrent first use, and destruction with the device.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "gpu_harness.h"

namespace execgraph::test {
namespace {

TEST(MetaPipelines, ConcurrentFirstUseCreatesEachPipelineOnce) {
    GpuHarness gpu;
    ASSERT_EQ(gpu.error(), "");
    MetaPipelines pipelines(gpu.device(), &gpu.table());
    EXPECT_EQ(pipelines.layout(), VK_NULL_HANDLE) << "nothing is created before first use";
    constexpr int kThreads = 4;
    constexpr uint32_t kShaders = static_cast<uint32_t>(MetaShader::kCount);
    std::vector<std::vector<VkPipeline>> got(kThreads, std::vector<VkPipeline>(kShaders, VK_NULL_HANDLE));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&pipelines, &got, t] {
            // Each thread asks in a different order.
            for (uint32_t i = 0; i < kShaders; ++i) {
                const uint32_t shader = (i + t) % kShaders;
                EXPECT_EQ(pipelines.Get(static_cast<MetaShader>(shader), &got[t][shader]), VK_SUCCESS);
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (uint32_t shader = 0; shader < kShaders; ++shader) {
        EXPECT_NE(got[0][shader], VK_NULL_HANDLE);
        for (int t = 1; t < kThreads; ++t) EXPECT_EQ(got[t][shader], got[0][shader]) << "shader " << shader << " created twice";
        for (uint32_t other = 0; other < shader; ++other) EXPECT_NE(got[0][shader], got[0][other]);
    }
    EXPECT_NE(pipelines.layout(), VK_NULL_HANDLE);
    VkPipeline invalid = VK_NULL_HANDLE;
    EXPECT_NE(pipelines.Get(MetaShader::kCount, &invalid), VK_SUCCESS);

    pipelines.Destroy();
    EXPECT_EQ(pipelines.layout(), VK_NULL_HANDLE);
    VkPipeline again = VK_NULL_HANDLE;
    EXPECT_EQ(pipelines.Get(MetaShader::kScatter, &again), VK_SUCCESS) << "usable again after Destroy()";
    EXPECT_NE(again, VK_NULL_HANDLE);
    // The destructor destroys the rest; the validation layer reports leaked objects at vkDestroyDevice.
}

}  // namespace
}  // namespace execgraph::test
