// SPDX-License-Identifier: Apache-2.0
// AnalyzeNode() against the DXC-shaped corpus (tests/spirv_corpus/README.md facts), AMD's shipped binaries
// (shared/fixtures/amd-vulkan-samples/README.md facts) and hand-written modules for the error paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "amdx_assembler.h"
#include "execgraph/spirv/decorations.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/reader.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

using U3 = std::array<std::uint32_t, 3>;

std::string ReadText(const std::string& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

std::string CorpusPath(const std::string& name) { return std::string(EXECGRAPH_SPIRV_CORPUS_DIR) + "/" + name; }

// Assembles AMDX text and reads it back; failures are reported through gtest and yield an empty module.
Module Assemble(const std::string& text, const std::string& what) {
    const execgraph::test::AssembleResult assembled = execgraph::test::AssembleAmdx(text);
    EXPECT_TRUE(assembled.ok()) << what << ": " << assembled.error;
    if (!assembled.ok()) return Module();
    Result<Module> module = ReadModule(assembled.words);
    EXPECT_TRUE(module.ok()) << what << ": " << (module.ok() ? "" : module.error().ToString());
    return module.ok() ? *std::move(module) : Module();
}

Module LoadCorpus(const std::string& name) {
    const std::string text = ReadText(CorpusPath(name));
    EXPECT_FALSE(text.empty()) << "cannot read " << CorpusPath(name);
    return Assemble(text, name);
}

Module LoadFixture(const std::string& relative) {
    const std::vector<std::uint32_t> words = spirv::test::ReadWords(spirv::test::FixturePath(relative));
    EXPECT_FALSE(words.empty()) << "cannot read fixture " << relative;
    Result<Module> module = ReadModule(words);
    EXPECT_TRUE(module.ok()) << relative << ": " << (module.ok() ? "" : module.error().ToString());
    return module.ok() ? *std::move(module) : Module();
}

NodeInfo MustAnalyze(const Module& module, const std::string& entry, const SpecializationMap* spec = nullptr) {
    Result<NodeInfo> info = AnalyzeNode(module, entry, spec);
    EXPECT_TRUE(info.ok()) << entry << ": " << (info.ok() ? "" : info.error().ToString());
    return info.ok() ? *std::move(info) : NodeInfo();
}

std::string MustFail(const Module& module, const std::string& entry, const SpecializationMap* spec = nullptr) {
    Result<NodeInfo> info = AnalyzeNode(module, entry, spec);
    EXPECT_FALSE(info.ok()) << entry << " was analysed although it should be rejected";
    return info.ok() ? std::string() : info.error().message;
}

// ---------------------------------------------------------------------------------------------------------------------
// Corpus: one row per 2024 module, values from its header / the corpus README table.

enum Flag : std::uint32_t {
    kFinishWriting = 1u << 0,
    kArrayLength = 1u << 1,
    kIsValid = 1u << 2,
    kRemainingRecursion = 1u << 3,
    kShaderIndexBuiltIn = 1u << 4,
    kWorkgroupBarrier = 1u << 5,
    kWorkgroupMemory = 1u << 6,
    kOutputMemory = 1u << 7,
};

struct ExpectedOutput {
    std::string name;
    std::uint32_t base_index;
    std::optional<std::uint32_t> array_size;
    std::uint32_t max_payloads;
    bool sparse;
    std::uint32_t record_size;
    bool workgroup;
    bool invocation;
    bool runtime_index;
    std::optional<std::uint32_t> shares_with = std::nullopt;
};

struct CorpusCase {
    std::string file;
    std::string entry;
    LaunchKind launch;
    U3 local_size;
    std::optional<U3> static_grid;
    std::optional<U3> max_grid;
    std::uint32_t input_size;
    std::uint32_t input_max_payloads;
    std::optional<DispatchGridMember> grid;
    std::vector<ExpectedOutput> outputs;
    std::uint32_t flags = 0;
    std::optional<std::uint32_t> max_recursion = std::nullopt;
    std::uint32_t shader_index = 0;
    bool is_api_entry = true;
    std::optional<std::string> shares_input_name = std::nullopt;
    std::uint32_t shares_input_index = 0;
    bool track_finish_writing = false;
};

std::ostream& operator<<(std::ostream& os, const CorpusCase& c) { return os << c.file; }

constexpr LaunchKind kStatic = LaunchKind::kBroadcastStatic;
constexpr LaunchKind kDynamic = LaunchKind::kBroadcastDynamic;
constexpr LaunchKind kCoalescing = LaunchKind::kCoalescing;
constexpr LaunchKind kThread = LaunchKind::kThread;
constexpr std::optional<U3> kNone = std::nullopt;

std::vector<CorpusCase> CorpusCases() {
    std::vector<CorpusCase> cases;
    const auto add = [&cases](CorpusCase c) { cases.push_back(std::move(c)); };
    add({"broadcast_static_grid.spvasm", "main", kStatic, {1024, 1, 1}, U3{2, 3, 2}, kNone, 4, 1, std::nullopt, {}});
    add({"broadcast_dynamic_grid_uint3.spvasm",
         "main",
         kDynamic,
         {8, 1, 1},
         kNone,
         U3{2, 3, 4},
         16,
         1,
         DispatchGridMember{0, 3, 32},
         {}});
    add({"broadcast_dynamic_grid_uint_offset4.spvasm",
         "main",
         kDynamic,
         {2, 3, 4},
         kNone,
         U3{4, 1, 1},
         12,
         1,
         DispatchGridMember{4, 1, 32},
         {}});
    add({"broadcast_dynamic_grid_uint2_offset4.spvasm",
         "main",
         kDynamic,
         {2, 3, 4},
         kNone,
         U3{4, 4, 1},
         16,
         1,
         DispatchGridMember{4, 2, 32},
         {}});
    add({"broadcast_dynamic_grid_u16x2.spvasm",
         "main",
         kDynamic,
         {2, 3, 4},
         kNone,
         U3{4, 4, 1},
         12,
         1,
         DispatchGridMember{4, 2, 16},
         {}});
    add({"broadcast_dynamic_grid_uint_array3.spvasm",
         "main",
         kDynamic,
         {2, 3, 4},
         kNone,
         U3{4, 4, 4},
         20,
         1,
         DispatchGridMember{0, 3, 32},
         {}});
    add({"broadcast_dynamic_grid_nested.spvasm",
         "main",
         kDynamic,
         {2, 3, 4},
         kNone,
         U3{4, 4, 4},
         20,
         1,
         DispatchGridMember{4, 3, 32},
         {}});
    add({"coalescing_max_records.spvasm", "main", kCoalescing, {24, 1, 1}, kNone, kNone, 8, 3, std::nullopt, {}, kArrayLength});
    add({"thread_node.spvasm", "main", kThread, {1, 1, 1}, kNone, kNone, 8, 1, std::nullopt, {}});
    add({"output_single_late_constants.spvasm",
         "main",
         kStatic,
         {64, 1, 1},
         U3{4, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {{"output", 0, std::nullopt, 256, false, 4, false, true, false}}});
    add({"divergent_allocate.spvasm",
         "main",
         kStatic,
         {36, 1, 1},
         U3{7, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {{"Sink", 0, std::nullopt, 36, false, 8, false, true, false}}});
    add({"output_node_array_runtime_index.spvasm",
         "main",
         kStatic,
         {8, 1, 1},
         U3{1, 1, 1},
         kNone,
         8,
         1,
         std::nullopt,
         {{"B", 0, 4u, 8, false, 4, true, false, true}}});
    add({"output_sparse_array.spvasm",
         "main",
         kStatic,
         {1, 1, 1},
         U3{1, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {{"OutputArray_1_0", 0, 129u, 31, true, 4, false, true, true}},
         kIsValid});
    add({"output_dense_array_is_valid_type.spvasm",
         "main",
         kStatic,
         {1, 1, 1},
         U3{1, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {{"B", 0, 4u, 1, false, 4, false, true, true}},
         kIsValid});
    add({"output_unbounded_sparse.spvasm",
         "main",
         kStatic,
         {1, 1, 1},
         U3{1, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {{"OutputArray_2_0", 0, std::nullopt, 37, true, 4, false, true, true}},
         kIsValid});
    add({"output_empty_increment.spvasm",
         "main",
         kThread,
         {1, 1, 1},
         kNone,
         kNone,
         0,
         1,
         std::nullopt,
         {{"A", 0, std::nullopt, 4, false, 0, false, true, false}, {"C", 0, 2u, 2, false, 0, true, false, false}}});
    add({"output_alloc_scopes.spvasm",
         "main",
         kStatic,
         {4, 1, 1},
         U3{1, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {{"output", 0, std::nullopt, 8, false, 4, true, true, false}}});
    add({"output_shares_payload_limits.spvasm",
         "main",
         kStatic,
         {1, 1, 1},
         U3{1, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {{"aggregation", 0, std::nullopt, 256, false, 4, false, true, false},
          {"fixed_exp", 2, std::nullopt, 1, false, 4, false, true, false, 0u}}});
    add({"record_layout_16bit.spvasm",
         "main",
         kStatic,
         {1, 1, 1},
         U3{1, 1, 1},
         kNone,
         18,
         1,
         std::nullopt,
         {{"wide", 0, std::nullopt, 1, false, 18, false, true, false},
          {"narrow", 0, std::nullopt, 1, false, 6, false, true, false}}});
    {
        CorpusCase c{"recursion_remaining_levels.spvasm",
                     "main",
                     kStatic,
                     {1, 1, 1},
                     U3{32, 2, 2},
                     kNone,
                     4,
                     1,
                     std::nullopt,
                     {},
                     kRemainingRecursion};
        c.max_recursion = 16;
        add(c);
    }
    {
        CorpusCase c{"shares_input_with.spvasm", "main", kStatic, {64, 1, 1}, U3{256, 1, 1}, kNone, 8, 1, std::nullopt, {}};
        c.shares_input_name = "Broadcast";
        c.shares_input_index = 3;
        add(c);
    }
    {
        CorpusCase c{"is_api_entry_false.spvasm", "main", kThread, {1, 1, 1}, kNone, kNone, 4, 1, std::nullopt, {}};
        c.is_api_entry = false;
        add(c);
    }
    {
        CorpusCase c{"track_finish_writing.spvasm",
                     "main",
                     kDynamic,
                     {64, 1, 1},
                     kNone,
                     U3{1024, 1, 1},
                     8,
                     1,
                     DispatchGridMember{0, 1, 32},
                     {},
                     kFinishWriting | kWorkgroupBarrier | kOutputMemory};
        c.track_finish_writing = true;
        add(c);
    }
    {
        CorpusCase c{
            "shader_index_builtin.spvasm", "main", kThread, {1, 1, 1}, kNone, kNone, 4, 1, std::nullopt, {}, kShaderIndexBuiltIn};
        c.shader_index = 5;
        add(c);
    }
    add({"spec_constants.spvasm",
         "main",
         kStatic,
         {32, 1, 1},
         U3{4, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {{"child", 0, std::nullopt, 8, false, 4, true, false, false}}});
    add({"workgroup_shared_barrier.spvasm",
         "main",
         kStatic,
         {64, 1, 1},
         U3{1, 1, 1},
         kNone,
         4,
         1,
         std::nullopt,
         {},
         kWorkgroupBarrier | kWorkgroupMemory});
    add({"hello_first_node.spvasm",
         "firstNode",
         kDynamic,
         {2, 1, 1},
         kNone,
         U3{16, 1, 1},
         8,
         1,
         DispatchGridMember{0, 1, 32},
         {{"secondNode", 0, std::nullopt, 2, false, 8, true, false, false}}});
    add({"hello_second_node.spvasm",
         "secondNode",
         kThread,
         {1, 1, 1},
         kNone,
         kNone,
         8,
         1,
         std::nullopt,
         {{"thirdNode", 0, std::nullopt, 1, false, 4, false, true, false}}});
    add({"hello_third_node.spvasm",
         "thirdNode",
         kCoalescing,
         {32, 1, 1},
         kNone,
         kNone,
         4,
         32,
         std::nullopt,
         {},
         kArrayLength | kWorkgroupBarrier | kWorkgroupMemory});
    add({"vkd3d_basic_recursion_entry.spvasm",
         "EntryNode",
         kThread,
         {1, 1, 1},
         kNone,
         kNone,
         0,
         1,
         std::nullopt,
         {{"Recursive", 0, std::nullopt, 2, false, 4, false, true, false}}});
    {
        CorpusCase c{"vkd3d_basic_recursion_recursive.spvasm",
                     "Recursive",
                     kThread,
                     {1, 1, 1},
                     kNone,
                     kNone,
                     4,
                     1,
                     std::nullopt,
                     {{"Recursive", 0, std::nullopt, 2, false, 4, false, true, false}},
                     kIsValid | kRemainingRecursion};
        c.max_recursion = 6;
        add(c);
    }
    return cases;
}

class CorpusNodeTest : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(CorpusNodeTest, MatchesHeaderFacts) {
    const CorpusCase& c = GetParam();
    const Module module = LoadCorpus(c.file);
    const NodeInfo node = MustAnalyze(module, c.entry);
    EXPECT_EQ(node.entry_point_name, c.entry);
    EXPECT_NE(node.entry_point_id, 0u);
    EXPECT_EQ(node.launch, c.launch);
    EXPECT_EQ(node.local_size, c.local_size);
    EXPECT_EQ(node.static_grid, c.static_grid);
    EXPECT_EQ(node.max_grid, c.max_grid);
    EXPECT_EQ(node.max_recursion, c.max_recursion);
    EXPECT_EQ(node.shader_index, std::optional<std::uint32_t>(c.shader_index));  // DXC always emits ShaderIndexAMDX
    EXPECT_EQ(node.is_api_entry, c.is_api_entry);
    EXPECT_EQ(node.shares_input_with_name, c.shares_input_name);
    EXPECT_EQ(node.shares_input_with_index, c.shares_input_index);

    EXPECT_NE(node.input_variable_id, 0u) << "every corpus module declares its input";
    EXPECT_EQ(node.input_record.size, c.input_size);
    EXPECT_NE(node.input_record.struct_type_id, 0u);
    EXPECT_GE(node.input_record.alignment, 4u);
    EXPECT_EQ(node.input_record.track_finish_writing, c.track_finish_writing);
    EXPECT_EQ(node.input_max_payloads, c.input_max_payloads);
    ASSERT_EQ(node.dispatch_grid.has_value(), c.grid.has_value());
    if (c.grid) {
        EXPECT_EQ(node.dispatch_grid->byte_offset, c.grid->byte_offset);
        EXPECT_EQ(node.dispatch_grid->component_count, c.grid->component_count);
        EXPECT_EQ(node.dispatch_grid->component_bits, c.grid->component_bits);
    }

    ASSERT_EQ(node.outputs.size(), c.outputs.size());
    std::set<std::uint32_t> type_ids;
    for (std::size_t i = 0; i < c.outputs.size(); ++i) {
        SCOPED_TRACE("output " + std::to_string(i));
        const NodeOutputInfo& got = node.outputs[i];
        const ExpectedOutput& want = c.outputs[i];
        type_ids.insert(got.payload_array_type_id);
        EXPECT_NE(got.payload_array_type_id, node.input_record.struct_type_id);
        EXPECT_EQ(got.name, want.name);
        EXPECT_EQ(got.base_index, want.base_index);
        EXPECT_EQ(got.array_size, want.array_size);
        EXPECT_EQ(got.max_payloads, want.max_payloads);
        EXPECT_EQ(got.sparse, want.sparse);
        EXPECT_EQ(got.unbounded(), want.sparse && !want.array_size);
        EXPECT_EQ(got.record.size, want.record_size);
        EXPECT_EQ(got.allocated_at_workgroup_scope, want.workgroup);
        EXPECT_EQ(got.allocated_at_invocation_scope, want.invocation);
        EXPECT_EQ(got.allocated_with_runtime_index, want.runtime_index);
        EXPECT_EQ(got.shares_payload_limits_with, want.shares_with);
    }
    EXPECT_EQ(type_ids.size(), c.outputs.size()) << "each output is its own OpTypeNodePayloadArrayAMDX";

    EXPECT_EQ(node.uses_finish_writing, (c.flags & kFinishWriting) != 0);
    EXPECT_EQ(node.uses_payload_array_length, (c.flags & kArrayLength) != 0);
    EXPECT_EQ(node.uses_is_payload_valid, (c.flags & kIsValid) != 0);
    EXPECT_EQ(node.uses_remaining_recursion_levels, (c.flags & kRemainingRecursion) != 0);
    EXPECT_EQ(node.uses_shader_index_builtin, (c.flags & kShaderIndexBuiltIn) != 0);
    EXPECT_EQ(node.uses_workgroup_barrier, (c.flags & kWorkgroupBarrier) != 0);
    EXPECT_EQ(node.uses_workgroup_memory, (c.flags & kWorkgroupMemory) != 0);
    EXPECT_EQ(node.uses_output_memory_semantics, (c.flags & kOutputMemory) != 0);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusNodeTest, ::testing::ValuesIn(CorpusCases()),
                         [](const ::testing::TestParamInfo<CorpusCase>& info) {
                             std::string name = info.param.file.substr(0, info.param.file.find('.'));
                             return name;
                         });

// Every 2024 corpus module must have a row above, so a new corpus file cannot go unchecked.
TEST(CorpusNodeCoverage, EveryCorpusModuleHasExpectations) {
    std::set<std::string> listed;
    for (const CorpusCase& c : CorpusCases()) listed.insert(c.file);
    std::size_t seen = 0;
    for (const auto& entry : std::filesystem::directory_iterator(EXECGRAPH_SPIRV_CORPUS_DIR)) {
        if (entry.path().extension() != ".spvasm") continue;
        const std::string name = entry.path().filename().string();
        ++seen;
        if (name == "revision2023_reject.spvasm") continue;
        EXPECT_EQ(listed.count(name), 1u) << name << " has no expected node facts in node_analysis_test.cpp";
    }
    EXPECT_EQ(seen, listed.size() + 1);
}

TEST(CorpusNodeCoverage, Revision2023ModuleIsRejectedByTheReader) {
    const execgraph::test::AssembleResult assembled =
        execgraph::test::AssembleAmdx(ReadText(CorpusPath("revision2023_reject.spvasm")));
    ASSERT_TRUE(assembled.ok()) << assembled.error;
    Result<Module> module = ReadModule(assembled.words);
    ASSERT_FALSE(module.ok());
    EXPECT_NE(module.error().message.find("2023"), std::string::npos) << module.error().message;
}

// Specialization changes the analysed local size, grid, output budget and base index (spec_constants.spvasm header).
TEST(NodeAnalysisSpecialization, OverridesChangeCorpusFacts) {
    const Module module = LoadCorpus("spec_constants.spvasm");
    const SpecializationMap spec{{0, 16}, {1, 7}, {2, 64}, {3, 5}};
    const NodeInfo node = MustAnalyze(module, "main", &spec);
    EXPECT_EQ(node.local_size, (U3{64, 1, 1}));
    EXPECT_EQ(node.static_grid, (U3{7, 1, 1}));
    ASSERT_EQ(node.outputs.size(), 1u);
    EXPECT_EQ(node.outputs[0].max_payloads, 16u);
    EXPECT_EQ(node.outputs[0].base_index, 5u);

    const SpecializationMap partial{{2, 8}};
    const NodeInfo partly = MustAnalyze(module, "main", &partial);
    EXPECT_EQ(partly.local_size, (U3{8, 1, 1}));
    EXPECT_EQ(partly.static_grid, (U3{4, 1, 1}));
    ASSERT_EQ(partly.outputs.size(), 1u);
    EXPECT_EQ(partly.outputs[0].max_payloads, 8u);
}

// ---------------------------------------------------------------------------------------------------------------------
// Record layout: exact size, alignment and member offsets (scalar layout, as DXC emits node records).

struct ExpectedRecord {
    std::uint32_t size;
    std::uint32_t alignment;
    std::vector<std::uint32_t> offsets;
    std::vector<std::uint32_t> member_bits;  // scalar width of each member's components
};

void ExpectRecord(const Module& module, const RecordLayout& record, const ExpectedRecord& want) {
    EXPECT_EQ(record.size, want.size);
    EXPECT_EQ(record.alignment, want.alignment);
    const Instruction* type = module.FindDef(record.struct_type_id);
    ASSERT_NE(type, nullptr);
    ASSERT_EQ(type->opcode(), Op::OpTypeStruct);
    ASSERT_EQ(type->OperandWordCount(), want.offsets.size());
    for (std::uint32_t i = 0; i < want.offsets.size(); ++i) {
        SCOPED_TRACE("member " + std::to_string(i));
        EXPECT_EQ(OffsetOf(module, record.struct_type_id, i), std::optional<std::uint32_t>(want.offsets[i]));
        const Instruction* member = module.FindDef(type->Word(i));
        ASSERT_NE(member, nullptr);
        if (member->opcode() == Op::OpTypeVector) member = module.FindDef(member->Word(0));
        ASSERT_EQ(member->opcode(), Op::OpTypeInt);
        EXPECT_EQ(member->Word(0), want.member_bits[i]);
    }
}

TEST(NodeAnalysisLayout, ScalarRecordsWith16And64BitMembers) {
    const Module module = LoadCorpus("record_layout_16bit.spvasm");
    const NodeInfo node = MustAnalyze(module, "main");
    // uint16_t a; uint16_t2 b; uint c; uint16_t3 d: the vector of three 16-bit values takes 6 bytes, no tail padding.
    ExpectRecord(module, node.input_record, {18, 4, {0, 2, 8, 12}, {16, 16, 32, 16}});
    ASSERT_EQ(node.outputs.size(), 2u);
    // uint16_t x; uint64_t y; uint16_t z: the 64-bit member makes the record 8-aligned.
    EXPECT_EQ(node.outputs[0].name, "wide");
    ExpectRecord(module, node.outputs[0].record, {18, 8, {0, 8, 16}, {16, 64, 16}});
    // uint16_t2 p; uint16_t q: only 16-bit members, yet records are at least 4-aligned.
    EXPECT_EQ(node.outputs[1].name, "narrow");
    ExpectRecord(module, node.outputs[1].record, {6, 4, {0, 4}, {16, 16}});
    EXPECT_NE(node.outputs[0].record.struct_type_id, node.outputs[1].record.struct_type_id);
    EXPECT_NE(node.input_record.struct_type_id, node.outputs[0].record.struct_type_id);
}

TEST(NodeAnalysisLayout, ExplicitOffsetsDecideTheSizeNotTheMemberTypes) {
    // The same members with a gap DXC would not emit: the size follows the Offset decorations (last member at 20).
    std::string text = ReadText(CorpusPath("record_layout_16bit.spvasm"));
    const std::string from = "OpMemberDecorate %InRec 3 Offset 12";
    text.replace(text.find(from), from.size(), "OpMemberDecorate %InRec 3 Offset 20");
    const Module module = Assemble(text, "gap");
    const NodeInfo node = MustAnalyze(module, "main");
    ExpectRecord(module, node.input_record, {26, 4, {0, 2, 8, 20}, {16, 16, 32, 16}});
}

// ---------------------------------------------------------------------------------------------------------------------
// AMD's shipped binaries (fixtures README).

TEST(AmdFixtureNodes, EveryFixtureIsAnalysedOrRejectedForItsStage) {
    const std::vector<std::string> fixtures = spirv::test::AllFixtures();
    ASSERT_EQ(fixtures.size(), 24u) << "fixtures not found under " << EXECGRAPH_AMD_FIXTURES_DIR;
    std::size_t compute = 0;
    std::size_t mesh = 0;
    std::size_t graphics = 0;
    for (const std::string& path : fixtures) {
        SCOPED_TRACE(path);
        const std::string name = std::filesystem::path(path).filename().string();
        const std::vector<std::uint32_t> words = spirv::test::ReadWords(path);
        Result<Module> module = ReadModule(words);
        ASSERT_TRUE(module.ok()) << module.error().ToString();
        if (name.find("_ms") != std::string::npos) {
            EXPECT_NE(MustFail(*module, "main").find("mesh nodes are not supported"), std::string::npos);
            ++mesh;
        } else if (name.rfind("geometry_", 0) == 0) {
            EXPECT_NE(MustFail(*module, "main").find("not GLCompute"), std::string::npos);
            ++graphics;
        } else {
            const NodeInfo node = MustAnalyze(*module, "main");
            EXPECT_EQ(node.shader_index, std::optional<std::uint32_t>(0u));
            EXPECT_TRUE(node.is_api_entry);
            ++compute;
        }
    }
    EXPECT_EQ(compute, 16u);  // 6 classify, 7 compose, 3 compute_to_mesh
    EXPECT_EQ(mesh, 3u);
    EXPECT_EQ(graphics, 5u);
}

TEST(AmdFixtureNodes, ClassifyWritesTheComposeNodeArrayAtARuntimeIndex) {
    struct Variant {
        std::string file;
        std::uint32_t max_payloads;
        std::uint32_t record_size;
        bool workgroup;
    };
    const std::vector<Variant> variants = {
        {"classify_gpu_enqueue_cs_fe.spv", 1, 4, true},    // {uint16_t2 tile}, group record per tile
        {"classify_gpu_enqueue_cs_de.spv", 1, 16, true},   // {uint3 grid; uint16_t2 tile}
        {"classify_gpu_enqueue_cs_a.spv", 256, 4, false},  // {uint16_t2 pixel}, thread records, 256 per workgroup
        {"classify_material_map_gpu_enqueue_cs_fe.spv", 1, 4, true},
        {"classify_material_map_gpu_enqueue_cs_de.spv", 1, 16, true},
        {"classify_material_map_gpu_enqueue_cs_a.spv", 256, 4, false},
    };
    for (const Variant& v : variants) {
        SCOPED_TRACE(v.file);
        const Module module = LoadFixture("gpu_dispatch/" + v.file);
        const NodeInfo node = MustAnalyze(module, "main");
        EXPECT_EQ(node.launch, LaunchKind::kBroadcastDynamic);
        EXPECT_EQ(node.local_size, (U3{16, 16, 1}));
        EXPECT_EQ(node.max_grid, (U3{512, 512, 1}));
        EXPECT_FALSE(node.static_grid.has_value());
        // The host sends uint3 grid = (ceil(W/16), ceil(H/16), 1): the record's PayloadDispatchIndirectAMDX member.
        EXPECT_NE(node.input_variable_id, 0u);
        EXPECT_EQ(node.input_record.size, 12u);
        ASSERT_TRUE(node.dispatch_grid.has_value());
        EXPECT_EQ(node.dispatch_grid->byte_offset, 0u);
        EXPECT_EQ(node.dispatch_grid->component_count, 3u);
        EXPECT_EQ(node.dispatch_grid->component_bits, 32u);
        ASSERT_EQ(node.outputs.size(), 1u);
        const NodeOutputInfo& compose = node.outputs[0];
        EXPECT_EQ(compose.name, "compose");
        EXPECT_EQ(compose.array_size, std::optional<std::uint32_t>(3u));
        EXPECT_FALSE(compose.sparse);
        EXPECT_EQ(compose.base_index, 0u);
        EXPECT_EQ(compose.max_payloads, v.max_payloads);
        EXPECT_EQ(compose.record.size, v.record_size);
        EXPECT_EQ(compose.allocated_at_workgroup_scope, v.workgroup);
        EXPECT_EQ(compose.allocated_at_invocation_scope, !v.workgroup);
        EXPECT_TRUE(compose.allocated_with_runtime_index);
        EXPECT_TRUE(node.uses_workgroup_memory);
    }
}

TEST(AmdFixtureNodes, ComposeLaunchKinds) {
    struct Variant {
        std::string file;
        LaunchKind launch;
        U3 local_size;
        std::uint32_t input_max_payloads;
        std::uint32_t record_size;
    };
    const std::vector<Variant> variants = {
        {"compose_gpu_enqueue_cs_fe.spv", LaunchKind::kBroadcastStatic, {16, 16, 1}, 1, 4},
        {"compose_gpu_enqueue_cs_de.spv", LaunchKind::kBroadcastDynamic, {16, 16, 1}, 1, 16},
        {"compose_gpu_enqueue_cs_a.spv", LaunchKind::kCoalescing, {16, 16, 1}, 256, 4},
        {"compose_gpu_enqueue_cs_t.spv", LaunchKind::kThread, {1, 1, 1}, 1, 4},
        {"compose_material_map_gpu_enqueue_cs_fe.spv", LaunchKind::kBroadcastStatic, {16, 16, 1}, 1, 4},
        {"compose_material_map_gpu_enqueue_cs_de.spv", LaunchKind::kBroadcastDynamic, {16, 16, 1}, 1, 16},
        {"compose_material_map_gpu_enqueue_cs_a.spv", LaunchKind::kCoalescing, {16, 16, 1}, 256, 4},
    };
    for (const Variant& v : variants) {
        SCOPED_TRACE(v.file);
        const Module module = LoadFixture("gpu_dispatch/" + v.file);
        const NodeInfo node = MustAnalyze(module, "main");
        EXPECT_EQ(node.launch, v.launch);
        EXPECT_EQ(node.local_size, v.local_size);
        EXPECT_EQ(node.input_max_payloads, v.input_max_payloads);
        EXPECT_EQ(node.input_record.size, v.record_size);
        EXPECT_TRUE(node.outputs.empty()) << "compose is a leaf";
        EXPECT_EQ(node.uses_payload_array_length, v.launch == LaunchKind::kCoalescing);
        if (v.launch == LaunchKind::kBroadcastStatic) {
            EXPECT_EQ(node.static_grid, (U3{1, 1, 1}));
        }
        if (v.launch == LaunchKind::kBroadcastDynamic) {
            EXPECT_EQ(node.max_grid, (U3{1, 1, 1}));
            ASSERT_TRUE(node.dispatch_grid.has_value());
            EXPECT_EQ(node.dispatch_grid->byte_offset, 0u);
            EXPECT_EQ(node.dispatch_grid->component_count, 3u);
        } else {
            EXPECT_FALSE(node.dispatch_grid.has_value());
        }
    }
}

TEST(AmdFixtureNodes, ComputeToMeshUsesSpecConstantsInAmdxOperands) {
    const Module module = LoadFixture("gpu_draw_dispatch/compute_to_mesh_multi_cs.spv");
    const NodeInfo defaults = MustAnalyze(module, "main");
    EXPECT_EQ(defaults.launch, LaunchKind::kBroadcastStatic);
    EXPECT_EQ(defaults.local_size, (U3{1, 1, 1}));
    EXPECT_EQ(defaults.static_grid, (U3{1, 1, 1}));  // SpecId 1 defaults to 1
    EXPECT_FALSE(defaults.dispatch_grid.has_value()) << "a static node ignores its PayloadDispatchIndirectAMDX member";
    EXPECT_EQ(defaults.input_record.size, 12u);
    ASSERT_EQ(defaults.outputs.size(), 1u);
    EXPECT_EQ(defaults.outputs[0].name, "main");      // the mesh nodes are all named "main", told apart by index
    EXPECT_EQ(defaults.outputs[0].max_payloads, 1u);  // SpecId 0 defaults to 1
    EXPECT_TRUE(defaults.outputs[0].allocated_with_runtime_index) << "allocates at a push-constant node index";
    EXPECT_TRUE(defaults.outputs[0].allocated_at_workgroup_scope);

    const SpecializationMap spec{{0, 6}, {1, 9}};
    const NodeInfo specialized = MustAnalyze(module, "main", &spec);
    EXPECT_EQ(specialized.static_grid, (U3{9, 1, 1}));
    ASSERT_EQ(specialized.outputs.size(), 1u);
    EXPECT_EQ(specialized.outputs[0].max_payloads, 6u);
}

TEST(AmdFixtureNodes, ComputeToMeshSingleAndShareInputVariants) {
    for (const std::string file : {"compute_to_mesh_cs.spv", "compute_to_mesh_multi_cs_share_input.spv"}) {
        SCOPED_TRACE(file);
        const Module module = LoadFixture("gpu_draw_dispatch/" + file);
        const NodeInfo node = MustAnalyze(module, "main");
        EXPECT_EQ(node.launch, LaunchKind::kBroadcastStatic);
        EXPECT_EQ(node.static_grid, (U3{1, 1, 1}));
        ASSERT_EQ(node.outputs.size(), 1u);
        EXPECT_EQ(node.outputs[0].name, "main");
        EXPECT_FALSE(node.outputs[0].allocated_with_runtime_index);
        EXPECT_EQ(node.outputs[0].record.size, node.input_record.size) << "forwards its record to the mesh node";
    }
}

TEST(AmdFixtureNodes, MeshAndGraphicsEntryPointsAreRejected) {
    EXPECT_NE(MustFail(LoadFixture("gpu_draw_dispatch/geometry_mesh_multi_ms_share_input.spv"), "main")
                  .find("mesh nodes are not supported"),
              std::string::npos);
    EXPECT_NE(MustFail(LoadFixture("gpu_draw_dispatch/geometry_forward_ps.spv"), "main").find("not GLCompute"), std::string::npos);
    EXPECT_NE(MustFail(LoadFixture("gpu_dispatch/geometry_vs.spv"), "main").find("not GLCompute"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------------------
// Hand-written modules: error paths and shapes the corpus does not cover.

constexpr const char* kPrologue = R"(
               OpCapability Shader
               OpCapability Int16
               OpCapability ShaderEnqueueAMDX
               OpExtension "SPV_AMDX_shader_enqueue"
               OpMemoryModel Logical GLSL450
)";

constexpr const char* kCommonTypes = R"(
       %void = OpTypeVoid
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %float = OpTypeFloat 32
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_4 = OpConstant %uint 4
     %v3uint = OpTypeVector %uint 3
         %fn = OpTypeFunction %void
)";

Module Build(const std::string& entry_and_annotations, const std::string& types, const std::string& functions) {
    return Assemble(std::string(kPrologue) + entry_and_annotations + kCommonTypes + types + functions, "hand-written module");
}

const std::string kEmptyMain = R"(
       %main = OpFunction %void None %fn
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
)";

TEST(NodeAnalysisErrors, UnknownEntryPointListsThePresentOnes) {
    const Module module = LoadCorpus("hello_first_node.spvasm");
    const std::string message = MustFail(module, "main");
    EXPECT_NE(message.find("'main' not found"), std::string::npos) << message;
    EXPECT_NE(message.find("'firstNode' (GLCompute)"), std::string::npos) << message;
}

TEST(NodeAnalysisErrors, TwoInputVariables) {
    const Module module = Build(R"(
               OpEntryPoint GLCompute %main "main" %in0 %in1
               OpExecutionMode %main LocalSize 1 1 1
               OpExecutionModeId %main StaticNumWorkgroupsAMDX %uint_1 %uint_1 %uint_1
               OpMemberDecorate %Rec 0 Offset 0
               OpDecorateId %arr NodeMaxPayloadsAMDX %uint_1
)",
                                R"(
        %Rec = OpTypeStruct %uint
        %arr = OpTypeNodePayloadArrayAMDX %Rec
    %ptr_arr = OpTypePointer NodePayloadAMDX %arr
        %in0 = OpVariable %ptr_arr NodePayloadAMDX
        %in1 = OpVariable %ptr_arr NodePayloadAMDX
)",
                                kEmptyMain);
    const std::string message = MustFail(module, "main");
    EXPECT_NE(message.find("2 NodePayloadAMDX input variables"), std::string::npos) << message;
}

TEST(NodeAnalysisErrors, CoalescingInputWithoutMaxPayloads) {
    const Module module = Build(R"(
               OpEntryPoint GLCompute %main "main" %in
               OpExecutionMode %main LocalSize 8 1 1
               OpExecutionMode %main CoalescingAMDX
               OpMemberDecorate %Rec 0 Offset 0
)",
                                R"(
        %Rec = OpTypeStruct %uint
        %arr = OpTypeNodePayloadArrayAMDX %Rec
    %ptr_arr = OpTypePointer NodePayloadAMDX %arr
         %in = OpVariable %ptr_arr NodePayloadAMDX
)",
                                kEmptyMain);
    const std::string message = MustFail(module, "main");
    EXPECT_NE(message.find("lacks NodeMaxPayloadsAMDX"), std::string::npos) << message;
}

TEST(NodeAnalysisErrors, DynamicGridWithoutDispatchIndirectMember) {
    const Module module = Build(R"(
               OpEntryPoint GLCompute %main "main" %in
               OpExecutionMode %main LocalSize 8 1 1
               OpExecutionModeId %main MaxNumWorkgroupsAMDX %uint_4 %uint_1 %uint_1
               OpMemberDecorate %Rec 0 Offset 0
               OpDecorateId %arr NodeMaxPayloadsAMDX %uint_1
)",
                                R"(
        %Rec = OpTypeStruct %v3uint
        %arr = OpTypeNodePayloadArrayAMDX %Rec
    %ptr_arr = OpTypePointer NodePayloadAMDX %arr
         %in = OpVariable %ptr_arr NodePayloadAMDX
)",
                                kEmptyMain);
    const std::string message = MustFail(module, "main");
    EXPECT_NE(message.find("PayloadDispatchIndirectAMDX"), std::string::npos) << message;
    EXPECT_NE(message.find("dynamic-grid"), std::string::npos) << message;
}

TEST(NodeAnalysisErrors, GridMemberOfUnsupportedType) {
    for (const std::string member : {"%v3float", "%v3int", "%v4uint"}) {
        SCOPED_TRACE(member);
        const Module module = Build(R"(
               OpEntryPoint GLCompute %main "main" %in
               OpExecutionMode %main LocalSize 8 1 1
               OpMemberDecorate %Rec 0 Offset 0
               OpMemberDecorate %Rec 0 PayloadDispatchIndirectAMDX
               OpDecorateId %arr NodeMaxPayloadsAMDX %uint_1
)",
                                    R"(
    %v3float = OpTypeVector %float 3
      %v3int = OpTypeVector %int 3
     %v4uint = OpTypeVector %uint 4
        %Rec = OpTypeStruct )" + member +
                                        R"(
        %arr = OpTypeNodePayloadArrayAMDX %Rec
    %ptr_arr = OpTypePointer NodePayloadAMDX %arr
         %in = OpVariable %ptr_arr NodePayloadAMDX
)",
                                    kEmptyMain);
        const std::string message = MustFail(module, "main");
        EXPECT_NE(message.find("unsupported type"), std::string::npos) << message;
    }
}

