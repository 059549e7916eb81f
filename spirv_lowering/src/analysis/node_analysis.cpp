// SPDX-License-Identifier: Apache-2.0
// AnalyzeNode(): extracts the node facts of one AMDX entry point (SPV_AMDX_shader_enqueue, 2024 revision).
//
// Inputs are DXC-shaped modules (dxc-spirv-shapes.md §3.2): duplicate OpTypeNodePayloadArrayAMDX types (one per output),
// string constants defined after the type whose OpDecorateId names them, spec constants in AMDX operands, Function-variable
// aliases of allocations, OpIsNodePayloadValidAMDX on the output object, -Od wrappers and several entry points per module
// (lib_6_8). Only functions reachable from the entry point through OpFunctionCall contribute instructions.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/decorations.h"
#include "execgraph/spirv/layout.h"
#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/node_info.h"

namespace execgraph::spirv {
namespace {

constexpr int kMaxTypeNesting = 64;
// OutputMemory memory-semantics bit (facts §8 / dxc-spirv-shapes §3.2 "Barriers": NODE_OUTPUT_MEMORY -> 0x1000).
constexpr std::uint32_t kOutputMemorySemantics = 0x1000u;

std::string IdText(std::uint32_t id) { return "%" + std::to_string(id); }

// Context shared by the helpers: names the entry point in every message so callers linking many stages can tell them apart.
struct Analyzer {
    const Module& module;
    const SpecializationMap* spec;
    std::string entry_name;

    Error Fail(const std::string& message) const { return Error{kNoWordOffset, "node '" + entry_name + "': " + message}; }

    // Every AMDX mode/decoration operand is an IdRef to a constant or spec constant (facts §8.2, §8.3).
    Result<std::uint32_t> Constant(std::uint32_t id, std::string_view what) const {
        Result<std::uint32_t> value = EvaluateUint32(module, id, spec);
        if (!value) return Fail(std::string(what) + " operand " + IdText(id) + " is not a constant: " + value.error().message);
        return value;
    }

    Result<std::array<std::uint32_t, 3>> Constant3(const Instruction& mode, std::size_t first, std::string_view what) const {
        if (mode.OperandWordCount() < first + 3) return Fail(std::string(what) + " needs three operands");
        std::array<std::uint32_t, 3> values{};
        for (std::size_t i = 0; i < 3; ++i) {
            Result<std::uint32_t> value = Constant(mode.Word(first + i), what);
            if (!value) return value.error();
            values[i] = *value;
        }
        return values;
    }

    // PayloadNodeNameAMDX / SharesInputWithAMDX name an OpConstantStringAMDX or OpSpecConstantStringAMDX (facts §8.4).
    // VkSpecializationInfo cannot override a string, so the spec-constant string keeps its default.
    Result<std::string> String(std::uint32_t id, std::string_view what) const {
        const Instruction* def = module.FindDef(id);
        if (def == nullptr) return Fail(std::string(what) + " operand " + IdText(id) + " is not defined");
        if (def->opcode() != Op::OpConstantStringAMDX && def->opcode() != Op::OpSpecConstantStringAMDX) {
            return Fail(std::string(what) + " operand " + IdText(id) + " is not an OpConstantStringAMDX (it is " +
                        std::string(OpcodeName(static_cast<std::uint32_t>(def->opcode()))) + ")");
        }
        if (def->OperandWordCount() == 0) return std::string();
        return def->StringAt(0);
    }

    // The pointee of a pointer type, or 0.
    std::uint32_t Pointee(std::uint32_t pointer_type_id) const {
        const Instruction* type = module.FindDef(pointer_type_id);
        if (type == nullptr || type->opcode() != Op::OpTypePointer || type->OperandWordCount() < 2) return 0;
        return type->Word(1);
    }

    bool IsPayloadArrayType(std::uint32_t id) const {
        const Instruction* def = module.FindDef(id);
        return def != nullptr && def->opcode() == Op::OpTypeNodePayloadArrayAMDX;
    }

