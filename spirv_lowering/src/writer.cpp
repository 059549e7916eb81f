// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/writer.h"

namespace execgraph::spirv {

std::vector<std::uint32_t> WriteModule(const Module& module) {
    std::vector<std::uint32_t> out;
    out.reserve(5 + module.InstructionCount() * 4);
    const ModuleHeader& header = module.header();
    out.insert(out.end(), {header.magic, header.version, header.generator, header.bound, header.schema});
    module.ForEachInstruction([&out](const Instruction& inst) { inst.AppendTo(out); });
    return out;
}

}  // namespace execgraph::spirv