// Shared by the output-error tests: a static node allocating one record of %out_arr.
std::string OutputModule(const std::string& output_decorations, const std::string& extra_types = "") {
    return std::string(kPrologue) + R"(
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpExecutionModeId %main StaticNumWorkgroupsAMDX %uint_1 %uint_1 %uint_1
               OpMemberDecorate %Rec 0 Offset 0
)" + output_decorations +
           kCommonTypes + R"(
        %Rec = OpTypeStruct %uint
    %out_arr = OpTypeNodePayloadArrayAMDX %Rec
   %str_next = OpConstantStringAMDX "next"
%ptr_out_arr = OpTypePointer NodePayloadAMDX %out_arr
)" + extra_types +
           R"(
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %p = OpAllocateNodePayloadsAMDX %ptr_out_arr %uint_4 %uint_1 %uint_0
               OpEnqueueNodePayloadsAMDX %p
               OpReturn
               OpFunctionEnd
)";
}

TEST(NodeAnalysisErrors, OutputWithoutNodeName) {
    const Module module = Assemble(OutputModule("               OpDecorateId %out_arr NodeMaxPayloadsAMDX %uint_1\n"), "no name");
    const std::string message = MustFail(module, "main");
    EXPECT_NE(message.find("lacks PayloadNodeNameAMDX"), std::string::npos) << message;

    const Module named = Assemble(OutputModule("               OpDecorateId %out_arr PayloadNodeNameAMDX %str_next\n"), "named");
    const NodeInfo node = MustAnalyze(named, "main");
    ASSERT_EQ(node.outputs.size(), 1u);
    EXPECT_EQ(node.outputs[0].name, "next");
    EXPECT_EQ(node.outputs[0].max_payloads, 1u) << "NodeMaxPayloadsAMDX defaults to 1";
    EXPECT_EQ(node.input_variable_id, 0u);
    EXPECT_EQ(node.input_record.size, 0u) << "a static node without an input has an empty implicit record (facts §12.5)";
}

