// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/type_manager.h"

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>

#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/decorations.h"
#include "execgraph/spirv/layout.h"
#include "execgraph/spirv/reader.h"
#include "execgraph/spirv/writer.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

// Runs spirv-val (SPIRV-Tools C API) for Vulkan 1.3. Only ever given non-AMDX modules (bookworm's 2023.1 cannot
// parse AMDX: dxc-spirv-shapes.md §4.1).
std::string Validate(const std::vector<std::uint32_t>& words) {
    spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
    spv_diagnostic diagnostic = nullptr;
    spv_const_binary_t binary{words.data(), words.size()};
    const spv_result_t result = spvValidate(context, &binary, &diagnostic);
    std::string message = result == SPV_SUCCESS ? "" : (diagnostic != nullptr ? diagnostic->error : "invalid");
    spvDiagnosticDestroy(diagnostic);
    spvContextDestroy(context);
    return message;
}

void Decorate(Module& module, std::uint32_t target, Decoration decoration, std::initializer_list<std::uint32_t> literals = {}) {
    Instruction inst(Op::OpDecorate);
    inst.AddId(target).AddEnum(OperandKind::Decoration, decoration);
    for (std::uint32_t literal : literals) inst.AddLiteral(literal);
    module.Append(Section::kAnnotation, std::move(inst));
}

void MemberDecorate(Module& module, std::uint32_t target, std::uint32_t member, Decoration decoration, std::uint32_t literal) {
    Instruction inst(Op::OpMemberDecorate);
    inst.AddId(target).AddLiteral(member).AddEnum(OperandKind::Decoration, decoration).AddLiteral(literal);
    module.Append(Section::kAnnotation, std::move(inst));
}

TEST(TypeManager, DeduplicatesTypesAndConstants) {
    Module module;
    TypeManager types(module);
    const std::uint32_t u32 = types.GetUint32();
    EXPECT_EQ(types.GetInt(32, false), u32);
    EXPECT_NE(types.GetInt(32, true), u32);
    const std::uint32_t v3 = types.GetVector(u32, 3);
    EXPECT_EQ(types.GetVector(u32, 3), v3);
    EXPECT_EQ(types.GetPointer(StorageClass::StorageBuffer, v3), types.GetPointer(StorageClass::StorageBuffer, v3));
    EXPECT_NE(types.GetPointer(StorageClass::PhysicalStorageBuffer, v3), types.GetPointer(StorageClass::StorageBuffer, v3));
    EXPECT_EQ(types.GetConstantUint(7), types.GetConstantUint(7));
    EXPECT_NE(types.GetConstantUint(7), types.GetConstantUint(8));
    EXPECT_EQ(types.GetConstantBool(true), types.GetConstantBool(true));
    const std::uint32_t member[] = {u32};
    EXPECT_NE(types.CreateStruct(member), types.CreateStruct(member));  // structs are never merged
    EXPECT_EQ(module.header().bound, module.section(Section::kTypesValues).size() + 1);

    // A second manager over the same module finds what the first created.
    TypeManager again(module);
    EXPECT_EQ(again.GetUint32(), u32);
    EXPECT_EQ(again.GetConstantUint(7), types.GetConstantUint(7));
}

TEST(TypeManager, FindsExistingTypesInParsedModule) {
    Result<Module> module = ReadModule(test::ReadWords(test::FixturePath("gpu_dispatch/classify_gpu_enqueue_cs_a.spv")));
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    const std::uint32_t bound = module->header().bound;
    TypeManager types(*module);
    EXPECT_EQ(types.GetUint32(), 24u);  // %24 = OpTypeInt 32 0 in the fixture
    EXPECT_EQ(types.GetConstantUint(512), 10u);
    EXPECT_EQ(module->header().bound, bound);  // nothing new was needed
    const std::uint32_t fresh = types.GetConstantUint(12345);
    EXPECT_EQ(fresh, bound);
    EXPECT_EQ(module->FindDef(fresh)->opcode(), Op::OpConstant);
}

