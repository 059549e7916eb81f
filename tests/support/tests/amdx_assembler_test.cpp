// Tests for the AMDX assembler front end: exact words for every AMDX spelling, byte-identical output for standard
// SPIR-V, and line-numbered errors.

#include "amdx_assembler.h"

#include <gtest/gtest.h>
#include <spirv/unified1/spirv.hpp11>

#include <string>
#include <vector>

namespace execgraph::test {
namespace {

using Words = std::vector<uint32_t>;

constexpr uint32_t Op(spv::Op op) { return static_cast<uint32_t>(op); }

// Every id a test wants to check is named with OpName, so expectations do not depend on the assembler's numbering.
constexpr char kPrelude[] = R"(
               OpCapability Shader
               OpCapability ShaderEnqueueAMDX
               OpExtension "SPV_AMDX_shader_enqueue"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %in %rr %si
               OpExecutionMode %main LocalSize 1 1 1
)";

constexpr char kTypes[] = R"(
               OpName %main "main"
               OpName %in "in"
               OpName %rr "rr"
               OpName %si "si"
               OpName %rec "rec"
               OpName %arr "arr"
               OpName %arr2 "arr2"
               OpName %ptr "ptr"
               OpName %uint_0 "uint_0"
               OpName %uint_1 "uint_1"
               OpName %uint_2 "uint_2"
               OpName %uint_4 "uint_4"
               OpName %str "str"
               OpName %bool "bool"
               OpName %uint "uint"
       %void = OpTypeVoid
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_4 = OpConstant %uint 4
       %true = OpConstantTrue %bool
        %str = OpConstantStringAMDX "firstNode"
        %rec = OpTypeStruct %uint
        %arr = OpTypeNodePayloadArrayAMDX %rec
       %arr2 = OpTypeNodePayloadArrayAMDX %rec
        %ptr = OpTypePointer NodePayloadAMDX %arr
         %in = OpVariable %ptr NodePayloadAMDX
   %ptr_uint = OpTypePointer Input %uint
         %rr = OpVariable %ptr_uint Input
         %si = OpVariable %ptr_uint Input
         %fn = OpTypeFunction %void
)";

std::string Module(const std::string& annotations, const std::string& body = "") {
    return std::string(kPrelude) + annotations + kTypes + R"(
       %main = OpFunction %void None %fn
      %entry = OpLabel
)" + body + R"(
               OpReturn
               OpFunctionEnd
)";
}

// Looks an id up through its OpName.
uint32_t Id(const Words& words, const std::string& name) {
    const Words packed = PackLiteralString(name);
    for (const Words& operands : FindInstructions(words, Op(spv::Op::OpName))) {
        if (Words(operands.begin() + 1, operands.end()) == packed) return operands[0];
    }
    ADD_FAILURE() << "no OpName \"" << name << "\"";
    return 0;
}

Words AssembleOk(const std::string& text) {
    AssembleResult result = AssembleAmdx(text);
    EXPECT_TRUE(result.ok()) << result.error;
    EXPECT_EQ(CheckModuleStructure(result.words), "");
    return result.words;
}

// Whether `words` contains an instruction `opcode` whose operand words are exactly `operands`.
::testing::AssertionResult HasInstruction(const Words& words, uint32_t opcode, const Words& operands) {
    const std::vector<Words> found = FindInstructions(words, opcode);
    for (const Words& f : found) {
        if (f == operands) return ::testing::AssertionSuccess();
    }
    ::testing::AssertionResult failure = ::testing::AssertionFailure();
    failure << "opcode " << opcode << " with the expected operands not found; " << found.size() << " candidate(s):";
    for (const Words& f : found) {
        failure << " [";
        for (uint32_t w : f) failure << " " << w;
        failure << " ]";
    }
    return failure;
}

TEST(PackLiteralStringTest, PacksLittleEndianWithTerminatorAndPadding) {
    EXPECT_EQ(PackLiteralString(""), (Words{0u}));
    EXPECT_EQ(PackLiteralString("abc"), (Words{0x00636261u}));
    // A multiple of four characters needs a whole extra word for the NUL.
    EXPECT_EQ(PackLiteralString("main"), (Words{0x6E69616Du, 0u}));
}

