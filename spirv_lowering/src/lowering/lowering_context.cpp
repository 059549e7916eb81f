// SPDX-License-Identifier: Apache-2.0
#include "lowering/lowering_context.h"

#include <algorithm>
#include <cstddef>
#include <unordered_set>

#include "execgraph/spirv/decorations.h"
#include "execgraph/spirv/layout.h"
#include <string>

namespace execgraph::spirv::lowering {

// The offsets the lowered code hard-codes must match the runtime contract.
static_assert(offsetof(runtime::GraphHeader, node_count) == offsets::kHeaderNodeCount);
static_assert(offsetof(runtime::GraphHeader, input_half) == offsets::kHeaderInputHalf);
static_assert(offsetof(runtime::GraphHeader, status_flags) == offsets::kHeaderStatusFlags);
static_assert(offsetof(runtime::GraphHeader, dropped_records) == offsets::kHeaderDroppedRecords);
static_assert(offsetof(runtime::GraphHeader, heap_high_water) == offsets::kHeaderHeapHighWater);
static_assert(offsetof(runtime::GraphHeader, record_capacity) == offsets::kHeaderRecordCapacity);
static_assert(offsetof(runtime::GraphHeader, heap_capacity) == offsets::kHeaderHeapCapacity);
static_assert(offsetof(runtime::GraphHeader, node_table_offset) == offsets::kHeaderNodeTableOffset);
static_assert(offsetof(runtime::GraphHeader, output_table_offset) == offsets::kHeaderOutputTableOffset);
static_assert(offsetof(runtime::GraphHeader, trash_offset) == offsets::kHeaderTrashOffset);
static_assert(offsetof(runtime::HalfHeader, heap_top) == offsets::kHalfHeapTop);
static_assert(offsetof(runtime::HalfHeader, record_count) == offsets::kHalfRecordCount);
static_assert(sizeof(runtime::HalfHeader) == offsets::kHalfNodes);
static_assert(sizeof(runtime::NodeState) == offsets::kNodeStateSize);
static_assert(offsetof(runtime::NodeState, record_count) == offsets::kNodeStateRecordCount);
static_assert(offsetof(runtime::NodeState, directory_base) == offsets::kNodeStateDirectoryBase);
static_assert(offsetof(runtime::NodeState, workgroup_count) == offsets::kNodeStateWorkgroupCount);
static_assert(sizeof(runtime::RecordEntry) == offsets::kRecordEntrySize);
// A record list can serve as the directory of a single thread, coalescing or static broadcast consumer (level.comp, the
// level hand-off), whose entries name their node where RecordEntry does.
static_assert(offsetof(runtime::RecordEntry, payload_offset) == offsetof(runtime::DirectoryEntry, payload_offset) &&
              offsetof(runtime::RecordEntry, recursion_depth) == offsetof(runtime::DirectoryEntry, recursion_depth) &&
              offsetof(runtime::RecordEntry, node) == offsetof(runtime::DirectoryEntry, first_workgroup_or_node));
static_assert(sizeof(runtime::DirectoryEntry) == offsets::kDirectoryEntrySize);
static_assert(offsetof(runtime::DirectoryEntry, payload_offset) == offsets::kDirectoryPayloadOffset);
static_assert(offsetof(runtime::DirectoryEntry, recursion_depth) == offsets::kDirectoryRecursionDepth);
static_assert(offsetof(runtime::DirectoryEntry, first_workgroup_or_node) == offsets::kDirectoryFirstWorkgroupOrNode);
static_assert(offsetof(runtime::DirectoryEntry, finish_counter) == offsets::kDirectoryFinishCounter);
static_assert(sizeof(runtime::NodeStaticInfo) == offsets::kNodeStaticInfoSize);
static_assert(offsetof(runtime::NodeStaticInfo, shares_input_with) == offsets::kNodeStaticSharesInputWith);

std::uint32_t Emitter::Emit(Op op, std::uint32_t type, std::initializer_list<std::uint32_t> ids) {
    Instruction inst(op, type, module_.TakeNextId());
    for (std::uint32_t id : ids) inst.AddId(id);
    const std::uint32_t result = inst.result_id();
    out_->push_back(std::move(inst));
    return result;
}

void Emitter::EmitVoid(Op op, std::initializer_list<std::uint32_t> ids) {
    Instruction inst(op);
    for (std::uint32_t id : ids) inst.AddId(id);
    out_->push_back(std::move(inst));
}

std::uint32_t Emitter::LoadPushContextU32(PushContextMember member) {
    const std::uint32_t index = ctx_.push_constant_member + static_cast<std::uint32_t>(member);
    return Load(ctx_.u32, Emit(Op::OpAccessChain, ctx_.push_constant_u32_pointer, {ctx_.push_constant_var, U32(index)}));
}

std::uint32_t Emitter::ScratchAddress(std::uint32_t offset) {
    const std::uint32_t scratch = Load(ctx_.u64, ctx_.var_scratch);
    const std::uint32_t wide = Emit(Op::OpUConvert, ctx_.u64, {offset});
    return Emit(Op::OpIAdd, ctx_.u64, {scratch, wide});
}

std::uint32_t Emitter::ScratchPointer(std::uint32_t offset) {
    return Emit(Op::OpConvertUToPtr, ctx_.psb_u32, {ScratchAddress(offset)});
}

std::uint32_t Emitter::LoadScratchU32(std::uint32_t offset) { return LoadAligned(ctx_.u32, ScratchPointer(offset), 4); }

void Emitter::StoreScratchU32(std::uint32_t offset, std::uint32_t value) { StoreAligned(ScratchPointer(offset), value, 4); }

std::uint32_t Emitter::ScratchVectorPointer(std::uint32_t offset, std::uint32_t components) {
    const std::uint32_t vector = types().GetVector(ctx_.u32, components);
    return Emit(Op::OpConvertUToPtr, types().GetPointer(StorageClass::PhysicalStorageBuffer, vector), {ScratchAddress(offset)});
}

void Emitter::StoreScratchU32x4(std::uint32_t offset, std::array<std::uint32_t, 4> words) {
    const std::uint32_t vector = types().GetVector(ctx_.u32, 4);
    StoreAligned(ScratchVectorPointer(offset, 4), Emit(Op::OpCompositeConstruct, vector, {words[0], words[1], words[2], words[3]}), 16);
}

void Emitter::StoreScratchU32x2(std::uint32_t offset, std::array<std::uint32_t, 2> words) {
    const std::uint32_t vector = types().GetVector(ctx_.u32, 2);
    StoreAligned(ScratchVectorPointer(offset, 2), Emit(Op::OpCompositeConstruct, vector, {words[0], words[1]}), 8);
}

std::array<std::uint32_t, 4> Emitter::LoadScratchU32x4(std::uint32_t offset) {
    const std::uint32_t vector = LoadAligned(types().GetVector(ctx_.u32, 4), ScratchVectorPointer(offset, 4), 16);
    return {ExtractU32(vector, 0), ExtractU32(vector, 1), ExtractU32(vector, 2), ExtractU32(vector, 3)};
}

std::uint32_t Emitter::ExtractU32(std::uint32_t composite, std::uint32_t index) {
    Instruction inst(Op::OpCompositeExtract, ctx_.u32, module_.TakeNextId());
    inst.AddId(composite).AddLiteral(index);
    const std::uint32_t result = inst.result_id();
    out_->push_back(std::move(inst));
    return result;
}

std::uint32_t Emitter::Atomic(Op op, std::uint32_t type, std::uint32_t pointer, std::uint32_t scope, std::uint32_t value) {
    Instruction inst(op, type, module_.TakeNextId());
    inst.AddId(pointer).AddWord(U32(scope), OperandKind::IdScope).AddWord(U32(0), OperandKind::IdMemorySemantics).AddId(value);
    const std::uint32_t result = inst.result_id();
    out_->push_back(std::move(inst));
    return result;
}

std::uint32_t Emitter::AtomicScratch(Op op, std::uint32_t offset, std::uint32_t value) {
    return Atomic(op, ctx_.u32, ScratchPointer(offset), kScopeDevice, value);
}

void Emitter::ReportDrop(std::uint32_t node, std::uint32_t level, std::uint32_t flags, std::uint32_t count) {
    AtomicScratch(Op::OpAtomicIAdd, U32(offsets::kHeaderDroppedRecords), count);
    AtomicScratch(Op::OpAtomicOr, U32(offsets::kHeaderStatusFlags), flags);
    const std::uint32_t stats = Add(NodeStatsOffset(), Mul(node, U32(offsets::kNodeStatsSize)));
    AtomicScratch(Op::OpAtomicIAdd, Add(stats, U32(offsets::kNodeStatsDroppedRecords)), count);
    AtomicScratch(Op::OpAtomicOr, Add(stats, U32(offsets::kNodeStatsDropFlags)), flags);
    AtomicScratch(Op::OpAtomicUMax, Add(stats, U32(offsets::kNodeStatsFirstDropLevelComplement)),
                  Emit(Op::OpNot, ctx_.u32, {level}));
}

std::uint32_t Emitter::AtomicScratchU64(Op op, std::uint32_t offset, std::uint32_t value) {
    module_.AddCapability(Capability::Int64Atomics);
    const std::uint32_t pointer =
        Emit(Op::OpConvertUToPtr, types().GetPointer(StorageClass::PhysicalStorageBuffer, ctx_.u64), {ScratchAddress(offset)});
    return Atomic(op, ctx_.u64, pointer, kScopeDevice, value);
}

std::uint32_t Emitter::PackU64(std::uint32_t low, std::uint32_t high) {
    const std::uint32_t wide_high = Emit(Op::OpUConvert, ctx_.u64, {high});
    return Emit(Op::OpBitwiseOr, ctx_.u64,
                {Emit(Op::OpShiftLeftLogical, ctx_.u64, {wide_high, U64(32)}), Emit(Op::OpUConvert, ctx_.u64, {low})});
}

std::uint32_t Emitter::AtomicWorkgroup(Op op, std::uint32_t pointer, std::uint32_t value) {
    return Atomic(op, ctx_.u32, pointer, kScopeWorkgroup, value);
}

std::uint32_t Emitter::SubgroupArithmetic(Op op, GroupOperation operation, std::uint32_t value) {
    Instruction inst(op, ctx_.u32, module_.TakeNextId());
    inst.AddWord(U32(kScopeSubgroup), OperandKind::IdScope).AddEnum(OperandKind::GroupOperation, operation).AddId(value);
    const std::uint32_t result = inst.result_id();
    out_->push_back(std::move(inst));
    return result;
}

std::uint32_t Emitter::SubgroupHighestActiveLane() {
    const std::uint32_t ballot =
        Emit(Op::OpGroupNonUniformBallot, types().GetVector(ctx_.u32, 4), {U32(kScopeSubgroup), Bool(true)});
    return Emit(Op::OpGroupNonUniformBallotFindMSB, ctx_.u32, {U32(kScopeSubgroup), ballot});
}

void Emitter::WorkgroupBarrier() {
    Instruction inst(Op::OpControlBarrier);
    inst.AddWord(U32(kScopeWorkgroup), OperandKind::IdScope)
        .AddWord(U32(kScopeWorkgroup), OperandKind::IdScope)
        .AddWord(U32(kSemanticsAcquireRelease | kSemanticsWorkgroupMemory), OperandKind::IdMemorySemantics);
    out_->push_back(std::move(inst));
}

void Emitter::DeviceMemoryBarrier() {
    Instruction inst(Op::OpMemoryBarrier);
    inst.AddWord(U32(kScopeDevice), OperandKind::IdScope)
        .AddWord(U32(kSemanticsAcquireRelease | kSemanticsUniformMemory), OperandKind::IdMemorySemantics);
    out_->push_back(std::move(inst));
}

void Emitter::WorkgroupBufferMemoryBarrier() {
    Instruction inst(Op::OpMemoryBarrier);
    inst.AddWord(U32(kScopeWorkgroup), OperandKind::IdScope)
        .AddWord(U32(kSemanticsAcquireRelease | kSemanticsUniformMemory), OperandKind::IdMemorySemantics);
    out_->push_back(std::move(inst));
}

std::uint32_t Emitter::LoadAligned(std::uint32_t type, std::uint32_t pointer, std::uint32_t alignment) {
    Instruction inst(Op::OpLoad, type, module_.TakeNextId());
    inst.AddId(pointer).AddWord(static_cast<std::uint32_t>(MemoryAccess::Aligned), OperandKind::MemoryAccess).AddLiteral(alignment);
    const std::uint32_t result = inst.result_id();
    out_->push_back(std::move(inst));
    return result;
}

void Emitter::StoreAligned(std::uint32_t pointer, std::uint32_t value, std::uint32_t alignment) {
    Instruction inst(Op::OpStore);
    inst.AddId(pointer).AddId(value).AddWord(static_cast<std::uint32_t>(MemoryAccess::Aligned), OperandKind::MemoryAccess).AddLiteral(alignment);
    out_->push_back(std::move(inst));
}

void FunctionBuilder::StartBlock(std::uint32_t label) {
    blocks_.emplace_back();
    blocks_.back().instructions.push_back(Instruction(Op::OpLabel, 0, label));
    emit_.SetOutput(&blocks_.back().instructions);
}

void FunctionBuilder::SelectionMerge(std::uint32_t merge_label) {
    Instruction inst(Op::OpSelectionMerge);
    inst.AddId(merge_label).AddWord(0, OperandKind::SelectionControl);
    emit_.Append(std::move(inst));
}

void FlushPendingFunctions(Module& module, LoweringContext& ctx) {
    for (Function& function : ctx.pending_functions) module.mutable_functions().push_back(std::move(function));
    ctx.pending_functions.clear();
}

Result<std::uint32_t> PayloadBufferPointer(Module& module, LoweringContext& ctx, std::uint32_t array_type) {
    if (const auto it = ctx.payload_buffer_pointer.find(array_type); it != ctx.payload_buffer_pointer.end()) return it->second;
    const Instruction* array = module.FindDef(array_type);
    if (array == nullptr || array->opcode() != Op::OpTypeNodePayloadArrayAMDX) {
        return Error{kNoWordOffset, "%" + std::to_string(array_type) + " is not an OpTypeNodePayloadArrayAMDX"};
    }
    const std::uint32_t record = array->Word(0);
    std::uint32_t stride = 0;
    if (const auto it = ctx.output_of_array_type.find(array_type); it != ctx.output_of_array_type.end()) {
        stride = ctx.options.output_record_stride[it->second];
    } else {
        Result<std::uint32_t> size = ExplicitLayoutSize(module, record);
        if (!size) return Error{kNoWordOffset, "record of %" + std::to_string(array_type) + ": " + size.error().message};
        stride = (*size + 3u) & ~3u;
    }
    // Empty records occupy no heap bytes; their members can never be accessed, so any non-zero stride describes them.
    if (stride == 0) stride = 4;
    const std::uint32_t runtime_array = ctx.types->CreateRuntimeArray(record);
    const std::uint32_t members[] = {runtime_array};
    const std::uint32_t buffer = ctx.types->CreateStruct(members);
    Instruction array_stride(Op::OpDecorate);
    array_stride.AddId(runtime_array).AddEnum(OperandKind::Decoration, Decoration::ArrayStride).AddLiteral(stride);
    module.Append(Section::kAnnotation, std::move(array_stride));
    Instruction block(Op::OpDecorate);
    block.AddId(buffer).AddEnum(OperandKind::Decoration, Decoration::Block);
    module.Append(Section::kAnnotation, std::move(block));
    Instruction offset(Op::OpMemberDecorate);
    offset.AddId(buffer).AddLiteral(0).AddEnum(OperandKind::Decoration, Decoration::Offset).AddLiteral(0);
    module.Append(Section::kAnnotation, std::move(offset));
    const std::uint32_t pointer = ctx.types->GetPointer(StorageClass::PhysicalStorageBuffer, buffer);
    ctx.payload_buffer_pointer[array_type] = pointer;
    return pointer;
}

std::uint32_t ToUint32(Module& module, LoweringContext& ctx, const std::unordered_map<std::uint32_t, std::uint32_t>& result_types,
                       std::vector<Instruction>& out, std::uint32_t id) {
    const auto it = result_types.find(id);
    if (it == result_types.end()) return 0;
    if (it->second == ctx.u32) return id;
    const Instruction* type = module.FindDef(it->second);
    if (type == nullptr || type->opcode() != Op::OpTypeInt) return 0;
    Emitter e(module, ctx, &out);
    const std::uint32_t width = type->Word(0);
    const bool is_signed = type->Word(1) != 0;
    if (width == 32) return e.Emit(Op::OpBitcast, ctx.u32, {id});
    // Indexes and counts are non-negative, so a zero-extending conversion of the unsigned view is exact.
    const std::uint32_t source = is_signed ? e.Emit(Op::OpBitcast, ctx.types->GetInt(width, false), {id}) : id;
    return e.Emit(Op::OpUConvert, ctx.u32, {source});
}

Function* FindFunction(Module& module, std::uint32_t function_id) {
    for (Function& function : module.mutable_functions()) {
        if (function.result_id() == function_id) return &function;
    }
    return nullptr;
}

const Function* FindFunction(const Module& module, std::uint32_t function_id) {
    for (const Function& function : module.functions()) {
        if (function.result_id() == function_id) return &function;
    }
    return nullptr;
}

std::uint32_t FindBuiltinVariable(const Module& module, BuiltIn builtin) {
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpVariable || inst.Word(0) != static_cast<std::uint32_t>(StorageClass::Input)) continue;
        const std::optional<BuiltIn> decorated = BuiltInOf(module, inst.result_id());
        if (decorated && *decorated == builtin) return inst.result_id();
    }
    return 0;
}