TEST(NodeAnalysisErrors, NonConstantOperands) {
    // NodeMaxPayloadsAMDX naming an OpUndef cannot be evaluated.
    const Module undef_max = Assemble(OutputModule("               OpDecorateId %out_arr PayloadNodeNameAMDX %str_next\n"
                                                   "               OpDecorateId %out_arr NodeMaxPayloadsAMDX %undef\n",
                                                   "      %undef = OpUndef %uint\n"),
                                      "undef max");
    std::string message = MustFail(undef_max, "main");
    EXPECT_NE(message.find("NodeMaxPayloadsAMDX operand"), std::string::npos) << message;
    EXPECT_NE(message.find("is not a constant"), std::string::npos) << message;

    // PayloadNodeNameAMDX naming an integer instead of a string constant.
    const Module int_name =
        Assemble(OutputModule("               OpDecorateId %out_arr PayloadNodeNameAMDX %uint_3\n"), "int name");
    message = MustFail(int_name, "main");
    EXPECT_NE(message.find("not an OpConstantStringAMDX"), std::string::npos) << message;

    // StaticNumWorkgroupsAMDX operand that is a variable.
    const Module variable_grid = Build(R"(
               OpEntryPoint GLCompute %main "main" %priv
               OpExecutionMode %main LocalSize 1 1 1
               OpExecutionModeId %main StaticNumWorkgroupsAMDX %priv %uint_1 %uint_1
)",
                                       R"(
   %ptr_priv = OpTypePointer Private %uint
       %priv = OpVariable %ptr_priv Private
)",
                                       kEmptyMain);
    message = MustFail(variable_grid, "main");
    EXPECT_NE(message.find("StaticNumWorkgroupsAMDX operand"), std::string::npos) << message;
}

