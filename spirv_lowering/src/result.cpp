// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/result.h"

namespace execgraph::spirv {

std::string Error::ToString() const {
    if (word_offset == kNoWordOffset) return message;
    return "word " + std::to_string(word_offset) + ": " + message;
}

}  // namespace execgraph::spirv