    // Largest scalar alignment inside a record type; records are laid out with scalar rules (dxc-spirv-shapes §3.2).
    Result<std::uint32_t> ScalarAlignment(std::uint32_t type_id, int depth) const {
        if (depth > kMaxTypeNesting) return Fail("record type " + IdText(type_id) + " is nested too deeply");
        const Instruction* type = module.FindDef(type_id);
        if (type == nullptr) return Fail("record type " + IdText(type_id) + " is not defined");
        switch (type->opcode()) {
            case Op::OpTypeInt:
            case Op::OpTypeFloat:
                return std::max<std::uint32_t>(1, type->Word(0) / 8);
            case Op::OpTypeVector:
            case Op::OpTypeMatrix:
            case Op::OpTypeArray:
            case Op::OpTypeRuntimeArray:
                return ScalarAlignment(type->Word(0), depth + 1);
            case Op::OpTypePointer:
                return 8u;  // PhysicalStorageBuffer pointers are 64-bit
            case Op::OpTypeStruct: {
                std::uint32_t alignment = 1;
                for (std::size_t i = 0; i < type->OperandWordCount(); ++i) {
                    Result<std::uint32_t> member = ScalarAlignment(type->Word(i), depth + 1);
                    if (!member) return member;
                    alignment = std::max(alignment, *member);
                }
                return alignment;
            }
            default:
                return Fail("record type " + IdText(type_id) + " (" +
                            std::string(OpcodeName(static_cast<std::uint32_t>(type->opcode()))) + ") has no explicit layout");
        }
    }

    Result<RecordLayout> Layout(std::uint32_t record_type_id) const {
        RecordLayout layout;
        layout.struct_type_id = record_type_id;
        Result<std::uint32_t> size = ExplicitLayoutSize(module, record_type_id, spec);
        if (!size) return Fail("payload record " + IdText(record_type_id) + ": " + size.error().message);
        layout.size = *size;
        Result<std::uint32_t> alignment = ScalarAlignment(record_type_id, 0);
        if (!alignment) return alignment.error();
        layout.alignment = std::max<std::uint32_t>(4, *alignment);
        layout.track_finish_writing = HasDecoration(module, record_type_id, Decoration::TrackFinishWritingAMDX);
        return layout;
    }

    // Finds the PayloadDispatchIndirectAMDX member anywhere inside `type_id` (facts §12.5: "Its Offset, wherever it is"),
    // accumulating Offset decorations of the enclosing structs. Arrays contribute their first element (offset + 0).
    Result<std::optional<std::pair<std::uint32_t, std::uint32_t>>> FindGridMember(std::uint32_t type_id, std::uint32_t base,
                                                                                  int depth) const {
        using Found = std::optional<std::pair<std::uint32_t, std::uint32_t>>;
        if (depth > kMaxTypeNesting) return Fail("record type " + IdText(type_id) + " is nested too deeply");
        const Instruction* type = module.FindDef(type_id);
        if (type == nullptr) return Found();
        if (type->opcode() == Op::OpTypeArray) return FindGridMember(type->Word(0), base, depth + 1);
        if (type->opcode() != Op::OpTypeStruct) return Found();
        for (std::uint32_t member = 0; member < type->OperandWordCount(); ++member) {
            const bool is_grid = FindMemberDecoration(module, type_id, member, Decoration::PayloadDispatchIndirectAMDX) != nullptr;
            const std::optional<std::uint32_t> offset = OffsetOf(module, type_id, member);
            if (is_grid) {
                if (!offset)
                    return Fail("the PayloadDispatchIndirectAMDX member " + std::to_string(member) + " of " + IdText(type_id) +
                                " has no Offset");
                return Found(std::make_pair(base + *offset, type->Word(member)));
            }
            if (!offset) continue;  // cannot hold a usable grid without a layout; ExplicitLayoutSize reports the record
            Result<Found> nested = FindGridMember(type->Word(member), base + *offset, depth + 1);
            if (!nested) return nested;
            if (nested->has_value()) return nested;
        }
        return Found();
    }

