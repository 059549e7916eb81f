// SPDX-License-Identifier: Apache-2.0
// DXC copies every allocation into a Function variable (`%p = OpAllocateNodePayloadsAMDX; %v = OpLoad %arr %p;
// OpStore %var %v`), writes through `OpAccessChain %var ...` and enqueues `%var` (dxc-spirv-shapes §3.2). After
// lowering, an output payload array *value* is the PhysicalStorageBuffer pointer to its records, so the by-value load
// of the allocation becomes a copy of that pointer and the Function variable simply holds the pointer: the alias then
// works for any number of stores, loops and branches, with no dominance assumptions.
#include <string>

#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

bool IsPayloadArrayType(const Module& module, std::uint32_t type_id) {
    const Instruction* def = module.FindDef(type_id);
    return def != nullptr && def->opcode() == Op::OpTypeNodePayloadArrayAMDX;
}

}  // namespace

Result<bool> ResolvePayloadAliasesPass::Run(Module& module) {
    const std::unordered_map<std::uint32_t, std::uint32_t> types = CollectResultTypes(module);
    auto type_of = [&types](std::uint32_t id) {
        const auto it = types.find(id);
        return it != types.end() ? it->second : 0u;
    };
    auto is_alias_variable = [&](std::uint32_t id) {
        const Instruction* def = module.FindDef(id);
        std::uint32_t pointee = 0;
        StorageClass storage_class{};
        return def != nullptr && def->opcode() == Op::OpVariable && PointerInfo(module, def->type_id(), &storage_class, &pointee) &&
               storage_class == StorageClass::Function && IsPayloadArrayType(module, pointee);
    };
    auto note_source = [this](std::uint32_t target, std::uint32_t allocation) {
        auto [it, inserted] = ctx_.payload_source.emplace(target, allocation);
        if (!inserted && it->second != allocation) it->second = 0;
    };

    bool changed = false;
    for (Function& function : module.mutable_functions()) {
        for (BasicBlock& block : function.blocks) {
            for (Instruction& inst : block.instructions) {
                switch (inst.opcode()) {
                    case Op::OpAllocateNodePayloadsAMDX:
                        note_source(inst.result_id(), inst.result_id());
                        break;
                    case Op::OpLoad: {
                        if (!IsPayloadArrayType(module, inst.type_id())) break;
                        const std::uint32_t source = inst.Word(0);
                        const Instruction* source_def = module.FindDef(source);
                        if (source_def != nullptr && source_def->opcode() == Op::OpAllocateNodePayloadsAMDX) {
                            // The payload value *is* the allocation (a pointer after lowering): a copy, not a load.
                            Instruction copy(Op::OpCopyObject, inst.type_id(), inst.result_id());
                            copy.AddId(source);
                            inst = std::move(copy);
                            note_source(inst.result_id(), source);
                            changed = true;
                        } else if (is_alias_variable(source)) {
                            const auto it = ctx_.payload_source.find(source);
                            if (it != ctx_.payload_source.end()) note_source(inst.result_id(), it->second);
                        } else {
                            return Error{kNoWordOffset, "OpLoad %" + std::to_string(inst.result_id()) +
                                                            " loads a whole node payload array from something other than an "
                                                            "allocation or its Function-variable copy; not supported"};
                        }
                        break;
                    }
                    case Op::OpStore: {
                        const std::uint32_t target = inst.Word(0);
                        if (!is_alias_variable(target)) break;
                        const auto it = ctx_.payload_source.find(inst.Word(1));
                        note_source(target, it != ctx_.payload_source.end() ? it->second : 0);
                        break;
                    }
                    case Op::OpCopyObject: {
                        const auto it = ctx_.payload_source.find(inst.Word(0));
                        if (it != ctx_.payload_source.end()) note_source(inst.result_id(), it->second);
                        break;
                    }
                    case Op::OpNodePayloadArrayLengthAMDX:
                    case Op::OpEnqueueNodePayloadsAMDX:
                    case Op::OpIsNodePayloadValidAMDX:
                    case Op::OpFinishWritingNodePayloadAMDX:
                        break;
                    default:
                        if (type_of(inst.result_id()) != 0 && IsPayloadArrayType(module, inst.type_id()) &&
                            inst.opcode() != Op::OpPhi && inst.opcode() != Op::OpSelect && inst.opcode() != Op::OpUndef) {
                            return Error{kNoWordOffset, std::string("node payload array value produced by ") +
                                                            std::string(OpcodeName(static_cast<std::uint32_t>(inst.opcode()))) +
                                                            " is not supported"};
                        }
                        break;
                }
            }
        }
    }
    return changed;
}

}  // namespace execgraph::spirv::lowering
