// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/layout.h"

#include <algorithm>
#include <string>

#include "execgraph/spirv/decorations.h"

namespace execgraph::spirv {
namespace {

constexpr int kMaxNesting = 64;

Error LayoutError(std::uint32_t type_id, const std::string& why) {
    return Error{kNoWordOffset, "type %" + std::to_string(type_id) + " has no explicit layout: " + why};
}

Result<std::uint64_t> Size(const Module& module, std::uint32_t type_id, std::optional<std::uint32_t> matrix_stride, bool row_major,
                           const SpecializationMap* spec, int depth);

Result<std::uint64_t> MatrixSize(const Module& module, const Instruction& type, std::optional<std::uint32_t> stride, bool row_major,
                                 const SpecializationMap* spec, int depth) {
    const Instruction* column = module.FindDef(type.Word(0));
    if (column == nullptr || column->opcode() != Op::OpTypeVector) return LayoutError(type.result_id(), "bad matrix column type");
    const std::uint64_t columns = type.Word(1);
    const std::uint64_t rows = column->Word(1);
    if (!stride) {
        Result<std::uint64_t> column_size = Size(module, column->result_id(), std::nullopt, false, spec, depth + 1);
        if (!column_size) return column_size;
        return columns * *column_size;
    }
    // Row-major: each stride step holds one row (spec §2.16.2 "MatrixStride").
    return (row_major ? rows : columns) * *stride;
}

Result<std::uint64_t> Size(const Module& module, std::uint32_t type_id, std::optional<std::uint32_t> matrix_stride, bool row_major,
                           const SpecializationMap* spec, int depth) {
    if (depth > kMaxNesting) return LayoutError(type_id, "nested too deeply");
    const Instruction* type = module.FindDef(type_id);
    if (type == nullptr) return LayoutError(type_id, "not defined");
    switch (type->opcode()) {
        case Op::OpTypeInt:
        case Op::OpTypeFloat:
            if (type->Word(0) % 8 != 0) return LayoutError(type_id, "width is not a whole number of bytes");
            return std::uint64_t{type->Word(0) / 8};
        case Op::OpTypeVector: {
            Result<std::uint64_t> component = Size(module, type->Word(0), std::nullopt, false, spec, depth + 1);
            if (!component) return component;
            return *component * type->Word(1);
        }
        case Op::OpTypeMatrix:
            return MatrixSize(module, *type, matrix_stride, row_major, spec, depth);
        case Op::OpTypeArray: {
            Result<std::uint32_t> length = EvaluateUint32(module, type->Word(1), spec);
            if (!length) return LayoutError(type_id, "array length: " + length.error().message);
            std::uint64_t stride;
            if (const std::optional<std::uint32_t> decorated = ArrayStrideOf(module, type_id)) {
                stride = *decorated;
            } else {
                Result<std::uint64_t> element = Size(module, type->Word(0), matrix_stride, row_major, spec, depth + 1);
                if (!element) return element;
                stride = *element;
            }
            return stride * *length;
        }
        case Op::OpTypeRuntimeArray:
            return std::uint64_t{0};
        case Op::OpTypeStruct: {
            std::uint64_t size = 0;
            for (std::uint32_t member = 0; member < type->OperandWordCount(); ++member) {
                const std::optional<std::uint32_t> offset = OffsetOf(module, type_id, member);
                if (!offset) return LayoutError(type_id, "member " + std::to_string(member) + " has no Offset decoration");
                const std::optional<std::uint32_t> stride =
                    MemberDecorationOperand(module, type_id, member, Decoration::MatrixStride);
                const bool member_row_major = FindMemberDecoration(module, type_id, member, Decoration::RowMajor) != nullptr;
                Result<std::uint64_t> member_size = Size(module, type->Word(member), stride, member_row_major, spec, depth + 1);
                if (!member_size) return member_size;
                size = std::max(size, *offset + *member_size);
            }
            return size;
        }
        case Op::OpTypePointer:
            if (type->Word(0) == static_cast<std::uint32_t>(StorageClass::PhysicalStorageBuffer)) return std::uint64_t{8};
            return LayoutError(type_id, "logical pointer");
        case Op::OpTypeBool:
            return LayoutError(type_id, "booleans have no defined size (DXC stores them as uint)");
        default:
            return LayoutError(type_id, std::string(OpcodeName(static_cast<std::uint32_t>(type->opcode()))) + " is opaque");
    }
}

}  // namespace

Result<std::uint32_t> ExplicitLayoutSize(const Module& module, std::uint32_t type_id, const SpecializationMap* specialization) {
    Result<std::uint64_t> size = Size(module, type_id, std::nullopt, false, specialization, 0);
    if (!size) return size.error();
    if (*size > 0xffffffffull) return LayoutError(type_id, "size exceeds 4 GiB");
    return static_cast<std::uint32_t>(*size);
}

}  // namespace execgraph::spirv
