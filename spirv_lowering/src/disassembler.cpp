// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/disassembler.h"

#include <cstdio>
#include <string>

#include "execgraph/spirv/constant_eval.h"

namespace execgraph::spirv {
namespace {

void AppendQuoted(std::string& out, const std::string& text) {
    out += '"';
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    out += '"';
}

void AppendEnum(std::string& out, OperandKind kind, std::uint32_t value) {
    const OperandKindInfo& info = GetOperandKindInfo(kind);
    if (info.category == OperandCategory::kValueEnum) {
        const std::string_view name = EnumerantName(kind, value);
        out += name.empty() ? std::to_string(value) : std::string(name);
        return;
    }
    // BitEnum: names joined with '|', unknown bits as hex, 0 as the "None" enumerant.
    if (value == 0) {
        const std::string_view none = EnumerantName(kind, 0);
        out += none.empty() ? "0" : std::string(none);
        return;
    }
    bool first = true;
    std::uint32_t unknown = 0;
    for (std::uint32_t bit = 0; bit < 32; ++bit) {
        const std::uint32_t mask = 1u << bit;
        if ((value & mask) == 0) continue;
        const std::string_view name = EnumerantName(kind, mask);
        if (name.empty()) {
            unknown |= mask;
            continue;
        }
        if (!first) out += '|';
        out += name;
        first = false;
    }
    if (unknown != 0) {
        char buffer[16];
        std::snprintf(buffer, sizeof(buffer), "0x%x", unknown);
        if (!first) out += '|';
        out += buffer;
    }
}

// Literal numbers of OpConstant/OpSpecConstant are printed according to their type, as spirv-dis does.
void AppendNumber(std::string& out, const Module& module, const Instruction& inst, std::size_t index) {
    std::uint64_t bits = inst.Word(index);
    std::uint32_t words = 1;
    if (index + 1 < inst.OperandWordCount() && inst.IsContinuation(index + 1)) {
        bits |= static_cast<std::uint64_t>(inst.Word(index + 1)) << 32;
        words = 2;
    }
    const Instruction* type = inst.type_id() != 0 ? module.FindDef(inst.type_id()) : nullptr;
    ScalarValue value;
    value.bits = bits;
    value.width = words * 32;
    if (type != nullptr && (type->opcode() == Op::OpTypeInt || type->opcode() == Op::OpTypeFloat)) {
        value.width = type->Word(0);
        value.kind = type->opcode() == Op::OpTypeFloat ? ScalarValue::Kind::kFloat
                     : type->Word(1) != 0              ? ScalarValue::Kind::kSigned
                                                       : ScalarValue::Kind::kUnsigned;
        if (value.width < 64) value.bits &= (1ull << value.width) - 1;
    }
    switch (value.kind) {
        case ScalarValue::Kind::kFloat: {
            char buffer[64];
            std::snprintf(buffer, sizeof(buffer), "%.9g", value.AsDouble());
            out += buffer;
            break;
        }
        case ScalarValue::Kind::kSigned:
            out += std::to_string(value.AsSigned());
            break;
        default:
            out += std::to_string(value.bits);
            break;
    }
}

}  // namespace

std::string DisassembleInstruction(const Module& module, const Instruction& inst) {
    std::string out;
    if (inst.result_id() != 0) out += "%" + std::to_string(inst.result_id()) + " = ";
    const std::string_view name = OpcodeName(static_cast<std::uint32_t>(inst.opcode()));
    out += name.empty() ? "Op" + std::to_string(static_cast<std::uint32_t>(inst.opcode())) : std::string(name);
    if (inst.type_id() != 0) out += " %" + std::to_string(inst.type_id());
    for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) {
        if (inst.IsContinuation(i)) continue;
        const OperandKind kind = inst.KindOf(i);
        out += ' ';
        const OperandCategory category = GetOperandKindInfo(kind).category;
        if (category == OperandCategory::kId) {
            out += "%" + std::to_string(inst.Word(i));
        } else if (category == OperandCategory::kValueEnum || category == OperandCategory::kBitEnum) {
            AppendEnum(out, kind, inst.Word(i));
        } else if (kind == OperandKind::LiteralString) {
            AppendQuoted(out, inst.StringAt(i));
        } else if (kind == OperandKind::LiteralContextDependentNumber) {
            AppendNumber(out, module, inst, i);
        } else if (kind == OperandKind::LiteralSpecConstantOpInteger) {
            const std::string_view op = OpcodeName(inst.Word(i));
            out += op.size() > 2 ? std::string(op.substr(2)) : std::to_string(inst.Word(i));  // spirv-dis drops the "Op"
        } else {
            std::uint64_t value = inst.Word(i);
            if (i + 1 < inst.OperandWordCount() && inst.IsContinuation(i + 1))
                value |= static_cast<std::uint64_t>(inst.Word(i + 1)) << 32;
            out += std::to_string(value);
        }
    }
    return out;
}

std::string Disassemble(const Module& module) {
    const ModuleHeader& header = module.header();
    std::string out;
    out += "; SPIR-V\n";
    out +=
        "; Version: " + std::to_string((header.version >> 16) & 0xffu) + "." + std::to_string((header.version >> 8) & 0xffu) + "\n";
    out +=
        "; Generator: vendor " + std::to_string(header.generator >> 16) + "; " + std::to_string(header.generator & 0xffffu) + "\n";
    out += "; Bound: " + std::to_string(header.bound) + "\n";
    out += "; Schema: " + std::to_string(header.schema) + "\n";
    module.ForEachInstruction([&](const Instruction& inst) {
        out += DisassembleInstruction(module, inst);
        out += '\n';
    });
    return out;
}

}  // namespace execgraph::spirv