TEST(AmdxAssemblerTest, CapabilityExtensionAndStorageClass) {
    const Words w = AssembleOk(Module(""));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpCapability), {5067}));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpExtension), PackLiteralString("SPV_AMDX_shader_enqueue")));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpTypePointer), {Id(w, "ptr"), 5068, Id(w, "arr")}));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpVariable), {Id(w, "ptr"), Id(w, "in"), 5068}));
    EXPECT_EQ(w[1], 0x00010600u) << "default target is SPIR-V 1.6, as DXC emits";
}

TEST(AmdxAssemblerTest, BuiltIns) {
    const Words w = AssembleOk(Module(R"(
               OpDecorate %rr BuiltIn RemainingRecursionLevelsAMDX
               OpDecorate %si BuiltIn ShaderIndexAMDX
)"));
    const uint32_t kBuiltIn = 11;
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpDecorate), {Id(w, "rr"), kBuiltIn, 5021}));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpDecorate), {Id(w, "si"), kBuiltIn, 5073}));
}

TEST(AmdxAssemblerTest, ExecutionModes) {
    const Words w = AssembleOk(Module(R"(
               OpExecutionMode %main CoalescingAMDX
               OpExecutionModeId %main CoalescingAMDX
               OpExecutionModeId %main IsApiEntryAMDX %true
               OpExecutionModeId %main MaxNodeRecursionAMDX %uint_4
               OpExecutionModeId %main StaticNumWorkgroupsAMDX %uint_4 %uint_2 %uint_1
               OpExecutionModeId %main ShaderIndexAMDX %uint_2
               OpExecutionModeId %main MaxNumWorkgroupsAMDX %uint_1 %uint_2 %uint_4
               OpExecutionModeId %main SharesInputWithAMDX %str %uint_1
               OpName %true "true"
)"));
    const uint32_t main = Id(w, "main");
    const uint32_t u1 = Id(w, "uint_1"), u2 = Id(w, "uint_2"), u4 = Id(w, "uint_4");
    const uint32_t mode_id = Op(spv::Op::OpExecutionModeId);
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpExecutionMode), {main, 5069}));
    EXPECT_TRUE(HasInstruction(w, mode_id, {main, 5069}));
    EXPECT_TRUE(HasInstruction(w, mode_id, {main, 5070, Id(w, "true")}));
    EXPECT_TRUE(HasInstruction(w, mode_id, {main, 5071, u4}));
    EXPECT_TRUE(HasInstruction(w, mode_id, {main, 5072, u4, u2, u1}));
    EXPECT_TRUE(HasInstruction(w, mode_id, {main, 5073, u2}));
    EXPECT_TRUE(HasInstruction(w, mode_id, {main, 5077, u1, u2, u4}));
    EXPECT_TRUE(HasInstruction(w, mode_id, {main, 5102, Id(w, "str"), u1}));
}

TEST(AmdxAssemblerTest, Decorations) {
    const Words w = AssembleOk(Module(R"(
               OpDecorateId %arr PayloadNodeNameAMDX %str
               OpDecorateId %arr NodeMaxPayloadsAMDX %uint_4
               OpDecorateId %arr PayloadNodeBaseIndexAMDX %uint_2
               OpDecorateId %arr PayloadNodeArraySizeAMDX %uint_4
               OpDecorateId %arr2 NodeSharesPayloadLimitsWithAMDX %arr
               OpDecorate %arr PayloadNodeSparseArrayAMDX
               OpDecorate %rec TrackFinishWritingAMDX
               OpMemberDecorate %rec 0 PayloadDispatchIndirectAMDX
               OpMemberDecorate %rec 0 Offset 0
)"));
    const uint32_t arr = Id(w, "arr"), rec = Id(w, "rec");
    const uint32_t decorate_id = Op(spv::Op::OpDecorateId);
    EXPECT_TRUE(HasInstruction(w, decorate_id, {arr, 5091, Id(w, "str")}));
    EXPECT_TRUE(HasInstruction(w, decorate_id, {arr, 5020, Id(w, "uint_4")}));
    EXPECT_TRUE(HasInstruction(w, decorate_id, {arr, 5098, Id(w, "uint_2")}));
    EXPECT_TRUE(HasInstruction(w, decorate_id, {arr, 5100, Id(w, "uint_4")}));
    EXPECT_TRUE(HasInstruction(w, decorate_id, {Id(w, "arr2"), 5019, arr}));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpDecorate), {arr, 5099}));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpDecorate), {rec, 5078}));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpMemberDecorate), {rec, 0, 5105}));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpMemberDecorate), {rec, 0, 35, 0})) << "standard decorations untouched";
}

