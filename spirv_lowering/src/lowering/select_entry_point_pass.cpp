// SPDX-License-Identifier: Apache-2.0
// Keeps only the node being lowered: its OpEntryPoint, its execution modes and the functions it can call. A lowered
// node is one compute pipeline, and other entry points of a lib_6_8-style module may use AMDX constructs we would
// otherwise have to lower too.
#include <algorithm>
#include <unordered_set>
#include <vector>

#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {

Result<bool> SelectEntryPointPass::Run(Module& module) {
    const std::uint32_t entry = ctx_.info.entry_point_id;
    bool found = false;
    for (const Instruction& inst : module.section(Section::kEntryPoint)) {
        if (inst.Word(1) != entry) continue;
        if (inst.Word(0) != static_cast<std::uint32_t>(ExecutionModel::GLCompute)) {
            return Error{kNoWordOffset, "entry point \"" + ctx_.info.entry_point_name +
                                            "\" is not GLCompute; only compute nodes can be lowered (mesh nodes are not supported)"};
        }
        found = true;
    }
    if (!found) return Error{kNoWordOffset, "no OpEntryPoint for function %" + std::to_string(entry) + " (\"" + ctx_.info.entry_point_name + "\")"};

    std::vector<Instruction>& entry_points = module.mutable_section(Section::kEntryPoint);
    std::erase_if(entry_points, [entry](const Instruction& inst) { return inst.Word(1) != entry; });
    std::erase_if(module.mutable_section(Section::kExecutionMode), [entry](const Instruction& inst) { return inst.Word(0) != entry; });

    // Call-graph reachability from the entry point.
    std::unordered_set<std::uint32_t> reachable{entry};
    std::vector<std::uint32_t> work{entry};
    while (!work.empty()) {
        const std::uint32_t id = work.back();
        work.pop_back();
        const Function* function = FindFunction(module, id);
        if (function == nullptr) return Error{kNoWordOffset, "entry point function %" + std::to_string(id) + " is not defined"};
        for (const BasicBlock& block : function->blocks) {
            for (const Instruction& inst : block.instructions) {
                if (inst.opcode() == Op::OpFunctionCall && reachable.insert(inst.Word(0)).second) work.push_back(inst.Word(0));
            }
        }
    }
    // Debug names and decorations of what the dropped functions defined (the other entry points' OpName, their
    // parameters and locals) would otherwise refer to ids that no longer exist.
    std::unordered_set<std::uint32_t> dropped;
    for (const Function& function : module.functions()) {
        if (reachable.count(function.result_id()) != 0) continue;
        for (const Instruction& inst : function.header) dropped.insert(inst.result_id());
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) dropped.insert(inst.result_id());
        }
    }
    dropped.erase(0);
    std::erase_if(module.mutable_functions(), [&reachable](const Function& f) { return reachable.count(f.result_id()) == 0; });
    auto targets_dropped = [&dropped](const Instruction& inst) {
        return inst.OperandWordCount() > 0 && dropped.count(inst.Word(0)) != 0;
    };
    std::erase_if(module.mutable_section(Section::kDebugName), targets_dropped);
    std::erase_if(module.mutable_section(Section::kAnnotation), targets_dropped);

    // DXC -Od wraps the node function and passes the input / outputs as parameters (dxc-spirv-shapes §3.2 "Entry-point
    // wrappers"). LowerNode inlines those calls before this pass (InlinePayloadFunctions), and the passes below follow
    // payloads through one function only, so a payload parameter left here means a caller skipped that step.
    for (const Function& function : module.functions()) {
        for (const Instruction& inst : function.header) {
            if (inst.opcode() != Op::OpFunctionParameter) continue;
            StorageClass storage_class{};
            std::uint32_t pointee = 0;
            const bool is_pointer = PointerInfo(module, inst.type_id(), &storage_class, &pointee);
            const Instruction* pointee_def = is_pointer ? module.FindDef(pointee) : module.FindDef(inst.type_id());
            if ((is_pointer && storage_class == StorageClass::NodePayloadAMDX) ||
                (pointee_def != nullptr && pointee_def->opcode() == Op::OpTypeNodePayloadArrayAMDX)) {
                return Error{kNoWordOffset, "function %" + std::to_string(function.result_id()) +
                                                " takes a node payload as a parameter (DXC -Od entry wrapper) and was not inlined "
                                                "(spirv::InlinePayloadFunctions)"};
            }
        }
    }
    return true;
}

}  // namespace execgraph::spirv::lowering
