// SPDX-License-Identifier: Apache-2.0
// One SPIR-V instruction: opcode, optional result type and result id, and the remaining operand words, each tagged with
// the grammar kind of the operand it belongs to. The tags are what lets passes renumber ids without re-deriving the
// grammar, and the disassembler print enumerant names (spec §2.3 "Physical Layout of a SPIR-V Module and Instruction").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "execgraph/spirv/grammar.h"
#include "execgraph/spirv/small_vector.h"

namespace execgraph::spirv {

// One operand word and the kind of the (logical) operand it belongs to. Multi-word operands (strings, 64-bit
// literals) tag their later words as continuations.
struct OperandWord {
    std::uint32_t word;
    OperandKind kind;
    bool continuation;  // not the first word of its operand
};

class Instruction {
  public:
    Instruction() = default;
    // Result type / result id 0 mean "none"; pass them exactly when the grammar says the opcode has them.
    explicit Instruction(Op opcode, std::uint32_t result_type = 0, std::uint32_t result_id = 0)
        : opcode_(static_cast<std::uint16_t>(opcode)), result_type_(result_type), result_id_(result_id) {}

    Op opcode() const { return static_cast<Op>(opcode_); }
    std::uint32_t type_id() const { return result_type_; }
    std::uint32_t result_id() const { return result_id_; }
    void set_type_id(std::uint32_t id) { result_type_ = id; }
    void set_result_id(std::uint32_t id) { result_id_ = id; }

    // Word offset of this instruction in the binary it was parsed from (kNoWordOffset for built instructions).
    std::uint32_t source_offset() const { return source_offset_; }
    void set_source_offset(std::uint32_t offset) { source_offset_ = offset; }

    // Total encoded length in words: opcode word + result type + result id + operands.
    std::uint32_t WordCount() const {
        return 1u + (result_type_ != 0 ? 1u : 0u) + (result_id_ != 0 ? 1u : 0u) + static_cast<std::uint32_t>(operands_.size());
    }

    // Operand words after the result id, in encoding order.
    std::size_t OperandWordCount() const { return operands_.size(); }
    std::uint32_t Word(std::size_t index) const { return operands_[index].word; }
    OperandKind KindOf(std::size_t index) const { return operands_[index].kind; }
    bool IsContinuation(std::size_t index) const { return operands_[index].continuation; }
    const OperandWord& OperandAt(std::size_t index) const { return operands_[index]; }
    void SetWord(std::size_t index, std::uint32_t word) { operands_[index].word = word; }
    bool IsIdOperand(std::size_t index) const { return !operands_[index].continuation && IsIdKind(operands_[index].kind); }

    // Decodes the LiteralString that starts at operand word `index` (up to its terminating NUL).
    std::string StringAt(std::size_t index) const;
    // Number of words the LiteralString starting at `index` occupies.
    std::size_t StringWordCount(std::size_t index) const;

    // Builders.
    Instruction& AddWord(std::uint32_t word, OperandKind kind, bool continuation = false) {
        operands_.push_back(OperandWord{word, kind, continuation});
        return *this;
    }
    Instruction& AddId(std::uint32_t id) { return AddWord(id, OperandKind::IdRef); }
    Instruction& AddLiteral(std::uint32_t value) { return AddWord(value, OperandKind::LiteralInteger); }
    template <typename Enum>
    Instruction& AddEnum(OperandKind kind, Enum value) {
        return AddWord(static_cast<std::uint32_t>(value), kind);
    }
    Instruction& AddString(std::string_view text);  // NUL-terminated, zero-padded to a word boundary
    void RemoveOperandWords(std::size_t first, std::size_t last) { operands_.erase(first, last); }

    // Calls fn(std::uint32_t& id) for the result type, result id and every id operand word.
    template <typename Fn>
    void ForEachId(Fn&& fn) {
        if (result_type_ != 0) fn(result_type_);
        if (result_id_ != 0) fn(result_id_);
        for (OperandWord& operand : operands_) {
            if (!operand.continuation && IsIdKind(operand.kind)) fn(operand.word);
        }
    }
    // Same, for the ids this instruction uses (result type and operands, not the result id).
    template <typename Fn>
    void ForEachInId(Fn&& fn) const {
        if (result_type_ != 0) fn(result_type_);
        for (const OperandWord& operand : operands_) {
            if (!operand.continuation && IsIdKind(operand.kind)) fn(operand.word);
        }
    }

    void AppendTo(std::vector<std::uint32_t>& out) const;

  private:
    std::uint16_t opcode_ = 0;
    std::uint32_t result_type_ = 0;
    std::uint32_t result_id_ = 0;
    std::uint32_t source_offset_ = 0xffffffffu;
    SmallVector<OperandWord, 6> operands_;
};

}  // namespace execgraph::spirv
