// SPDX-License-Identifier: Apache-2.0
// DXC encodes NODE_OUTPUT_MEMORY barriers as the OutputMemory semantics bit (0x1000, dxc-spirv-shapes §3.2
// "Barriers"). Payloads now live in buffer memory, so the bit becomes UniformMemory (0x40) (docs/design.md, "Lowered
// node semantics"); without it the hand-off of payload writes would be unsynchronised, and with it left in, Vulkan
// (GLSL450 memory model) would reject the module.
#include <string>

#include "execgraph/spirv/constant_eval.h"
#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {

Result<bool> MemorySemanticsPass::Run(Module& module) {
    bool changed = false;
    std::unordered_map<std::uint32_t, std::uint32_t> replacement;  // semantics constant -> rewritten constant (0: keep)
    for (Function& function : module.mutable_functions()) {
        for (BasicBlock& block : function.blocks) {
            for (Instruction& inst : block.instructions) {
                for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) {
                    if (inst.KindOf(i) != OperandKind::IdMemorySemantics || inst.IsContinuation(i)) continue;
                    const std::uint32_t id = inst.Word(i);
                    auto it = replacement.find(id);
                    if (it == replacement.end()) {
                        Result<std::uint32_t> value = EvaluateUint32(module, id);
                        if (!value) {
                            return Error{kNoWordOffset, "memory semantics %" + std::to_string(id) + " is not a constant: " + value.error().message};
                        }
                        std::uint32_t rewritten = 0;
                        if ((*value & kSemanticsOutputMemory) != 0) {
                            rewritten = ctx_.types->GetConstantUint((*value & ~kSemanticsOutputMemory) | kSemanticsUniformMemory);
                        }
                        it = replacement.emplace(id, rewritten).first;
                    }
                    if (it->second != 0) {
                        inst.SetWord(i, it->second);
                        changed = true;
                    }
                }
            }
        }
    }
    return changed;
}

}  // namespace execgraph::spirv::lowering
