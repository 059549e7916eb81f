// SPDX-License-Identifier: Apache-2.0
#include "amdx_revision.h"

#include <string>

namespace execgraph::spirv::internal {
namespace {

constexpr std::uint32_t kV1NodeOutputPayloadStorageClass = 5076;
constexpr std::uint32_t kV1InitializeNodePayloadsWordCount = 5;

Error V1Error(std::uint32_t word_offset, const std::string& signal) {
    return Error{word_offset, "SPV_AMDX_shader_enqueue 2023 (v1) revision is not supported: " + signal +
                                  "; recompile the shader against the 2024 revision"};
}

bool DecorationIs(const Instruction& inst, Decoration decoration) {
    const std::size_t index = inst.opcode() == Op::OpMemberDecorate || inst.opcode() == Op::OpMemberDecorateString ? 2 : 1;
    return inst.OperandWordCount() > index && inst.Word(index) == static_cast<std::uint32_t>(decoration);
}

}  // namespace

Status CheckAmdx2023Opcode(std::uint32_t opcode, std::uint32_t word_count, std::uint32_t word_offset) {
    if (opcode == static_cast<std::uint32_t>(Op::OpNodePayloadArrayLengthAMDX) &&
        word_count == kV1InitializeNodePayloadsWordCount) {
        return V1Error(word_offset, "opcode 5090 with 4 operands and no result is the 2023 OpInitializeNodePayloadsAMDX");
    }
    return {};
}

Status CheckAmdx2023Enumerant(Op op, OperandKind kind, std::uint32_t value, std::uint32_t word_offset) {
    if (kind == OperandKind::StorageClass && value == kV1NodeOutputPayloadStorageClass) {
        return V1Error(word_offset, "storage class 5076 is the 2023 NodeOutputPayloadAMDX");
    }
    if (kind == OperandKind::Decoration && value == static_cast<std::uint32_t>(Decoration::PayloadNodeNameAMDX) &&
        op != Op::OpDecorateId) {
        return V1Error(word_offset, "PayloadNodeNameAMDX with a literal string operand (2024 takes an id via OpDecorateId)");
    }
    return {};
}

Status CheckNotAmdx2023(const Module& module) {
    bool enqueue = false;
    for (const Instruction& inst : module.section(Section::kCapability)) {
        if (inst.Word(0) == static_cast<std::uint32_t>(Capability::ShaderEnqueueAMDX)) enqueue = true;
    }
    if (!enqueue) return {};

    const Instruction* builtin_5021 = nullptr;
    for (const Instruction& inst : module.section(Section::kAnnotation)) {
        const bool on_variable_only = DecorationIs(inst, Decoration::NodeMaxPayloadsAMDX) ||
                                      DecorationIs(inst, Decoration::NodeSharesPayloadLimitsWithAMDX) ||
                                      DecorationIs(inst, Decoration::TrackFinishWritingAMDX);
        if (on_variable_only && inst.opcode() != Op::OpMemberDecorate) {
            const Instruction* target = module.FindDef(inst.Word(0));
            if (target != nullptr && target->opcode() == Op::OpVariable) {
                return V1Error(inst.source_offset(), "a payload decoration on a variable (2024 decorates payload types)");
            }
            if (DecorationIs(inst, Decoration::NodeSharesPayloadLimitsWithAMDX) && inst.OperandWordCount() > 2) {
                const Instruction* other = module.FindDef(inst.Word(2));
                if (other != nullptr && other->opcode() == Op::OpVariable) {
                    return V1Error(inst.source_offset(), "NodeSharesPayloadLimitsWithAMDX naming a variable (2024 names a type)");
                }
            }
        }
        const bool is_builtin = DecorationIs(inst, Decoration::BuiltIn);
        const std::size_t value_index = inst.opcode() == Op::OpMemberDecorate ? 3 : 2;
        if (is_builtin && inst.OperandWordCount() > value_index &&
            inst.Word(value_index) == static_cast<std::uint32_t>(BuiltIn::RemainingRecursionLevelsAMDX)) {
            builtin_5021 = &inst;
        }
    }
    if (builtin_5021 == nullptr) return {};

    bool coalescing = false;
    bool max_recursion = false;
    for (const Instruction& inst : module.section(Section::kExecutionMode)) {
        if (inst.OperandWordCount() < 2) continue;
        coalescing |= inst.Word(1) == static_cast<std::uint32_t>(ExecutionMode::CoalescingAMDX);
        max_recursion |= inst.Word(1) == static_cast<std::uint32_t>(ExecutionMode::MaxNodeRecursionAMDX);
    }
    bool array_length = false;
    module.ForEachInstruction(
        [&array_length](const Instruction& inst) { array_length |= inst.opcode() == Op::OpNodePayloadArrayLengthAMDX; });
    if (coalescing && !max_recursion && !array_length) {
        return V1Error(builtin_5021->source_offset(),
                       "BuiltIn 5021 in a coalescing node without MaxNodeRecursionAMDX or OpNodePayloadArrayLengthAMDX is the "
                       "2023 CoalescedInputCountAMDX");
    }
    return {};
}

}  // namespace execgraph::spirv::internal
