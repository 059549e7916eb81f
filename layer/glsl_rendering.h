// A GLSL rendering of a lowered node module, for people reading shader dumps (the `dump_shaders_path` setting).
// SPIRV-Cross (Debian's libspirv-cross-c-shared) does the work: it cannot read AMDX, but a lowered module is plain
// Vulkan 1.3 compute SPIR-V, which it can.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace execgraph {

// GLSL 4.60 with Vulkan semantics for the GLCompute entry point `entry_point` of `words`. On failure returns nullopt
// and sets *error to SPIRV-Cross's reason; never throws.
std::optional<std::string> RenderGlsl(std::span<const uint32_t> words, const std::string& entry_point, std::string* error);

}  // namespace execgraph
