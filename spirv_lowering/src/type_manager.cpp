// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/type_manager.h"

#include <bit>

namespace execgraph::spirv {

TypeManager::TypeManager(Module& module) : module_(module) {
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (IsDeduplicated(inst.opcode())) known_.emplace(KeyOf(inst), inst.result_id());  // first declaration wins
    }
}

bool TypeManager::IsDeduplicated(Op opcode) {
    switch (opcode) {
        case Op::OpTypeVoid:
        case Op::OpTypeBool:
        case Op::OpTypeInt:
        case Op::OpTypeFloat:
        case Op::OpTypeVector:
        case Op::OpTypeMatrix:
        case Op::OpTypeArray:
        case Op::OpTypeRuntimeArray:
        case Op::OpTypePointer:
        case Op::OpTypeFunction:
        case Op::OpConstant:
        case Op::OpConstantTrue:
        case Op::OpConstantFalse:
        case Op::OpConstantComposite:
        case Op::OpConstantNull:
            return true;
        default:
            return false;  // structs, OpTypeNodePayloadArrayAMDX (duplicates are legal and meaningful), spec constants
    }
}

std::size_t TypeManager::KeyHash::operator()(const std::vector<std::uint32_t>& key) const {
    std::size_t hash = 1469598103934665603ull;
    for (std::uint32_t word : key) hash = (hash ^ word) * 1099511628211ull;
    return hash;
}

std::vector<std::uint32_t> TypeManager::KeyOf(const Instruction& inst) {
    std::vector<std::uint32_t> key;
    key.reserve(2 + inst.OperandWordCount());
    key.push_back(static_cast<std::uint32_t>(inst.opcode()));
    key.push_back(inst.type_id());
    for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) key.push_back(inst.Word(i));
    return key;
}

std::uint32_t TypeManager::FindType(Op opcode, std::span<const std::uint32_t> operand_words) const {
    std::vector<std::uint32_t> key{static_cast<std::uint32_t>(opcode), 0};
    key.insert(key.end(), operand_words.begin(), operand_words.end());
    const auto it = known_.find(key);
    return it != known_.end() ? it->second : 0;
}

std::uint32_t TypeManager::Add(Instruction prototype) {
    prototype.set_result_id(module_.TakeNextId());
    const std::uint32_t id = prototype.result_id();
    module_.Append(Section::kTypesValues, std::move(prototype));
    return id;
}

std::uint32_t TypeManager::FindOrAdd(Instruction prototype) {
    std::vector<std::uint32_t> key = KeyOf(prototype);
    if (const auto it = known_.find(key); it != known_.end()) return it->second;
    const std::uint32_t id = Add(std::move(prototype));
    known_.emplace(std::move(key), id);
    return id;
}

std::uint32_t TypeManager::GetVoid() { return FindOrAdd(Instruction(Op::OpTypeVoid)); }
std::uint32_t TypeManager::GetBool() { return FindOrAdd(Instruction(Op::OpTypeBool)); }

std::uint32_t TypeManager::GetInt(std::uint32_t width, bool is_signed) {
    return FindOrAdd(Instruction(Op::OpTypeInt).AddLiteral(width).AddLiteral(is_signed ? 1 : 0));
}

std::uint32_t TypeManager::GetFloat(std::uint32_t width) { return FindOrAdd(Instruction(Op::OpTypeFloat).AddLiteral(width)); }

std::uint32_t TypeManager::GetVector(std::uint32_t component_type, std::uint32_t count) {
    return FindOrAdd(Instruction(Op::OpTypeVector).AddId(component_type).AddLiteral(count));
}

std::uint32_t TypeManager::GetArray(std::uint32_t element_type, std::uint32_t length_constant_id) {
    return FindOrAdd(Instruction(Op::OpTypeArray).AddId(element_type).AddId(length_constant_id));
}

std::uint32_t TypeManager::GetRuntimeArray(std::uint32_t element_type) {
    return FindOrAdd(Instruction(Op::OpTypeRuntimeArray).AddId(element_type));
}

std::uint32_t TypeManager::GetPointer(StorageClass storage_class, std::uint32_t pointee_type) {
    return FindOrAdd(Instruction(Op::OpTypePointer).AddEnum(OperandKind::StorageClass, storage_class).AddId(pointee_type));
}

std::uint32_t TypeManager::GetFunction(std::uint32_t return_type, std::span<const std::uint32_t> parameter_types) {
    Instruction inst(Op::OpTypeFunction);
    inst.AddId(return_type);
    for (std::uint32_t parameter : parameter_types) inst.AddId(parameter);
    return FindOrAdd(std::move(inst));
}

std::uint32_t TypeManager::CreateStruct(std::span<const std::uint32_t> member_types) {
    Instruction inst(Op::OpTypeStruct);
    for (std::uint32_t member : member_types) inst.AddId(member);
    return Add(std::move(inst));
}

std::uint32_t TypeManager::CreateArray(std::uint32_t element_type, std::uint32_t length_constant_id) {
    return Add(Instruction(Op::OpTypeArray).AddId(element_type).AddId(length_constant_id));
}

std::uint32_t TypeManager::CreateRuntimeArray(std::uint32_t element_type) {
    return Add(Instruction(Op::OpTypeRuntimeArray).AddId(element_type));
}

std::uint32_t TypeManager::GetScalarConstant(std::uint32_t type, std::uint64_t bits, std::uint32_t width) {
    // Literal words are low-order first; widths <= 32 use one word, sign-extended for signed types
    // (spec §2.2.1 "Literal": "the high-order bits ... must be 0 for unsigned and sign-extended for signed").
    Instruction inst(Op::OpConstant, type);
    inst.AddWord(static_cast<std::uint32_t>(bits), OperandKind::LiteralContextDependentNumber);
    if (width > 32) inst.AddWord(static_cast<std::uint32_t>(bits >> 32), OperandKind::LiteralContextDependentNumber, true);
    return FindOrAdd(std::move(inst));
}

std::uint32_t TypeManager::GetConstantUint(std::uint64_t value, std::uint32_t width) {
    const std::uint64_t mask = width >= 64 ? ~0ull : (1ull << width) - 1;
    return GetScalarConstant(GetInt(width, false), value & mask, width);
}

std::uint32_t TypeManager::GetConstantInt(std::int64_t value, std::uint32_t width) {
    std::uint64_t bits = static_cast<std::uint64_t>(value);
    if (width < 32) {
        const std::uint64_t mask = (1ull << width) - 1;
        bits &= mask;
        if (value < 0) bits |= 0xffffffffull & ~mask;  // sign-extend into the 32-bit word
    } else if (width == 32) {
        bits &= 0xffffffffull;
    }
    return GetScalarConstant(GetInt(width, true), bits, width);
}

std::uint32_t TypeManager::GetConstantFloat(float value) {
    return GetScalarConstant(GetFloat(32), std::bit_cast<std::uint32_t>(value), 32);
}

std::uint32_t TypeManager::GetConstantBool(bool value) {
    return FindOrAdd(Instruction(value ? Op::OpConstantTrue : Op::OpConstantFalse, GetBool()));
}

std::uint32_t TypeManager::GetConstantComposite(std::uint32_t type, std::span<const std::uint32_t> constituents) {
    Instruction inst(Op::OpConstantComposite, type);
    for (std::uint32_t constituent : constituents) inst.AddId(constituent);
    return FindOrAdd(std::move(inst));
}

std::uint32_t TypeManager::GetConstantNull(std::uint32_t type) { return FindOrAdd(Instruction(Op::OpConstantNull, type)); }

}  // namespace execgraph::spirv
