// SPDX-License-Identifier: Apache-2.0
// Decoration queries over a module (OpDecorate/OpDecorateId/OpDecorateString and their member forms).
#pragma once

#include <cstdint>
#include <optional>

#include "execgraph/spirv/module.h"

namespace execgraph::spirv {

// First decoration of `id` (not member decorations) with this enumerant, or nullptr.
const Instruction* FindDecoration(const Module& module, std::uint32_t id, Decoration decoration);
// First member decoration of `struct_id` member `member` with this enumerant, or nullptr.
const Instruction* FindMemberDecoration(const Module& module, std::uint32_t struct_id, std::uint32_t member, Decoration decoration);

// The first extra operand word of the decoration (a literal for OpDecorate, an id for OpDecorateId), if present.
std::optional<std::uint32_t> DecorationOperand(const Module& module, std::uint32_t id, Decoration decoration);
std::optional<std::uint32_t> MemberDecorationOperand(const Module& module, std::uint32_t struct_id, std::uint32_t member,
                                                     Decoration decoration);

inline bool HasDecoration(const Module& module, std::uint32_t id, Decoration decoration) {
    return FindDecoration(module, id, decoration) != nullptr;
}
std::optional<std::uint32_t> SpecIdOf(const Module& module, std::uint32_t id);
std::optional<BuiltIn> BuiltInOf(const Module& module, std::uint32_t id);
std::optional<std::uint32_t> OffsetOf(const Module& module, std::uint32_t struct_id, std::uint32_t member);
std::optional<std::uint32_t> ArrayStrideOf(const Module& module, std::uint32_t array_type_id);

}  // namespace execgraph::spirv
