// SPDX-License-Identifier: Apache-2.0
// Inlines the functions that take node payloads as parameters (DXC -Od; dxc-spirv-shapes §3.2 "Entry-point wrappers").
//
// At -Od DXC keeps the node's HLSL function as a function of its own: the entry point is a wrapper that copies the
// built-ins into Function variables and calls it, passing the input variable as an `OpFunctionParameter` of type
// `ptr NodePayloadAMDX arr` and the outputs as Function variables of type `ptr Function arr`; helper functions that
// take a record object (`DispatchNodeInputRecord<T>`, `GroupNodeOutputRecords<T>`) stay calls too. The analysis and
// the lowering follow payloads through one function only (the input variable, the allocations and their Function
// copies), so such calls are inlined first, innermost callee first, until none is left. What -O3 does with them
// anyway: AMD's binaries have every node in one function.
//
// Structured control flow (SPIR-V 2.11) is kept without adding constructs:
// - A call that ends its caller's path (a void call followed only by OpReturn; the wrapper's call of the node function)
//   keeps the callee's returns as the caller's: the callee's body replaces the call and the return, early returns
//   included (`if (i >= count) return;` is how node functions start).
// - Any other call needs a callee with one return: its block then branches to the rest of the caller's block, which
//   becomes a block of its own, and the returned value replaces the call's result. A callee that returns from several
//   places there is refused with a message (it would need a merge construct of its own around the body).
// The callee's OpVariables move to the caller's first block (SPIR-V 2.16.1: a function's variables are declared there).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "execgraph/spirv/lowering.h"
#include "lowering/lowering_context.h"

