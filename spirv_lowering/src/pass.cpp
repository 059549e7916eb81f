// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/pass.h"

#include <string>

namespace execgraph::spirv {

Result<bool> PassManager::Run(Module& module) const {
    bool modified = false;
    for (const std::unique_ptr<Pass>& pass : passes_) {
        Result<bool> result = pass->Run(module);
        if (!result) {
            Error error = result.error();
            error.message = std::string(pass->Name()) + ": " + error.message;
            return error;
        }
        modified |= *result;
    }
    return modified;
}

}  // namespace execgraph::spirv