TEST(NodeAnalysisErrors, AllocationScopeMustBeWorkgroupOrInvocation) {
    std::string text = OutputModule("               OpDecorateId %out_arr PayloadNodeNameAMDX %str_next\n");
    const std::string alloc = "OpAllocateNodePayloadsAMDX %ptr_out_arr %uint_4";
    text.replace(text.find(alloc), alloc.size(), "OpAllocateNodePayloadsAMDX %ptr_out_arr %uint_1");
    const std::string message = MustFail(Assemble(text, "device scope"), "main");
    EXPECT_NE(message.find("Visibility 1"), std::string::npos) << message;
}

TEST(NodeAnalysisShapes, DynamicNodeWithoutInputGetsImplicitGridRecord) {
    const Module module = Build(R"(
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 8 1 1
               OpExecutionModeId %main MaxNumWorkgroupsAMDX %uint_4 %uint_4 %uint_1
)",
                                "", kEmptyMain);
    const NodeInfo node = MustAnalyze(module, "main");
    EXPECT_EQ(node.launch, LaunchKind::kBroadcastDynamic);
    EXPECT_EQ(node.input_variable_id, 0u);
    EXPECT_EQ(node.input_record.size, 12u);
    ASSERT_TRUE(node.dispatch_grid.has_value());
    EXPECT_EQ(node.dispatch_grid->byte_offset, 0u);
    EXPECT_EQ(node.dispatch_grid->component_count, 3u);
    EXPECT_EQ(node.dispatch_grid->component_bits, 32u);

    const Module coalescing = Build(R"(
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 8 1 1
               OpExecutionMode %main CoalescingAMDX
)",
                                    "", kEmptyMain);
    const NodeInfo empty = MustAnalyze(coalescing, "main");
    EXPECT_EQ(empty.launch, LaunchKind::kCoalescing);
    EXPECT_EQ(empty.input_record.size, 0u);
    EXPECT_FALSE(empty.dispatch_grid.has_value());
}

