// SPDX-License-Identifier: Apache-2.0
#include "operand_decoder.h"

#include <string_view>

#include "amdx_revision.h"

namespace execgraph::spirv::internal {
namespace {

// Extended instruction sets whose operands are all <id>s. GLSL.std.450 and the SPV_AMD_* sets define only id
// operands; non-semantic sets must use only ids (SPV_KHR_non_semantic_info). Others (OpenCL.std, OpenCL.DebugInfo.100)
// mix in literals, so their operand words are kept as opaque literals.
bool ExtInstSetUsesOnlyIds(std::string_view name) {
    return name == "GLSL.std.450" || name.starts_with("NonSemantic.") || name.starts_with("SPV_AMD_");
}

}  // namespace

OperandDecoder::OperandDecoder(std::span<const std::uint32_t> words, std::uint32_t bound) : words_(words), bound_(bound) {
    ids_.Reset(bound, words.size() / 2);
}

Error OperandDecoder::MakeError(std::uint32_t word_index, std::string message) const {
    return Error{offset_ + word_index, OpName() + ": " + std::move(message)};
}

std::string OperandDecoder::OpName() const {
    const std::string_view name = OpcodeName(opcode_);
    return name.empty() ? "opcode " + std::to_string(opcode_) : std::string(name);
}

Result<Instruction> OperandDecoder::Decode(std::uint32_t offset) {
    offset_ = offset;
    inst_words_ = words_.data() + offset;
    end_ = inst_words_[0] >> 16;
    opcode_ = inst_words_[0] & 0xffffu;
    pos_ = 1;
    number_words_ = 1;

    // Checked before the grammar: the 2023 OpInitializeNodePayloadsAMDX reused opcode 5090 with 4 id operands and
    // no result (facts sheet §8.6), so it would otherwise surface as a confusing operand-count error.
    if (Status status = CheckAmdx2023Opcode(opcode_, end_, offset_); !status) return status.error();

    const OpcodeInfo* info = FindOpcodeInfo(opcode_);
    if (info == nullptr) return Error{offset, "unknown opcode " + std::to_string(opcode_)};

    Instruction inst(static_cast<Op>(opcode_));
    inst.set_source_offset(offset);
    out_ = &inst;

    if (info->has_result_type) {
        if (pos_ >= end_) return MakeError(pos_, "missing result type id (instruction too short)");
        const std::uint32_t type_id = inst_words_[pos_];
        if (type_id == 0 || type_id >= bound_) {
            return MakeError(
                pos_, "result type id " + std::to_string(type_id) + " is out of bounds (bound " + std::to_string(bound_) + ")");
        }
        if (ids_.Find(type_id) == nullptr) forward_uses_.emplace_back(type_id, offset_ + pos_);
        inst.set_type_id(type_id);
        ++pos_;
    }
    std::uint32_t result_id = 0;
    if (info->has_result) {
        if (pos_ >= end_) return MakeError(pos_, "missing result id (instruction too short)");
        result_id = inst_words_[pos_];
        if (result_id == 0 || result_id >= bound_) {
            return MakeError(pos_,
                             "result id " + std::to_string(result_id) + " is out of bounds (bound " + std::to_string(bound_) + ")");
        }
        if (ids_.Find(result_id) != nullptr) return MakeError(pos_, "id " + std::to_string(result_id) + " is defined twice");
        inst.set_result_id(result_id);
        ++pos_;
    }

    Status status;
    const Op op = static_cast<Op>(opcode_);
    if (op == Op::OpConstant || op == Op::OpSpecConstant) {
        Result<std::uint32_t> words = NumberWordsOfType(inst.type_id(), "result type");
        if (!words) return words.error();
        number_words_ = *words;
    }
    if (op == Op::OpExtInst) {
        status = DecodeExtInstOperands();
    } else if (op == Op::OpSpecConstantOp) {
        status = DecodeSpecConstantOp();
    } else {
        status = DecodeOperands(OperandsOf(*info));
    }
    if (!status) return status.error();
    if (pos_ != end_) {
        return MakeError(pos_, std::to_string(end_ - pos_) + " unexpected word(s) after the last operand (word count " +
                                   std::to_string(end_) + ")");
    }

    if (result_id != 0) {
        IdInfo& id_info = ids_[result_id];
        id_info.opcode = static_cast<std::uint16_t>(opcode_);
        id_info.type_id = inst.type_id();
        if ((op == Op::OpTypeInt || op == Op::OpTypeFloat) && inst.OperandWordCount() > 0) {
            id_info.width = static_cast<std::uint16_t>(inst.Word(0) > 0xffffu ? 0xffffu : inst.Word(0));
        }
        if (op == Op::OpExtInstImport) ext_inst_sets_[result_id] = ExtInstSetUsesOnlyIds(inst.StringAt(0));
    }
    out_ = nullptr;
    return inst;
}

Status OperandDecoder::DecodeOperands(std::span<const OperandDesc> descs) {
    for (const OperandDesc& desc : descs) {
        switch (desc.quantifier) {
            case Quantifier::kOne:
                if (pos_ >= end_) {
                    return MakeError(pos_, std::string("missing ") + GetOperandKindInfo(desc.kind).name + " operand (word count " +
                                               std::to_string(end_) + " is too small)");
                }
                if (Status status = DecodeOne(desc.kind); !status) return status;
                break;
            case Quantifier::kOptional:
                if (pos_ < end_) {
                    if (Status status = DecodeOne(desc.kind); !status) return status;
                }
                break;
            case Quantifier::kVariadic:
                while (pos_ < end_) {
                    if (Status status = DecodeOne(desc.kind); !status) return status;
                }
                break;
        }
    }
    return {};
}

Status OperandDecoder::DecodeOne(OperandKind kind) {
    switch (GetOperandKindInfo(kind).category) {
        case OperandCategory::kId:
            return DecodeId(kind);
        case OperandCategory::kValueEnum:
        case OperandCategory::kBitEnum:
            return DecodeEnum(kind);
        case OperandCategory::kLiteral:
            if (kind == OperandKind::LiteralString) return DecodeString();
            if (kind == OperandKind::LiteralContextDependentNumber) return DecodeLiteralWords(kind, number_words_);
            return DecodeLiteralWords(kind, 1);
        case OperandCategory::kComposite:
            break;
    }
    switch (kind) {
        case OperandKind::PairLiteralIntegerIdRef: {
            // OpSwitch: the literal is as wide as the selector's type (spec OpSwitch).
            if (out_->OperandWordCount() == 0) return MakeError(pos_, "OpSwitch target before its selector");
            const IdInfo* selector = ids_.Find(out_->Word(0));
            if (selector == nullptr) return MakeError(1, "selector must be defined before the OpSwitch");
            Result<std::uint32_t> words = NumberWordsOfType(selector->type_id, "selector type");
            if (!words) return words.status();
            if (Status status = DecodeLiteralWords(OperandKind::LiteralInteger, *words); !status) return status;
            if (pos_ >= end_) return MakeError(pos_, "OpSwitch case literal without a target label");
            return DecodeId(OperandKind::IdRef);
        }
        case OperandKind::PairIdRefLiteralInteger:
            if (Status status = DecodeId(OperandKind::IdRef); !status) return status;
            if (pos_ >= end_) return MakeError(pos_, "missing literal of an (id, literal) pair");
            return DecodeLiteralWords(OperandKind::LiteralInteger, 1);
        case OperandKind::PairIdRefIdRef:
            if (Status status = DecodeId(OperandKind::IdRef); !status) return status;
            if (pos_ >= end_) return MakeError(pos_, "missing second id of an (id, id) pair");
            return DecodeId(OperandKind::IdRef);
        default:
            return MakeError(pos_, std::string("unsupported composite operand kind ") + GetOperandKindInfo(kind).name);
    }
}

Status OperandDecoder::DecodeId(OperandKind kind) {
    const std::uint32_t id = inst_words_[pos_];
    if (id == 0 || id >= bound_) {
        return MakeError(pos_, "id " + std::to_string(id) + " is out of bounds (bound " + std::to_string(bound_) + ")");
    }
    if (ids_.Find(id) == nullptr) forward_uses_.emplace_back(id, offset_ + pos_);
    out_->AddWord(id, kind);
    ++pos_;
    return {};
}

Status OperandDecoder::DecodeLiteralWords(OperandKind kind, std::uint32_t count) {
    if (end_ - pos_ < count) {
        return MakeError(pos_, std::to_string(count) + "-word literal runs past the end of the instruction");
    }
    for (std::uint32_t i = 0; i < count; ++i) out_->AddWord(inst_words_[pos_ + i], kind, i != 0);
    pos_ += count;
    return {};
}

Status OperandDecoder::DecodeString() {
    // A literal string ends with a NUL byte inside the instruction (spec §2.2.1).
    for (std::uint32_t i = pos_; i < end_; ++i) {
        const std::uint32_t word = inst_words_[i];
        if ((word & 0xffu) == 0 || (word & 0xff00u) == 0 || (word & 0xff0000u) == 0 || (word & 0xff000000u) == 0) {
            return DecodeLiteralWords(OperandKind::LiteralString, i - pos_ + 1);
        }
    }
    return MakeError(pos_, "unterminated string (no NUL byte before the end of the instruction)");
}

Status OperandDecoder::DecodeEnum(OperandKind kind) {
    const std::uint32_t value = inst_words_[pos_];
    if (Status status = CheckAmdx2023Enumerant(static_cast<Op>(opcode_), kind, value, offset_ + pos_); !status) return status;
    out_->AddWord(value, kind);
    const std::uint32_t value_pos = pos_;
    ++pos_;
    const bool must_know = KindHasParameterizedEnumerants(kind);
    const char* kind_name = GetOperandKindInfo(kind).name;
    if (GetOperandKindInfo(kind).category == OperandCategory::kValueEnum) {
        const EnumerantInfo* enumerant = FindEnumerant(kind, value);
        if (enumerant == nullptr) {
            // Unknown values are harmless unless the kind has enumerants with extra operands: then the operand
            // count of the rest of the instruction cannot be known.
            if (must_know) return MakeError(value_pos, std::string("unknown ") + kind_name + " " + std::to_string(value));
            return {};
        }
        return DecodeOperands(ParametersOf(*enumerant));
    }
    // BitEnum: the parameters of each set bit follow in order of increasing bit (spec §2.2.1 "mask operands").
    for (std::uint32_t bit = 0; bit < 32; ++bit) {
        const std::uint32_t mask = 1u << bit;
        if ((value & mask) == 0) continue;
        const EnumerantInfo* enumerant = FindEnumerant(kind, mask);
        if (enumerant == nullptr) {
            if (must_know) return MakeError(value_pos, std::string("unknown ") + kind_name + " bit " + std::to_string(bit));
            continue;
        }
        if (Status status = DecodeOperands(ParametersOf(*enumerant)); !status) return status;
    }
    return {};
}

Status OperandDecoder::DecodeExtInstOperands() {
    if (end_ - pos_ < 2) return MakeError(pos_, "missing set id or instruction number");
    const std::uint32_t set = inst_words_[pos_];
    if (Status status = DecodeId(OperandKind::IdRef); !status) return status;
    const auto it = ext_inst_sets_.find(set);
    if (it == ext_inst_sets_.end()) return MakeError(pos_ - 1, "set id " + std::to_string(set) + " is not an OpExtInstImport");
    if (Status status = DecodeLiteralWords(OperandKind::LiteralExtInstInteger, 1); !status) return status;
    while (pos_ < end_) {
        Status status = it->second ? DecodeId(OperandKind::IdRef) : DecodeLiteralWords(OperandKind::LiteralInteger, 1);
        if (!status) return status;
    }
    return {};
}

Status OperandDecoder::DecodeSpecConstantOp() {
    // The operands that follow are those of the named opcode, minus its result type and id (spec OpSpecConstantOp).
    if (pos_ >= end_) return MakeError(pos_, "missing the opcode operand");
    const std::uint32_t embedded = inst_words_[pos_];
    const OpcodeInfo* info = FindOpcodeInfo(embedded);
    if (info == nullptr) return MakeError(pos_, "unknown opcode " + std::to_string(embedded) + " in OpSpecConstantOp");
    if (Status status = DecodeLiteralWords(OperandKind::LiteralSpecConstantOpInteger, 1); !status) return status;
    return DecodeOperands(OperandsOf(*info));
}

Result<std::uint32_t> OperandDecoder::NumberWordsOfType(std::uint32_t type_id, const char* what) {
    const IdInfo* type = ids_.Find(type_id);
    const bool numeric = type != nullptr && (type->opcode == static_cast<std::uint16_t>(Op::OpTypeInt) ||
                                             type->opcode == static_cast<std::uint16_t>(Op::OpTypeFloat));
    if (!numeric)
        return MakeError(1,
                         std::string(what) + " %" + std::to_string(type_id) + " is not a previously defined integer or float type");
    if (type->width == 0 || type->width > 64) return MakeError(1, "unsupported literal width " + std::to_string(type->width));
    return type->width > 32 ? 2u : 1u;
}

Status OperandDecoder::CheckAllReferencedIdsDefined() const {
    for (const auto& [id, offset] : forward_uses_) {
        if (ids_.Find(id) == nullptr) return Error{offset, "id " + std::to_string(id) + " is used but never defined"};
    }
    return {};
}

}  // namespace execgraph::spirv::internal
