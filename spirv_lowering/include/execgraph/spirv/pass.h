// SPDX-License-Identifier: Apache-2.0
// Pass infrastructure: each rewriting step is one Pass (one per file under passes/), and a PassManager runs them in
// the fixed order they were added (style guide §3.4: analysis first, mutation only when needed, fixed order).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "execgraph/spirv/module.h"
#include "execgraph/spirv/result.h"

namespace execgraph::spirv {

class Pass {
  public:
    virtual ~Pass() = default;
    virtual const char* Name() const = 0;
    // Returns whether the module was modified, or an error (the module may then be partially rewritten).
    virtual Result<bool> Run(Module& module) = 0;
};

class PassManager {
  public:
    void AddPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
    template <typename P, typename... Args>
    P& Add(Args&&... args) {
        auto pass = std::make_unique<P>(std::forward<Args>(args)...);
        P& ref = *pass;
        passes_.push_back(std::move(pass));
        return ref;
    }
    std::size_t size() const { return passes_.size(); }

    // Runs every pass in order; stops at the first error, whose message is prefixed with the pass name.
    // Returns whether any pass modified the module.
    Result<bool> Run(Module& module) const;

  private:
    std::vector<std::unique_ptr<Pass>> passes_;
};

}  // namespace execgraph::spirv