    // The grid member must be an unsigned integer of at most 32 bits, or a 2-/3-component vector of one (facts §12.5).
    // DXC also emits uint[3] (dxc-spirv-shapes §3.2); it is accepted when tightly packed, which scalar layout gives.
    Result<DispatchGridMember> ClassifyGridMember(std::uint32_t offset, std::uint32_t type_id) const {
        DispatchGridMember grid;
        grid.byte_offset = offset;
        const Instruction* type = module.FindDef(type_id);
        std::uint32_t scalar_id = type_id;
        grid.component_count = 1;
        const std::string what = "the PayloadDispatchIndirectAMDX member (type " + IdText(type_id) + ")";
        if (type != nullptr && type->opcode() == Op::OpTypeVector) {
            scalar_id = type->Word(0);
            grid.component_count = type->Word(1);
        } else if (type != nullptr && type->opcode() == Op::OpTypeArray) {
            scalar_id = type->Word(0);
            Result<std::uint32_t> length = Constant(type->Word(1), "array length of " + what);
            if (!length) return length.error();
            grid.component_count = *length;
        }
        const Instruction* scalar = module.FindDef(scalar_id);
        if (scalar == nullptr || scalar->opcode() != Op::OpTypeInt || scalar->Word(1) != 0 || scalar->Word(0) > 32 ||
            scalar->Word(0) % 8 != 0) {
            return Fail(what +
                        " has an unsupported type: expected an unsigned integer of 8, 16 or 32 bits, a vector of 2 or 3 "
                        "of them, or an array of up to 3");
        }
        if (grid.component_count < 1 || grid.component_count > 3) {
            return Fail(what + " has an unsupported type: " + std::to_string(grid.component_count) +
                        " components (1 to 3 allowed)");
        }
        grid.component_bits = scalar->Word(0);
        if (type != nullptr && type->opcode() == Op::OpTypeArray) {
            const std::optional<std::uint32_t> stride = ArrayStrideOf(module, type_id);
            if (stride && *stride != grid.component_bits / 8) {
                return Fail(what + " has an unsupported type: array stride " + std::to_string(*stride) + " is not tightly packed");
            }
        }
        return grid;
    }
};

struct EntryPointRef {
    const Instruction* inst = nullptr;
    ExecutionModel model = ExecutionModel::GLCompute;
    std::string name;
    std::vector<std::uint32_t> interface_ids;
};

std::vector<EntryPointRef> EntryPoints(const Module& module) {
    std::vector<EntryPointRef> entries;
    for (const Instruction& inst : module.section(Section::kEntryPoint)) {
        if (inst.opcode() != Op::OpEntryPoint || inst.OperandWordCount() < 3) continue;
        EntryPointRef ref;
        ref.inst = &inst;
        ref.model = static_cast<ExecutionModel>(inst.Word(0));
        ref.name = inst.StringAt(2);
        for (std::size_t i = 2 + inst.StringWordCount(2); i < inst.OperandWordCount(); ++i)
            ref.interface_ids.push_back(inst.Word(i));
        entries.push_back(std::move(ref));
    }
    return entries;
}

std::string ModelName(ExecutionModel model) {
    const std::string_view name = EnumerantName(OperandKind::ExecutionModel, static_cast<std::uint32_t>(model));
    return name.empty() ? "execution model " + std::to_string(static_cast<std::uint32_t>(model)) : std::string(name);
}

// Functions reachable from `entry_id` through OpFunctionCall, the entry point first.
std::vector<const Function*> ReachableFunctions(const Module& module, std::uint32_t entry_id) {
    std::unordered_map<std::uint32_t, const Function*> by_id;
    for (const Function& function : module.functions()) by_id.emplace(function.result_id(), &function);
    std::vector<const Function*> order;
    std::unordered_set<std::uint32_t> seen{entry_id};
    std::vector<std::uint32_t> pending{entry_id};
    while (!pending.empty()) {
        const std::uint32_t id = pending.back();
        pending.pop_back();
        const auto it = by_id.find(id);
        if (it == by_id.end()) continue;
        order.push_back(it->second);
        for (const BasicBlock& block : it->second->blocks) {
            for (const Instruction& inst : block.instructions) {
                if (inst.opcode() == Op::OpFunctionCall && inst.OperandWordCount() > 0 && seen.insert(inst.Word(0)).second) {
                    pending.push_back(inst.Word(0));
                }
            }
        }
    }
    return order;
}

template <typename Fn>
void ForEachReachableInstruction(const std::vector<const Function*>& functions, Fn&& fn) {
    for (const Function* function : functions) {
        for (const Instruction& inst : function->header) fn(inst);
        for (const BasicBlock& block : function->blocks) {
            for (const Instruction& inst : block.instructions) fn(inst);
        }
    }
}

// Local size: a WorkgroupSize built-in constant overrides LocalSize/LocalSizeId (SPIR-V spec, BuiltIn WorkgroupSize).
Result<std::optional<std::array<std::uint32_t, 3>>> WorkgroupSizeBuiltIn(const Analyzer& a) {
    for (const Instruction& inst : a.module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpConstantComposite && inst.opcode() != Op::OpSpecConstantComposite) continue;
        if (BuiltInOf(a.module, inst.result_id()) != BuiltIn::WorkgroupSize) continue;
        if (inst.OperandWordCount() < 3) return a.Fail("the WorkgroupSize constant needs three components");
        std::array<std::uint32_t, 3> size{};
        for (std::size_t i = 0; i < 3; ++i) {
            Result<std::uint32_t> value = a.Constant(inst.Word(i), "WorkgroupSize");
            if (!value) return value.error();
            size[i] = *value;
        }
        return std::optional<std::array<std::uint32_t, 3>>(size);
    }
    return std::optional<std::array<std::uint32_t, 3>>();
}

struct ModeFacts {
    bool coalescing = false;
    bool static_grid = false;
};

Result<ModeFacts> ReadExecutionModes(const Analyzer& a, std::uint32_t entry_id, NodeInfo& info) {
    ModeFacts facts;
    for (const Instruction& inst : a.module.section(Section::kExecutionMode)) {
        if ((inst.opcode() != Op::OpExecutionMode && inst.opcode() != Op::OpExecutionModeId) || inst.OperandWordCount() < 2 ||
            inst.Word(0) != entry_id) {
            continue;
        }
        switch (static_cast<ExecutionMode>(inst.Word(1))) {
            case ExecutionMode::LocalSize:
                if (inst.OperandWordCount() < 5) return a.Fail("LocalSize needs three operands");
                info.local_size = {inst.Word(2), inst.Word(3), inst.Word(4)};
                break;
            case ExecutionMode::LocalSizeId: {
                Result<std::array<std::uint32_t, 3>> size = a.Constant3(inst, 2, "LocalSizeId");
                if (!size) return size.error();
                info.local_size = *size;
                break;
            }
            case ExecutionMode::CoalescingAMDX:
                facts.coalescing = true;
                break;
            case ExecutionMode::StaticNumWorkgroupsAMDX: {
                Result<std::array<std::uint32_t, 3>> grid = a.Constant3(inst, 2, "StaticNumWorkgroupsAMDX");
                if (!grid) return grid.error();
                info.static_grid = *grid;
                facts.static_grid = true;
                break;
            }
            case ExecutionMode::MaxNumWorkgroupsAMDX: {
                Result<std::array<std::uint32_t, 3>> grid = a.Constant3(inst, 2, "MaxNumWorkgroupsAMDX");
                if (!grid) return grid.error();
                info.max_grid = *grid;
                break;
            }
            case ExecutionMode::MaxNodeRecursionAMDX: {
                if (inst.OperandWordCount() < 3) return a.Fail("MaxNodeRecursionAMDX needs an operand");
                Result<std::uint32_t> depth = a.Constant(inst.Word(2), "MaxNodeRecursionAMDX");
                if (!depth) return depth.error();
                info.max_recursion = *depth;
                break;
            }
            case ExecutionMode::ShaderIndexAMDX: {
                if (inst.OperandWordCount() < 3) return a.Fail("ShaderIndexAMDX needs an operand");
                Result<std::uint32_t> index = a.Constant(inst.Word(2), "ShaderIndexAMDX");
                if (!index) return index.error();
                info.shader_index = *index;
                break;
            }
            case ExecutionMode::IsApiEntryAMDX: {
                if (inst.OperandWordCount() < 3) return a.Fail("IsApiEntryAMDX needs an operand");
                Result<ScalarValue> value = EvaluateScalarConstant(a.module, inst.Word(2), a.spec);
                if (!value)
                    return a.Fail("IsApiEntryAMDX operand " + IdText(inst.Word(2)) +
                                  " is not a constant: " + value.error().message);
                info.is_api_entry = value->bits != 0;
                break;
            }
            case ExecutionMode::SharesInputWithAMDX: {
                if (inst.OperandWordCount() < 4) return a.Fail("SharesInputWithAMDX needs two operands");
                Result<std::string> name = a.String(inst.Word(2), "SharesInputWithAMDX");
                if (!name) return name.error();
                Result<std::uint32_t> index = a.Constant(inst.Word(3), "SharesInputWithAMDX index");
                if (!index) return index.error();
                info.shares_input_with_name = *std::move(name);
                info.shares_input_with_index = *index;
                break;
            }
            default:
                break;
        }
    }
    return facts;
}

Status AnalyzeInput(const Analyzer& a, const EntryPointRef& entry, const std::unordered_set<std::uint32_t>& used_ids,
                    const ModeFacts& modes, NodeInfo& info) {
    // The input is the module-scope NodePayloadAMDX variable this entry point uses: listed in its interface (SPIR-V 1.4+)
    // or referenced from its call tree. Other entry points' inputs in a lib_6_8 module are not ours.
    std::vector<std::uint32_t> inputs;
    std::vector<std::uint32_t> declared;
    const std::unordered_set<std::uint32_t> interface_ids(entry.interface_ids.begin(), entry.interface_ids.end());
    for (const Instruction& inst : a.module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpVariable || inst.OperandWordCount() < 1 ||
            inst.Word(0) != static_cast<std::uint32_t>(StorageClass::NodePayloadAMDX)) {
            continue;
        }
        declared.push_back(inst.result_id());
        if (interface_ids.count(inst.result_id()) != 0 || used_ids.count(inst.result_id()) != 0) inputs.push_back(inst.result_id());
    }
    // A node that never reads its record still declares it, and SPIR-V 1.4+ only lists *referenced* globals in the
    // interface (AMD's classify_material_map_*_fe/_de keep such an unlisted input). The declaration still fixes the
    // payload layout the sender must match (facts §12.5), so a single-entry-point module's lone variable is the input.
    if (inputs.empty() && declared.size() == 1 && a.module.section(Section::kEntryPoint).size() == 1) inputs = declared;
    if (inputs.size() > 1) {
        std::string list;
        for (std::uint32_t id : inputs) list += (list.empty() ? "" : ", ") + IdText(id);
        return a.Fail("declares " + std::to_string(inputs.size()) + " NodePayloadAMDX input variables (" + list +
                      "); a node has at most one input");
    }

