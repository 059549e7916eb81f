// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/disassembler.h"

#include <gtest/gtest.h>

#include "execgraph/spirv/reader.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

std::string DisassembleFile(const std::string& path) {
    Result<Module> module = ReadModule(test::ReadWords(path));
    EXPECT_TRUE(module.ok()) << module.error().ToString();
    return module.ok() ? Disassemble(*module) : std::string();
}

TEST(Disassembler, AmdxInstructionsAndStrings) {
    const std::string text = DisassembleFile(test::FixturePath("gpu_dispatch/classify_gpu_enqueue_cs_a.spv"));
    EXPECT_NE(text.find("OpCapability ShaderEnqueueAMDX"), std::string::npos);
    EXPECT_NE(text.find("OpExtension \"SPV_AMDX_shader_enqueue\""), std::string::npos);
    EXPECT_NE(text.find("OpAllocateNodePayloadsAMDX"), std::string::npos);
    EXPECT_NE(text.find("OpEnqueueNodePayloadsAMDX"), std::string::npos);
    EXPECT_NE(text.find("OpConstantStringAMDX \"compose\""), std::string::npos);
    EXPECT_NE(text.find("OpTypeNodePayloadArrayAMDX"), std::string::npos);
    EXPECT_NE(text.find("OpTypePointer NodePayloadAMDX"), std::string::npos);
    EXPECT_NE(text.find("MaxNumWorkgroupsAMDX"), std::string::npos);
    EXPECT_NE(text.find("PayloadNodeNameAMDX"), std::string::npos);
    EXPECT_NE(text.find("OpMemberDecorate %15 0 PayloadDispatchIndirectAMDX"), std::string::npos);
    EXPECT_NE(text.find("OpExecutionMode %1 LocalSize 16 16 1"), std::string::npos);
    EXPECT_NE(text.find("; Version: 1.6"), std::string::npos);
}

TEST(Disassembler, CoalescingAndArrayLength) {
    const std::string text = DisassembleFile(test::FixturePath("gpu_dispatch/compose_gpu_enqueue_cs_a.spv"));
    EXPECT_NE(text.find("CoalescingAMDX"), std::string::npos);
    EXPECT_NE(text.find("OpNodePayloadArrayLengthAMDX"), std::string::npos);
}

TEST(Disassembler, MeshNodeSharesInput) {
    const std::string text = DisassembleFile(test::FixturePath("gpu_draw_dispatch/geometry_mesh_multi_ms_share_input.spv"));
    EXPECT_NE(text.find("SharesInputWithAMDX"), std::string::npos);
    EXPECT_NE(text.find("OpConstantStringAMDX \"main\""), std::string::npos);
}

TEST(Disassembler, GlslangEnumsNumbersAndMasks) {
    const std::string text = DisassembleFile(test::ShaderPath("compute_spec_vk13.spv"));
    EXPECT_NE(text.find("OpEntryPoint GLCompute"), std::string::npos);
    EXPECT_NE(text.find("OpDecorate"), std::string::npos);
    EXPECT_NE(text.find("SpecId 3"), std::string::npos);
    EXPECT_NE(text.find("OpSpecConstant %"), std::string::npos);
    EXPECT_NE(text.find(" -7"), std::string::npos);  // signed spec constant default printed signed
    EXPECT_NE(text.find("OpSwitch"), std::string::npos);
    EXPECT_NE(text.find("OpLoopMerge"), std::string::npos);
    EXPECT_NE(text.find("OpSelectionMerge"), std::string::npos);
    const std::string frag = DisassembleFile(test::ShaderPath("lighting_frag_vk13.spv"));
    EXPECT_NE(frag.find("OpExtInstImport \"GLSL.std.450\""), std::string::npos);
    EXPECT_NE(frag.find("OpExecutionMode %"), std::string::npos);
    EXPECT_NE(frag.find("OriginUpperLeft"), std::string::npos);
    EXPECT_NE(frag.find("OpConstant %"), std::string::npos);
}

TEST(Disassembler, FloatConstantAndBitMask) {
    Module module;
    module.AddCapability(Capability::Shader);
    Instruction f32(Op::OpTypeFloat, 0, 1);
    f32.AddLiteral(32);
    module.Append(Section::kTypesValues, f32);
    Instruction half(Op::OpConstant, 1, 2);
    half.AddWord(0x3f000000u, OperandKind::LiteralContextDependentNumber);
    module.Append(Section::kTypesValues, half);
    module.header().bound = 3;
    EXPECT_EQ(DisassembleInstruction(module, module.section(Section::kTypesValues)[1]), "%2 = OpConstant %1 0.5");
    Instruction load(Op::OpLoad, 1, 2);
    load.AddId(1).AddWord(0x3, OperandKind::MemoryAccess);
    EXPECT_EQ(DisassembleInstruction(module, load), "%2 = OpLoad %1 %1 Volatile|Aligned");
}

}  // namespace
}  // namespace execgraph::spirv