namespace execgraph::spirv {
namespace {

using lowering::FindFunction;
using lowering::PointerInfo;

bool IsLineInfo(const Instruction& inst) { return inst.opcode() == Op::OpLine || inst.opcode() == Op::OpNoLine; }
bool IsReturn(const Instruction& inst) { return inst.opcode() == Op::OpReturn || inst.opcode() == Op::OpReturnValue; }

// Whether a parameter of type `type_id` carries a node payload: a NodePayloadAMDX pointer, a pointer to a payload
// array in any storage class (DXC's Function copies of allocations), or a payload array value.
bool IsPayloadType(const Module& module, std::uint32_t type_id) {
    StorageClass storage_class{};
    std::uint32_t pointee = 0;
    if (PointerInfo(module, type_id, &storage_class, &pointee)) {
        if (storage_class == StorageClass::NodePayloadAMDX) return true;
        type_id = pointee;
    }
    const Instruction* def = module.FindDef(type_id);
    return def != nullptr && def->opcode() == Op::OpTypeNodePayloadArrayAMDX;
}

bool TakesPayload(const Module& module, const Function& function) {
    return std::any_of(function.header.begin(), function.header.end(), [&module](const Instruction& inst) {
        return inst.opcode() == Op::OpFunctionParameter && IsPayloadType(module, inst.type_id());
    });
}

std::unordered_set<std::uint32_t> PayloadFunctions(const Module& module) {
    std::unordered_set<std::uint32_t> ids;
    for (const Function& function : module.functions()) {
        if (!function.blocks.empty() && TakesPayload(module, function)) ids.insert(function.result_id());
    }
    return ids;
}

bool CallsAny(const Function& function, const std::unordered_set<std::uint32_t>& callees) {
    for (const BasicBlock& block : function.blocks) {
        for (const Instruction& inst : block.instructions) {
            if (inst.opcode() == Op::OpFunctionCall && callees.count(inst.Word(0)) != 0) return true;
        }
    }
    return false;
}

std::string FunctionText(const Module& module, std::uint32_t id) {
    const std::string name = module.NameOf(id);
    return "function %" + std::to_string(id) + (name.empty() ? "" : " (\"" + name + "\")");
}

// The non-semantic extended instruction sets (NonSemantic.Shader.DebugInfo.100 and the like), whose instructions may be
// dropped from a module without changing what it does (SPV_KHR_non_semantic_info). Their function-scope instructions
// name the callee's scope, which is removed, so the inlined copies go without them.
std::unordered_set<std::uint32_t> NonSemanticSets(const Module& module) {
    std::unordered_set<std::uint32_t> sets;
    for (const Instruction& inst : module.section(Section::kExtInstImport)) {
        if (inst.StringAt(0).rfind("NonSemantic.", 0) == 0) sets.insert(inst.result_id());
    }
    return sets;
}

// Inlines the call at caller.blocks[block_index].instructions[call_index].
Status InlineCall(Module& module, std::uint32_t caller_id, std::size_t block_index, std::size_t call_index) {
    const std::unordered_set<std::uint32_t> non_semantic = NonSemanticSets(module);
    Function* caller = FindFunction(module, caller_id);
    const Instruction call = caller->blocks[block_index].instructions[call_index];
    const std::uint32_t callee_id = call.Word(0);
    const Function* callee_ptr = FindFunction(module, callee_id);
    if (callee_ptr == nullptr || callee_ptr->blocks.empty())
        return Error{kNoWordOffset, FunctionText(module, callee_id) + " is not defined"};
    const Function callee = *callee_ptr;  // copied: the functions vector is not touched below, but the caller is

    // Parameters become the call's arguments; everything the body defines gets a fresh id.
    std::unordered_map<std::uint32_t, std::uint32_t> map;
    std::size_t argument = 1;
    for (const Instruction& inst : callee.header) {
        if (inst.opcode() != Op::OpFunctionParameter) continue;
        if (argument >= call.OperandWordCount())
            return Error{kNoWordOffset, "a call of " + FunctionText(module, callee_id) + " lacks arguments"};
        map[inst.result_id()] = call.Word(argument++);
    }
    for (const BasicBlock& block : callee.blocks) {
        for (const Instruction& inst : block.instructions) {
            if (inst.result_id() != 0) map[inst.result_id()] = module.TakeNextId();
        }
    }
    std::vector<BasicBlock> body = callee.blocks;
    for (BasicBlock& block : body) {
        std::erase_if(block.instructions, [&non_semantic](const Instruction& inst) {
            return inst.opcode() == Op::OpExtInst && non_semantic.count(inst.Word(0)) != 0;
        });
        for (Instruction& inst : block.instructions) {
            inst.ForEachId([&map](std::uint32_t& id) {
                const auto it = map.find(id);
                if (it != map.end()) id = it->second;
            });
        }
    }
    // Decorations of the body's results (RelaxedPrecision, NoContraction) go with their copies.
    std::vector<Instruction> copied_decorations;
    for (const Instruction& inst : module.section(Section::kAnnotation)) {
        if ((inst.opcode() != Op::OpDecorate && inst.opcode() != Op::OpDecorateId) || inst.OperandWordCount() == 0) continue;
        const auto it = map.find(inst.Word(0));
        if (it == map.end() || it->first == it->second) continue;
        const bool is_parameter = std::any_of(callee.header.begin(), callee.header.end(),
                                              [&inst](const Instruction& p) { return p.result_id() == inst.Word(0); });
        if (is_parameter) continue;
        Instruction copy = inst;
        copy.SetWord(0, it->second);
        copied_decorations.push_back(copy);
    }
    for (Instruction& inst : copied_decorations) module.Append(Section::kAnnotation, std::move(inst));
    caller = FindFunction(module, caller_id);

    // The callee's variables, hoisted out of its first block.
    std::vector<Instruction> variables;
    std::erase_if(body.front().instructions, [&variables](const Instruction& inst) {
        if (inst.opcode() != Op::OpVariable) return false;
        variables.push_back(inst);
        return true;
    });

    std::vector<Instruction>& instructions = caller->blocks[block_index].instructions;
    std::size_t after = call_index + 1;
    while (after < instructions.size() && IsLineInfo(instructions[after])) ++after;
    const Instruction* caller_def = caller->definition();
    const Instruction* void_type = caller_def != nullptr ? module.FindDef(caller_def->type_id()) : nullptr;
    const Instruction* call_type = module.FindDef(call.type_id());
    // Debug lines may follow the terminator (module.h, BasicBlock).
    const bool ends_path =
        after < instructions.size() && instructions[after].opcode() == Op::OpReturn &&
        std::all_of(instructions.begin() + static_cast<std::ptrdiff_t>(after) + 1, instructions.end(), IsLineInfo) &&
        void_type != nullptr && void_type->opcode() == Op::OpTypeVoid && call_type != nullptr &&
        call_type->opcode() == Op::OpTypeVoid;
    const std::uint32_t body_entry = body.front().label_id();
    std::vector<BasicBlock> inserted;
    if (ends_path) {
        // The callee's returns are the caller's (file comment); the call's result is void and unused.
        instructions.erase(instructions.begin() + static_cast<std::ptrdiff_t>(call_index), instructions.end());
        instructions.push_back(Instruction(Op::OpBranch).AddId(body_entry));
        inserted = std::move(body);
    } else {
        std::vector<BasicBlock*> returns;
        for (BasicBlock& block : body) {
            if (!block.instructions.empty() && std::any_of(block.instructions.begin(), block.instructions.end(), IsReturn)) {
                returns.push_back(&block);
            }
        }
        if (returns.size() != 1) {
            return Error{kNoWordOffset, FunctionText(module, callee_id) +
                                            " takes a node payload and returns from more than one place, and its call is not "
                                            "the last thing its caller does; give it one return, or compile the node with "
                                            "optimisation (-O3) so that DXC inlines it"};
        }
        BasicBlock rest;
        const std::uint32_t rest_label = module.TakeNextId();
        rest.instructions.push_back(Instruction(Op::OpLabel, 0, rest_label));
        if (call_type != nullptr && call_type->opcode() != Op::OpTypeVoid) {
            // The returned value takes the call's result id, so that no use needs rewriting (a void call's id has none).
            std::vector<Instruction>& tail = returns.front()->instructions;
            const auto ret = std::find_if(tail.begin(), tail.end(), IsReturn);
            if (ret->opcode() != Op::OpReturnValue) {
                return Error{kNoWordOffset, FunctionText(module, callee_id) + " returns no value to a call that takes one"};
            }
            rest.instructions.push_back(Instruction(Op::OpCopyObject, call.type_id(), call.result_id()).AddId(ret->Word(0)));
        }
        for (std::size_t i = call_index + 1; i < instructions.size(); ++i) {
            if (instructions[i].opcode() == Op::OpLoopMerge) {
                return Error{kNoWordOffset, "a call of " + FunctionText(module, callee_id) +
                                                " sits in a loop header block; compile the node with optimisation (-O3)"};
            }
            rest.instructions.push_back(instructions[i]);
        }
        {
            std::vector<Instruction>& tail = returns.front()->instructions;
            const auto ret = std::find_if(tail.begin(), tail.end(), IsReturn);
            *ret = Instruction(Op::OpBranch).AddId(rest_label);
        }
        // Phis that named the split block as a predecessor now see its rest.
        const std::uint32_t split_label = caller->blocks[block_index].label_id();
        for (BasicBlock& block : caller->blocks) {
            for (Instruction& inst : block.instructions) {
                if (inst.opcode() != Op::OpPhi) continue;
                for (std::size_t i = 1; i < inst.OperandWordCount(); i += 2) {
                    if (inst.Word(i) == split_label) inst.SetWord(i, rest_label);
                }
            }
        }
        instructions.erase(instructions.begin() + static_cast<std::ptrdiff_t>(call_index), instructions.end());
        instructions.push_back(Instruction(Op::OpBranch).AddId(body_entry));
        inserted = std::move(body);
        inserted.push_back(std::move(rest));
    }
    caller->blocks.insert(caller->blocks.begin() + static_cast<std::ptrdiff_t>(block_index) + 1,
                          std::make_move_iterator(inserted.begin()), std::make_move_iterator(inserted.end()));
    // Variables go after the caller's own, at the top of its first block.
    std::vector<Instruction>& first = caller->blocks.front().instructions;
    std::size_t at = 1;
    while (at < first.size() && (first[at].opcode() == Op::OpVariable || IsLineInfo(first[at]))) ++at;
    first.insert(first.begin() + static_cast<std::ptrdiff_t>(at), variables.begin(), variables.end());
    return {};
}

// Removes `function_id`, and the names and decorations of everything it defined.
void RemoveFunction(Module& module, std::uint32_t function_id) {
    std::unordered_set<std::uint32_t> dropped;
    for (const Function& function : module.functions()) {
        if (function.result_id() != function_id) continue;
        for (const Instruction& inst : function.header) dropped.insert(inst.result_id());
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) dropped.insert(inst.result_id());
        }
    }
    dropped.erase(0);
    std::erase_if(module.mutable_functions(), [function_id](const Function& f) { return f.result_id() == function_id; });
    auto targets_dropped = [&dropped](const Instruction& inst) {
        return inst.OperandWordCount() > 0 && dropped.count(inst.Word(0)) != 0;
    };
    std::erase_if(module.mutable_section(Section::kDebugName), targets_dropped);
    std::erase_if(module.mutable_section(Section::kAnnotation), targets_dropped);
}

}  // namespace

