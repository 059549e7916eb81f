// SPDX-License-Identifier: Apache-2.0
// Internal: decodes one instruction's words into an Instruction, driven by the generated grammar tables, and checks
// ids against the bound. Keeps the little per-id state that context-dependent operands need (spec §2.2.1: the width
// of OpConstant's value and of OpSwitch's literals comes from a type).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "execgraph/spirv/id_map.h"
#include "execgraph/spirv/instruction.h"
#include "execgraph/spirv/result.h"

namespace execgraph::spirv::internal {

class OperandDecoder {
  public:
    OperandDecoder(std::span<const std::uint32_t> words, std::uint32_t bound);

    // Decodes the instruction at `offset`; its word count must already be known to fit in the stream.
    Result<Instruction> Decode(std::uint32_t offset);
    // Every id used as an operand must be defined somewhere in the module (forward references are fine).
    Status CheckAllReferencedIdsDefined() const;

  private:
    struct IdInfo {
        std::uint16_t opcode = 0;  // defining opcode; 0 = not defined (OpNop defines nothing)
        std::uint16_t width = 0;   // OpTypeInt/OpTypeFloat bit width
        std::uint32_t type_id = 0;
        bool operator==(const IdInfo&) const = default;
    };

    Status DecodeOperands(std::span<const OperandDesc> descs);
    Status DecodeOne(OperandKind kind);
    Status DecodeId(OperandKind kind);
    Status DecodeLiteralWords(OperandKind kind, std::uint32_t count);
    Status DecodeString();
    Status DecodeEnum(OperandKind kind);
    Status DecodeExtInstOperands();
    Status DecodeSpecConstantOp();
    Result<std::uint32_t> NumberWordsOfType(std::uint32_t type_id, const char* what);
    Error MakeError(std::uint32_t word_index, std::string message) const;
    std::string OpName() const;

    std::span<const std::uint32_t> words_;
    std::uint32_t bound_;
    IdMap<IdInfo> ids_;
    std::unordered_map<std::uint32_t, bool> ext_inst_sets_;              // import id -> operands are all ids
    std::vector<std::pair<std::uint32_t, std::uint32_t>> forward_uses_;  // (id, word offset) used before defined

    // Per-instruction state.
    const std::uint32_t* inst_words_ = nullptr;
    std::uint32_t offset_ = 0;
    std::uint32_t pos_ = 0;
    std::uint32_t end_ = 0;
    std::uint32_t opcode_ = 0;
    std::uint32_t number_words_ = 1;  // LiteralContextDependentNumber / OpSwitch literal width in words
    Instruction* out_ = nullptr;
};

}  // namespace execgraph::spirv::internal