    if (inputs.empty()) {
        // No declared input (facts §12.5): Static/Coalescing nodes get an empty payload, dynamic ones a {uvec3} record with
        // the grid at offset 0.
        info.input_record = RecordLayout{};
        if (!modes.static_grid && !modes.coalescing) {
            info.input_record.size = 12;
            info.dispatch_grid = DispatchGridMember{0, 3, 32};
        }
        return Status();
    }

    info.input_variable_id = inputs.front();
    const Instruction* variable = a.module.FindDef(info.input_variable_id);
    const std::uint32_t array_type = a.Pointee(variable->type_id());
    if (!a.IsPayloadArrayType(array_type)) {
        return a.Fail("input variable " + IdText(info.input_variable_id) + " does not point to an OpTypeNodePayloadArrayAMDX");
    }
    const std::uint32_t record_type = a.module.FindDef(array_type)->Word(0);
    Result<RecordLayout> layout = a.Layout(record_type);
    if (!layout) return layout.error();
    info.input_record = *layout;

    if (const std::optional<std::uint32_t> max = DecorationOperand(a.module, array_type, Decoration::NodeMaxPayloadsAMDX)) {
        Result<std::uint32_t> value = a.Constant(*max, "input NodeMaxPayloadsAMDX");
        if (!value) return value.error();
        info.input_max_payloads = *value;
    } else if (modes.coalescing) {
        // Facts §12.5 "Coalescing": the input must be decorated NodeMaxPayloadsAMDX (the batch size).
        return a.Fail("coalescing input payload array " + IdText(array_type) + " lacks NodeMaxPayloadsAMDX");
    }