void RetargetEntryPoint(Module& module, std::uint32_t entry, std::uint32_t wrapper) {
    for (Instruction& inst : module.mutable_section(Section::kEntryPoint)) {
        if (inst.Word(1) == entry) inst.SetWord(1, wrapper);
    }
    for (Instruction& inst : module.mutable_section(Section::kExecutionMode)) {
        if (inst.Word(0) == entry) inst.SetWord(0, wrapper);
    }
}

void SetLoweredLocalSize(Module& module, LoweringContext& ctx, const std::array<std::uint32_t, 3>& size) {
    std::vector<Instruction>& modes = module.mutable_section(Section::kExecutionMode);
    std::erase_if(modes, [](const Instruction& inst) {
        const auto mode = static_cast<ExecutionMode>(inst.Word(1));
        return mode == ExecutionMode::LocalSize || mode == ExecutionMode::LocalSizeId;
    });
    Instruction local_size(Op::OpExecutionMode);
    local_size.AddId(ctx.EntryFunction())
        .AddEnum(OperandKind::ExecutionMode, ExecutionMode::LocalSize)
        .AddLiteral(size[0])
        .AddLiteral(size[1])
        .AddLiteral(size[2]);
    modes.push_back(std::move(local_size));
    ctx.lowered_local_size = size;
}

