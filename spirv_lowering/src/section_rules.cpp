// SPDX-License-Identifier: Apache-2.0
#include "section_rules.h"

namespace execgraph::spirv::internal {

Placement PlacementOf(Op op) {
    switch (op) {
        case Op::OpCapability:
            return {PlacementKind::kModuleSection, Section::kCapability};
        case Op::OpExtension:
            return {PlacementKind::kModuleSection, Section::kExtension};
        case Op::OpExtInstImport:
            return {PlacementKind::kModuleSection, Section::kExtInstImport};
        case Op::OpMemoryModel:
            return {PlacementKind::kModuleSection, Section::kMemoryModel};
        case Op::OpEntryPoint:
            return {PlacementKind::kModuleSection, Section::kEntryPoint};
        case Op::OpExecutionMode:
        case Op::OpExecutionModeId:
            return {PlacementKind::kModuleSection, Section::kExecutionMode};
        case Op::OpString:
        case Op::OpSourceExtension:
        case Op::OpSource:
        case Op::OpSourceContinued:
            return {PlacementKind::kModuleSection, Section::kDebugString};
        case Op::OpName:
        case Op::OpMemberName:
            return {PlacementKind::kModuleSection, Section::kDebugName};
        case Op::OpModuleProcessed:
            return {PlacementKind::kModuleSection, Section::kDebugModuleProcessed};
        case Op::OpDecorate:
        case Op::OpMemberDecorate:
        case Op::OpDecorationGroup:
        case Op::OpGroupDecorate:
        case Op::OpGroupMemberDecorate:
        case Op::OpDecorateId:
        case Op::OpDecorateString:
        case Op::OpMemberDecorateString:
            return {PlacementKind::kModuleSection, Section::kAnnotation};
        case Op::OpVariable:
        case Op::OpUndef:
        case Op::OpLine:
        case Op::OpNoLine:
        case Op::OpExtInst:  // at module scope only non-semantic sets are legal (SPV_KHR_non_semantic_info)
            return {PlacementKind::kTypesOrFunction, Section::kTypesValues};
        default:
            break;
    }
    // OpTypeNodePayloadArrayAMDX and OpConstantStringAMDX/OpSpecConstantStringAMDX are classed as type / constant
    // creation by our supplement (grammar/amdx_supplement.json), so they land here too.
    const OpcodeInfo* info = FindOpcodeInfo(static_cast<std::uint32_t>(op));
    if (info != nullptr && info->is_type_or_constant) return {PlacementKind::kModuleSection, Section::kTypesValues};
    return {PlacementKind::kFunctionOnly, Section::kTypesValues};
}

std::string SectionName(Section section) {
    switch (section) {
        case Section::kCapability:
            return "capability";
        case Section::kExtension:
            return "extension";
        case Section::kExtInstImport:
            return "extended-instruction-import";
        case Section::kMemoryModel:
            return "memory-model";
        case Section::kEntryPoint:
            return "entry-point";
        case Section::kExecutionMode:
            return "execution-mode";
        case Section::kDebugString:
            return "debug-source";
        case Section::kDebugName:
            return "debug-name";
        case Section::kDebugModuleProcessed:
            return "debug-module-processed";
        case Section::kAnnotation:
            return "annotation";
        case Section::kTypesValues:
            return "types/constants/globals";
    }
    return "unknown";
}

}  // namespace execgraph::spirv::internal