    if (!modes.static_grid && !modes.coalescing) {
        // Dynamic broadcast: the record must carry the grid (facts §12.5). Static nodes ignore such a member
        // (dxc-spirv-shapes §3.3: "Any SV_DispatchGrid member in T is ignored").
        Result<std::optional<std::pair<std::uint32_t, std::uint32_t>>> member = a.FindGridMember(record_type, 0, 0);
        if (!member) return member.error();
        if (!member->has_value()) {
            return a.Fail("dynamic-grid node (no StaticNumWorkgroupsAMDX or CoalescingAMDX): input record " + IdText(record_type) +
                          " has no member decorated PayloadDispatchIndirectAMDX");
        }
        Result<DispatchGridMember> grid = a.ClassifyGridMember((*member)->first, (*member)->second);
        if (!grid) return grid.error();
        const std::uint32_t end = grid->byte_offset + grid->component_count * grid->component_bits / 8;
        if (end > info.input_record.size) {
            return a.Fail("the PayloadDispatchIndirectAMDX member ends at byte " + std::to_string(end) + ", past the record size " +
                          std::to_string(info.input_record.size));
        }
        info.dispatch_grid = *grid;
    }
    return Status();
}

Result<NodeOutputInfo> DescribeOutput(const Analyzer& a, std::uint32_t array_type) {
    NodeOutputInfo output;
    output.payload_array_type_id = array_type;
    const std::optional<std::uint32_t> name = DecorationOperand(a.module, array_type, Decoration::PayloadNodeNameAMDX);
    if (!name) return a.Fail("output payload array " + IdText(array_type) + " lacks PayloadNodeNameAMDX");
    Result<std::string> text = a.String(*name, "PayloadNodeNameAMDX");
    if (!text) return text.error();
    output.name = *std::move(text);
    if (const std::optional<std::uint32_t> base = DecorationOperand(a.module, array_type, Decoration::PayloadNodeBaseIndexAMDX)) {
        Result<std::uint32_t> value = a.Constant(*base, "PayloadNodeBaseIndexAMDX");
        if (!value) return value.error();
        output.base_index = *value;
    }
    if (const std::optional<std::uint32_t> size = DecorationOperand(a.module, array_type, Decoration::PayloadNodeArraySizeAMDX)) {
        Result<std::uint32_t> value = a.Constant(*size, "PayloadNodeArraySizeAMDX");
        if (!value) return value.error();
        output.array_size = *value;
    }
    output.sparse = HasDecoration(a.module, array_type, Decoration::PayloadNodeSparseArrayAMDX);
    // DXC always emits NodeMaxPayloadsAMDX (MaxRecords, default 1: dxc-spirv-shapes §3.2); 1 when absent.
    if (const std::optional<std::uint32_t> max = DecorationOperand(a.module, array_type, Decoration::NodeMaxPayloadsAMDX)) {
        Result<std::uint32_t> value = a.Constant(*max, "output NodeMaxPayloadsAMDX");
        if (!value) return value.error();
        output.max_payloads = *value;
    }
    Result<RecordLayout> layout = a.Layout(a.module.FindDef(array_type)->Word(0));
    if (!layout) return layout.error();
    output.record = *layout;
    return output;
}

