// SPDX-License-Identifier: Apache-2.0
// Payload memory moves from the NodePayloadAMDX storage class to PhysicalStorageBuffer (docs/design.md, "Lowered node
// semantics"):
//   * `ptr NodePayloadAMDX T` becomes `ptr PhysicalStorageBuffer T` (record members, whole records);
//   * an output payload array *value* (the allocation's result, DXC's by-value copies, the Function variables holding
//     them) becomes the PhysicalStorageBuffer pointer to `struct { Record r[]; }` (PayloadBufferPointer), so
//     `OpAccessChain %array %i rest...` becomes `OpAccessChain %buffer 0 %i rest...`, after loading the pointer when
//     the base is a Function variable;
//   * loads and stores through PhysicalStorageBuffer pointers get the `Aligned` memory operand Vulkan requires. For
//     pointers into records the alignment follows from where records start (PayloadAlignments): an allocation's first
//     record 16-byte aligned in the heap (LowerOutputsPass, and the entry pass for entry records), record i of it at
//     i * stride, members at their Offset; so a uint4 member at offset 16 is Aligned 16 and drivers can move it in one
//     access instead of four. Other pointers get their pointee's scalar alignment;
//   * Function variables that hold such pointers are decorated AliasedPointer (required for PhysicalStorageBuffer
//     pointers stored in variables).
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>

#include "execgraph/spirv/decorations.h"
#include "execgraph/spirv/layout.h"

#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

constexpr std::uint32_t kAlignedBit = static_cast<std::uint32_t>(MemoryAccess::Aligned);

// Adds (or keeps) the Aligned memory operand of an OpLoad (`mask_index` 1) or OpStore (`mask_index` 2).
void EnsureAligned(Instruction& inst, std::size_t mask_index, std::uint32_t alignment) {
    if (inst.OperandWordCount() <= mask_index) {
        inst.AddWord(kAlignedBit, OperandKind::MemoryAccess).AddLiteral(alignment);
        return;
    }
    const std::uint32_t mask = inst.Word(mask_index);
    if ((mask & kAlignedBit) != 0) return;
    // Aligned is the lowest mask bit with a parameter (Volatile has none), so its literal comes first.
    std::vector<OperandWord> tail;
    for (std::size_t i = mask_index + 1; i < inst.OperandWordCount(); ++i) tail.push_back(inst.OperandAt(i));
    inst.RemoveOperandWords(mask_index + 1, inst.OperandWordCount());
    inst.SetWord(mask_index, mask | kAlignedBit);
    inst.AddLiteral(alignment);
    for (const OperandWord& word : tail) inst.AddWord(word.word, word.kind, word.continuation);
}

// The largest power of two dividing `bytes` (an offset or a stride), at most kHeapAlignment; kHeapAlignment for 0.
std::uint32_t AlignmentOf(std::uint64_t bytes) {
    if (bytes == 0) return offsets::kHeapAlignment;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes & (~bytes + 1), offsets::kHeapAlignment));
}

// The value of a 32-bit integer OpConstant, if `id` is one.
std::optional<std::uint32_t> ConstantIndex(const Module& module, std::uint32_t id) {
    const Instruction* def = module.FindDef(id);
    if (def == nullptr || def->opcode() != Op::OpConstant || def->OperandWordCount() != 1) return std::nullopt;
    const Instruction* type = module.FindDef(def->type_id());
    if (type == nullptr || type->opcode() != Op::OpTypeInt || type->Word(0) != 32) return std::nullopt;
    return def->Word(0);
}

// Alignment of what `chain` (an OpAccessChain whose base is `alignment`-aligned and points to `pointee`) points to,
// walking its indices through the explicit layout; 0 where the layout is not followed (matrices, unknown strides).
std::uint32_t ChainAlignment(const Module& module, std::uint32_t alignment, std::uint32_t pointee, const Instruction& chain) {
    std::uint32_t type = pointee;
    for (std::size_t i = 1; i < chain.OperandWordCount(); ++i) {
        const Instruction* def = module.FindDef(type);
        if (def == nullptr) return 0;
        const std::optional<std::uint32_t> index = ConstantIndex(module, chain.Word(i));
        std::uint64_t step = 0;  // the offset this index adds, or for a runtime index, the stride it multiplies
        switch (def->opcode()) {
            case Op::OpTypeStruct: {
                if (!index || *index >= def->OperandWordCount()) return 0;
                const std::optional<std::uint32_t> offset = OffsetOf(module, type, *index);
                if (!offset) return 0;
                step = *offset;
                type = def->Word(*index);
                break;
            }
            case Op::OpTypeArray:
            case Op::OpTypeRuntimeArray:
            case Op::OpTypeVector: {
                std::optional<std::uint32_t> stride;
                if (def->opcode() == Op::OpTypeVector) {
                    Result<std::uint32_t> size = ExplicitLayoutSize(module, def->Word(0));
                    if (size) stride = *size;
                } else {
                    stride = ArrayStrideOf(module, type);
                }
                if (!stride || *stride == 0) return 0;
                step = index ? std::uint64_t(*index) * *stride : *stride;
                type = def->Word(0);
                break;
            }
            default:
                return 0;
        }
        if (step != 0) alignment = std::min(alignment, AlignmentOf(step));
    }
    return alignment;
}

}  // namespace

