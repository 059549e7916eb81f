// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/decorations.h"

namespace execgraph::spirv {
namespace {

bool IsMemberDecoration(Op op) { return op == Op::OpMemberDecorate || op == Op::OpMemberDecorateString; }

}  // namespace

const Instruction* FindDecoration(const Module& module, std::uint32_t id, Decoration decoration) {
    for (const Instruction* inst : module.DecorationsOf(id)) {
        // Operands: target, decoration, extra operands.
        if (!IsMemberDecoration(inst->opcode()) && inst->OperandWordCount() > 1 &&
            inst->Word(1) == static_cast<std::uint32_t>(decoration)) {
            return inst;
        }
    }
    return nullptr;
}

const Instruction* FindMemberDecoration(const Module& module, std::uint32_t struct_id, std::uint32_t member,
                                        Decoration decoration) {
    for (const Instruction* inst : module.DecorationsOf(struct_id)) {
        // Operands: structure type, member, decoration, extra operands.
        if (IsMemberDecoration(inst->opcode()) && inst->OperandWordCount() > 2 && inst->Word(1) == member &&
            inst->Word(2) == static_cast<std::uint32_t>(decoration)) {
            return inst;
        }
    }
    return nullptr;
}

std::optional<std::uint32_t> DecorationOperand(const Module& module, std::uint32_t id, Decoration decoration) {
    const Instruction* inst = FindDecoration(module, id, decoration);
    if (inst == nullptr || inst->OperandWordCount() < 3) return std::nullopt;
    return inst->Word(2);
}

std::optional<std::uint32_t> MemberDecorationOperand(const Module& module, std::uint32_t struct_id, std::uint32_t member,
                                                     Decoration decoration) {
    const Instruction* inst = FindMemberDecoration(module, struct_id, member, decoration);
    if (inst == nullptr || inst->OperandWordCount() < 4) return std::nullopt;
    return inst->Word(3);
}

std::optional<std::uint32_t> SpecIdOf(const Module& module, std::uint32_t id) {
    return DecorationOperand(module, id, Decoration::SpecId);
}

std::optional<BuiltIn> BuiltInOf(const Module& module, std::uint32_t id) {
    const std::optional<std::uint32_t> value = DecorationOperand(module, id, Decoration::BuiltIn);
    if (!value) return std::nullopt;
    return static_cast<BuiltIn>(*value);
}

std::optional<std::uint32_t> OffsetOf(const Module& module, std::uint32_t struct_id, std::uint32_t member) {
    return MemberDecorationOperand(module, struct_id, member, Decoration::Offset);
}

std::optional<std::uint32_t> ArrayStrideOf(const Module& module, std::uint32_t array_type_id) {
    return DecorationOperand(module, array_type_id, Decoration::ArrayStride);
}

}  // namespace execgraph::spirv