Status AnalyzeOutputs(const Analyzer& a, const std::vector<const Function*>& functions, NodeInfo& info) {
    // Outputs are the payload array types behind the result pointer type of each allocation; a duplicate array type of
    // the same shape is a separate output (dxc-spirv-shapes §3.2 "Duplicate OpTypeNodePayloadArrayAMDX").
    struct Use {
        bool workgroup = false;
        bool invocation = false;
        bool runtime_index = false;
    };
    std::unordered_map<std::uint32_t, Use> uses;
    Status status;
    ForEachReachableInstruction(functions, [&](const Instruction& inst) {
        if (!status.ok() || inst.opcode() != Op::OpAllocateNodePayloadsAMDX) return;
        const std::uint32_t array_type = a.Pointee(inst.type_id());
        if (!a.IsPayloadArrayType(array_type)) {
            status = a.Fail("OpAllocateNodePayloadsAMDX " + IdText(inst.result_id()) +
                            " does not return a pointer to an OpTypeNodePayloadArrayAMDX");
            return;
        }
        if (inst.OperandWordCount() < 3) {
            status = a.Fail("OpAllocateNodePayloadsAMDX " + IdText(inst.result_id()) + " needs three operands");
            return;
        }
        Use& use = uses[array_type];
        Result<std::uint32_t> scope = a.Constant(inst.Word(0), "OpAllocateNodePayloadsAMDX Visibility");
        if (!scope) {
            status = scope.error();
            return;
        }
        if (*scope == static_cast<std::uint32_t>(AllocationScope::kWorkgroup)) {
            use.workgroup = true;
        } else if (*scope == static_cast<std::uint32_t>(AllocationScope::kInvocation)) {
            use.invocation = true;
        } else {
            status = a.Fail("OpAllocateNodePayloadsAMDX " + IdText(inst.result_id()) + " has Visibility " + std::to_string(*scope) +
                            "; only Workgroup (2) and Invocation (4) are allowed");
            return;
        }
        // The node index may be a runtime value (classify's node_out[mask - 1]: dxc-spirv-shapes §3.2); spec constants
        // are fixed at pipeline creation and count as constant.
        if (!EvaluateScalarConstant(a.module, inst.Word(2), a.spec).ok()) use.runtime_index = true;
    });
    if (!status.ok()) return status;

    // NodeSharesPayloadLimitsWithAMDX may name a type that is never allocated; it still becomes an output so that the
    // index is valid (facts §13 maxExecutionGraphShaderPayloadCount counts the shared set once).
    std::unordered_set<std::uint32_t> wanted;
    std::vector<std::uint32_t> pending;
    for (const auto& [type, use] : uses) pending.push_back(type);
    while (!pending.empty()) {
        const std::uint32_t type = pending.back();
        pending.pop_back();
        if (!wanted.insert(type).second) continue;
        if (const std::optional<std::uint32_t> shared =
                DecorationOperand(a.module, type, Decoration::NodeSharesPayloadLimitsWithAMDX)) {
            if (!a.IsPayloadArrayType(*shared)) {
                return a.Fail("NodeSharesPayloadLimitsWithAMDX on " + IdText(type) + " names " + IdText(*shared) +
                              ", which is not an OpTypeNodePayloadArrayAMDX");
            }
            pending.push_back(*shared);
        }
    }

    // Declaration order keeps the output indices stable and matches DXC's parameter order.
    std::unordered_map<std::uint32_t, std::uint32_t> index_of;
    for (const Instruction& inst : a.module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpTypeNodePayloadArrayAMDX || wanted.count(inst.result_id()) == 0) continue;
        Result<NodeOutputInfo> output = DescribeOutput(a, inst.result_id());
        if (!output) return output.error();
        if (const auto it = uses.find(inst.result_id()); it != uses.end()) {
            output->allocated_at_workgroup_scope = it->second.workgroup;
            output->allocated_at_invocation_scope = it->second.invocation;
            output->allocated_with_runtime_index = it->second.runtime_index;
        }
        index_of.emplace(inst.result_id(), static_cast<std::uint32_t>(info.outputs.size()));
        info.outputs.push_back(*std::move(output));
    }
    for (NodeOutputInfo& output : info.outputs) {
        if (const std::optional<std::uint32_t> shared =
                DecorationOperand(a.module, output.payload_array_type_id, Decoration::NodeSharesPayloadLimitsWithAMDX)) {
            output.shares_payload_limits_with = index_of.at(*shared);
        }
    }
    return Status();
}

