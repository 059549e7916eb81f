// SPDX-License-Identifier: Apache-2.0
#include "test_util.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

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
