// What one AMDX node shader is, as extracted by AnalyzeNode(): everything the lowering, the pipeline linker and the
// scheduler need. Plain data; no Vulkan dependency.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/module.h"
#include "execgraph/spirv/result.h"

namespace execgraph::spirv {

// SPV_AMDX_shader_enqueue launch modes (facts §12.5, dxc-spirv-shapes §3.3).
enum class LaunchKind : uint32_t {
    kBroadcastStatic = 0,   // StaticNumWorkgroupsAMDX: every record launches the same grid
    kBroadcastDynamic = 1,  // grid read from the PayloadDispatchIndirectAMDX member of each record
    kCoalescing = 2,        // CoalescingAMDX: 1..NodeMaxPayloadsAMDX records per workgroup
    kThread = 3,            // CoalescingAMDX with LocalSize 1 1 1: one record per invocation
};

// OpAllocateNodePayloadsAMDX Visibility (an id of a Scope constant: Workgroup = 2, Invocation = 4).
enum class AllocationScope : uint32_t { kWorkgroup = 2, kInvocation = 4 };

// The PayloadDispatchIndirectAMDX member: uint, uint2, uint3, uint[3] or a 16-bit vector, at any offset, possibly nested.
struct DispatchGridMember {
    uint32_t byte_offset = 0;       // from the start of the record
    uint32_t component_count = 3;   // 1, 2 or 3; missing components are 1
    uint32_t component_bits = 32;   // 16 or 32 (8 is legal too)
};

struct RecordLayout {
    uint32_t size = 0;       // explicit-layout size in bytes (Offset/ArrayStride), 0 for empty records
    uint32_t alignment = 4;  // largest scalar alignment in the record (at least 4)
    uint32_t struct_type_id = 0;
    bool track_finish_writing = false;  // TrackFinishWritingAMDX on the record struct
};

struct NodeOutputInfo {
    uint32_t payload_array_type_id = 0;  // the OpTypeNodePayloadArrayAMDX (duplicates of one shape are separate outputs)
    std::string name;                    // PayloadNodeNameAMDX string, after specialization
    uint32_t base_index = 0;             // PayloadNodeBaseIndexAMDX, default 0
    std::optional<uint32_t> array_size;  // PayloadNodeArraySizeAMDX
    bool sparse = false;                 // PayloadNodeSparseArrayAMDX
    uint32_t max_payloads = 1;           // NodeMaxPayloadsAMDX
    std::optional<uint32_t> shares_payload_limits_with;  // index into NodeInfo::outputs
    RecordLayout record;
    bool allocated_with_runtime_index = false;  // some allocation's Node Index operand is not a constant
    bool allocated_at_workgroup_scope = false;
    bool allocated_at_invocation_scope = false;

    bool unbounded() const { return sparse && !array_size; }
};

struct NodeInfo {
    std::string entry_point_name;
    uint32_t entry_point_id = 0;
    LaunchKind launch = LaunchKind::kBroadcastStatic;
    std::array<uint32_t, 3> local_size{1, 1, 1};           // LocalSize or LocalSizeId, after specialization
    std::optional<std::array<uint32_t, 3>> static_grid;     // StaticNumWorkgroupsAMDX
    std::optional<std::array<uint32_t, 3>> max_grid;        // MaxNumWorkgroupsAMDX
    std::optional<DispatchGridMember> dispatch_grid;        // kBroadcastDynamic only
    std::optional<uint32_t> max_recursion;                  // MaxNodeRecursionAMDX
    std::optional<uint32_t> shader_index;                   // ShaderIndexAMDX execution mode
    bool is_api_entry = true;                               // IsApiEntryAMDX (default true; DXC never emits it)
    std::optional<std::string> shares_input_with_name;      // SharesInputWithAMDX
    uint32_t shares_input_with_index = 0;

    uint32_t input_variable_id = 0;  // the NodePayloadAMDX input variable, 0 when the node declares no input
    RecordLayout input_record;       // with no declared input: empty for static/coalescing, {uvec3 grid} otherwise
    uint32_t input_max_payloads = 1;  // NodeMaxPayloadsAMDX of the input array (coalescing batch size)

    std::vector<NodeOutputInfo> outputs;

    bool uses_finish_writing = false;              // OpFinishWritingNodePayloadAMDX
    bool uses_payload_array_length = false;        // OpNodePayloadArrayLengthAMDX
    bool uses_is_payload_valid = false;            // OpIsNodePayloadValidAMDX
    bool uses_remaining_recursion_levels = false;  // BuiltIn RemainingRecursionLevelsAMDX
    bool uses_shader_index_builtin = false;        // BuiltIn ShaderIndexAMDX
    bool uses_workgroup_barrier = false;           // OpControlBarrier with Workgroup execution scope
    bool uses_workgroup_memory = false;            // Workgroup-storage variables
    bool uses_output_memory_semantics = false;     // OutputMemory (0x1000) in any memory semantics
};

// Extracts the node facts of one entry point. `specialization` resolves spec constants in AMDX operands (may be null:
// spec constants then take their defaults). Fails with a clear reason for unsupported nodes (MeshEXT entry points,
// 2023-revision modules, malformed AMDX).
Result<NodeInfo> AnalyzeNode(const Module& module, std::string_view entry_point_name, const SpecializationMap* specialization);

}  // namespace execgraph::spirv