Result<bool> RewritePayloadPointersPass::Run(Module& module) {
    TypeManager& types = *ctx_.types;

    // Type substitutions, computed from a snapshot of the declarations (creating types appends to the section).
    std::unordered_map<std::uint32_t, std::uint32_t> substitution;
    std::vector<std::pair<std::uint32_t, std::pair<StorageClass, std::uint32_t>>> pointers;
    std::vector<std::uint32_t> arrays;
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (inst.opcode() == Op::OpTypePointer) {
            pointers.push_back({inst.result_id(), {static_cast<StorageClass>(inst.Word(0)), inst.Word(1)}});
        } else if (inst.opcode() == Op::OpTypeNodePayloadArrayAMDX) {
            arrays.push_back(inst.result_id());
        }
    }
    std::unordered_set<std::uint32_t> array_set(arrays.begin(), arrays.end());

    // Only payload arrays the functions use get a record buffer (the input's array type, for one, does not).
    std::unordered_set<std::uint32_t> used;
    for (const Function& function : module.functions()) {
        for (const Instruction& inst : function.header) inst.ForEachInId([&used](std::uint32_t id) { used.insert(id); });
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) inst.ForEachInId([&used](std::uint32_t id) { used.insert(id); });
        }
    }
    std::unordered_set<std::uint32_t> needed_arrays;
    for (std::uint32_t array : arrays) {
        if (used.count(array) != 0) needed_arrays.insert(array);
    }
    for (const auto& [id, info] : pointers) {
        if (array_set.count(info.second) != 0 && used.count(id) != 0) needed_arrays.insert(info.second);
    }
    for (std::uint32_t array : arrays) {
        if (needed_arrays.count(array) == 0) continue;
        Result<std::uint32_t> pointer = PayloadBufferPointer(module, ctx_, array);
        if (!pointer) return pointer.error();
        substitution[array] = *pointer;
    }
    for (const auto& [id, info] : pointers) {
        const auto [storage_class, pointee] = info;
        if (array_set.count(pointee) != 0) {
            if (needed_arrays.count(pointee) == 0) continue;  // unused; StripAmdxPass removes it
            if (storage_class == StorageClass::NodePayloadAMDX) {
                substitution[id] = substitution[pointee];  // an allocation's result is the buffer pointer value
            } else {
                substitution[id] = types.GetPointer(storage_class, substitution[pointee]);
            }
        } else if (storage_class == StorageClass::NodePayloadAMDX && used.count(id) != 0) {
            substitution[id] = types.GetPointer(StorageClass::PhysicalStorageBuffer, pointee);
        }
    }

    for (Function& function : module.mutable_functions()) {
        auto apply = [&substitution](Instruction& inst) {
            const std::uint32_t result = inst.result_id();
            inst.ForEachId([&substitution](std::uint32_t& id) {
                const auto it = substitution.find(id);
                if (it != substitution.end()) id = it->second;
            });
            inst.set_result_id(result);
        };
        for (Instruction& inst : function.header) apply(inst);
        for (BasicBlock& block : function.blocks) {
            for (Instruction& inst : block.instructions) apply(inst);
        }
    }

    std::unordered_set<std::uint32_t> buffer_pointers;
    // Per output record buffer: the last record index an allocation can own (OutputRecordLimit - 1).
    std::unordered_map<std::uint32_t, std::uint32_t> last_record_index;
    for (const auto& [array, pointer] : ctx_.payload_buffer_pointer) {
        buffer_pointers.insert(pointer);
        const auto output = ctx_.output_of_array_type.find(array);
        if (output != ctx_.output_of_array_type.end()) {
            last_record_index[pointer] = OutputRecordLimit(ctx_.info.outputs[output->second]) - 1;
        }
    }
    std::unordered_map<std::uint32_t, std::uint32_t> result_types = CollectResultTypes(module);
    auto type_of = [&result_types](std::uint32_t id) {
        const auto it = result_types.find(id);
        return it != result_types.end() ? it->second : 0u;
    };
    const std::uint32_t zero = types.GetConstantUint(0);
    // Record indices past the allocation's limit are undefined behaviour; clamping them to the last record keeps the
    // write inside the allocation, the trash region or the heap guard (issue "Robustness": never written outside scratch).
    auto clamp_record_index = [&](std::vector<Instruction>& out, std::uint32_t pointer_type, std::uint32_t index) {
        const auto last = last_record_index.find(pointer_type);
        if (last == last_record_index.end()) return index;
        const Instruction* def = module.FindDef(index);
        if (def != nullptr && def->opcode() == Op::OpConstant && def->OperandWordCount() >= 1 && def->Word(0) <= last->second) {
            return index;  // a constant in range (the usual case: a fixed record index)
        }
        const std::uint32_t index_type = type_of(index);
        const Instruction* type_def = module.FindDef(index_type);
        if (type_def == nullptr || type_def->opcode() != Op::OpTypeInt) return index;
        const std::uint32_t width = type_def->Word(0);
        // SPIR-V declares each integer type once, so the TypeManager's type of this width and signedness is index_type.
        const std::uint32_t last_constant =
            type_def->Word(1) != 0 ? types.GetConstantInt(last->second, width) : types.GetConstantUint(last->second, width);
        Instruction in_range(Op::OpULessThanEqual, ctx_.bool_type, module.TakeNextId());
        in_range.AddId(index).AddId(last_constant);
        Instruction select(Op::OpSelect, index_type, module.TakeNextId());
        select.AddId(in_range.result_id()).AddId(index).AddId(last_constant);
        const std::uint32_t clamped = select.result_id();
        out.push_back(std::move(in_range));
        out.push_back(std::move(select));
        return clamped;
    };

    // PayloadAlignments: the alignment known for each pointer value into payload records. Any value of a record buffer
    // pointer type starts an allocation (16-byte aligned in the heap, or the trash region, also 16-byte aligned). An
    // input record starts where its producer put it: at the start of an allocation, or as record i of one, i times
    // the producer's output stride. Producers' strides are the record size rounded up to their own record's alignment
    // (the link only checks that sizes match), and the one rounded to 4 has the fewest trailing zero bits of them all,
    // so its largest power of two (at most 16) holds for every producer. The entry pass gives each record 16 bytes.
    std::unordered_map<std::uint32_t, std::uint32_t> payload_alignment;
    const std::uint32_t input_record_pointer =
        ctx_.info.input_record.struct_type_id != 0 ? types.GetPointer(StorageClass::PhysicalStorageBuffer, ctx_.info.input_record.struct_type_id) : 0;
    const std::uint32_t input_record_alignment = AlignmentOf((ctx_.info.input_record.size + 3u) & ~3u);
    auto known_alignment = [&](std::uint32_t pointer, std::uint32_t pointer_type) -> std::uint32_t {
        if (const auto it = payload_alignment.find(pointer); it != payload_alignment.end()) return it->second;
        return buffer_pointers.count(pointer_type) != 0 ? offsets::kHeapAlignment : 0;
    };

    std::vector<std::uint32_t> pointer_variables;
    for (Function& function : module.mutable_functions()) {
        for (BasicBlock& block : function.blocks) {
            std::vector<Instruction> rewritten;
            rewritten.reserve(block.instructions.size());
            for (Instruction& inst : block.instructions) {
                const Op op = inst.opcode();
                if (op == Op::OpVariable) {
                    std::uint32_t pointee = 0;
                    StorageClass pointee_class{};
                    if (PointerInfo(module, inst.type_id(), nullptr, &pointee) && PointerInfo(module, pointee, &pointee_class, nullptr) &&
                        pointee_class == StorageClass::PhysicalStorageBuffer) {
                        pointer_variables.push_back(inst.result_id());
                    }
                } else if ((op == Op::OpAccessChain || op == Op::OpInBoundsAccessChain) && inst.OperandWordCount() >= 2) {
                    std::uint32_t base = inst.Word(0);
                    std::uint32_t base_type = type_of(base);
                    std::uint32_t pointee = 0;
                    StorageClass storage_class{};
                    if (PointerInfo(module, base_type, &storage_class, &pointee) && storage_class != StorageClass::PhysicalStorageBuffer &&
                        buffer_pointers.count(pointee) != 0) {
                        // DXC's Function-variable copy of an allocation: load the buffer pointer it holds.
                        Instruction load(Op::OpLoad, pointee, module.TakeNextId());
                        load.AddId(base);
                        base = load.result_id();
                        base_type = pointee;
                        rewritten.push_back(std::move(load));
                    }
                    if (buffer_pointers.count(base_type) != 0) {
                        const std::uint32_t record_index = clamp_record_index(rewritten, base_type, inst.Word(1));
                        Instruction chain(op, inst.type_id(), inst.result_id());
                        chain.AddId(base).AddId(zero).AddId(record_index);
                        for (std::size_t i = 2; i < inst.OperandWordCount(); ++i) chain.AddId(inst.Word(i));
                        inst = std::move(chain);
                    }
                    // DXC types chains into its Function-variable copy as Function pointers; they now point into the
                    // heap, and so does everything derived from them.
                    StorageClass base_class{};
                    StorageClass result_class{};
                    std::uint32_t result_pointee = 0;
                    std::uint32_t base_pointee = 0;
                    if (PointerInfo(module, base_type, &base_class, &base_pointee) && base_class == StorageClass::PhysicalStorageBuffer) {
                        if (PointerInfo(module, inst.type_id(), &result_class, &result_pointee) &&
                            result_class != StorageClass::PhysicalStorageBuffer) {
                            inst.set_type_id(types.GetPointer(StorageClass::PhysicalStorageBuffer, result_pointee));
                            result_types[inst.result_id()] = inst.type_id();
                        }
                        if (const std::uint32_t alignment = known_alignment(inst.Word(0), base_type); alignment != 0) {
                            if (const std::uint32_t chained = ChainAlignment(module, alignment, base_pointee, inst); chained != 0) {
                                payload_alignment[inst.result_id()] = chained;
                            }
                        }
                    }
                } else if (op == Op::OpPtrAccessChain || op == Op::OpInBoundsPtrAccessChain || op == Op::OpCopyMemory ||
                           op == Op::OpCopyMemorySized) {
                    StorageClass storage_class{};
                    for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) {
                        if (inst.IsIdOperand(i) && PointerInfo(module, type_of(inst.Word(i)), &storage_class, nullptr) &&
                            storage_class == StorageClass::PhysicalStorageBuffer) {
                            return Error{kNoWordOffset, std::string(OpcodeName(static_cast<std::uint32_t>(op))) +
                                                            " on a node payload is not supported"};
                        }
                    }
                } else if (op == Op::OpConvertUToPtr && input_record_pointer != 0 && inst.type_id() == input_record_pointer) {
                    payload_alignment[inst.result_id()] = input_record_alignment;  // LowerInputPass: a record's start
                } else if (op == Op::OpCopyObject && payload_alignment.count(inst.Word(0)) != 0) {
                    payload_alignment[inst.result_id()] = payload_alignment[inst.Word(0)];
                } else if (op == Op::OpLoad || op == Op::OpStore) {
                    const std::uint32_t pointer_type = type_of(inst.Word(0));
                    if (op == Op::OpLoad && pointer_type == inst.type_id() && buffer_pointers.count(pointer_type) != 0) {
                        // A by-value "load" of a payload array value is a copy of the buffer pointer.
                        Instruction copy(Op::OpCopyObject, inst.type_id(), inst.result_id());
                        copy.AddId(inst.Word(0));
                        inst = std::move(copy);
                    } else {
                        StorageClass storage_class{};
                        std::uint32_t pointee = 0;
                        if (PointerInfo(module, pointer_type, &storage_class, &pointee) && storage_class == StorageClass::PhysicalStorageBuffer) {
                            const std::uint32_t alignment = known_alignment(inst.Word(0), pointer_type);
                            EnsureAligned(inst, op == Op::OpLoad ? 1 : 2, alignment != 0 ? alignment : ScalarAlignment(module, pointee));
                        }
                    }
                }
                rewritten.push_back(std::move(inst));
            }
            block.instructions = std::move(rewritten);
            module.InvalidateIndexes();
        }
    }
    for (std::uint32_t var : pointer_variables) {
        Instruction decorate(Op::OpDecorate);
        decorate.AddId(var).AddEnum(OperandKind::Decoration, Decoration::AliasedPointer);
        module.Append(Section::kAnnotation, std::move(decorate));
    }
    return true;
}

}  // namespace execgraph::spirv::lowering
