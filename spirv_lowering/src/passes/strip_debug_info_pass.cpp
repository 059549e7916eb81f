// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/passes/strip_debug_info_pass.h"

#include <algorithm>
#include <unordered_set>

namespace execgraph::spirv {
namespace {

bool IsLineInfo(const Instruction& inst) { return inst.opcode() == Op::OpLine || inst.opcode() == Op::OpNoLine; }

template <typename Pred>
bool EraseIf(std::vector<Instruction>& instructions, Pred pred) {
    const auto it = std::remove_if(instructions.begin(), instructions.end(), pred);
    const bool changed = it != instructions.end();
    instructions.erase(it, instructions.end());
    return changed;
}

}  // namespace

Result<bool> StripDebugInfoPass::Run(Module& module) {
    // Strings still referenced by anything we keep (OpLine's file operand does not count: OpLine goes too).
    std::unordered_set<std::uint32_t> referenced;
    module.ForEachInstruction([&referenced](const Instruction& inst) {
        if (IsLineInfo(inst) || inst.opcode() == Op::OpSource || inst.opcode() == Op::OpName || inst.opcode() == Op::OpMemberName) {
            return;
        }
        inst.ForEachInId([&referenced](std::uint32_t id) { referenced.insert(id); });
    });

    bool changed = false;
    changed |= EraseIf(module.mutable_section(Section::kDebugString), [&referenced](const Instruction& inst) {
        return inst.opcode() != Op::OpString || referenced.count(inst.result_id()) == 0;
    });
    for (Section section : {Section::kDebugName, Section::kDebugModuleProcessed}) {
        changed |= !module.section(section).empty();
        module.mutable_section(section).clear();
    }
    changed |= EraseIf(module.mutable_section(Section::kTypesValues), IsLineInfo);
    for (Function& function : module.mutable_functions()) {
        changed |= EraseIf(function.header, IsLineInfo);
        for (BasicBlock& block : function.blocks) changed |= EraseIf(block.instructions, IsLineInfo);
    }
    return changed;
}

}  // namespace execgraph::spirv
