// SPDX-License-Identifier: Apache-2.0
// SPIR-V binary -> Module. Accepts SPIR-V 1.0-1.6 including every SPV_AMDX_shader_enqueue (2024 revision) instruction
// and enumerant. Malformed input yields an Error naming the word offset and the reason; 2023-revision AMDX modules
// are rejected by name (see amdx_revision.h for the signals used).
#pragma once

#include <cstdint>
#include <span>

#include "execgraph/spirv/module.h"
#include "execgraph/spirv/result.h"

namespace execgraph::spirv {

// `words` must be in host byte order or in the opposite order (detected from the magic number and swapped).
Result<Module> ReadModule(std::span<const std::uint32_t> words);
// Same, from raw bytes (e.g. a .spv file); the size must be a multiple of 4.
Result<Module> ReadModuleBytes(std::span<const std::uint8_t> bytes);

}  // namespace execgraph::spirv
