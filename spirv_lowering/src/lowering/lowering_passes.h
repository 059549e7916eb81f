// SPDX-License-Identifier: Apache-2.0
// The lowering passes, one per file, run by LowerNode in this order (each relies on the ones before it), after
// InlinePayloadFunctions (inline_payload_functions.cpp) has inlined the calls that pass payloads (DXC -Od):
//   1. SelectEntryPointPass        keep only the node's entry point and the functions it calls
//   2. ResolvePayloadAliasesPass   DXC's Function-variable copies of allocations become copies of the allocation value
//   3. RuntimeContextPass          PhysicalStorageBuffer64 addressing, push-constant scratch address, Private context
//   4. LaunchPass                  per-launch-kind prologue: record selection, early return, built-in remapping
//   5. LowerInputPass              input record accesses, OpNodePayloadArrayLengthAMDX on the input, finish-writing
//   6. LowerOutputsPass            allocations, enqueue, is-valid and array length of outputs
//   7. CoalesceRecordStoresPass    one-record allocations of 32 to 128 bytes kept in words, written transposed per subgroup
//   8. RewritePayloadPointersPass  NodePayloadAMDX pointers and payload-array values become PhysicalStorageBuffer
//   9. MemorySemanticsPass         OutputMemory -> UniformMemory
//  10. OneInvocationWorkgroupPass  a node whose other invocations have nothing to do runs workgroups of one invocation
//  11. LevelHandOffPass            entry wrapped: the last workgroup of a level prepares a direct next level
//  12. StripAmdxPass               AMDX capability/extension/modes/decorations/types removed, interface recomputed
#pragma once

#include "execgraph/spirv/pass.h"
#include "lowering/lowering_context.h"

namespace execgraph::spirv::lowering {

class LoweringPass : public Pass {
  public:
    explicit LoweringPass(LoweringContext& context) : ctx_(context) {}

  protected:
    LoweringContext& ctx_;
};

#define EXECGRAPH_LOWERING_PASS(ClassName, PassName)                    \
    class ClassName final : public LoweringPass {                       \
      public:                                                           \
        using LoweringPass::LoweringPass;                               \
        const char* Name() const override { return PassName; }          \
        Result<bool> Run(Module& module) override;                      \
    }

EXECGRAPH_LOWERING_PASS(SelectEntryPointPass, "SelectEntryPoint");
EXECGRAPH_LOWERING_PASS(ResolvePayloadAliasesPass, "ResolvePayloadAliases");
EXECGRAPH_LOWERING_PASS(RuntimeContextPass, "RuntimeContext");
EXECGRAPH_LOWERING_PASS(LaunchPass, "Launch");
EXECGRAPH_LOWERING_PASS(LowerInputPass, "LowerInput");
EXECGRAPH_LOWERING_PASS(LowerOutputsPass, "LowerOutputs");
EXECGRAPH_LOWERING_PASS(CoalesceRecordStoresPass, "CoalesceRecordStores");
EXECGRAPH_LOWERING_PASS(RewritePayloadPointersPass, "RewritePayloadPointers");
EXECGRAPH_LOWERING_PASS(MemorySemanticsPass, "MemorySemantics");
EXECGRAPH_LOWERING_PASS(OneInvocationWorkgroupPass, "OneInvocationWorkgroup");
EXECGRAPH_LOWERING_PASS(LevelHandOffPass, "LevelHandOff");
EXECGRAPH_LOWERING_PASS(StripAmdxPass, "StripAmdx");

#undef EXECGRAPH_LOWERING_PASS

}  // namespace execgraph::spirv::lowering