// lib_6_8 style: two nodes in one module, an -Od wrapper passing the input as a parameter, a shared helper. Each entry
// point sees only its own input, outputs and instructions.
TEST(NodeAnalysisShapes, SeveralEntryPointsOnlyCountReachableCode) {
    const Module module = Build(R"(
               OpEntryPoint GLCompute %producer "producer" %in_p
               OpEntryPoint GLCompute %consumer "consumer" %in_c %shared
               OpExecutionMode %producer LocalSize 4 1 1
               OpExecutionModeId %producer StaticNumWorkgroupsAMDX %uint_2 %uint_1 %uint_1
               OpExecutionMode %consumer LocalSize 16 1 1
               OpExecutionMode %consumer CoalescingAMDX
               OpMemberDecorate %Rec 0 Offset 0
               OpMemberDecorate %Big 0 Offset 0
               OpMemberDecorate %Big 1 Offset 4
               OpMemberDecorate %Big 2 Offset 8
               OpDecorateId %in_p_arr NodeMaxPayloadsAMDX %uint_1
               OpDecorateId %in_c_arr NodeMaxPayloadsAMDX %uint_4
               OpDecorateId %out_arr PayloadNodeNameAMDX %str_consumer
               OpDecorateId %out_arr NodeMaxPayloadsAMDX %uint_4
               OpDecorateId %unused_arr PayloadNodeNameAMDX %str_other
)",
                                R"(
        %Rec = OpTypeStruct %uint
     %uint16 = OpTypeInt 16 0
        %Big = OpTypeStruct %uint %uint16 %uint
   %in_p_arr = OpTypeNodePayloadArrayAMDX %Rec
   %in_c_arr = OpTypeNodePayloadArrayAMDX %Big
    %out_arr = OpTypeNodePayloadArrayAMDX %Big
 %unused_arr = OpTypeNodePayloadArrayAMDX %Rec
%str_consumer = OpConstantStringAMDX "consumer"
  %str_other = OpConstantStringAMDX "other"
  %ptr_in_p = OpTypePointer NodePayloadAMDX %in_p_arr
  %ptr_in_c = OpTypePointer NodePayloadAMDX %in_c_arr
   %ptr_out = OpTypePointer NodePayloadAMDX %out_arr
    %ptr_wg = OpTypePointer Workgroup %uint
  %fn_inner = OpTypeFunction %void %ptr_in_p
      %in_p = OpVariable %ptr_in_p NodePayloadAMDX
      %in_c = OpVariable %ptr_in_c NodePayloadAMDX
    %shared = OpVariable %ptr_wg Workgroup
)",
                                R"(
   %producer = OpFunction %void None %fn
         %e0 = OpLabel
          %c = OpFunctionCall %void %inner %in_p
               OpReturn
               OpFunctionEnd
      %inner = OpFunction %void None %fn_inner
      %input = OpFunctionParameter %ptr_in_p
         %e1 = OpLabel
          %p = OpAllocateNodePayloadsAMDX %ptr_out %uint_2 %uint_1 %uint_0
               OpEnqueueNodePayloadsAMDX %p
               OpReturn
               OpFunctionEnd
   %consumer = OpFunction %void None %fn
         %e2 = OpLabel
          %n = OpNodePayloadArrayLengthAMDX %uint %in_c
               OpControlBarrier %uint_2 %uint_2 %uint_2
               OpReturn
               OpFunctionEnd
)");
    const NodeInfo producer = MustAnalyze(module, "producer");
    EXPECT_EQ(producer.launch, LaunchKind::kBroadcastStatic);
    EXPECT_EQ(producer.input_record.size, 4u);
    ASSERT_EQ(producer.outputs.size(), 1u) << "the unallocated %unused_arr is not an output";
    EXPECT_EQ(producer.outputs[0].name, "consumer");
    EXPECT_EQ(producer.outputs[0].record.size, 12u);
    EXPECT_TRUE(producer.outputs[0].allocated_at_workgroup_scope);
    EXPECT_FALSE(producer.uses_payload_array_length);
    EXPECT_FALSE(producer.uses_workgroup_barrier);
    EXPECT_FALSE(producer.uses_workgroup_memory);

    const NodeInfo consumer = MustAnalyze(module, "consumer");
    EXPECT_EQ(consumer.launch, LaunchKind::kCoalescing);
    EXPECT_EQ(consumer.local_size, (U3{16, 1, 1}));
    EXPECT_EQ(consumer.input_max_payloads, 4u);
    EXPECT_EQ(consumer.input_record.size, 12u);
    EXPECT_EQ(consumer.input_record.alignment, 4u);
    EXPECT_TRUE(consumer.outputs.empty());
    EXPECT_TRUE(consumer.uses_payload_array_length);
    EXPECT_TRUE(consumer.uses_workgroup_barrier);
    EXPECT_TRUE(consumer.uses_workgroup_memory);
    EXPECT_NE(producer.input_variable_id, consumer.input_variable_id);
}