TEST(AmdxAssemblerTest, TypeAndStringConstants) {
    const Words w = AssembleOk(Module(R"(
               OpName %spec "spec"
               OpName %four "four"
)") + R"(
       %spec = OpSpecConstantStringAMDX "secondNode"
       %four = OpConstantStringAMDX "main"
)");
    // OpTypeNodePayloadArrayAMDX: 3 words, result id then payload type, no result type.
    EXPECT_TRUE(HasInstruction(w, 5076, {Id(w, "arr"), Id(w, "rec")}));
    EXPECT_TRUE(HasInstruction(w, 5076, {Id(w, "arr2"), Id(w, "rec")}));
    // String constants: result id then the packed literal (3+var words).
    Words expected = {Id(w, "str")};
    for (uint32_t s : PackLiteralString("firstNode")) expected.push_back(s);
    EXPECT_TRUE(HasInstruction(w, 5103, expected));
    expected = {Id(w, "spec")};
    for (uint32_t s : PackLiteralString("secondNode")) expected.push_back(s);
    EXPECT_TRUE(HasInstruction(w, 5104, expected));
    EXPECT_TRUE(HasInstruction(w, 5103, {Id(w, "four"), 0x6E69616Du, 0u}));
    // No placeholder survives: the module's only OpString-shaped or runtime-array instructions were AMDX ones.
    EXPECT_TRUE(FindInstructions(w, Op(spv::Op::OpString)).empty());
    EXPECT_TRUE(FindInstructions(w, Op(spv::Op::OpTypeRuntimeArray)).empty());
}

TEST(AmdxAssemblerTest, FunctionBodyOpcodes) {
    const std::string body = R"(
               OpName %p "p"
               OpName %fnvar "fnvar"
               OpName %len "len"
               OpName %fin "fin"
               OpName %valid "valid"
               OpName %v "v"
)";
    // The OpName lines go to the annotation section, the instructions into the function body.
    const Words m = AssembleOk(Module(body, R"(
          %p = OpAllocateNodePayloadsAMDX %ptr %uint_2 %uint_1 %uint_0
          %v = OpLoad %arr %p
               OpStore %fnvar %v
               OpEnqueueNodePayloadsAMDX %fnvar
        %len = OpNodePayloadArrayLengthAMDX %uint %in
        %fin = OpFinishWritingNodePayloadAMDX %bool %in
      %valid = OpIsNodePayloadValidAMDX %bool %fnvar %uint_0
)"));
    const uint32_t p = Id(m, "p"), fnvar = Id(m, "fnvar");
    EXPECT_TRUE(HasInstruction(m, 5074, {Id(m, "ptr"), p, Id(m, "uint_2"), Id(m, "uint_1"), Id(m, "uint_0")}));
    EXPECT_TRUE(HasInstruction(m, 5075, {fnvar}));
    EXPECT_TRUE(HasInstruction(m, 5090, {Id(m, "uint"), Id(m, "len"), Id(m, "in")}));
    EXPECT_TRUE(HasInstruction(m, 5078, {Id(m, "bool"), Id(m, "fin"), Id(m, "in")}));
    EXPECT_TRUE(HasInstruction(m, 5101, {Id(m, "bool"), Id(m, "valid"), fnvar, Id(m, "uint_0")}));
    // The raw-word hazard the placeholders avoid: the enqueue must not be glued onto the OpStore before it (nor the
    // allocation-derived OpLoad), which both keep their plain word counts.
    EXPECT_TRUE(HasInstruction(m, Op(spv::Op::OpLoad), {Id(m, "arr"), Id(m, "v"), p}));
    EXPECT_TRUE(HasInstruction(m, Op(spv::Op::OpStore), {fnvar, Id(m, "v")}));
    EXPECT_TRUE(FindInstructions(m, Op(spv::Op::OpSelect)).empty());
    EXPECT_TRUE(FindInstructions(m, Op(spv::Op::OpReturnValue)).empty());
    EXPECT_TRUE(FindInstructions(m, Op(spv::Op::OpIAdd)).empty());
    EXPECT_TRUE(FindInstructions(m, Op(spv::Op::OpCopyObject)).empty());
}

TEST(AmdxAssemblerTest, Revision2023Spellings) {
    const Words w = AssembleOk(R"(
               OpCapability Shader
               OpCapability ShaderEnqueueAMDX
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpName %out "out"
               OpName %c "c"
               OpDecorate %out PayloadNodeNameAMDX "child"
               OpDecorate %c BuiltIn CoalescedInputCountAMDX
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
        %rec = OpTypeStruct %uint
        %ptr = OpTypePointer NodeOutputPayloadAMDX %rec
        %out = OpVariable %ptr NodeOutputPayloadAMDX
         %fn = OpTypeFunction %void
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpInitializeNodePayloadsAMDX %out %uint_2 %uint_1 %uint_1
               OpFinalizeNodePayloadsAMDX %out
               OpReturn
               OpFunctionEnd
)");
    const uint32_t out = Id(w, "out");
    Words name = {out, 5091};
    for (uint32_t s : PackLiteralString("child")) name.push_back(s);
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpDecorate), name)) << "2023 PayloadNodeNameAMDX took a literal string";
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpDecorate), {Id(w, "c"), 11, 5021}));
    ASSERT_EQ(FindInstructions(w, 5090).size(), 1u);
    EXPECT_EQ(FindInstructions(w, 5090)[0].size(), 4u) << "no result type or id, four operands";
    EXPECT_EQ(FindInstructions(w, 5090)[0][0], out);
    EXPECT_TRUE(HasInstruction(w, 5075, {out}));
    EXPECT_TRUE(HasInstruction(w, Op(spv::Op::OpVariable), {FindInstructions(w, Op(spv::Op::OpTypePointer))[0][0], out, 5076}));
}