TEST(ConstantEval, ScalarsSpecConstantsAndOverrides) {
    Result<Module> module = ReadModule(test::ReadWords(test::ShaderPath("compute_spec_vk13.spv")));
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    std::uint32_t scale = 0, enabled = 0, offset = 0;
    for (const Instruction& inst : module->section(Section::kTypesValues)) {
        const std::optional<std::uint32_t> spec_id = SpecIdOf(*module, inst.result_id());
        if (!spec_id) continue;
        if (*spec_id == 1) scale = inst.result_id();
        if (*spec_id == 2) enabled = inst.result_id();
        if (*spec_id == 3) offset = inst.result_id();
    }
    ASSERT_NE(scale, 0u);
    ASSERT_NE(enabled, 0u);
    ASSERT_NE(offset, 0u);
    EXPECT_EQ(*EvaluateUint32(*module, scale), 3u);
    EXPECT_EQ(EvaluateScalarConstant(*module, enabled)->bits, 1u);
    EXPECT_EQ(EvaluateScalarConstant(*module, offset)->AsSigned(), -7);
    const SpecializationMap spec = {{1, 10}, {2, 0}, {3, 0xfffffffeu}};
    EXPECT_EQ(*EvaluateUint32(*module, scale, &spec), 10u);
    EXPECT_EQ(EvaluateScalarConstant(*module, enabled, &spec)->bits, 0u);
    EXPECT_EQ(EvaluateScalarConstant(*module, offset, &spec)->AsSigned(), -2);
    // glslang folds `kScale + 2u` into an OpSpecConstantOp IAdd.
    bool saw_spec_op = false;
    for (const Instruction& inst : module->section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpSpecConstantOp || inst.Word(0) != static_cast<std::uint32_t>(Op::OpIAdd)) continue;
        saw_spec_op = true;
        EXPECT_EQ(*EvaluateUint32(*module, inst.result_id()), 5u);
        EXPECT_EQ(*EvaluateUint32(*module, inst.result_id(), &spec), 12u);
    }
    EXPECT_TRUE(saw_spec_op);
    // A type is not a constant.
    EXPECT_FALSE(EvaluateScalarConstant(*module, module->section(Section::kTypesValues).front().result_id()).ok());
}

TEST(ConstantEval, AmdxOperandsThroughSpecConstants) {
    // compute_to_mesh_multi_cs: StaticNumWorkgroupsAMDX %WorkgroupSizeX (SpecId 1) (dxc-spirv-shapes.md §3.6).
    Result<Module> module = ReadModule(test::ReadWords(test::FixturePath("gpu_draw_dispatch/compute_to_mesh_multi_cs.spv")));
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    const Instruction* mode = nullptr;
    for (const Instruction& inst : module->section(Section::kExecutionMode)) {
        if (inst.Word(1) == static_cast<std::uint32_t>(ExecutionMode::StaticNumWorkgroupsAMDX)) mode = &inst;
    }
    ASSERT_NE(mode, nullptr);
    const std::uint32_t x = mode->Word(2);
    ASSERT_EQ(SpecIdOf(*module, x), 1u);
    Result<std::uint32_t> default_x = EvaluateUint32(*module, x);
    ASSERT_TRUE(default_x.ok()) << default_x.error().ToString();
    const SpecializationMap spec = {{1, 77}};
    EXPECT_EQ(*EvaluateUint32(*module, x, &spec), 77u);
    EXPECT_EQ(*EvaluateUint32(*module, mode->Word(3), &spec), 1u);
}

