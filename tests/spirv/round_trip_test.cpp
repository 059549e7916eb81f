// SPDX-License-Identifier: Apache-2.0
// Parse -> serialise must reproduce the input exactly, for glslang output and for AMD's DXC-compiled AMDX binaries.
#include <gtest/gtest.h>

#include <chrono>

#include "execgraph/spirv/reader.h"
#include "execgraph/spirv/writer.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

class GlslangRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(GlslangRoundTrip, ByteIdentical) {
    const std::vector<std::uint32_t> words = test::ReadWords(test::ShaderPath(GetParam()));
    ASSERT_GT(words.size(), 5u) << "missing test shader " << GetParam();
    Result<Module> module = ReadModule(words);
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    EXPECT_EQ(WriteModule(*module), words);
}

INSTANTIATE_TEST_SUITE_P(Shaders, GlslangRoundTrip,
                         ::testing::Values("compute_spec_vk13.spv", "compute_spec_debug.spv", "compute_spec_vk10.spv",
                                           "lighting_frag_vk13.spv", "lighting_frag_debug.spv", "transform_vert_vk12.spv"));

TEST(GlslangShapes, DebugBuildHasLineInfoAndVersions) {
    // Guards the premise of the round-trip cases: -g output really carries OpLine/OpString, and the versions differ.
    Result<Module> debug = ReadModule(test::ReadWords(test::ShaderPath("compute_spec_debug.spv")));
    ASSERT_TRUE(debug.ok()) << debug.error().ToString();
    bool has_line = false;
    debug->ForEachInstruction([&has_line](const Instruction& inst) { has_line |= inst.opcode() == Op::OpLine; });
    EXPECT_TRUE(has_line);
    EXPECT_FALSE(debug->section(Section::kDebugString).empty());
    EXPECT_EQ(debug->header().version, 0x00010600u);
    Result<Module> vk10 = ReadModule(test::ReadWords(test::ShaderPath("compute_spec_vk10.spv")));
    ASSERT_TRUE(vk10.ok()) << vk10.error().ToString();
    EXPECT_EQ(vk10->header().version, 0x00010000u);
    bool has_spec_constant = false;
    vk10->ForEachInstruction([&](const Instruction& inst) { has_spec_constant |= inst.opcode() == Op::OpSpecConstant; });
    EXPECT_TRUE(has_spec_constant);
}

TEST(AmdFixtures, AllPresent) {
    // README lists the gpu_dispatch and gpu_draw_dispatch binaries; make sure the test is not vacuous.
    EXPECT_GE(test::AllFixtures().size(), 20u) << "fixtures not found under " << EXECGRAPH_AMD_FIXTURES_DIR;
}

TEST(AmdFixtures, EveryFixtureRoundTripsByteIdentically) {
    for (const std::string& path : test::AllFixtures()) {
        SCOPED_TRACE(path);
        const std::vector<std::uint32_t> words = test::ReadWords(path);
        Result<Module> module = ReadModule(words);
        ASSERT_TRUE(module.ok()) << module.error().ToString();
        EXPECT_EQ(WriteModule(*module), words);
    }
}

TEST(AmdFixtures, ConstantStringDefinedAfterDecoratedTypeKeepsOrder) {
    // dxc-spirv-shapes.md §3.2: the OpConstantStringAMDX named by OpDecorateId PayloadNodeNameAMDX follows the type.
    Result<Module> module = ReadModule(test::ReadWords(test::FixturePath("gpu_dispatch/classify_gpu_enqueue_cs_a.spv")));
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    const auto& types = module->section(Section::kTypesValues);
    std::ptrdiff_t payload_array = -1;
    std::ptrdiff_t string = -1;
    for (std::size_t i = 0; i < types.size(); ++i) {
        if (types[i].opcode() == Op::OpTypeNodePayloadArrayAMDX) payload_array = static_cast<std::ptrdiff_t>(i);
        if (types[i].opcode() == Op::OpConstantStringAMDX && string < 0) string = static_cast<std::ptrdiff_t>(i);
    }
    ASSERT_GE(payload_array, 0);
    ASSERT_GE(string, 0);
    EXPECT_LT(payload_array, string);
    const Instruction* name = module->FindDef(types[static_cast<std::size_t>(string)].result_id());
    ASSERT_NE(name, nullptr);
    EXPECT_EQ(name->StringAt(0), "compose");
}

TEST(ReaderPerformance, TenThousandInstructionsParseQuickly) {
    // Build a ~10k-instruction module by repeating constants of a real one; parse time is a soft budget.
    test::WordBuilder builder(20010);
    builder.Op(17, {1});                                                       // OpCapability Shader
    builder.Op(17, {5});                                                       // OpCapability Linkage: no entry point needed
    builder.Op(14, {0, 1});                                                    // OpMemoryModel Logical GLSL450
    builder.Op(21, {1, 32, 0});                                                // %1 = OpTypeInt 32 0
    for (std::uint32_t id = 2; id < 10002; ++id) builder.Op(43, {1, id, id});  // OpConstant %1 %id id
    const auto start = std::chrono::steady_clock::now();
    constexpr int kRuns = 20;
    for (int i = 0; i < kRuns; ++i) {
        Result<Module> module = ReadModule(builder.words());
        ASSERT_TRUE(module.ok()) << module.error().ToString();
    }
    const auto per_parse = (std::chrono::steady_clock::now() - start) / kRuns;
    // Generous bound so debug builds pass; release builds take well under a millisecond. Sanitizers slow parsing several
    // times over, and TSan on a loaded CI machine went past 50 ms, so they get a looser bound.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    constexpr long long kBudgetMs = 500;
#else
    constexpr long long kBudgetMs = 50;
#endif
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(per_parse).count(), kBudgetMs);
    std::printf("10k-instruction parse: %lld us\n",
                static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(per_parse).count()));
}

}  // namespace
}  // namespace execgraph::spirv
