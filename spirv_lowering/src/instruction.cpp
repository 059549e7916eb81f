// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/instruction.h"

namespace execgraph::spirv {

std::string Instruction::StringAt(std::size_t index) const {
    // Literal strings are UTF-8, packed little-endian within each word and NUL-terminated (spec §2.2.1 "Literal").
    std::string result;
    for (std::size_t i = index; i < operands_.size(); ++i) {
        const std::uint32_t word = operands_[i].word;
        for (int b = 0; b < 4; ++b) {
            const char c = static_cast<char>((word >> (8 * b)) & 0xffu);
            if (c == '\0') return result;
            result.push_back(c);
        }
    }
    return result;  // unterminated: the reader rejects that, built instructions always terminate
}

std::size_t Instruction::StringWordCount(std::size_t index) const {
    std::size_t count = 0;
    for (std::size_t i = index; i < operands_.size(); ++i) {
        ++count;
        const std::uint32_t word = operands_[i].word;
        if ((word & 0xffu) == 0 || (word & 0xff00u) == 0 || (word & 0xff0000u) == 0 || (word & 0xff000000u) == 0) break;
    }
    return count;
}

Instruction& Instruction::AddString(std::string_view text) {
    const std::size_t words = text.size() / 4 + 1;  // always room for the NUL
    for (std::size_t w = 0; w < words; ++w) {
        std::uint32_t word = 0;
        for (std::size_t b = 0; b < 4; ++b) {
            const std::size_t i = w * 4 + b;
            if (i < text.size()) word |= static_cast<std::uint32_t>(static_cast<unsigned char>(text[i])) << (8 * b);
        }
        AddWord(word, OperandKind::LiteralString, w != 0);
    }
    return *this;
}

void Instruction::AppendTo(std::vector<std::uint32_t>& out) const {
    out.push_back((WordCount() << 16) | opcode_);
    if (result_type_ != 0) out.push_back(result_type_);
    if (result_id_ != 0) out.push_back(result_id_);
    for (const OperandWord& operand : operands_) out.push_back(operand.word);
}

}  // namespace execgraph::spirv
