// SPDX-License-Identifier: Apache-2.0
// Internal: rejects SPIR-V written against the 2023 (v1) revision of SPV_AMDX_shader_enqueue. Opcodes 5075/5090,
// storage class 5076 and built-in 5021 changed meaning in 2024 (facts sheet §8.5-8.6), so a v1 module read as v2
// would be silently mis-decoded. Signals, from most to least certain:
//   1. StorageClass 5076 anywhere a StorageClass operand appears (v1 NodeOutputPayloadAMDX; no v2 storage class has
//      that value, 5076 is now an opcode).
//   2. Opcode 5090 with word count 5: v1 OpInitializeNodePayloadsAMDX (4 ids, no result); v2
//      OpNodePayloadArrayLengthAMDX always has exactly 4 words.
//   3. Decoration PayloadNodeNameAMDX (5091) through OpDecorate/OpDecorateString/OpMemberDecorate*: v1 gave the node
//      name as a literal string, v2 as an id, which requires OpDecorateId.
//   4. NodeMaxPayloadsAMDX / NodeSharesPayloadLimitsWithAMDX / TrackFinishWritingAMDX decorating an OpVariable, or
//      NodeSharesPayloadLimitsWithAMDX naming a variable: v1 decorated payload variables, v2 decorates types.
//   5. BuiltIn 5021 in a module with an entry point using CoalescingAMDX, no MaxNodeRecursionAMDX anywhere and no
//      OpNodePayloadArrayLengthAMDX: the v1 CoalescedInputCountAMDX pattern. (A v2 RemainingRecursionLevelsAMDX read
//      is only meaningful with MaxNodeRecursionAMDX, and v2 coalescing nodes count inputs with opcode 5090.)
#pragma once

#include <cstdint>

#include "execgraph/spirv/module.h"
#include "execgraph/spirv/result.h"

namespace execgraph::spirv::internal {

Status CheckAmdx2023Opcode(std::uint32_t opcode, std::uint32_t word_count, std::uint32_t word_offset);
Status CheckAmdx2023Enumerant(Op op, OperandKind kind, std::uint32_t value, std::uint32_t word_offset);
Status CheckNotAmdx2023(const Module& module);

}  // namespace execgraph::spirv::internal