bool HasPayloadParameterFunctions(const Module& module) { return !PayloadFunctions(module).empty(); }

Status InlinePayloadFunctions(Module& module) {
    // Each round inlines one call of a payload-taking function that calls no other (SPIR-V has no recursion, so one
    // always exists while calls are left), then drops the callee once nothing calls it.
    for (;;) {
        const std::unordered_set<std::uint32_t> payload_functions = PayloadFunctions(module);
        if (payload_functions.empty()) return {};
        bool inlined = false;
        for (const Function& caller : module.functions()) {
            // `inlined` is tested first: once a call is inlined, `caller` may be gone.
            for (std::size_t b = 0; !inlined && b < caller.blocks.size(); ++b) {
                const std::vector<Instruction>& instructions = caller.blocks[b].instructions;
                for (std::size_t i = 0; i < instructions.size(); ++i) {
                    if (instructions[i].opcode() != Op::OpFunctionCall || payload_functions.count(instructions[i].Word(0)) == 0)
                        continue;
                    const Function* callee = FindFunction(module, instructions[i].Word(0));
                    if (callee == nullptr || CallsAny(*callee, payload_functions)) continue;
                    const std::uint32_t callee_id = instructions[i].Word(0);
                    if (Status status = InlineCall(module, caller.result_id(), b, i); !status.ok()) return status;
                    bool still_called = false;
                    for (const Function& function : module.functions()) still_called |= CallsAny(function, {callee_id});
                    if (!still_called) RemoveFunction(module, callee_id);
                    inlined = true;
                    break;
                }
            }
            if (inlined) break;
        }
        // Payload-taking functions nobody calls are dead (the analysis and the lowering only follow calls).
        if (!inlined) return {};
    }
}

}  // namespace execgraph::spirv