TEST(Layout, PayloadRecordSizesFromFixtures) {
    // classify_*_de output record: {uint3 grid; uint16_t2 tile} -> 12 + 4 bytes (README.md of the fixtures).
    Result<Module> module = ReadModule(test::ReadWords(test::FixturePath("gpu_dispatch/classify_gpu_enqueue_cs_de.spv")));
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    std::vector<std::uint32_t> sizes;
    for (const Instruction& inst : module->section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpTypeNodePayloadArrayAMDX) continue;
        Result<std::uint32_t> size = ExplicitLayoutSize(*module, inst.Word(0));
        ASSERT_TRUE(size.ok()) << size.error().ToString();
        sizes.push_back(*size);
    }
    ASSERT_EQ(sizes.size(), 2u);
    EXPECT_EQ(sizes[0], 12u);  // input: {uint3 grid}
    EXPECT_EQ(sizes[1], 16u);  // output: {uint3 grid; uint16_t2 tile}
}

TEST(Layout, StructsArraysMatricesAndErrors) {
    Module module;
    TypeManager types(module);
    const std::uint32_t u32 = types.GetUint32();
    const std::uint32_t f32 = types.GetFloat(32);
    const std::uint32_t v4 = types.GetVector(f32, 4);
    const std::uint32_t mat = [&] {
        Instruction inst(Op::OpTypeMatrix);
        inst.AddId(v4).AddLiteral(4);
        inst.set_result_id(module.TakeNextId());
        return module.Append(Section::kTypesValues, std::move(inst)).result_id();
    }();
    const std::uint32_t array = types.CreateArray(u32, types.GetConstantUint(5));
    Decorate(module, array, Decoration::ArrayStride, {16});
    const std::uint32_t members[] = {u32, array, mat, types.GetRuntimeArray(u32)};
    const std::uint32_t record = types.CreateStruct(members);
    MemberDecorate(module, record, 0, Decoration::Offset, 0);
    MemberDecorate(module, record, 1, Decoration::Offset, 16);
    MemberDecorate(module, record, 2, Decoration::Offset, 96);
    MemberDecorate(module, record, 2, Decoration::MatrixStride, 16);
    MemberDecorate(module, record, 3, Decoration::Offset, 160);
    EXPECT_EQ(*ExplicitLayoutSize(module, array), 80u);
    EXPECT_EQ(*ExplicitLayoutSize(module, mat), 64u);
    EXPECT_EQ(*ExplicitLayoutSize(module, record), 160u);  // the runtime array adds nothing

    const std::uint32_t unlaid[] = {u32};
    EXPECT_FALSE(ExplicitLayoutSize(module, types.CreateStruct(unlaid)).ok());  // no Offset
    EXPECT_FALSE(ExplicitLayoutSize(module, types.GetBool()).ok());
    EXPECT_EQ(*ExplicitLayoutSize(module, types.GetPointer(StorageClass::PhysicalStorageBuffer, u32)), 8u);
}

TEST(Decorations, QueriesOnParsedModule) {
    Result<Module> module = ReadModule(test::ReadWords(test::FixturePath("gpu_dispatch/classify_gpu_enqueue_cs_a.spv")));
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    EXPECT_EQ(BuiltInOf(*module, 2), BuiltIn::LocalInvocationIndex);
    EXPECT_EQ(SpecIdOf(*module, 12), 2u);
    EXPECT_EQ(DecorationOperand(*module, 6, Decoration::Binding), 2u);
    EXPECT_EQ(OffsetOf(*module, 15, 0), 0u);
    EXPECT_NE(FindMemberDecoration(*module, 15, 0, Decoration::PayloadDispatchIndirectAMDX), nullptr);
    // OpDecorateId operands are ids: PayloadNodeNameAMDX names the OpConstantStringAMDX defined after the type.
    const std::optional<std::uint32_t> name = DecorationOperand(*module, 20, Decoration::PayloadNodeNameAMDX);
    ASSERT_TRUE(name.has_value());
    EXPECT_EQ(module->FindDef(*name)->StringAt(0), "compose");
    EXPECT_EQ(*EvaluateUint32(*module, *DecorationOperand(*module, 20, Decoration::NodeMaxPayloadsAMDX)), 256u);
    EXPECT_EQ(module->NameOf(1), "main");
    EXPECT_FALSE(HasDecoration(*module, 24, Decoration::Block));
}