// NodeSharesPayloadLimitsWithAMDX naming a never-allocated type still yields a valid output index.
TEST(NodeAnalysisShapes, SharedLimitsTargetWithoutAllocationBecomesAnOutput) {
    const Module module = Assemble(OutputModule(R"(
               OpDecorateId %out_arr PayloadNodeNameAMDX %str_next
               OpDecorateId %out_arr NodeSharesPayloadLimitsWithAMDX %budget_arr
               OpDecorateId %budget_arr PayloadNodeNameAMDX %str_budget
               OpDecorateId %budget_arr NodeMaxPayloadsAMDX %uint_3
)",
                                                R"(
 %budget_arr = OpTypeNodePayloadArrayAMDX %Rec
 %str_budget = OpConstantStringAMDX "budget"
)"),
                                   "shared limits");
    const NodeInfo node = MustAnalyze(module, "main");
    ASSERT_EQ(node.outputs.size(), 2u);
    EXPECT_EQ(node.outputs[0].name, "next");
    EXPECT_EQ(node.outputs[1].name, "budget");
    EXPECT_EQ(node.outputs[0].shares_payload_limits_with, std::optional<std::uint32_t>(1u));
    EXPECT_FALSE(node.outputs[1].allocated_at_workgroup_scope || node.outputs[1].allocated_at_invocation_scope);
    EXPECT_EQ(node.outputs[1].max_payloads, 3u);
}