void AnalyzeUsage(const Analyzer& a, const EntryPointRef& entry, const std::vector<const Function*>& functions,
                  const std::unordered_set<std::uint32_t>& used_ids, NodeInfo& info) {
    ForEachReachableInstruction(functions, [&](const Instruction& inst) {
        switch (inst.opcode()) {
            case Op::OpFinishWritingNodePayloadAMDX:
                info.uses_finish_writing = true;
                break;
            case Op::OpNodePayloadArrayLengthAMDX:
                info.uses_payload_array_length = true;
                break;
            case Op::OpIsNodePayloadValidAMDX:
                info.uses_is_payload_valid = true;
                break;
            case Op::OpControlBarrier:
                // Execution scope Workgroup (2) is what the lowering must keep as a real workgroup barrier.
                if (inst.OperandWordCount() > 0) {
                    Result<std::uint32_t> scope = EvaluateUint32(a.module, inst.Word(0), a.spec);
                    if (scope.ok() && *scope == static_cast<std::uint32_t>(Scope::Workgroup)) info.uses_workgroup_barrier = true;
                }
                break;
            default:
                break;
        }
        // Any memory-semantics operand (barriers and atomics) may carry OutputMemory (dxc-spirv-shapes §3.2 "Barriers").
        for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) {
            if (inst.IsContinuation(i) || inst.KindOf(i) != OperandKind::IdMemorySemantics) continue;
            Result<std::uint32_t> semantics = EvaluateUint32(a.module, inst.Word(i), a.spec);
            if (semantics.ok() && (*semantics & kOutputMemorySemantics) != 0) info.uses_output_memory_semantics = true;
        }
    });

    // Module-scope variables this entry point can see: its interface plus whatever its call tree references.
    std::unordered_set<std::uint32_t> visible(entry.interface_ids.begin(), entry.interface_ids.end());
    visible.insert(used_ids.begin(), used_ids.end());
    for (const Instruction& inst : a.module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpVariable || inst.OperandWordCount() < 1 || visible.count(inst.result_id()) == 0) continue;
        if (inst.Word(0) == static_cast<std::uint32_t>(StorageClass::Workgroup)) info.uses_workgroup_memory = true;
        const std::optional<BuiltIn> builtin = BuiltInOf(a.module, inst.result_id());
        if (builtin == BuiltIn::RemainingRecursionLevelsAMDX) info.uses_remaining_recursion_levels = true;
        if (builtin == BuiltIn::ShaderIndexAMDX) info.uses_shader_index_builtin = true;
    }
}

}  // namespace

