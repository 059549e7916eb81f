// SPDX-License-Identifier: Apache-2.0
#include "test_util.h"

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "amdx_assembler.h"
#include "execgraph/spirv/layout.h"
#include "execgraph/spirv/reader.h"

namespace execgraph::spirv::test {

std::vector<std::uint32_t> ReadWords(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return {};
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<std::uint32_t> words(bytes.size() / 4);
    for (std::size_t i = 0; i < words.size(); ++i) {
        words[i] = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i])) |
                   static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 1])) << 8 |
                   static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 2])) << 16 |
                   static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[4 * i + 3])) << 24;
    }
    return words;
}

std::string ShaderPath(const std::string& name) { return std::string(EXECGRAPH_SPIRV_TEST_SHADER_DIR) + "/" + name; }

std::string FixturePath(const std::string& relative) { return std::string(EXECGRAPH_AMD_FIXTURES_DIR) + "/" + relative; }

std::vector<std::string> AllFixtures() {
    std::vector<std::string> paths;
    std::error_code error;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(EXECGRAPH_AMD_FIXTURES_DIR, error)) {
        if (entry.is_regular_file() && entry.path().extension() == ".spv") paths.push_back(entry.path().string());
    }
    std::sort(paths.begin(), paths.end());
    return paths;
}

std::string CorpusText(const std::string& name) {
    std::ifstream file(std::string(EXECGRAPH_SPIRV_CORPUS_DIR) + "/" + name);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

Module AssembleModule(const std::string& text, const std::string& what) {
    const execgraph::test::AssembleResult assembled = execgraph::test::AssembleAmdx(text);
    EXPECT_TRUE(assembled.ok()) << what << ": " << assembled.error;
    if (!assembled.ok()) return Module();
    Result<Module> module = ReadModule(assembled.words);
    EXPECT_TRUE(module.ok()) << what << ": " << (module.ok() ? "" : module.error().ToString());
    return module.ok() ? *std::move(module) : Module();
}

LoweringOptions MakeLoweringOptions(const Module& module, const NodeInfo& info) {
    LoweringOptions options;
    options.context_offset = 0;
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpVariable || inst.Word(0) != static_cast<std::uint32_t>(StorageClass::PushConstant)) continue;
        const Instruction* pointer = module.FindDef(inst.type_id());
        Result<std::uint32_t> size = ExplicitLayoutSize(module, pointer->Word(1));
        EXPECT_TRUE(size.ok());
        options.context_offset = size.ok() ? (*size + 7u) & ~7u : 0;
    }
    std::uint32_t next = 0;
    for (const NodeOutputInfo& output : info.outputs) {
        const std::uint32_t length = output.array_size.value_or(output.unbounded() ? 16u : 1u);
        options.output_table_index.push_back(next);
        options.output_table_length.push_back(length);
        next += length;
        const std::uint32_t alignment = std::max(output.record.alignment, 4u);
        options.output_record_stride.push_back(
            output.record.size == 0 ? 0 : (output.record.size + alignment - 1) / alignment * alignment);
    }
    options.input_record_stride = (info.input_record.size + 3u) & ~3u;
    return options;
}

std::string ValidateVulkan13(const std::vector<std::uint32_t>& words) {
    spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
    spv_validator_options options = spvValidatorOptionsCreate();
    spvValidatorOptionsSetScalarBlockLayout(options, true);
    spv_const_binary_t binary{words.data(), words.size()};
    spv_diagnostic diagnostic = nullptr;
    const spv_result_t result = spvValidateWithOptions(context, options, &binary, &diagnostic);
    std::string message = result == SPV_SUCCESS ? "" : (diagnostic != nullptr ? diagnostic->error : "invalid");
    spvDiagnosticDestroy(diagnostic);
    spvValidatorOptionsDestroy(options);
    spvContextDestroy(context);
    return message;
}

std::vector<std::uint32_t> StringWords(std::string_view text) {
    std::vector<std::uint32_t> words(text.size() / 4 + 1, 0);
    for (std::size_t i = 0; i < text.size(); ++i)
        words[i / 4] |= static_cast<std::uint32_t>(static_cast<unsigned char>(text[i])) << (8 * (i % 4));
    return words;
}

WordBuilder::WordBuilder(std::uint32_t bound, std::uint32_t version) : words_{0x07230203u, version, 0, bound, 0} {}

WordBuilder& WordBuilder::Op(std::uint32_t opcode, std::initializer_list<std::uint32_t> operands) {
    words_.push_back(static_cast<std::uint32_t>((operands.size() + 1) << 16) | opcode);
    words_.insert(words_.end(), operands.begin(), operands.end());
    return *this;
}

WordBuilder& WordBuilder::OpWithString(std::uint32_t opcode, std::initializer_list<std::uint32_t> before, std::string_view text,
                                       std::initializer_list<std::uint32_t> after) {
    const std::vector<std::uint32_t> string = StringWords(text);
    words_.push_back(static_cast<std::uint32_t>((1 + before.size() + string.size() + after.size()) << 16) | opcode);
    words_.insert(words_.end(), before.begin(), before.end());
    words_.insert(words_.end(), string.begin(), string.end());
    words_.insert(words_.end(), after.begin(), after.end());
    return *this;
}

}  // namespace execgraph::spirv::test