// A spec-constant string keeps its default; LocalSizeId through a spec constant follows the override.
TEST(NodeAnalysisShapes, SpecConstantStringAndLocalSizeId) {
    std::string text = OutputModule(
        "               OpDecorateId %out_arr PayloadNodeNameAMDX %spec_name\n"
        "               OpDecorate %threads SpecId 7\n",
        "  %spec_name = OpSpecConstantStringAMDX \"dflt\"\n");
    const std::string mode = "OpExecutionMode %main LocalSize 1 1 1";
    text.replace(text.find(mode), mode.size(), "OpExecutionModeId %main LocalSizeId %threads %uint_1 %uint_1");
    const std::string types = "%v3uint = OpTypeVector %uint 3";
    text.replace(text.find(types), types.size(), types + "\n    %threads = OpSpecConstant %uint 64");
    const Module module = Assemble(text, "spec string");
    const NodeInfo defaults = MustAnalyze(module, "main");
    ASSERT_EQ(defaults.outputs.size(), 1u);
    EXPECT_EQ(defaults.outputs[0].name, "dflt");
    EXPECT_EQ(defaults.local_size, (U3{64, 1, 1}));
    const SpecializationMap spec{{7, 128}};
    EXPECT_EQ(MustAnalyze(module, "main", &spec).local_size, (U3{128, 1, 1}));
}

