// SPDX-License-Identifier: Apache-2.0
// Removes debug information that has no semantic effect: OpSource*, OpName, OpMemberName, OpModuleProcessed,
// OpLine/OpNoLine, and OpStrings nothing else refers to (non-semantic debug-info instructions may reference
// strings, and they are kept along with those strings).
#pragma once

#include "execgraph/spirv/pass.h"

namespace execgraph::spirv {

class StripDebugInfoPass final : public Pass {
  public:
    const char* Name() const override { return "StripDebugInfo"; }
    Result<bool> Run(Module& module) override;
};

}  // namespace execgraph::spirv
