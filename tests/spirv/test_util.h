// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/module.h"
#include "execgraph/spirv/node_info.h"

namespace execgraph::spirv::test {

std::vector<std::uint32_t> ReadWords(const std::string& path);  // empty on failure
std::string ShaderPath(const std::string& name);                // a glslang-compiled test shader
std::string FixturePath(const std::string& relative);           // a file under amd-vulkan-samples/
std::vector<std::string> AllFixtures();                         // every .spv fixture, sorted
std::string CorpusText(const std::string& name);                // tests/spirv_corpus/NAME (an .spvasm), "" if missing

// Assembles AMDX text (tests/support/amdx_assembler) and reads it back; failures are gtest failures and yield an empty
// module.
Module AssembleModule(const std::string& text, const std::string& what);

// Representative LowerNode options: node 3 of a graph, output tables laid out one after the other, strides = record
// size rounded up to the record alignment (at least 4 unless empty), the context after any application push constants.
LoweringOptions MakeLoweringOptions(const Module& module, const NodeInfo& info);

// spvValidate for Vulkan 1.3 with scalar block layout (DXC's record layout); "" when valid, else the message.
std::string ValidateVulkan13(const std::vector<std::uint32_t>& words);

// Hand-assembles words: header first, then instructions (word count computed).
class WordBuilder {
  public:
    explicit WordBuilder(std::uint32_t bound, std::uint32_t version = 0x00010600u);
    WordBuilder& Op(std::uint32_t opcode, std::initializer_list<std::uint32_t> operands);
    WordBuilder& OpWithString(std::uint32_t opcode, std::initializer_list<std::uint32_t> before, std::string_view text,
                              std::initializer_list<std::uint32_t> after = {});
    const std::vector<std::uint32_t>& words() const { return words_; }

  private:
    std::vector<std::uint32_t> words_;
};

// A minimal valid GLCompute module prefix: Shader capability (+ extra capabilities), GLSL450 memory model.
std::vector<std::uint32_t> StringWords(std::string_view text);

}  // namespace execgraph::spirv::test