// Every other AMDX operand that takes an id, from spec constants (SpecIds 10-16) resolved with the pipeline's
// specialization map: MaxNodeRecursionAMDX, ShaderIndexAMDX, SharesInputWithAMDX's index, MaxNumWorkgroupsAMDX and
// PayloadNodeArraySizeAMDX (through an OpSpecConstantOp of a spec constant, as DXC folds `N + 1`), with node names from
// OpSpecConstantStringAMDX.
constexpr const char* kSpecializedOperands = R"(
               OpEntryPoint GLCompute %main "main" %in
               OpExecutionMode %main LocalSize 8 1 1
               OpExecutionModeId %main MaxNodeRecursionAMDX %recursion
               OpExecutionModeId %main ShaderIndexAMDX %shader_index
               OpExecutionModeId %main SharesInputWithAMDX %twin_name %twin_index
               OpExecutionModeId %main MaxNumWorkgroupsAMDX %max_x %max_y %uint_1
               OpDecorate %recursion SpecId 10
               OpDecorate %shader_index SpecId 11
               OpDecorate %twin_index SpecId 12
               OpDecorate %max_x SpecId 13
               OpDecorate %max_y SpecId 14
               OpDecorate %array_base SpecId 15
               OpDecorate %child_name SpecId 16
               OpMemberDecorate %InRec 0 Offset 0
               OpMemberDecorate %InRec 0 PayloadDispatchIndirectAMDX
               OpMemberDecorate %Rec 0 Offset 0
               OpDecorateId %in_arr NodeMaxPayloadsAMDX %uint_1
               OpDecorateId %out_arr PayloadNodeNameAMDX %child_name
               OpDecorateId %out_arr NodeMaxPayloadsAMDX %uint_1
               OpDecorateId %out_arr PayloadNodeSparseArrayAMDX
               OpDecorateId %out_arr PayloadNodeArraySizeAMDX %array_size
)";

constexpr const char* kSpecializedOperandsTypes = R"(
  %recursion = OpSpecConstant %uint 2
%shader_index = OpSpecConstant %uint 1
 %twin_index = OpSpecConstant %uint 0
      %max_x = OpSpecConstant %uint 64
      %max_y = OpSpecConstant %uint 2
 %array_base = OpSpecConstant %uint 3
 %array_size = OpSpecConstantOp %uint IAdd %array_base %uint_1
  %twin_name = OpSpecConstantStringAMDX "Twin"
 %child_name = OpSpecConstantStringAMDX "Child"
      %InRec = OpTypeStruct %v3uint
        %Rec = OpTypeStruct %uint
     %in_arr = OpTypeNodePayloadArrayAMDX %InRec
    %out_arr = OpTypeNodePayloadArrayAMDX %Rec
 %ptr_in_arr = OpTypePointer NodePayloadAMDX %in_arr
%ptr_out_arr = OpTypePointer NodePayloadAMDX %out_arr
         %in = OpVariable %ptr_in_arr NodePayloadAMDX
)";

constexpr const char* kSpecializedOperandsMain = R"(
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %p = OpAllocateNodePayloadsAMDX %ptr_out_arr %uint_4 %uint_1 %uint_2
               OpEnqueueNodePayloadsAMDX %p
               OpReturn
               OpFunctionEnd
)";

TEST(NodeAnalysisSpecialization, EveryIdOperandFollowsTheSpecializationMap) {
    // PayloadNodeSparseArrayAMDX takes no operand; written with OpDecorateId above it would not assemble.
    std::string annotations = kSpecializedOperands;
    const std::string sparse = "OpDecorateId %out_arr PayloadNodeSparseArrayAMDX";
    annotations.replace(annotations.find(sparse), sparse.size(), "OpDecorate %out_arr PayloadNodeSparseArrayAMDX");
    const Module module = Build(annotations, kSpecializedOperandsTypes, kSpecializedOperandsMain);

    const NodeInfo defaults = MustAnalyze(module, "main");
    EXPECT_EQ(defaults.launch, LaunchKind::kBroadcastDynamic);
    EXPECT_EQ(defaults.max_recursion, std::optional<std::uint32_t>(2u));
    EXPECT_EQ(defaults.shader_index, std::optional<std::uint32_t>(1u));
    EXPECT_EQ(defaults.shares_input_with_name, std::optional<std::string>("Twin"));
    EXPECT_EQ(defaults.shares_input_with_index, 0u);
    EXPECT_EQ(defaults.max_grid, (std::optional<U3>(U3{64, 2, 1})));
    ASSERT_EQ(defaults.outputs.size(), 1u);
    EXPECT_EQ(defaults.outputs[0].array_size, std::optional<std::uint32_t>(4u));
    EXPECT_EQ(defaults.outputs[0].name, "Child");

    // Every SpecId overridden, including one decorating the spec-constant string: VkSpecializationInfo supplies plain
    // scalars (SpecializationMap holds one value per SpecId), which cannot replace a string, so the names stay.
    const SpecializationMap spec{{10, 5}, {11, 7}, {12, 3}, {13, 1000}, {14, 9}, {15, 11}, {16, 0x41}};
    const NodeInfo node = MustAnalyze(module, "main", &spec);
    EXPECT_EQ(node.max_recursion, std::optional<std::uint32_t>(5u));
    EXPECT_EQ(node.shader_index, std::optional<std::uint32_t>(7u));
    EXPECT_EQ(node.shares_input_with_name, std::optional<std::string>("Twin"));
    EXPECT_EQ(node.shares_input_with_index, 3u);
    EXPECT_EQ(node.max_grid, (std::optional<U3>(U3{1000, 9, 1})));
    ASSERT_EQ(node.outputs.size(), 1u);
    EXPECT_EQ(node.outputs[0].array_size, std::optional<std::uint32_t>(12u)) << "IAdd of the specialized base and 1";
    EXPECT_TRUE(node.outputs[0].sparse);
    EXPECT_EQ(node.outputs[0].name, "Child");

    // Only some overridden: the others keep their defaults.
    const SpecializationMap partial{{11, 0}, {15, 0}};
    const NodeInfo partly = MustAnalyze(module, "main", &partial);
    EXPECT_EQ(partly.max_recursion, std::optional<std::uint32_t>(2u));
    EXPECT_EQ(partly.shader_index, std::optional<std::uint32_t>(0u));
    EXPECT_EQ(partly.max_grid, (std::optional<U3>(U3{64, 2, 1})));
    ASSERT_EQ(partly.outputs.size(), 1u);
    EXPECT_EQ(partly.outputs[0].array_size, std::optional<std::uint32_t>(1u));
}

}  // namespace
}  // namespace execgraph::spirv
