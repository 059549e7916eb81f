// SPDX-License-Identifier: Apache-2.0
// Internal: where each opcode may appear in the logical layout (spec §2.4 "Logical Layout of a Module").
#pragma once

#include <string>

#include "execgraph/spirv/module.h"

namespace execgraph::spirv::internal {

enum class PlacementKind {
    kModuleSection,    // only in `section` (types and constants: only in kTypesValues)
    kTypesOrFunction,  // OpVariable, OpUndef, OpLine, OpNoLine, OpExtInst: types/values section or inside functions
    kFunctionOnly,
};

struct Placement {
    PlacementKind kind;
    Section section;
};

Placement PlacementOf(Op op);
std::string SectionName(Section section);

}  // namespace execgraph::spirv::internal
