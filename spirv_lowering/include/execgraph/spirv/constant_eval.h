// SPDX-License-Identifier: Apache-2.0
// Evaluates scalar constants and specialization constants, e.g. the ids that AMDX execution modes and decorations
// take (StaticNumWorkgroupsAMDX, NodeMaxPayloadsAMDX: facts sheet §8.2-8.3), with optional specialization values.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "execgraph/spirv/module.h"
#include "execgraph/spirv/result.h"

namespace execgraph::spirv {

// SpecId -> value bits, as VkSpecializationInfo would supply them (low `width` bits are used; bools: non-zero = true).
using SpecializationMap = std::unordered_map<std::uint32_t, std::uint64_t>;

struct ScalarValue {
    enum class Kind : std::uint8_t { kBool, kSigned, kUnsigned, kFloat };
    Kind kind = Kind::kUnsigned;
    std::uint32_t width = 32;  // bits; 1 for bool
    std::uint64_t bits = 0;    // zero-extended raw bits

    std::uint64_t AsUnsigned() const { return bits; }
    std::int64_t AsSigned() const;  // sign-extended from `width`
    double AsDouble() const;        // for kFloat (16/32/64-bit)
};

// Handles OpConstant, OpConstantTrue/False, OpConstantNull (scalar), OpSpecConstant, OpSpecConstantTrue/False and
// integer/boolean OpSpecConstantOp (IAdd, ISub, IMul, UDiv, UMod, SDiv, shifts, bitwise, logical, comparisons,
// Select, SConvert/UConvert). `specialization` overrides the defaults of SpecId-decorated spec constants.
Result<ScalarValue> EvaluateScalarConstant(const Module& module, std::uint32_t id,
                                           const SpecializationMap* specialization = nullptr);

// Convenience: the value as uint32 (error if not an integer/bool or does not fit).
Result<std::uint32_t> EvaluateUint32(const Module& module, std::uint32_t id, const SpecializationMap* specialization = nullptr);

}  // namespace execgraph::spirv
