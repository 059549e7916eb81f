// SPDX-License-Identifier: Apache-2.0
// Removes what is left of SPV_AMDX_shader_enqueue once every AMDX instruction has been lowered: the capability and
// extension, the execution modes, the AMDX decorations (also on members and on the now unused built-in variables),
// the payload array and NodePayloadAMDX pointer types, the node-name strings and the dead OpTypeFunctions DXC leaves
// with payload parameters (dxc-spirv-shapes §3.2). Then recomputes the entry point's interface: SPIR-V 1.4+ lists every
// global variable the entry point uses, which now includes the Private context, push constants and workgroup memory.
// Anything still referring to a removed id is an error (never emit a module with dangling ids).
#include <algorithm>
#include <string>
#include <unordered_set>

#include "execgraph/spirv/decorations.h"
#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

bool IsAmdxExecutionMode(std::uint32_t mode) {
    switch (static_cast<ExecutionMode>(mode)) {
        case ExecutionMode::CoalescingAMDX:
        case ExecutionMode::IsApiEntryAMDX:
        case ExecutionMode::MaxNodeRecursionAMDX:
        case ExecutionMode::StaticNumWorkgroupsAMDX:
        case ExecutionMode::ShaderIndexAMDX:
        case ExecutionMode::MaxNumWorkgroupsAMDX:
        case ExecutionMode::SharesInputWithAMDX:
            return true;
        default:
            return false;
    }
}

bool IsAmdxDecoration(std::uint32_t decoration) {
    switch (static_cast<Decoration>(decoration)) {
        case Decoration::NodeSharesPayloadLimitsWithAMDX:
        case Decoration::NodeMaxPayloadsAMDX:
        case Decoration::TrackFinishWritingAMDX:
        case Decoration::PayloadNodeNameAMDX:
        case Decoration::PayloadNodeBaseIndexAMDX:
        case Decoration::PayloadNodeSparseArrayAMDX:
        case Decoration::PayloadNodeArraySizeAMDX:
        case Decoration::PayloadDispatchIndirectAMDX:
            return true;
        default:
            return false;
    }
}

bool IsAmdxBuiltIn(std::uint32_t builtin) {
    return builtin == static_cast<std::uint32_t>(BuiltIn::RemainingRecursionLevelsAMDX) ||
           builtin == static_cast<std::uint32_t>(BuiltIn::ShaderIndexAMDX);
}

// Index of the decoration enumerant in an annotation instruction, or npos for OpGroupDecorate & co.
std::size_t DecorationIndex(const Instruction& inst) {
    switch (inst.opcode()) {
        case Op::OpDecorate:
        case Op::OpDecorateId:
        case Op::OpDecorateString:
            return 1;
        case Op::OpMemberDecorate:
        case Op::OpMemberDecorateString:
            return 2;
        default:
            return std::string::npos;
    }
}

}  // namespace

