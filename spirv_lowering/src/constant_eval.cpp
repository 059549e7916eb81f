// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/constant_eval.h"

#include <bit>
#include <cstring>
#include <string>

#include "execgraph/spirv/decorations.h"

namespace execgraph::spirv {
namespace {

constexpr int kMaxDepth = 64;  // OpSpecConstantOp chains; deeper is treated as malformed (cycles are invalid SPIR-V)

std::uint64_t Mask(std::uint32_t width) { return width >= 64 ? ~0ull : ((1ull << width) - 1); }

Error At(const Instruction& inst, std::string message) { return Error{inst.source_offset(), std::move(message)}; }

Result<ScalarValue> TypeShape(const Module& module, std::uint32_t type_id) {
    const Instruction* type = module.FindDef(type_id);
    if (type == nullptr) return Error{kNoWordOffset, "type %" + std::to_string(type_id) + " is not defined"};
    ScalarValue shape;
    switch (type->opcode()) {
        case Op::OpTypeBool:
            shape.kind = ScalarValue::Kind::kBool;
            shape.width = 1;
            return shape;
        case Op::OpTypeInt:
            shape.width = type->Word(0);
            shape.kind = type->Word(1) != 0 ? ScalarValue::Kind::kSigned : ScalarValue::Kind::kUnsigned;
            break;
        case Op::OpTypeFloat:
            shape.width = type->Word(0);
            shape.kind = ScalarValue::Kind::kFloat;
            break;
        default:
            return At(*type, "type %" + std::to_string(type_id) + " is not a scalar type");
    }
    if (shape.width == 0 || shape.width > 64) return At(*type, "unsupported scalar width " + std::to_string(shape.width));
    return shape;
}

Result<ScalarValue> Evaluate(const Module& module, std::uint32_t id, const SpecializationMap* spec, int depth);

Result<ScalarValue> EvaluateSpecOp(const Module& module, const Instruction& inst, ScalarValue result, const SpecializationMap* spec,
                                   int depth) {
    const Op op = static_cast<Op>(inst.Word(0));
    ScalarValue operands[3];
    const std::size_t count = inst.OperandWordCount() - 1;
    if (count == 0 || count > 3) return At(inst, "unsupported OpSpecConstantOp operand count");
    for (std::size_t i = 0; i < count; ++i) {
        if (!inst.IsIdOperand(i + 1)) return At(inst, "unsupported OpSpecConstantOp with literal operands");
        Result<ScalarValue> value = Evaluate(module, inst.Word(i + 1), spec, depth + 1);
        if (!value) return value.error();
        if (value->kind == ScalarValue::Kind::kFloat) return At(inst, "floating-point OpSpecConstantOp is not supported");
        operands[i] = *value;
    }
    const std::uint64_t a = operands[0].bits;
    const std::uint64_t b = operands[1].bits;
    const std::int64_t sa = operands[0].AsSigned();
    const std::int64_t sb = operands[1].AsSigned();
    std::uint64_t r = 0;
    switch (op) {
        case Op::OpIAdd:
            r = a + b;
            break;
        case Op::OpISub:
            r = a - b;
            break;
        case Op::OpIMul:
            r = a * b;
            break;
        case Op::OpUDiv:
        case Op::OpUMod:
        case Op::OpSDiv:
            if (b == 0) return At(inst, "division by zero in OpSpecConstantOp");
            r = op == Op::OpUDiv ? a / b : op == Op::OpUMod ? a % b : static_cast<std::uint64_t>(sa / sb);
            break;
        case Op::OpShiftLeftLogical:
            r = b >= 64 ? 0 : a << b;
            break;
        case Op::OpShiftRightLogical:
            r = b >= 64 ? 0 : a >> b;
            break;
        case Op::OpShiftRightArithmetic:
            r = static_cast<std::uint64_t>(b >= 63 ? (sa < 0 ? -1 : 0) : sa >> b);
            break;
        case Op::OpBitwiseAnd:
        case Op::OpLogicalAnd:
            r = a & b;
            break;
        case Op::OpBitwiseOr:
        case Op::OpLogicalOr:
            r = a | b;
            break;
        case Op::OpBitwiseXor:
        case Op::OpLogicalNotEqual:
            r = a ^ b;
            break;
        case Op::OpLogicalEqual:
            r = a == b;
            break;
        case Op::OpNot:
            r = ~a;
            break;
        case Op::OpLogicalNot:
            r = a == 0;
            break;
        case Op::OpSNegate:
            r = static_cast<std::uint64_t>(-sa);
            break;
        case Op::OpIEqual:
            r = a == b;
            break;
        case Op::OpINotEqual:
            r = a != b;
            break;
        case Op::OpULessThan:
            r = a < b;
            break;
        case Op::OpUGreaterThan:
            r = a > b;
            break;
        case Op::OpULessThanEqual:
            r = a <= b;
            break;
        case Op::OpUGreaterThanEqual:
            r = a >= b;
            break;
        case Op::OpSLessThan:
            r = sa < sb;
            break;
        case Op::OpSGreaterThan:
            r = sa > sb;
            break;
        case Op::OpSLessThanEqual:
            r = sa <= sb;
            break;
        case Op::OpSGreaterThanEqual:
            r = sa >= sb;
            break;
        case Op::OpSelect:
            r = a != 0 ? b : operands[2].bits;
            break;
        case Op::OpUConvert:
            r = a;
            break;
        case Op::OpSConvert:
            r = static_cast<std::uint64_t>(sa);
            break;
        default:
            return At(inst, "unsupported OpSpecConstantOp opcode " + std::string(OpcodeName(static_cast<std::uint32_t>(op))));
    }
    result.bits = r & Mask(result.width);
    return result;
}

Result<ScalarValue> Evaluate(const Module& module, std::uint32_t id, const SpecializationMap* spec, int depth) {
    if (depth > kMaxDepth) return Error{kNoWordOffset, "constant expression nested too deeply"};
    const Instruction* inst = module.FindDef(id);
    if (inst == nullptr) return Error{kNoWordOffset, "id %" + std::to_string(id) + " is not defined"};
    Result<ScalarValue> shape = TypeShape(module, inst->type_id());
    if (!shape) return shape.error();
    ScalarValue value = *shape;
    std::optional<std::uint64_t> override_bits;
    if (spec != nullptr) {
        if (const std::optional<std::uint32_t> spec_id = SpecIdOf(module, id)) {
            if (const auto it = spec->find(*spec_id); it != spec->end()) override_bits = it->second;
        }
    }
    switch (inst->opcode()) {
        case Op::OpConstantTrue:
        case Op::OpConstantFalse:
            value.bits = inst->opcode() == Op::OpConstantTrue;
            return value;
        case Op::OpSpecConstantTrue:
        case Op::OpSpecConstantFalse:
            value.bits = override_bits ? (*override_bits != 0) : inst->opcode() == Op::OpSpecConstantTrue;
            return value;
        case Op::OpConstantNull:
            value.bits = 0;
            return value;
        case Op::OpConstant:
        case Op::OpSpecConstant: {
            // Literal words are low-order first (spec §2.2.1).
            std::uint64_t bits = inst->Word(0);
            if (inst->OperandWordCount() > 1) bits |= static_cast<std::uint64_t>(inst->Word(1)) << 32;
            if (inst->opcode() == Op::OpSpecConstant && override_bits) bits = *override_bits;
            value.bits = bits & Mask(value.width);
            return value;
        }
        case Op::OpSpecConstantOp:
            return EvaluateSpecOp(module, *inst, value, spec, depth);
        default:
            return At(*inst, "id %" + std::to_string(id) + " (" +
                                 std::string(OpcodeName(static_cast<std::uint32_t>(inst->opcode()))) +
                                 ") is not a scalar constant");
    }
}

}  // namespace

std::int64_t ScalarValue::AsSigned() const {
    if (width >= 64) return static_cast<std::int64_t>(bits);
    const std::uint64_t sign = 1ull << (width - 1);
    return static_cast<std::int64_t>((bits ^ sign) - sign);
}

double ScalarValue::AsDouble() const {
    if (width == 64) return std::bit_cast<double>(bits);
    if (width == 32) return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    if (width == 16) {
        // IEEE binary16 -> double.
        const std::uint32_t sign = (bits >> 15) & 1u;
        const std::uint32_t exponent = (bits >> 10) & 0x1fu;
        const std::uint32_t mantissa = bits & 0x3ffu;
        double magnitude;
        if (exponent == 0) {
            magnitude = static_cast<double>(mantissa) / 1024.0 / 16384.0;
        } else if (exponent == 31) {
            magnitude = mantissa == 0 ? __builtin_inf() : __builtin_nan("");
        } else {
            magnitude = (1.0 + static_cast<double>(mantissa) / 1024.0) * static_cast<double>(1ull << exponent) / 32768.0;
        }
        return sign != 0 ? -magnitude : magnitude;
    }
    return 0.0;
}

Result<ScalarValue> EvaluateScalarConstant(const Module& module, std::uint32_t id, const SpecializationMap* specialization) {
    return Evaluate(module, id, specialization, 0);
}

Result<std::uint32_t> EvaluateUint32(const Module& module, std::uint32_t id, const SpecializationMap* specialization) {
    Result<ScalarValue> value = EvaluateScalarConstant(module, id, specialization);
    if (!value) return value.error();
    if (value->kind == ScalarValue::Kind::kFloat) return Error{kNoWordOffset, "id %" + std::to_string(id) + " is a float constant"};
    if (value->kind == ScalarValue::Kind::kSigned && value->AsSigned() < 0) {
        return Error{kNoWordOffset, "id %" + std::to_string(id) + " is negative"};
    }
    if (value->bits > 0xffffffffull) return Error{kNoWordOffset, "id %" + std::to_string(id) + " does not fit in 32 bits"};
    return static_cast<std::uint32_t>(value->bits);
}

}  // namespace execgraph::spirv