// A plain GLSL-style compute shader: the front end must produce exactly what spvTextToBinary produces, including for
// AMDX-looking words inside strings and id names, which must not be rewritten.
TEST(AmdxAssemblerTest, StandardSpirvIsUnchanged) {
    const std::string text = R"(
; A comment mentioning ShaderIndexAMDX and OpAllocateNodePayloadsAMDX is ignored.
               OpCapability Shader
          %1 = OpExtInstImport "GLSL.std.450"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid
               OpExecutionMode %main LocalSize 64 1 1
               OpName %main "ShaderIndexAMDX"
               OpName %NodePayloadAMDX "OpTypeNodePayloadArrayAMDX"
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %rta ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
               OpDecorate %NodePayloadAMDX DescriptorSet 0
               OpDecorate %NodePayloadAMDX Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
     %uint_0 = OpConstant %uint 0
     %uint_2 = OpConstant %uint 2
    %uint_72 = OpConstant %uint 72
     %v3uint = OpTypeVector %uint 3
     %in_ptr = OpTypePointer Input %v3uint
        %gid = OpVariable %in_ptr Input
        %rta = OpTypeRuntimeArray %uint
        %buf = OpTypeStruct %rta
    %buf_ptr = OpTypePointer StorageBuffer %buf
%NodePayloadAMDX = OpVariable %buf_ptr StorageBuffer
   %elem_ptr = OpTypePointer StorageBuffer %uint
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %g = OpLoad %v3uint %gid Aligned 16
          %x = OpCompositeExtract %uint %g 0
          %p = OpAccessChain %elem_ptr %NodePayloadAMDX %uint_0 %x
          %v = OpLoad %uint %p
          %s = OpIAdd %uint %v %x
               OpStore %p %s
               OpControlBarrier %uint_2 %uint_2 %uint_72
               OpReturn
               OpFunctionEnd
)";
    const AssembleResult plain = AssemblePlain(text);
    ASSERT_TRUE(plain.ok()) << plain.error;
    const AssembleResult amdx = AssembleAmdx(text);
    ASSERT_TRUE(amdx.ok()) << amdx.error;
    EXPECT_EQ(amdx.words, plain.words);
}

// Enumerant rewriting is exactly the raw-word form that 2023.1 accepts.
TEST(AmdxAssemblerTest, EnumerantsMatchHandWrittenRawWords) {
    const std::string named = "OpCapability ShaderEnqueueAMDX\nOpDecorate %a PayloadNodeSparseArrayAMDX\n"
                              "OpDecorateId %a NodeMaxPayloadsAMDX %b\n%p = OpTypePointer NodePayloadAMDX %a\n";
    const std::string raw = "OpCapability !5067\nOpDecorate %a !5099\nOpDecorateId %a !5020 %b\n%p = OpTypePointer !5068 %a\n";
    const AssembleResult a = AssembleAmdx(named);
    const AssembleResult b = AssemblePlain(raw);
    ASSERT_TRUE(a.ok()) << a.error;
    ASSERT_TRUE(b.ok()) << b.error;
    EXPECT_EQ(a.words, b.words);
}

