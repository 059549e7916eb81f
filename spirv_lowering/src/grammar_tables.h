// SPDX-License-Identifier: Apache-2.0
// Internal: the tables generated into grammar_tables.cpp; grammar.cpp is their only reader.
#pragma once

#include <cstddef>
#include <cstdint>

#include "execgraph/spirv/grammar.h"

namespace execgraph::spirv::internal {

extern const OperandDesc kOperandDescs[];
extern const EnumerantInfo kEnumerants[];
extern const std::size_t kEnumerantCount;
extern const OperandKindInfo kOperandKindInfos[];
extern const OpcodeInfo kOpcodeInfos[];
extern const std::size_t kOpcodeInfoCount;
extern const std::uint16_t kOpcodeIndex[kMaxKnownOpcode + 1];

}  // namespace execgraph::spirv::internal