Result<NodeInfo> AnalyzeNode(const Module& module, std::string_view entry_point_name, const SpecializationMap* specialization) {
    // DXC -Od passes payloads to functions; the facts below are read from one function, so analyse the module as
    // LowerNode will lower it, with those calls inlined (deterministically: LowerNode's copy gets the same ids).
    if (HasPayloadParameterFunctions(module)) {
        Module inlined = module;
        if (Status status = InlinePayloadFunctions(inlined); !status.ok()) return status.error();
        return AnalyzeNode(inlined, entry_point_name, specialization);
    }
    const std::vector<EntryPointRef> entries = EntryPoints(module);
    const auto entry_it =
        std::find_if(entries.begin(), entries.end(), [&](const EntryPointRef& e) { return e.name == entry_point_name; });
    if (entry_it == entries.end()) {
        std::string present;
        for (const EntryPointRef& e : entries)
            present += (present.empty() ? "" : ", ") + ("'" + e.name + "' (" + ModelName(e.model) + ")");
        return Error{kNoWordOffset, "entry point '" + std::string(entry_point_name) + "' not found; the module declares " +
                                        (present.empty() ? std::string("no entry points") : present)};
    }
    const EntryPointRef& entry = *entry_it;
    const Analyzer a{module, specialization, entry.name};
    if (entry.model == ExecutionModel::MeshEXT || entry.model == ExecutionModel::MeshNV) {
        // Mesh nodes need shaderMeshEnqueue and a graphics pipeline (dxc-spirv-shapes §3.3); we expose compute nodes only.
        return a.Fail(ModelName(entry.model) + " entry point: mesh nodes are not supported");
    }
    if (entry.model != ExecutionModel::GLCompute) {
        return a.Fail("execution model " + ModelName(entry.model) + " is not GLCompute; only compute nodes are supported");
    }

    NodeInfo info;
    info.entry_point_name = entry.name;
    info.entry_point_id = entry.inst->Word(1);

    Result<ModeFacts> modes = ReadExecutionModes(a, info.entry_point_id, info);
    if (!modes) return modes.error();
    if (modes->coalescing && modes->static_grid) {
        return a.Fail("declares both CoalescingAMDX and StaticNumWorkgroupsAMDX");
    }
    Result<std::optional<std::array<std::uint32_t, 3>>> builtin_size = WorkgroupSizeBuiltIn(a);
    if (!builtin_size) return builtin_size.error();
    if (builtin_size->has_value()) info.local_size = **builtin_size;

    if (modes->static_grid) {
        info.launch = LaunchKind::kBroadcastStatic;
    } else if (modes->coalescing) {
        // Thread launch is coalescing with a single invocation per workgroup (dxc-spirv-shapes §3.3).
        info.launch = info.local_size == std::array<std::uint32_t, 3>{1, 1, 1} ? LaunchKind::kThread : LaunchKind::kCoalescing;
    } else {
        info.launch = LaunchKind::kBroadcastDynamic;
    }

    const std::vector<const Function*> functions = ReachableFunctions(module, info.entry_point_id);
    std::unordered_set<std::uint32_t> used_ids;
    ForEachReachableInstruction(functions,
                                [&](const Instruction& inst) { inst.ForEachInId([&](std::uint32_t id) { used_ids.insert(id); }); });

    if (Status status = AnalyzeInput(a, entry, used_ids, *modes, info); !status) return status.error();
    if (Status status = AnalyzeOutputs(a, functions, info); !status) return status.error();
    AnalyzeUsage(a, entry, functions, used_ids, info);
    return info;
}

}  // namespace execgraph::spirv