std::uint32_t CreateGlobalVariable(Module& module, LoweringContext& ctx, StorageClass storage_class, std::uint32_t type,
                                   std::uint32_t initializer) {
    const std::uint32_t pointer = ctx.types->GetPointer(storage_class, type);
    Instruction var(Op::OpVariable, pointer, module.TakeNextId());
    var.AddEnum(OperandKind::StorageClass, storage_class);
    if (initializer != 0) var.AddId(initializer);
    const std::uint32_t id = var.result_id();
    module.Append(Section::kTypesValues, std::move(var));
    return id;
}

std::uint32_t CreateBuiltinVariable(Module& module, LoweringContext& ctx, BuiltIn builtin, std::uint32_t type) {
    const std::uint32_t id = CreateGlobalVariable(module, ctx, StorageClass::Input, type);
    Instruction decorate(Op::OpDecorate);
    decorate.AddId(id).AddEnum(OperandKind::Decoration, Decoration::BuiltIn).AddEnum(OperandKind::BuiltIn, builtin);
    module.Append(Section::kAnnotation, std::move(decorate));
    return id;
}

bool PointerInfo(const Module& module, std::uint32_t type_id, StorageClass* storage_class, std::uint32_t* pointee) {
    const Instruction* def = module.FindDef(type_id);
    if (def == nullptr || def->opcode() != Op::OpTypePointer) return false;
    if (storage_class != nullptr) *storage_class = static_cast<StorageClass>(def->Word(0));
    if (pointee != nullptr) *pointee = def->Word(1);
    return true;
}