Result<bool> StripAmdxPass::Run(Module& module) {
    constexpr std::uint32_t kNodePayload = static_cast<std::uint32_t>(StorageClass::NodePayloadAMDX);
    std::erase_if(module.mutable_section(Section::kCapability),
                  [](const Instruction& inst) { return inst.Word(0) == static_cast<std::uint32_t>(Capability::ShaderEnqueueAMDX); });
    std::erase_if(module.mutable_section(Section::kExtension),
                  [](const Instruction& inst) { return inst.StringAt(0) == "SPV_AMDX_shader_enqueue"; });
    std::erase_if(module.mutable_section(Section::kExecutionMode), [](const Instruction& inst) { return IsAmdxExecutionMode(inst.Word(1)); });

    // Ids used by functions: what must survive.
    std::unordered_set<std::uint32_t> used_by_code;
    for (const Function& function : module.functions()) {
        for (const Instruction& inst : function.header) inst.ForEachInId([&used_by_code](std::uint32_t id) { used_by_code.insert(id); });
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) inst.ForEachInId([&used_by_code](std::uint32_t id) { used_by_code.insert(id); });
        }
    }

    // AMDX built-in variables (their uses were retargeted to Private copies).
    std::unordered_set<std::uint32_t> removed;
    for (const Instruction& inst : module.section(Section::kAnnotation)) {
        if (inst.opcode() == Op::OpDecorate && inst.Word(1) == static_cast<std::uint32_t>(Decoration::BuiltIn) && IsAmdxBuiltIn(inst.Word(2))) {
            removed.insert(inst.Word(0));
        }
    }
    // AMDX declarations, then (to a fixed point) every declaration that refers to a removed one.
    bool grew = true;
    while (grew) {
        grew = false;
        for (const Instruction& inst : module.section(Section::kTypesValues)) {
            const std::uint32_t id = inst.result_id();
            if (id == 0 || removed.count(id) != 0) continue;
            bool remove = false;
            switch (inst.opcode()) {
                case Op::OpTypeNodePayloadArrayAMDX:
                case Op::OpConstantStringAMDX:
                case Op::OpSpecConstantStringAMDX:
                    remove = true;
                    break;
                case Op::OpTypePointer:
                case Op::OpVariable:
                    remove = inst.Word(0) == kNodePayload;
                    break;
                default:
                    break;
            }
            inst.ForEachInId([&](std::uint32_t ref) { remove |= removed.count(ref) != 0; });
            if (remove) {
                removed.insert(id);
                grew = true;
            }
        }
    }
    for (std::uint32_t id : removed) {
        if (used_by_code.count(id) != 0) {
            return Error{kNoWordOffset, "%" + std::to_string(id) + " (an AMDX declaration) is still used after lowering"};
        }
    }
    std::erase_if(module.mutable_section(Section::kTypesValues), [&removed](const Instruction& inst) { return removed.count(inst.result_id()) != 0; });

    std::erase_if(module.mutable_section(Section::kAnnotation), [&removed](const Instruction& inst) {
        if (inst.OperandWordCount() > 0 && removed.count(inst.Word(0)) != 0) return true;
        const std::size_t index = DecorationIndex(inst);
        if (index == std::string::npos || index >= inst.OperandWordCount()) return false;
        if (IsAmdxDecoration(inst.Word(index))) return true;
        return inst.Word(index) == static_cast<std::uint32_t>(Decoration::BuiltIn) && index + 1 < inst.OperandWordCount() &&
               IsAmdxBuiltIn(inst.Word(index + 1));
    });
    std::erase_if(module.mutable_section(Section::kDebugName),
                  [&removed](const Instruction& inst) { return inst.OperandWordCount() > 0 && removed.count(inst.Word(0)) != 0; });

    // Entry point interface.
    const bool lists_all_globals = module.header().version >= 0x00010400u;
    std::vector<std::uint32_t> interface;
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpVariable || used_by_code.count(inst.result_id()) == 0) continue;
        const auto storage_class = static_cast<StorageClass>(inst.Word(0));
        if (storage_class == StorageClass::Function) continue;
        if (lists_all_globals || storage_class == StorageClass::Input || storage_class == StorageClass::Output) {
            interface.push_back(inst.result_id());
        }
    }
    for (Instruction& entry : module.mutable_section(Section::kEntryPoint)) {
        const std::size_t first_interface = 2 + entry.StringWordCount(2);
        entry.RemoveOperandWords(first_interface, entry.OperandWordCount());
        for (std::uint32_t id : interface) entry.AddId(id);
    }

    // Nothing may refer to a removed id any more.
    std::string dangling;
    module.ForEachInstruction([&](const Instruction& inst) {
        inst.ForEachInId([&](std::uint32_t id) {
            if (removed.count(id) != 0 && dangling.empty()) {
                dangling = std::string(OpcodeName(static_cast<std::uint32_t>(inst.opcode()))) + " refers to removed AMDX id %" + std::to_string(id);
            }
        });
    });
    if (!dangling.empty()) return Error{kNoWordOffset, dangling};
    return true;
}

}  // namespace execgraph::spirv::lowering
