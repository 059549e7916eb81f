// SPDX-License-Identifier: Apache-2.0
// 2024 (v2) SPV_AMDX_shader_enqueue modules parse; 2023 (v1) shapes are rejected with a message naming the revision.
#include <gtest/gtest.h>

#include "execgraph/spirv/reader.h"
#include "execgraph/spirv/writer.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

enum class Variant {
    kV2,
    kV1OutputStorageClass,     // OpTypePointer NodeOutputPayloadAMDX (5076)
    kV1InitializeOpcode,       // 5090 with 4 operands and no result
    kV1NodeNameLiteral,        // OpDecorateString PayloadNodeNameAMDX "out"
    kV1DecoratedVariable,      // NodeMaxPayloadsAMDX on the input variable
    kV1CoalescedInputBuiltIn,  // BuiltIn 5021 read in a coalescing node without OpNodePayloadArrayLengthAMDX
};

// A hand-assembled single-node module in DXC's shape (dxc-spirv-shapes.md §3.2), with one 2023 feature swapped in.
std::vector<std::uint32_t> NodeModule(Variant variant) {
    test::WordBuilder b(20);
    b.Op(17, {1});     // OpCapability Shader
    b.Op(17, {5067});  // OpCapability ShaderEnqueueAMDX
    b.OpWithString(10, {}, "SPV_AMDX_shader_enqueue");
    b.Op(14, {0, 1});  // OpMemoryModel Logical GLSL450
    if (variant == Variant::kV1CoalescedInputBuiltIn) {
        b.OpWithString(15, {5, 3}, "main", {10, 18});
    } else {
        b.OpWithString(15, {5, 3}, "main", {10});
    }
    b.Op(16, {3, 17, 1, 1, 1});                                             // LocalSize 1 1 1
    b.Op(331, {3, 5073, 6});                                                // OpExecutionModeId ShaderIndexAMDX %6
    if (variant == Variant::kV1CoalescedInputBuiltIn) b.Op(16, {3, 5069});  // CoalescingAMDX
    b.Op(332, {8, 5020, 7});                                                // OpDecorateId %8 NodeMaxPayloadsAMDX %7
    if (variant == Variant::kV1NodeNameLiteral) {
        b.OpWithString(5632, {12, 5091}, "out");  // OpDecorateString %12 PayloadNodeNameAMDX "out"
    } else {
        b.Op(332, {12, 5091, 13});  // OpDecorateId %12 PayloadNodeNameAMDX %13
    }
    if (variant == Variant::kV1DecoratedVariable) b.Op(332, {10, 5020, 7});
    if (variant == Variant::kV1CoalescedInputBuiltIn) b.Op(71, {18, 11, 5021});     // OpDecorate %18 BuiltIn 5021
    b.Op(19, {1});                                                                  // %1 = OpTypeVoid
    b.Op(33, {2, 1});                                                               // %2 = OpTypeFunction %1
    b.Op(21, {5, 32, 0});                                                           // %5 = OpTypeInt 32 0
    b.Op(43, {5, 6, 0});                                                            // %6 = OpConstant %5 0
    b.Op(43, {5, 7, 1});                                                            // %7 = OpConstant %5 1
    b.Op(43, {5, 16, 4});                                                           // %16 = OpConstant %5 4 (Scope Invocation)
    b.Op(30, {11, 5});                                                              // %11 = OpTypeStruct %5
    b.Op(5076, {8, 11});                                                            // %8 = OpTypeNodePayloadArrayAMDX %11
    b.Op(32, {9, 5068, 8});                                                         // %9 = OpTypePointer NodePayloadAMDX %8
    b.Op(59, {9, 10, 5068});                                                        // %10 = OpVariable %9 NodePayloadAMDX
    b.Op(5076, {12, 11});                                                           // %12 = OpTypeNodePayloadArrayAMDX %11
    if (variant != Variant::kV1NodeNameLiteral) b.OpWithString(5103, {13}, "out");  // %13 = OpConstantStringAMDX "out"
    b.Op(32, {14, variant == Variant::kV1OutputStorageClass ? 5076u : 5068u, 12});
    if (variant == Variant::kV1CoalescedInputBuiltIn) {
        b.Op(32, {19, 1, 5});   // %19 = OpTypePointer Input %5
        b.Op(59, {19, 18, 1});  // %18 = OpVariable %19 Input
    }
    b.Op(54, {1, 3, 0, 2});          // %3 = OpFunction %1 None %2
    b.Op(248, {4});                  // %4 = OpLabel
    b.Op(5074, {14, 15, 16, 7, 6});  // %15 = OpAllocateNodePayloadsAMDX %14 %16 %7 %6
    if (variant == Variant::kV1InitializeOpcode) {
        b.Op(5090, {15, 16, 7, 6});  // 2023 OpInitializeNodePayloadsAMDX: no result
    } else if (variant != Variant::kV1CoalescedInputBuiltIn) {
        b.Op(5090, {5, 17, 10});  // %17 = OpNodePayloadArrayLengthAMDX %5 %10
    }
    b.Op(5075, {15});  // OpEnqueueNodePayloadsAMDX %15
    b.Op(253, {});     // OpReturn
    b.Op(56, {});      // OpFunctionEnd
    return b.words();
}

TEST(AmdxRevision, V2ModuleParsesAndRoundTrips) {
    const std::vector<std::uint32_t> words = NodeModule(Variant::kV2);
    Result<Module> module = ReadModule(words);
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    EXPECT_EQ(WriteModule(*module), words);
    const Instruction* length = module->FindDef(17);
    ASSERT_NE(length, nullptr);
    EXPECT_EQ(length->opcode(), Op::OpNodePayloadArrayLengthAMDX);
    EXPECT_EQ(length->type_id(), 5u);
    const Instruction* allocate = module->FindDef(15);
    ASSERT_NE(allocate, nullptr);
    EXPECT_EQ(allocate->KindOf(0), OperandKind::IdScope);
}

class AmdxV1Rejected : public ::testing::TestWithParam<Variant> {};

TEST_P(AmdxV1Rejected, MessageNamesTheRevision) {
    Result<Module> module = ReadModule(NodeModule(GetParam()));
    ASSERT_FALSE(module.ok());
    EXPECT_NE(module.error().message.find("2023"), std::string::npos) << module.error().ToString();
    EXPECT_NE(module.error().word_offset, kNoWordOffset);
}

INSTANTIATE_TEST_SUITE_P(Signals, AmdxV1Rejected,
                         ::testing::Values(Variant::kV1OutputStorageClass, Variant::kV1InitializeOpcode,
                                           Variant::kV1NodeNameLiteral, Variant::kV1DecoratedVariable,
                                           Variant::kV1CoalescedInputBuiltIn));

TEST(AmdxRevision, RecursionBuiltInInV2IsAccepted) {
    // 5021 is RemainingRecursionLevelsAMDX in 2024; AMD's fixtures (all v2) must never trip the heuristics.
    for (const std::string& path : test::AllFixtures()) {
        Result<Module> module = ReadModule(test::ReadWords(path));
        EXPECT_TRUE(module.ok()) << path << ": " << module.error().ToString();
    }
}

}  // namespace
}  // namespace execgraph::spirv