std::uint32_t ScalarAlignment(const Module& module, std::uint32_t type_id) {
    const Instruction* def = module.FindDef(type_id);
    if (def == nullptr) return 1;
    switch (def->opcode()) {
        case Op::OpTypeInt:
        case Op::OpTypeFloat:
            return std::max<std::uint32_t>(1, def->Word(0) / 8);
        case Op::OpTypeBool:
            return 4;
        case Op::OpTypeVector:
        case Op::OpTypeMatrix:
        case Op::OpTypeArray:
        case Op::OpTypeRuntimeArray:
            return ScalarAlignment(module, def->Word(0));
        case Op::OpTypePointer:
            return 8;
        case Op::OpTypeStruct: {
            std::uint32_t alignment = 1;
            for (std::size_t i = 0; i < def->OperandWordCount(); ++i) {
                alignment = std::max(alignment, ScalarAlignment(module, def->Word(i)));
            }
            return alignment;
        }
        default:
            return 1;
    }
}

std::unordered_map<std::uint32_t, std::uint32_t> CollectResultTypes(const Module& module) {
    std::unordered_map<std::uint32_t, std::uint32_t> types;
    module.ForEachInstruction([&types](const Instruction& inst) {
        if (inst.result_id() != 0 && inst.type_id() != 0) types[inst.result_id()] = inst.type_id();
    });
    return types;
}

