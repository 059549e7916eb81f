// Every module in tests/spirv_corpus must assemble with the AMDX front end and have the DXC-shaped skeleton the corpus
// README promises; the README must describe exactly the files that exist.

#include "amdx_assembler.h"

#include <gtest/gtest.h>
#include <spirv/unified1/spirv.hpp11>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace execgraph::test {
namespace {

namespace fs = std::filesystem;
using Words = std::vector<uint32_t>;

constexpr uint32_t Op(spv::Op op) { return static_cast<uint32_t>(op); }
constexpr uint32_t kStorageNodePayload = 5068;
constexpr uint32_t kStorageNodeOutputPayload2023 = 5076;
constexpr uint32_t kOpTypeNodePayloadArray = 5076;
constexpr uint32_t kOpNodePayloadArrayLength = 5090;  // 2023: OpInitializeNodePayloadsAMDX
constexpr uint32_t kOpEnqueueNodePayloads = 5075;
constexpr uint32_t kOpConstantString = 5103;
constexpr uint32_t kModeShaderIndex = 5073;
constexpr uint32_t kDecorationNodeMaxPayloads = 5020;

const fs::path kCorpusDir = EXECGRAPH_SPIRV_CORPUS_DIR;

std::vector<std::string> CorpusFiles() {
    std::vector<std::string> files;
    if (!fs::is_directory(kCorpusDir)) return files;
    for (const fs::directory_entry& entry : fs::directory_iterator(kCorpusDir)) {
        if (entry.path().extension() == ".spvasm") files.push_back(entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string ReadFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

Words AssembleCorpusFile(const std::string& name) {
    const AssembleResult result = AssembleAmdx(ReadFile(kCorpusDir / name));
    EXPECT_TRUE(result.ok()) << name << ": " << result.error;
    return result.words;
}

// Interface ids of every OpEntryPoint: the operands after the NUL-terminated name.
std::vector<uint32_t> EntryPointInterface(const Words& words) {
    std::vector<uint32_t> ids;
    for (const Words& ep : FindInstructions(words, Op(spv::Op::OpEntryPoint))) {
        size_t i = 2;
        while (i < ep.size() && (ep[i] & 0xFF000000u) != 0 && (ep[i] & 0xFF0000u) != 0 && (ep[i] & 0xFF00u) != 0 &&
               (ep[i] & 0xFFu) != 0) {
            ++i;
        }
        ids.insert(ids.end(), ep.begin() + std::min(i + 1, ep.size()), ep.end());
    }
    return ids;
}

// Word offset of the first instruction with the given opcode, or SIZE_MAX.
size_t FirstOffsetOf(const Words& words, uint32_t opcode) {
    for (size_t i = 5; i < words.size() && (words[i] >> 16) != 0; i += words[i] >> 16) {
        if ((words[i] & 0xFFFFu) == opcode) return i;
    }
    return SIZE_MAX;
}

TEST(SpirvCorpusTest, CorpusIsPresent) {
    // Guards the parameterised suite below against passing vacuously on an empty or misplaced folder.
    EXPECT_GE(CorpusFiles().size(), 29u) << kCorpusDir;
}

TEST(SpirvCorpusTest, ReadmeListsExactlyTheCorpusFiles) {
    const std::string readme = ReadFile(kCorpusDir / "README.md");
    ASSERT_FALSE(readme.empty());
    std::set<std::string> listed;
    const std::regex name_re("`([A-Za-z0-9_]+\\.spvasm)`");
    for (auto it = std::sregex_iterator(readme.begin(), readme.end(), name_re); it != std::sregex_iterator(); ++it) {
        listed.insert((*it)[1].str());
    }
    const std::vector<std::string> files = CorpusFiles();
    EXPECT_EQ(listed, std::set<std::string>(files.begin(), files.end()));
}

class CorpusModuleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusModuleTest, AssemblesWithDxcSkeleton) {
    const std::string& name = GetParam();
    const Words w = AssembleCorpusFile(name);
    ASSERT_FALSE(w.empty());
    EXPECT_EQ(CheckModuleStructure(w), "");
    EXPECT_EQ(w[1], 0x00010600u) << "SPIR-V 1.6, as DXC emits for vulkan1.3";

    const std::vector<Words> caps = FindInstructions(w, Op(spv::Op::OpCapability));
    EXPECT_NE(std::find(caps.begin(), caps.end(), Words{1}), caps.end()) << "OpCapability Shader";
    EXPECT_NE(std::find(caps.begin(), caps.end(), Words{5067}), caps.end()) << "OpCapability ShaderEnqueueAMDX";
    EXPECT_EQ(FindInstructions(w, Op(spv::Op::OpExtension)), std::vector<Words>{PackLiteralString("SPV_AMDX_shader_enqueue")});
    EXPECT_EQ(FindInstructions(w, Op(spv::Op::OpMemoryModel)), (std::vector<Words>{{0u, 1u}})) << "Logical GLSL450";
    ASSERT_EQ(FindInstructions(w, Op(spv::Op::OpEntryPoint)).size(), 1u) << "one node per module";

    bool has_shader_index = false;
    for (const Words& mode : FindInstructions(w, Op(spv::Op::OpExecutionModeId))) has_shader_index |= mode[1] == kModeShaderIndex;
    EXPECT_TRUE(has_shader_index) << "DXC always emits OpExecutionModeId ShaderIndexAMDX";

    // Exactly one NodePayloadAMDX input variable, listed in the entry-point interface.
    const std::vector<uint32_t> interface = EntryPointInterface(w);
    size_t inputs = 0;
    for (const Words& var : FindInstructions(w, Op(spv::Op::OpVariable))) {
        if (var[2] != kStorageNodePayload) continue;
        ++inputs;
        EXPECT_NE(std::find(interface.begin(), interface.end(), var[1]), interface.end()) << "input not in the interface";
    }
    EXPECT_EQ(inputs, 1u);
}

TEST_P(CorpusModuleTest, RevisionSpecificShapes) {
    const std::string& name = GetParam();
    const Words w = AssembleCorpusFile(name);
    std::set<uint32_t> max_payload_targets;
    for (const Words& d : FindInstructions(w, Op(spv::Op::OpDecorateId))) {
        if (d[1] == kDecorationNodeMaxPayloads) max_payload_targets.insert(d[0]);
    }
    bool has_2023_storage = false;
    for (const Words& ptr : FindInstructions(w, Op(spv::Op::OpTypePointer))) {
        has_2023_storage |= ptr[1] == kStorageNodeOutputPayload2023;
    }

    if (name.starts_with("revision2023")) {
        EXPECT_TRUE(has_2023_storage) << "2023 NodeOutputPayloadAMDX storage class";
        const std::vector<Words> init = FindInstructions(w, kOpNodePayloadArrayLength);
        ASSERT_EQ(init.size(), 1u);
        EXPECT_EQ(init[0].size(), 4u) << "2023 OpInitializeNodePayloadsAMDX: no result, 4 operands";
        EXPECT_TRUE(FindInstructions(w, kOpTypeNodePayloadArray).empty());
        return;
    }
    EXPECT_FALSE(has_2023_storage);
    for (const Words& len : FindInstructions(w, kOpNodePayloadArrayLength)) {
        EXPECT_EQ(len.size(), 3u) << "2024 OpNodePayloadArrayLengthAMDX: type, result, payload array";
    }
    // Every payload array type, input or output, carries NodeMaxPayloadsAMDX (DXC always emits it).
    const std::vector<Words> arrays = FindInstructions(w, kOpTypeNodePayloadArray);
    EXPECT_FALSE(arrays.empty());
    for (const Words& arr : arrays) EXPECT_TRUE(max_payload_targets.count(arr[0])) << "array type %" << arr[0];
}

INSTANTIATE_TEST_SUITE_P(AllFiles, CorpusModuleTest, ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             return fs::path(info.param).stem().string();
                         });

// The two implementation-defined DXC patterns the brief calls out are really present where the README says.
TEST(SpirvCorpusTest, LateConstantsFollowTheTypeTheyDecorate) {
    const Words w = AssembleCorpusFile("output_single_late_constants.spvasm");
    const size_t first_array = FirstOffsetOf(w, kOpTypeNodePayloadArray);
    ASSERT_NE(first_array, SIZE_MAX);
    EXPECT_GT(FirstOffsetOf(w, kOpConstantString), first_array);
    bool late_256 = false;
    for (size_t i = first_array; i < w.size() && (w[i] >> 16) != 0; i += w[i] >> 16) {
        if ((w[i] & 0xFFFFu) == Op(spv::Op::OpConstant) && w[i + 3] == 256u) late_256 = true;
    }
    EXPECT_TRUE(late_256) << "%uint_256 defined after the payload array type";
}

TEST(SpirvCorpusTest, EnqueueTargetsTheFunctionVariableAlias) {
    const Words w = AssembleCorpusFile("output_single_late_constants.spvasm");
    const std::vector<Words> enqueues = FindInstructions(w, kOpEnqueueNodePayloads);
    ASSERT_EQ(enqueues.size(), 1u);
    bool is_function_var = false;
    for (const Words& var : FindInstructions(w, Op(spv::Op::OpVariable))) {
        if (var[1] == enqueues[0][0]) is_function_var = var[2] == static_cast<uint32_t>(spv::StorageClass::Function);
    }
    EXPECT_TRUE(is_function_var);
    // ... and the alias is the target of an OpStore whose value is an OpLoad of the allocation.
    const std::vector<Words> allocs = FindInstructions(w, 5074);
    ASSERT_EQ(allocs.size(), 1u);
    uint32_t loaded = 0;
    for (const Words& load : FindInstructions(w, Op(spv::Op::OpLoad))) {
        if (load[2] == allocs[0][1]) loaded = load[1];
    }
    ASSERT_NE(loaded, 0u);
    const std::vector<Words> stores = FindInstructions(w, Op(spv::Op::OpStore));
    EXPECT_NE(std::find(stores.begin(), stores.end(), Words{enqueues[0][0], loaded}), stores.end());
}

}  // namespace
}  // namespace execgraph::test
