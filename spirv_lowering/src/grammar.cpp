// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/grammar.h"

#include <algorithm>
#include <array>

#include "grammar_tables.h"

namespace execgraph::spirv {

using internal::kEnumerants;
using internal::kOpcodeIndex;
using internal::kOpcodeInfos;
using internal::kOperandDescs;
using internal::kOperandKindInfos;

const OpcodeInfo* FindOpcodeInfo(std::uint32_t opcode) {
    if (opcode > kMaxKnownOpcode) return nullptr;
    const std::uint16_t row = kOpcodeIndex[opcode];
    return row == 0xffff ? nullptr : &kOpcodeInfos[row];
}

std::span<const OperandDesc> OperandsOf(const OpcodeInfo& info) { return {kOperandDescs + info.first_operand, info.operand_count}; }

const OperandKindInfo& GetOperandKindInfo(OperandKind kind) { return kOperandKindInfos[static_cast<std::uint16_t>(kind)]; }

std::span<const EnumerantInfo> EnumerantsOf(OperandKind kind) {
    const OperandKindInfo& info = GetOperandKindInfo(kind);
    return {kEnumerants + info.first_enumerant, info.enumerant_count};
}

const EnumerantInfo* FindEnumerant(OperandKind kind, std::uint32_t value) {
    const std::span<const EnumerantInfo> enumerants = EnumerantsOf(kind);
    // Enumerants are generated sorted by value.
    const auto it = std::lower_bound(enumerants.begin(), enumerants.end(), value,
                                     [](const EnumerantInfo& e, std::uint32_t v) { return e.value < v; });
    return it != enumerants.end() && it->value == value ? &*it : nullptr;
}

std::span<const OperandDesc> ParametersOf(const EnumerantInfo& enumerant) {
    return {kOperandDescs + enumerant.first_parameter, enumerant.parameter_count};
}

bool KindHasParameterizedEnumerants(OperandKind kind) {
    // Computed once: five kinds in the current grammar (Decoration, ExecutionMode, ImageOperands, ...).
    static const std::array<bool, kOperandKindCount> table = [] {
        std::array<bool, kOperandKindCount> result{};
        for (std::uint16_t k = 0; k < kOperandKindCount; ++k) {
            for (const EnumerantInfo& e : EnumerantsOf(static_cast<OperandKind>(k))) {
                if (e.parameter_count != 0) result[k] = true;
            }
        }
        return result;
    }();
    return table[static_cast<std::uint16_t>(kind)];
}

bool IsIdKind(OperandKind kind) { return GetOperandKindInfo(kind).category == OperandCategory::kId; }

std::string_view OpcodeName(std::uint32_t opcode) {
    const OpcodeInfo* info = FindOpcodeInfo(opcode);
    return info != nullptr ? info->name : std::string_view();
}

std::string_view EnumerantName(OperandKind kind, std::uint32_t value) {
    const EnumerantInfo* e = FindEnumerant(kind, value);
    return e != nullptr ? e->name : std::string_view();
}

}  // namespace execgraph::spirv