void ReplaceUsesInFunctions(Module& module, const std::unordered_map<std::uint32_t, std::uint32_t>& map) {
    if (map.empty()) return;
    for (Function& function : module.mutable_functions()) {
        auto replace = [&map](Instruction& inst) {
            const std::uint32_t result = inst.result_id();
            inst.ForEachId([&map](std::uint32_t& id) {
                const auto it = map.find(id);
                if (it != map.end()) id = it->second;
            });
            inst.set_result_id(result);  // definitions keep their id
        };
        for (Instruction& inst : function.header) replace(inst);
        for (BasicBlock& block : function.blocks) {
            for (Instruction& inst : block.instructions) replace(inst);
        }
    }
}

void RetargetVariable(Module& module, LoweringContext& ctx, std::uint32_t from, std::uint32_t to, StorageClass storage_class) {
    // Pointers derived from `from` (access chains, copies) change storage class along with it.
    std::unordered_set<std::uint32_t> derived{from};
    for (Function& function : module.mutable_functions()) {
        for (BasicBlock& block : function.blocks) {
            for (Instruction& inst : block.instructions) {
                const Op op = inst.opcode();
                const bool is_pointer_op = op == Op::OpAccessChain || op == Op::OpInBoundsAccessChain || op == Op::OpCopyObject;
                if (inst.OperandWordCount() > 0 && derived.count(inst.Word(0)) != 0) {
                    if (inst.Word(0) == from) inst.SetWord(0, to);
                    if (is_pointer_op) {
                        std::uint32_t pointee = 0;
                        if (PointerInfo(module, inst.type_id(), nullptr, &pointee)) {
                            inst.set_type_id(ctx.types->GetPointer(storage_class, pointee));
                        }
                        derived.insert(inst.result_id());
                    }
                }
                // Any other operand position (OpStore value, function-call arguments...) just follows the rename.
                for (std::size_t i = 1; i < inst.OperandWordCount(); ++i) {
                    if (inst.IsIdOperand(i) && inst.Word(i) == from) inst.SetWord(i, to);
                }
            }
        }
    }
}

}  // namespace execgraph::spirv::lowering