TEST(Writer, ModuleBuiltFromScratchPassesSpirvVal) {
    // A compute shader writing 42 into a storage buffer, built only through the IR and the type manager.
    Module module;
    module.header().version = kSpirvVersion1_6;
    module.AddCapability(Capability::Shader);
    module.Append(Section::kMemoryModel, Instruction(Op::OpMemoryModel)
                                             .AddEnum(OperandKind::AddressingModel, AddressingModel::Logical)
                                             .AddEnum(OperandKind::MemoryModel, MemoryModel::GLSL450));
    TypeManager types(module);
    const std::uint32_t void_type = types.GetVoid();
    const std::uint32_t function_type = types.GetFunction(void_type);
    const std::uint32_t u32 = types.GetUint32();
    const std::uint32_t members[] = {u32};
    const std::uint32_t block = types.CreateStruct(members);
    Decorate(module, block, Decoration::Block);
    MemberDecorate(module, block, 0, Decoration::Offset, 0);
    const std::uint32_t block_pointer = types.GetPointer(StorageClass::StorageBuffer, block);
    const std::uint32_t u32_pointer = types.GetPointer(StorageClass::StorageBuffer, u32);
    const std::uint32_t zero = types.GetConstantUint(0);
    const std::uint32_t value = types.GetConstantUint(42);
    const std::uint32_t buffer = module.TakeNextId();
    module.Append(
        Section::kTypesValues,
        Instruction(Op::OpVariable, block_pointer, buffer).AddEnum(OperandKind::StorageClass, StorageClass::StorageBuffer));
    Decorate(module, buffer, Decoration::DescriptorSet, {0});
    Decorate(module, buffer, Decoration::Binding, {0});

    const std::uint32_t main = module.TakeNextId();
    module.Append(Section::kEntryPoint, Instruction(Op::OpEntryPoint)
                                            .AddEnum(OperandKind::ExecutionModel, ExecutionModel::GLCompute)
                                            .AddId(main)
                                            .AddString("main")
                                            .AddId(buffer));
    module.Append(Section::kExecutionMode, Instruction(Op::OpExecutionMode)
                                               .AddId(main)
                                               .AddEnum(OperandKind::ExecutionMode, ExecutionMode::LocalSize)
                                               .AddLiteral(1)
                                               .AddLiteral(1)
                                               .AddLiteral(1));
    Function function;
    function.header.push_back(Instruction(Op::OpFunction, void_type, main)
                                  .AddEnum(OperandKind::FunctionControl, FunctionControl::None)
                                  .AddId(function_type));
    BasicBlock entry;
    entry.instructions.push_back(Instruction(Op::OpLabel, 0, module.TakeNextId()));
    const std::uint32_t element = module.TakeNextId();
    entry.instructions.push_back(Instruction(Op::OpAccessChain, u32_pointer, element).AddId(buffer).AddId(zero));
    entry.instructions.push_back(Instruction(Op::OpStore).AddId(element).AddId(value));
    entry.instructions.push_back(Instruction(Op::OpReturn));
    function.blocks.push_back(std::move(entry));
    module.mutable_functions().push_back(std::move(function));

    const std::vector<std::uint32_t> words = WriteModule(module);
    EXPECT_EQ(Validate(words), "");
    // And our own reader accepts it and reproduces it.
    Result<Module> reread = ReadModule(words);
    ASSERT_TRUE(reread.ok()) << reread.error().ToString();
    EXPECT_EQ(WriteModule(*reread), words);
}

TEST(Writer, ValidatorCatchesABrokenModule) {
    // Guards the validation helper itself: the same kind of module without OpMemoryModel must fail.
    Module module;
    module.AddCapability(Capability::Shader);
    EXPECT_NE(Validate(WriteModule(module)), "");
}

}  // namespace
}  // namespace execgraph::spirv
