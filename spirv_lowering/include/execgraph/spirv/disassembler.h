// SPDX-License-Identifier: Apache-2.0
// spirv-dis-like text for any module, AMDX included (bookworm's spirv-dis cannot decode AMDX).
#pragma once

#include <string>

#include "execgraph/spirv/module.h"

namespace execgraph::spirv {

// "; SPIR-V" header comments, then one instruction per line: `%id = OpName %type operands...`.
std::string Disassemble(const Module& module);
// One line, no newline.
std::string DisassembleInstruction(const Module& module, const Instruction& inst);

}  // namespace execgraph::spirv
