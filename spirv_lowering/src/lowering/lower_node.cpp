// SPDX-License-Identifier: Apache-2.0
#include <spirv-tools/libspirv.h>

#include <map>
#include <spirv-tools/optimizer.hpp>
#include <sstream>
#include <string>
#include <string_view>

#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/reader.h"
#include "execgraph/spirv/writer.h"
#include "lowering/lowering_passes.h"

namespace execgraph::spirv {
namespace {

// Runs the Vulkan 1.3 validator; "" when valid, else its message.
std::string Validate(const std::vector<std::uint32_t>& words, bool scalar_block_layout) {
    spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
    spv_validator_options options = spvValidatorOptionsCreate();
    spvValidatorOptionsSetScalarBlockLayout(options, scalar_block_layout);
    spv_const_binary_t binary{words.data(), words.size()};
    spv_diagnostic diagnostic = nullptr;
    const spv_result_t result = spvValidateWithOptions(context, options, &binary, &diagnostic);
    std::string message;
    if (result != SPV_SUCCESS) message = diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "spvValidate failed";
    spvDiagnosticDestroy(diagnostic);
    spvValidatorOptionsDestroy(options);
    spvContextDestroy(context);
    return message;
}

// Belt and braces: no AMDX opcode, capability or storage class may survive (Vulkan would reject the module).
Status CheckNoAmdx(const Module& module) {
    std::string found;
    module.ForEachInstruction([&found](const Instruction& inst) {
        const auto opcode = static_cast<std::uint32_t>(inst.opcode());
        const bool amdx_opcode = opcode >= 5074 && opcode <= 5104 && !OpcodeName(opcode).empty() && OpcodeName(opcode).ends_with("AMDX");
        const bool amdx_capability = inst.opcode() == Op::OpCapability && inst.Word(0) == static_cast<std::uint32_t>(Capability::ShaderEnqueueAMDX);
        const bool amdx_storage = (inst.opcode() == Op::OpTypePointer || inst.opcode() == Op::OpVariable) &&
                                  inst.Word(0) == static_cast<std::uint32_t>(StorageClass::NodePayloadAMDX);
        if ((amdx_opcode || amdx_capability || amdx_storage) && found.empty()) found = std::string(OpcodeName(opcode));
    });
    if (!found.empty()) return Error{kNoWordOffset, "AMDX construct left after lowering: " + found};
    return {};
}

constexpr std::string_view kOptionsRecordPrefix = "execgraph-lowering-options ";

// The module's LoweringOptionsRecord, or "" when it has none.
std::string FindOptionsRecord(const Module& module) {
    for (const Instruction& inst : module.section(Section::kDebugModuleProcessed)) {
        const std::string text = inst.StringAt(0);
        if (text.starts_with(kOptionsRecordPrefix)) return text;
    }
    return "";
}

// "name=value" words of a record, by name.
std::map<std::string, std::string> RecordFields(const std::string& record) {
    std::map<std::string, std::string> fields;
    std::istringstream words(record.substr(kOptionsRecordPrefix.size()));
    for (std::string word; words >> word;) {
        const std::size_t equals = word.find('=');
        fields[word.substr(0, equals)] = equals == std::string::npos ? "" : word.substr(equals + 1);
    }
    return fields;
}

}  // namespace

std::string LoweringOptionsRecord(const LoweringOptions& options) {
    std::string record(kOptionsRecordPrefix);
    record += "context_offset=" + std::to_string(options.context_offset);
    record += " input_record_stride=" + std::to_string(options.input_record_stride);
    record += " thread_batch_size=" + std::to_string(options.thread_batch_size);
    record += " level_pass_records_per_workgroup=" + std::to_string(options.level_pass_records_per_workgroup);
    record += " heap_holds_record_list=" + std::to_string(options.heap_holds_record_list ? 1 : 0);
    record += " records_by_index=" + std::to_string(options.records_by_index ? 1 : 0);
    record += " level_hand_off=" + std::to_string(options.level_hand_off ? 1 : 0);
    record += " dispatch_group_member=" + std::to_string(options.dispatch_group_member ? 1 : 0);
    record += " reserve_per_workgroup=" + std::to_string(options.reserve_per_workgroup ? 1 : 0);
    record += " indirect_level_pass=" + std::to_string(options.indirect_level_pass ? 1 : 0);
    record += " group_level_hand_off=" + std::to_string(options.group_level_hand_off ? 1 : 0);
    record += " group_hand_off_checks_initialization=" + std::to_string(options.group_hand_off_checks_initialization ? 1 : 0);
    record += " node_table_offset=" + std::to_string(options.node_table_offset);
    record += " node_stats_offset=" + std::to_string(options.node_stats_offset);
    record += " node_count=" + std::to_string(options.node_count);
    record += " coalesce_record_stores=" + std::to_string(options.coalesce_record_stores ? 1 : 0);
    record += " shader_index=" + (options.shader_index ? std::to_string(*options.shader_index) : std::string("scratch"));
    // Per output: table index, table length and record stride.
    record += " outputs=";
    for (std::size_t i = 0; i < options.output_table_index.size(); ++i) {
        if (i != 0) record += ',';
        record += std::to_string(options.output_table_index[i]) + ':' +
                  std::to_string(i < options.output_table_length.size() ? options.output_table_length[i] : 0) + ':' +
                  std::to_string(i < options.output_record_stride.size() ? options.output_record_stride[i] : 0);
    }
    return record;
}

Result<LoweredNode> LowerNode(const Module& input, const NodeInfo& info, const LoweringOptions& options) {
    // The lowering takes fresh ids past the module's bound; a bound near 2^32 would wrap them onto existing ids. No valid
    // module comes close: SPIR-V's universal limits cap the bound at 4194303 (SPIR-V 1.6, 2.17 "Universal Limits").
    constexpr std::uint32_t kMaxIdBound = 0x3FFFFF;
    if (input.header().bound > kMaxIdBound) {
        return Error{3, "id bound " + std::to_string(input.header().bound) + " exceeds SPIR-V's universal limit of " +
                            std::to_string(kMaxIdBound)};
    }
    Module module = input;
    // As AnalyzeNode did for `info`: the same inlining gives the same ids.
    if (Status inlined = InlinePayloadFunctions(module); !inlined.ok()) {
        return Error{kNoWordOffset, "lowering node \"" + info.entry_point_name + "\": " + inlined.error().message};
    }
    lowering::LoweringContext context(info, options);
    PassManager passes;
    passes.Add<lowering::SelectEntryPointPass>(context);
    passes.Add<lowering::ResolvePayloadAliasesPass>(context);
    passes.Add<lowering::RuntimeContextPass>(context);
    passes.Add<lowering::LaunchPass>(context);
    passes.Add<lowering::LowerInputPass>(context);
    passes.Add<lowering::LowerOutputsPass>(context);
    passes.Add<lowering::CoalesceRecordStoresPass>(context);
    passes.Add<lowering::RewritePayloadPointersPass>(context);
    passes.Add<lowering::MemorySemanticsPass>(context);
    passes.Add<lowering::OneInvocationWorkgroupPass>(context);
    passes.Add<lowering::LevelHandOffPass>(context);
    passes.Add<lowering::StripAmdxPass>(context);
    Result<bool> ran = passes.Run(module);
    if (!ran) {
        Error error = ran.error();
        error.message = "lowering node \"" + info.entry_point_name + "\": " + error.message;
        return error;
    }
    if (Status clean = CheckNoAmdx(module); !clean.ok()) return clean.error();
    Instruction record(Op::OpModuleProcessed);
    record.AddString(LoweringOptionsRecord(options));
    module.mutable_section(Section::kDebugModuleProcessed).push_back(std::move(record));

    LoweredNode lowered;
    lowered.words = WriteModule(module);
    lowered.only_invocation_0_runs_node_code = context.only_invocation_0_runs_node_code;
    lowered.local_size = context.lowered_local_size;

    auto validate = [&lowered, &info](const char* stage) -> Status {
        if (Validate(lowered.words, false).empty()) return {};
        // DXC lays records out with scalar rules (dxc-spirv-shapes §3.2), which std430 validation rejects.
        const std::string scalar = Validate(lowered.words, true);
        if (!scalar.empty()) {
            return Error{kNoWordOffset, "lowering node \"" + info.entry_point_name + "\": " + stage + " module fails Vulkan 1.3 validation: " + scalar};
        }
        lowered.requires_scalar_block_layout = true;
        return {};
    };
    if (options.validate || options.optimize) {
        // The optimizer must only ever see valid input.
        if (Status status = validate("lowered"); !status.ok()) return status.error();
    }
    if (options.optimize) {
        spvtools::Optimizer optimizer(SPV_ENV_VULKAN_1_3);
        std::string messages;
        optimizer.SetMessageConsumer([&messages](spv_message_level_t level, const char*, const spv_position_t&, const char* message) {
            if (level <= SPV_MSG_ERROR) messages += std::string(message) + "\n";
        });
        optimizer.RegisterPerformancePasses();
        std::vector<std::uint32_t> optimized;
        spvtools::ValidatorOptions validator_options;
        validator_options.SetScalarBlockLayout(true);
        if (!optimizer.Run(lowered.words.data(), lowered.words.size(), &optimized, validator_options, true)) {
            return Error{kNoWordOffset, "lowering node \"" + info.entry_point_name + "\": SPIRV-Tools optimizer failed: " + messages};
        }
        lowered.words = std::move(optimized);
        const bool scalar_before = lowered.requires_scalar_block_layout;
        if (Status status = validate("optimized"); !status.ok()) return status.error();
        lowered.requires_scalar_block_layout |= scalar_before;
    }
    if (!options.validate && !options.optimize) lowered.requires_scalar_block_layout = false;
    return lowered;
}

Status CheckLoweredReplacement(std::span<const std::uint32_t> words, const std::string& entry_point, const LoweredNode& lowered) {
    Result<Module> read = ReadModule(words);
    if (!read) return read.error();
    if (Status clean = CheckNoAmdx(*read); !clean.ok()) return clean.error();
    const std::vector<std::uint32_t> copy(words.begin(), words.end());
    if (const std::string invalid = Validate(copy, true); !invalid.empty()) {
        return Error{kNoWordOffset, "fails Vulkan 1.3 validation: " + invalid};
    }
    std::uint32_t entry_id = 0;
    for (const Instruction& inst : read->section(Section::kEntryPoint)) {
        if (inst.Word(0) == static_cast<std::uint32_t>(ExecutionModel::GLCompute) && inst.StringAt(2) == entry_point)
            entry_id = inst.Word(1);
    }
    if (entry_id == 0) return Error{kNoWordOffset, "has no GLCompute entry point \"" + entry_point + "\""};
    // Where both modules record their lowering options, they must agree: otherwise the file is the lowering of this node
    // for another device (or graph), valid SPIR-V with the other one's constants.
    const std::string replacement_record = FindOptionsRecord(*read);
    Result<Module> lowered_module = ReadModule(lowered.words);
    const std::string lowered_record = lowered_module ? FindOptionsRecord(*lowered_module) : "";
    if (!replacement_record.empty() && !lowered_record.empty() && replacement_record != lowered_record) {
        const std::map<std::string, std::string> theirs = RecordFields(replacement_record), ours = RecordFields(lowered_record);
        std::string differences;
        for (const auto& [name, value] : ours) {
            const auto found = theirs.find(name);
            const std::string their_value = found == theirs.end() ? "(none)" : found->second;
            if (their_value == value) continue;
            differences +=
                (differences.empty() ? "" : ", ") + name + "=" + their_value + " where this node is lowered with " + value;
        }
        if (differences.empty()) differences = "\"" + replacement_record + "\"";
        return Error{kNoWordOffset, "was lowered with other options (" + differences +
                                        "): dump it on the device that runs it, or edit its OpModuleProcessed \"" +
                                        std::string(kOptionsRecordPrefix) + "...\" line to match"};
    }
    // glslang writes LocalSizeId with constant operands for SPIR-V 1.6 (--target-env vulkan1.3) where older targets get
    // LocalSize, so a module compiled from an edited GLSL dump states its size either way.
    for (const Instruction& inst : read->section(Section::kExecutionMode)) {
        if (inst.Word(0) != entry_id || inst.OperandWordCount() < 5) continue;
        std::array<std::uint32_t, 3> size{};
        if (inst.opcode() == Op::OpExecutionMode && inst.Word(1) == static_cast<std::uint32_t>(ExecutionMode::LocalSize)) {
            size = {inst.Word(2), inst.Word(3), inst.Word(4)};
        } else if (inst.opcode() == Op::OpExecutionModeId &&
                   inst.Word(1) == static_cast<std::uint32_t>(ExecutionMode::LocalSizeId)) {
            for (std::size_t i = 0; i < 3; ++i) {
                // No specialization reaches a replacement, so a specialization constant takes its default.
                Result<std::uint32_t> value = EvaluateUint32(*read, inst.Word(2 + i));
                if (!value)
                    return Error{kNoWordOffset,
                                 "has a LocalSizeId operand that is not an integer constant: " + value.error().message};
                size[i] = *value;
            }
        } else {
            continue;
        }
        if (size == lowered.local_size) return {};
        return Error{kNoWordOffset, "has LocalSize " + std::to_string(size[0]) + "x" + std::to_string(size[1]) + "x" +
                                        std::to_string(size[2]) + " where the lowered node has " +
                                        std::to_string(lowered.local_size[0]) + "x" + std::to_string(lowered.local_size[1]) + "x" +
                                        std::to_string(lowered.local_size[2])};
    }
    return Error{kNoWordOffset, "has no LocalSize or LocalSizeId execution mode (the lowered node has one)"};
}

}  // namespace execgraph::spirv