TEST(AmdxAssemblerErrorTest, UnknownEnumerantReportsItsLine) {
    const AssembleResult r = AssembleAmdx("OpCapability Shader\n\nOpCapability ShaderEnqeueAMDX\n");
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(r.words.empty());
    EXPECT_TRUE(r.error.starts_with("line 3:")) << r.error;
}

TEST(AmdxAssemblerErrorTest, WrongOperandCountNamesTheAmdxInstruction) {
    const AssembleResult r = AssembleAmdx("OpCapability Shader\n%p = OpAllocateNodePayloadsAMDX %ptr %s %c\n");
    EXPECT_TRUE(r.error.starts_with("line 2:")) << r.error;
    EXPECT_NE(r.error.find("OpAllocateNodePayloadsAMDX expects 4 operand(s), got 3"), std::string::npos) << r.error;
}

TEST(AmdxAssemblerErrorTest, MissingOrExtraResultId) {
    AssembleResult r = AssembleAmdx("OpCapability Shader\n\n\nOpTypeNodePayloadArrayAMDX %rec\n");
    EXPECT_TRUE(r.error.starts_with("line 4:")) << r.error;
    EXPECT_NE(r.error.find("needs a result id"), std::string::npos) << r.error;
    r = AssembleAmdx("%x = OpEnqueueNodePayloadsAMDX %p\n");
    EXPECT_TRUE(r.error.starts_with("line 1:")) << r.error;
    EXPECT_NE(r.error.find("has no result id"), std::string::npos) << r.error;
}

TEST(AmdxAssemblerErrorTest, OperandKinds) {
    AssembleResult r = AssembleAmdx("OpCapability Shader\n%s = OpConstantStringAMDX %name\n");
    EXPECT_TRUE(r.error.starts_with("line 2:")) << r.error;
    EXPECT_NE(r.error.find("quoted literal string"), std::string::npos) << r.error;
    r = AssembleAmdx("OpCapability Shader\n%n = OpNodePayloadArrayLengthAMDX %uint 7\n");
    EXPECT_TRUE(r.error.starts_with("line 2:")) << r.error;
    EXPECT_NE(r.error.find("expects id operands"), std::string::npos) << r.error;
}

TEST(AmdxAssemblerErrorTest, LineNumbersSurviveMultiLineStrings) {
    // A newline inside a quoted string still advances the line count for later diagnostics (the 2023.1 assembler's own
    // line counter does not, which would say line 3 here).
    const AssembleResult r = AssembleAmdx("OpCapability Shader\nOpSourceExtension \"a\nb\"\nOpBogus\n");
    EXPECT_TRUE(r.error.starts_with("line 4:")) << r.error;
}

TEST(AmdxAssemblerErrorTest, IdOperandModesNeedSpirv12) {
    const std::string text = "OpCapability Shader\nOpExecutionModeId %main ShaderIndexAMDX %c\n";
    EXPECT_TRUE(AssembleAmdx(text, SPV_ENV_UNIVERSAL_1_2).ok());
    const AssembleResult r = AssembleAmdx(text, SPV_ENV_UNIVERSAL_1_0);
    EXPECT_TRUE(r.error.starts_with("line 2:")) << r.error;
}

TEST(ModuleStructureTest, DetectsMalformedStreams) {
    const Words good = AssembleOk(Module(""));
    EXPECT_EQ(CheckModuleStructure(good), "");
    Words truncated = good;
    truncated.push_back(0x00030011u);  // Claims 3 words, only 1 present.
    EXPECT_NE(CheckModuleStructure(truncated), "") << "truncated last instruction";
    Words zero = good;
    zero.push_back(0);
    EXPECT_NE(CheckModuleStructure(zero), "");
    Words bad_magic = good;
    bad_magic[0] = 0;
    EXPECT_NE(CheckModuleStructure(bad_magic), "");
    EXPECT_NE(CheckModuleStructure(Words{0x07230203u, 0x10600u}), "");
}

TEST(FindInstructionsTest, StopsAtMalformedInstruction) {
    const Words words = {0x07230203u, 0x10600u, 0u, 10u, 0u, 0x00020011u, 1u, 0u, 0x00020011u, 2u};
    // The zero word count hides the second OpCapability.
    EXPECT_EQ(FindInstructions(words, Op(spv::Op::OpCapability)), (std::vector<Words>{{1u}}));
}

}  // namespace
}  // namespace execgraph::test
