// SPDX-License-Identifier: Apache-2.0
// Sizes of types under their explicit layout (Offset / ArrayStride / MatrixStride decorations, spec §2.16.2), e.g.
// payload record sizes. DXC lays records out with scalar rules and always decorates Offset (dxc-spirv-shapes.md §3.2).
#pragma once

#include <cstdint>

#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/module.h"
#include "execgraph/spirv/result.h"

namespace execgraph::spirv {

// Bytes covered by one value of `type_id`: scalars width/8, vectors tightly packed, arrays length * ArrayStride
// (element size when undecorated), matrices columns * MatrixStride or packed columns, structs max(Offset + size)
// over members (no tail padding), PhysicalStorageBuffer pointers 8. A trailing runtime array counts as 0 bytes.
// Booleans, opaque types and logical pointers have no explicit layout and yield an error.
Result<std::uint32_t> ExplicitLayoutSize(const Module& module, std::uint32_t type_id,
                                         const SpecializationMap* specialization = nullptr);

}  // namespace execgraph::spirv
