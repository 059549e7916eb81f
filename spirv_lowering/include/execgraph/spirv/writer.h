// SPDX-License-Identifier: Apache-2.0
// Module -> SPIR-V binary, by concatenating the header, the sections in layout order and the functions.
// For a module read by ReadModule and left unchanged the output equals the input word for word.
#pragma once

#include <cstdint>
#include <vector>

#include "execgraph/spirv/module.h"

namespace execgraph::spirv {

std::vector<std::uint32_t> WriteModule(const Module& module);

}  // namespace execgraph::spirv
