// SPDX-License-Identifier: Apache-2.0
// Operand tables generated from spirv.core.grammar.json plus grammar/amdx_supplement.json (the 2024 revision of
// SPV_AMDX_shader_enqueue, facts sheet §8). They tell the reader which words of an instruction are ids, literals or
// enumerants, and give the disassembler its names.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "execgraph/spirv/grammar_enums.h"  // generated: OperandKind, Op and one enum per enumerated kind

namespace execgraph::spirv {

enum class OperandCategory : std::uint8_t { kId, kLiteral, kComposite, kValueEnum, kBitEnum };
enum class Quantifier : std::uint8_t { kOne, kOptional, kVariadic };

struct OperandDesc {
    OperandKind kind;
    Quantifier quantifier;
};

struct EnumerantInfo {
    std::uint32_t value;
    const char* name;
    std::uint16_t first_parameter;  // into the operand-description table
    std::uint8_t parameter_count;
};

struct OperandKindInfo {
    const char* name;
    OperandCategory category;
    std::uint16_t first_enumerant;
    std::uint16_t enumerant_count;
};

struct OpcodeInfo {
    const char* name;
    std::uint16_t opcode;
    bool has_result_type;
    bool has_result;
    std::uint16_t first_operand;  // operands after the result type and result id
    std::uint8_t operand_count;
    bool is_type_or_constant;  // grammar class Type-Declaration or Constant-Creation
};

// nullptr for an opcode the grammar does not define.
const OpcodeInfo* FindOpcodeInfo(std::uint32_t opcode);
std::span<const OperandDesc> OperandsOf(const OpcodeInfo& info);

const OperandKindInfo& GetOperandKindInfo(OperandKind kind);
// For a ValueEnum kind, the enumerant with this value; for a BitEnum kind, the enumerant of this single bit
// (or of 0, "None"). nullptr when unknown.
const EnumerantInfo* FindEnumerant(OperandKind kind, std::uint32_t value);
std::span<const EnumerantInfo> EnumerantsOf(OperandKind kind);
std::span<const OperandDesc> ParametersOf(const EnumerantInfo& enumerant);
// True when some enumerant of the kind takes extra operands, i.e. an unknown value cannot be skipped safely.
bool KindHasParameterizedEnumerants(OperandKind kind);

bool IsIdKind(OperandKind kind);  // IdRef, IdScope, IdMemorySemantics, IdResultType, IdResult

std::string_view OpcodeName(std::uint32_t opcode);                      // "OpFoo", or "" when unknown
std::string_view EnumerantName(OperandKind kind, std::uint32_t value);  // "" when unknown

}  // namespace execgraph::spirv
