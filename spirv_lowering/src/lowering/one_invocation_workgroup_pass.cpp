// SPDX-License-Identifier: Apache-2.0
// A node whose other invocations have nothing to do (LoweringContext::only_invocation_0_runs_node_code: nothing they
// would run can be observed, LowerOutputsPass) runs as workgroups of one invocation: the lowered module's LocalSize
// becomes 1 x 1 x 1, and each of the node's workgroups is one invocation that runs invocation 0's code.
//
// Why: the other invocations only took up room. A GPU keeps a fixed number of threads and of workgroups resident per
// multiprocessor (2048 and 32 on an H200), so 256-invocation workgroups of which one invocation works overlap eight
// chains of dependent loads and atomics per multiprocessor, one-invocation workgroups 32: the classify level of the
// 10240x5760 classification went from 276 to 201 µs (docs/performance.md, 2026-11-27 late session). A CPU device runs
// every group of 8 lanes through a workgroup's branches with the lanes masked off (lavapipe), so there the idle
// invocations cost as much as the working one (`classify_8` at smoke size: 1322 → 730 µs).
//
// What invocation 0 can observe stays the same: LocalInvocationId, LocalInvocationIndex, SubgroupId and the subgroup
// masks are those of invocation 0 either way, its subgroup operations inside `if (index == 0)` saw only itself
// before too, and GlobalInvocationId comes from the prologue, which computes it with the node's declared size
// (LaunchPass). Only the NumSubgroups built-in and a WorkgroupSize built-in constant (which overrides LocalSize) would
// tell; a module that declares either keeps its workgroup.
#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {

Result<bool> OneInvocationWorkgroupPass::Run(Module& module) {
    if (!ctx_.only_invocation_0_runs_node_code) return false;
    for (const Instruction& inst : module.section(Section::kAnnotation)) {
        if (inst.opcode() != Op::OpDecorate || inst.Word(1) != static_cast<std::uint32_t>(Decoration::BuiltIn)) continue;
        const auto builtin = static_cast<BuiltIn>(inst.Word(2));
        if (builtin == BuiltIn::WorkgroupSize || builtin == BuiltIn::NumSubgroups) return false;
    }
    SetLoweredLocalSize(module, ctx_, {1, 1, 1});
    return true;
}

}  // namespace execgraph::spirv::lowering
