// SPDX-License-Identifier: Apache-2.0
// Coalesced record stores (docs/design.md, "Coalesced record stores"): an allocation of at most one record per invocation
// whose record is two, four or eight 16-byte chunks keeps its record in a Private array of words while the node's code
// runs, and the entry wrapper writes the records of a whole subgroup at once, transposed across its lanes with subgroup
// shuffles, so that each store instruction writes 16 contiguous bytes per lane of consecutive records.
//
// Why: the records of a subgroup's invocations lie side by side in the heap (LowerOutputsPass reserves them in lane
// order), but each invocation writes its own record, so one store instruction of a subgroup touched one 16-byte piece
// of every record: 32 pieces at the record's stride on a GPU with 32 lanes. On an H200, the 64-byte records of the
// payload bandwidth workload took about 34 of its producer level's 75 µs that way (docs/performance.md, "Session of the
// payload's store layout"); with this pass that level took 47 instead of 84 µs on an H100 ("Session of the coalesced
// record stores"). The layout in the heap does not change, so nothing that reads records changes either.
//
// Which allocations (CoalescedAllocation): the node's code must not be able to tell. Its records are its own to write
// (Invocation visibility, or a thread node's), written and read back only through access chains to 32-bit scalars,
// vectors, arrays and structs at word offsets, with no pointer to them leaving the node's code; and the allocation runs
// exactly once per invocation (a block of WorkgroupUniformBlocks) for at most one record, so one record's words hold
// everything. Spec-wise, records become visible to their consumers only after the producer's invocation ends (facts
// §16: allocations count as enqueued when the invocation ends), which is where the wrapper writes them.
//
// The wrapper's subgroup operations run at the entry function's top level, in uniform control flow (every invocation
// returns there from the node's code, early returns included). The transpose needs every lane of the subgroup active and
// the records of lanes 0 .. S-1 at consecutive strides from lane 0's; otherwise (the last, partial workgroup of a
// grid, records that went to the trash region, a lane with no record) each invocation writes its own record as before.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/decorations.h"
#include "lowering/lowering_passes.h"

namespace execgraph::spirv::lowering {
namespace {

constexpr std::uint32_t kChunkBytes = 16;

bool IsAccessChain(Op op) { return op == Op::OpAccessChain || op == Op::OpInBoundsAccessChain; }

// Whether every value of `type` is made of 32-bit integer or float scalars at word offsets: what the Private word array
// can hold bit for bit (bitcasts), with `bytes` its size in the record.
bool WordAddressable(const Module& module, std::uint32_t type, std::uint32_t* bytes, int depth = 0) {
    const Instruction* def = module.FindDef(type);
    if (def == nullptr || depth > 8) return false;
    switch (def->opcode()) {
        case Op::OpTypeInt:
        case Op::OpTypeFloat:
            *bytes = 4;
            return def->Word(0) == 32;
        case Op::OpTypeVector: {
            std::uint32_t component = 0;
            if (!WordAddressable(module, def->Word(0), &component, depth + 1)) return false;
            *bytes = component * def->Word(1);
            return true;
        }
        case Op::OpTypeArray: {
            const std::optional<std::uint32_t> stride = ArrayStrideOf(module, type);
            Result<std::uint32_t> length = EvaluateUint32(module, def->Word(1));
            std::uint32_t element = 0;
            if (!stride || *stride % 4 != 0 || !length.ok() || *length == 0 || *length > 1024 ||
                !WordAddressable(module, def->Word(0), &element, depth + 1) || element > *stride) {
                return false;
            }
            *bytes = *stride * (*length - 1) + element;
            return true;
        }
        case Op::OpTypeStruct: {
            std::uint32_t end = 0;
            for (std::uint32_t m = 0; m < def->OperandWordCount(); ++m) {
                const std::optional<std::uint32_t> offset = OffsetOf(module, type, m);
                std::uint32_t member = 0;
                if (!offset || *offset % 4 != 0 || !WordAddressable(module, def->Word(m), &member, depth + 1)) return false;
                end = std::max(end, *offset + member);
            }
            *bytes = end;
            return true;
        }
        default:
            return false;  // bools have no layout; matrices, pointers, 8/16/64-bit scalars are not handled here
    }
}

// Where an access chain points inside its record: a constant byte offset plus runtime indices times their strides.
struct RecordOffset {
    std::uint32_t bytes = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> scaled;  // (32-bit integer index id, stride in bytes)
    std::uint32_t type = 0;                                       // the pointee
};

// Walks `indices` of a chain from `start` (a pointer into the record, pointee start.type); nullopt where an index is
// not understood (a non-constant struct member, a matrix, an index that is not a 32-bit integer).
std::optional<RecordOffset> Walk(const Module& module, RecordOffset start, const Instruction& chain, std::size_t first_index) {
    for (std::size_t i = first_index; i < chain.OperandWordCount(); ++i) {
        const std::uint32_t index = chain.Word(i);
        const Instruction* type = module.FindDef(start.type);
        if (type == nullptr) return std::nullopt;
        Result<std::uint32_t> constant = EvaluateUint32(module, index);
        auto scale = [&](std::uint32_t stride) {
            if (constant.ok()) {
                start.bytes += *constant * stride;
                return true;
            }
            const Instruction* index_def = module.FindDef(index);
            const Instruction* index_type = index_def != nullptr ? module.FindDef(index_def->type_id()) : nullptr;
            if (index_type == nullptr || index_type->opcode() != Op::OpTypeInt || index_type->Word(0) != 32) return false;
            start.scaled.emplace_back(index, stride);
            return true;
        };
        switch (type->opcode()) {
            case Op::OpTypeStruct: {
                if (!constant.ok() || *constant >= type->OperandWordCount()) return std::nullopt;
                const std::optional<std::uint32_t> offset = OffsetOf(module, start.type, *constant);
                if (!offset) return std::nullopt;
                start.bytes += *offset;
                start.type = type->Word(*constant);
                break;
            }
            case Op::OpTypeArray: {
                const std::optional<std::uint32_t> stride = ArrayStrideOf(module, start.type);
                if (!stride || !scale(*stride)) return std::nullopt;
                start.type = type->Word(0);
                break;
            }
            case Op::OpTypeVector:
                if (!scale(4)) return std::nullopt;
                start.type = type->Word(0);
                break;
            default:
                return std::nullopt;
        }
    }
    return start;
}

// What the pass needs of one coalesced allocation.
struct CoalescedAllocation {
    LoweredAllocation site;
    std::uint32_t chunks = 0;                                // 16-byte chunks per record: 2, 4 or 8
    std::unordered_map<std::uint32_t, RecordOffset> chains;  // access chain result -> where it points
    std::uint32_t words = 0, address = 0, live = 0;          // its Private variables
};

// Whether `id` is an integer that is 0 or 1 whatever the invocation: a constant, or a select (or conversion) of such.
bool AtMostOneRecord(const Module& module, std::uint32_t id, int depth = 0) {
    if (depth > 4) return false;
    Result<std::uint32_t> constant = EvaluateUint32(module, id);
    if (constant.ok()) return *constant <= 1;
    const Instruction* def = module.FindDef(id);
    if (def == nullptr) return false;
    switch (def->opcode()) {
        case Op::OpSelect:
            return AtMostOneRecord(module, def->Word(1), depth + 1) && AtMostOneRecord(module, def->Word(2), depth + 1);
        case Op::OpBitcast:
        case Op::OpUConvert:
        case Op::OpSConvert:
        case Op::OpCopyObject:
            return AtMostOneRecord(module, def->Word(0), depth + 1);
        default:
            return false;
    }
}

// The allocation's records are reached only the ways the word array can stand in for (file comment): fills
// `allocation.chains`, or returns false.
bool OnlyWordAccesses(const Module& module, const LoweringContext& ctx, const Function& function, CoalescedAllocation& allocation) {
    const std::uint32_t result = allocation.site.result;
    // Values that are the allocation's records pointer (copies, loads of its Function-variable aliases), and the aliases.
    std::unordered_set<std::uint32_t> whole{result};
    std::unordered_set<std::uint32_t> aliases;
    for (const auto& [id, source] : ctx.payload_source) {
        if (source != result) continue;
        const Instruction* def = module.FindDef(id);
        if (def != nullptr && def->opcode() == Op::OpVariable) {
            aliases.insert(id);
        } else {
            whole.insert(id);
        }
    }
    // The allocation's result is the lowered OpConvertUToPtr now; its record type comes from the output.
    const std::uint32_t record_type = ctx.info.outputs[allocation.site.output].record.struct_type_id;
    if (module.FindDef(result) == nullptr || record_type == 0) return false;
    for (bool grew = true; grew;) {
        grew = false;
        for (const BasicBlock& block : function.blocks) {
            for (const Instruction& inst : block.instructions) {
                if (inst.OperandWordCount() == 0 || inst.result_id() == 0) continue;
                const Op op = inst.opcode();
                if (op == Op::OpCopyObject && whole.count(inst.Word(0)) != 0 && whole.insert(inst.result_id()).second) grew = true;
                if (op == Op::OpLoad && aliases.count(inst.Word(0)) != 0 && whole.insert(inst.result_id()).second) grew = true;
                if (!IsAccessChain(op) || allocation.chains.count(inst.result_id()) != 0) continue;
                std::optional<RecordOffset> offset;
                if (whole.count(inst.Word(0)) != 0 || aliases.count(inst.Word(0)) != 0) {
                    // The first index picks the record: with at most one record, only record 0 is one.
                    if (inst.OperandWordCount() < 2) return false;
                    Result<std::uint32_t> record = EvaluateUint32(module, inst.Word(1));
                    if (!record.ok() || *record != 0) return false;
                    offset = Walk(module, RecordOffset{0, {}, record_type}, inst, 2);
                } else if (const auto base = allocation.chains.find(inst.Word(0)); base != allocation.chains.end()) {
                    offset = Walk(module, base->second, inst, 1);
                } else {
                    continue;
                }
                std::uint32_t bytes = 0;
                if (!offset || !WordAddressable(module, offset->type, &bytes) || offset->bytes % 4 != 0) return false;
                for (const auto& scaled : offset->scaled) {
                    if (scaled.second % 4 != 0) return false;
                }
                if (offset->bytes + bytes > allocation.chunks * kChunkBytes) return false;
                allocation.chains.emplace(inst.result_id(), *offset);
                grew = true;
            }
        }
    }
    // Every use of those ids is one the rewrite handles.
    for (const BasicBlock& block : function.blocks) {
        for (const Instruction& inst : block.instructions) {
            const Op op = inst.opcode();
            for (std::size_t i = 0; i < inst.OperandWordCount(); ++i) {
                const std::uint32_t id = inst.Word(i);
                const bool is_whole = whole.count(id) != 0, is_chain = allocation.chains.count(id) != 0,
                           is_alias = aliases.count(id) != 0;
                if (!is_whole && !is_chain && !is_alias) continue;
                if (is_whole && (op == Op::OpCopyObject || (IsAccessChain(op) && i == 0))) continue;
                if (is_whole && op == Op::OpStore && i == 1 && aliases.count(inst.Word(0)) != 0) continue;
                if (is_alias && (op == Op::OpLoad || op == Op::OpStore || IsAccessChain(op)) && i == 0) continue;
                if (is_chain && (IsAccessChain(op) || op == Op::OpLoad || op == Op::OpStore) && i == 0) continue;
                return false;
            }
        }
    }
    // An alias another allocation shares (ResolvePayloadAliasesPass marks it 0) may hold either: not followed.
    for (const BasicBlock& block : function.blocks) {
        for (const Instruction& inst : block.instructions) {
            if (inst.opcode() != Op::OpStore || whole.count(inst.Word(1)) == 0) continue;
            const auto source = ctx.payload_source.find(inst.Word(0));
            if (source == ctx.payload_source.end() || source->second != result) return false;
        }
    }
    return true;
}

class RecordWords {
  public:
    RecordWords(Module& module, LoweringContext& ctx, Emitter& e, const CoalescedAllocation& allocation)
        : module_(module), ctx_(ctx), e_(e), allocation_(allocation) {}

    void Store(const RecordOffset& at, std::uint32_t value) { StoreValue(at.type, value, at, 0); }
    std::uint32_t Load(const RecordOffset& at) { return LoadValue(at.type, at, 0); }

  private:
    // Pointer to the word at `at` plus `extra` bytes; runtime indices are clamped to the array, as the record's bytes
    // past its end are not the node's to write.
    std::uint32_t WordPointer(const RecordOffset& at, std::uint32_t extra) {
        std::uint32_t index = e_.U32((at.bytes + extra) / 4);
        for (const auto& [id, stride] : at.scaled) {
            const Instruction* def = module_.FindDef(id);
            const std::uint32_t unsigned_index = def->type_id() == ctx_.u32 ? id : e_.Emit(Op::OpBitcast, ctx_.u32, {id});
            index = e_.Add(index, e_.Mul(unsigned_index, e_.U32(stride / 4)));
        }
        if (!at.scaled.empty()) index = e_.Min(index, e_.U32(allocation_.chunks * 4 - 1));
        return e_.Emit(Op::OpAccessChain, e_.types().GetPointer(StorageClass::Private, ctx_.u32), {allocation_.words, index});
    }

    void StoreValue(std::uint32_t type, std::uint32_t value, const RecordOffset& at, std::uint32_t extra) {
        const Instruction* def = module_.FindDef(type);
        switch (def->opcode()) {
            case Op::OpTypeInt:
            case Op::OpTypeFloat:
                e_.Store(WordPointer(at, extra), type == ctx_.u32 ? value : e_.Emit(Op::OpBitcast, ctx_.u32, {value}));
                return;
            case Op::OpTypeVector:
                for (std::uint32_t i = 0; i < def->Word(1); ++i)
                    StoreValue(def->Word(0), Extract(def->Word(0), value, i), at, extra + 4 * i);
                return;
            case Op::OpTypeArray: {
                const std::uint32_t stride = *ArrayStrideOf(module_, type);
                const std::uint32_t length = *EvaluateUint32(module_, def->Word(1));
                for (std::uint32_t i = 0; i < length; ++i)
                    StoreValue(def->Word(0), Extract(def->Word(0), value, i), at, extra + stride * i);
                return;
            }
            default:  // struct (WordAddressable admits nothing else)
                for (std::uint32_t m = 0; m < def->OperandWordCount(); ++m) {
                    StoreValue(def->Word(m), Extract(def->Word(m), value, m), at, extra + *OffsetOf(module_, type, m));
                }
                return;
        }
    }

    std::uint32_t LoadValue(std::uint32_t type, const RecordOffset& at, std::uint32_t extra) {
        const Instruction* def = module_.FindDef(type);
        std::vector<std::uint32_t> parts;
        switch (def->opcode()) {
            case Op::OpTypeInt:
            case Op::OpTypeFloat: {
                const std::uint32_t word = e_.Load(ctx_.u32, WordPointer(at, extra));
                return type == ctx_.u32 ? word : e_.Emit(Op::OpBitcast, type, {word});
            }
            case Op::OpTypeVector:
                for (std::uint32_t i = 0; i < def->Word(1); ++i) parts.push_back(LoadValue(def->Word(0), at, extra + 4 * i));
                break;
            case Op::OpTypeArray: {
                const std::uint32_t stride = *ArrayStrideOf(module_, type);
                const std::uint32_t length = *EvaluateUint32(module_, def->Word(1));
                for (std::uint32_t i = 0; i < length; ++i) parts.push_back(LoadValue(def->Word(0), at, extra + stride * i));
                break;
            }
            default:
                for (std::uint32_t m = 0; m < def->OperandWordCount(); ++m) {
                    parts.push_back(LoadValue(def->Word(m), at, extra + *OffsetOf(module_, type, m)));
                }
                break;
        }
        Instruction construct(Op::OpCompositeConstruct, type, module_.TakeNextId());
        for (std::uint32_t part : parts) construct.AddId(part);
        const std::uint32_t result = construct.result_id();
        e_.Append(std::move(construct));
        return result;
    }

    std::uint32_t Extract(std::uint32_t type, std::uint32_t composite, std::uint32_t index) {
        Instruction extract(Op::OpCompositeExtract, type, module_.TakeNextId());
        extract.AddId(composite).AddLiteral(index);
        const std::uint32_t result = extract.result_id();
        e_.Append(std::move(extract));
        return result;
    }

    Module& module_;
    LoweringContext& ctx_;
    Emitter& e_;
    const CoalescedAllocation& allocation_;
};

std::uint32_t BuiltinU32(Module& module, LoweringContext& ctx, Emitter& e, BuiltIn builtin) {
    std::uint32_t variable = FindBuiltinVariable(module, builtin);
    if (variable == 0) variable = CreateBuiltinVariable(module, ctx, builtin, ctx.u32);
    std::uint32_t type = ctx.u32;
    PointerInfo(module, module.FindDef(variable)->type_id(), nullptr, &type);
    const std::uint32_t value = e.Load(type, variable);
    return type == ctx.u32 ? value : e.Emit(Op::OpBitcast, ctx.u32, {value});
}

// The wrapper's writes of one allocation's records (file comment).
void EmitRecordWrites(Module& module, LoweringContext& ctx, FunctionBuilder& b, const CoalescedAllocation& allocation) {
    Emitter& e = b.emit();
    const std::uint32_t chunks = allocation.chunks;
    const std::uint32_t stride = chunks * kChunkBytes;
    const std::uint32_t v4 = e.types().GetVector(ctx.u32, 4);
    const std::uint32_t psb_v4 = e.types().GetPointer(StorageClass::PhysicalStorageBuffer, v4);
    const std::uint32_t live = e.NotEqual(e.LoadU32Var(allocation.live), e.U32(0));
    const std::uint32_t address = e.Load(ctx.u64, allocation.address);
    std::vector<std::array<std::uint32_t, 4>> chunk_words(chunks);
    for (std::uint32_t c = 0; c < chunks; ++c) {
        for (std::uint32_t w = 0; w < 4; ++w) {
            chunk_words[c][w] = e.Load(ctx.u32, e.Emit(Op::OpAccessChain, e.types().GetPointer(StorageClass::Private, ctx.u32),
                                                       {allocation.words, e.U32(c * 4 + w)}));
        }
    }
    auto store_chunk = [&](std::uint32_t at, const std::array<std::uint32_t, 4>& words) {
        e.StoreAligned(e.Emit(Op::OpConvertUToPtr, psb_v4, {at}),
                       e.Emit(Op::OpCompositeConstruct, v4, {words[0], words[1], words[2], words[3]}), kChunkBytes);
    };
    auto plus = [&](std::uint32_t base, std::uint32_t bytes) {
        return e.Emit(Op::OpIAdd, ctx.u64, {base, e.Emit(Op::OpUConvert, ctx.u64, {bytes})});
    };
    const std::uint32_t lane = BuiltinU32(module, ctx, e, BuiltIn::SubgroupLocalInvocationId);
    const std::uint32_t size = BuiltinU32(module, ctx, e, BuiltIn::SubgroupSize);
    // Every lane active (the ballot of all is the subgroup's full mask; not a BallotBitCount, as the lowering uses no
    // group Reduce, lowering_context.h), the subgroup at least a record's chunks wide (sizes are powers of two, so it is
    // a multiple of them), and lane l's record at lane 0's plus l strides.
    const std::uint32_t ballot = e.Emit(Op::OpGroupNonUniformBallot, v4, {e.U32(kScopeSubgroup), e.Bool(true)});
    std::uint32_t full = e.Bool(true);
    for (std::uint32_t i = 0; i < 4; ++i) {
        const std::uint32_t below = e.U32(32 * i);
        const std::uint32_t bits = e.Min(e.SelectU32(e.Less(below, size), e.Sub(size, below), e.U32(0)), e.U32(32));
        const std::uint32_t mask =
            e.SelectU32(e.Equal(bits, e.U32(32)), e.U32(0xFFFFFFFFu),
                        e.Sub(e.Emit(Op::OpShiftLeftLogical, ctx.u32, {e.U32(1), e.Min(bits, e.U32(31))}), e.U32(1)));
        full = e.LogicalAnd(full, e.Equal(e.ExtractU32(ballot, i), mask));
    }
    const std::uint32_t base =
        e.PackU64(e.SubgroupShuffle(e.LowU32(address), e.U32(0)), e.SubgroupShuffle(e.HighU32(address), e.U32(0)));
    const std::uint32_t expected = plus(base, e.Mul(lane, e.U32(stride)));
    const std::uint32_t in_place = e.LogicalAnd(live, e.Emit(Op::OpIEqual, ctx.bool_type, {address, expected}));
    const std::uint32_t all_in_place = e.Emit(Op::OpGroupNonUniformAll, ctx.bool_type, {e.U32(kScopeSubgroup), in_place});
    const std::uint32_t transpose = e.LogicalAnd(all_in_place, e.LogicalAnd(full, e.LessEqual(e.U32(chunks), size)));
    const std::uint32_t then_label = b.NewLabel(), else_label = b.NewLabel(), merge_label = b.NewLabel();
    b.SelectionMerge(merge_label);
    e.EmitVoid(Op::OpBranchConditional, {transpose, then_label, else_label});
    b.StartBlock(then_label);
    {
        // Lane l = chunks * q + c writes, in store k, chunk c of the record of lane k * (S / chunks) + q, at lane 0's
        // record plus 16 * (k * S + l): the subgroup's store k covers records k * S / chunks onwards, contiguously.
        // Round j brings each lane one of those chunks: lane s sends its chunk (s / (S / chunks) - j) mod chunks, and
        // lane l reads from lane ((c + j) mod chunks) * (S / chunks) + q, which is the chunk c of the record its store
        // (c + j) mod chunks needs.
        const std::uint32_t mask = e.U32(chunks - 1);
        std::uint32_t shift = 0;
        while ((1u << shift) < chunks) ++shift;
        const std::uint32_t lanes_per_chunk = e.ShiftRight(size, e.U32(shift));  // S / chunks
        const std::uint32_t q = e.ShiftRight(lane, e.U32(shift));
        const std::uint32_t c = e.And(lane, mask);
        const std::uint32_t sender_row = e.Div(lane, lanes_per_chunk);
        std::vector<std::array<std::uint32_t, 4>> out(chunks);
        for (std::uint32_t j = 0; j < chunks; ++j) {
            const std::uint32_t send_index = e.And(e.Sub(e.Add(sender_row, e.U32(chunks)), e.U32(j)), mask);
            const std::uint32_t store = e.And(e.Add(c, e.U32(j)), mask);
            const std::uint32_t source = e.Add(e.Mul(store, lanes_per_chunk), q);
            std::array<std::uint32_t, 4> received{};
            for (std::uint32_t w = 0; w < 4; ++w) {
                std::uint32_t send = chunk_words[0][w];
                for (std::uint32_t k = 1; k < chunks; ++k)
                    send = e.SelectU32(e.Equal(send_index, e.U32(k)), chunk_words[k][w], send);
                received[w] = e.SubgroupShuffle(send, source);
            }
            for (std::uint32_t k = 0; k < chunks; ++k) {
                const std::uint32_t mine = e.Equal(store, e.U32(k));
                for (std::uint32_t w = 0; w < 4; ++w) out[k][w] = j == 0 ? received[w] : e.SelectU32(mine, received[w], out[k][w]);
            }
        }
        for (std::uint32_t k = 0; k < chunks; ++k)
            store_chunk(plus(base, e.Mul(e.Add(e.Mul(e.U32(k), size), lane), e.U32(kChunkBytes))), out[k]);
    }
    e.EmitVoid(Op::OpBranch, {merge_label});
    b.StartBlock(else_label);
    b.If(live, [&]() {
        for (std::uint32_t c = 0; c < chunks; ++c) store_chunk(plus(address, e.U32(c * kChunkBytes)), chunk_words[c]);
    });
    e.EmitVoid(Op::OpBranch, {merge_label});
    b.StartBlock(merge_label);
}

}  // namespace

Result<bool> CoalesceRecordStoresPass::Run(Module& module) {
    if (!ctx_.options.coalesce_record_stores || ctx_.only_invocation_0_runs_node_code) return false;
    const auto& size = ctx_.lowered_local_size;
    if (size[0] * size[1] * size[2] < 2) return false;  // a workgroup of one invocation has nobody to combine with
    Function* entry = FindFunction(module, ctx_.EntryFunction());
    if (entry == nullptr) return Error{kNoWordOffset, "entry point function not found"};

    std::vector<CoalescedAllocation> coalesced;
    for (const LoweredAllocation& site : ctx_.lowered_allocations) {
        if (!site.once_per_invocation || site.output >= ctx_.info.outputs.size()) continue;
        const std::uint32_t stride = ctx_.options.output_record_stride[site.output];
        const std::uint32_t chunks = stride / kChunkBytes;
        if (stride % kChunkBytes != 0 || (chunks != 2 && chunks != 4 && chunks != 8)) continue;
        if (OutputRecordLimit(ctx_.info.outputs[site.output]) < 1 || !AtMostOneRecord(module, site.count)) continue;
        CoalescedAllocation allocation{site, chunks, {}, 0, 0, 0};
        if (!OnlyWordAccesses(module, ctx_, *entry, allocation)) continue;
        coalesced.push_back(std::move(allocation));
    }
    if (coalesced.empty()) return false;

    for (CoalescedAllocation& allocation : coalesced) {
        allocation.words = CreateGlobalVariable(module, ctx_, StorageClass::Private,
                                                ctx_.types->GetArray(ctx_.u32, ctx_.types->GetConstantUint(allocation.chunks * 4)));
        allocation.address = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u64);
        allocation.live = CreateGlobalVariable(module, ctx_, StorageClass::Private, ctx_.u32);
    }
    // The node's code: the allocation notes its address and whether it made a record; loads and stores through the
    // records' chains go to the words.
    for (BasicBlock& block : entry->blocks) {
        std::vector<Instruction> rewritten;
        rewritten.reserve(block.instructions.size());
        Emitter e(module, ctx_, &rewritten);
        for (Instruction& inst : block.instructions) {
            const Op op = inst.opcode();
            const CoalescedAllocation* through = nullptr;
            for (const CoalescedAllocation& allocation : coalesced) {
                if ((op == Op::OpLoad || op == Op::OpStore) && allocation.chains.count(inst.Word(0)) != 0) through = &allocation;
            }
            if (through != nullptr) {
                RecordWords words(module, ctx_, e, *through);
                const RecordOffset& at = through->chains.at(inst.Word(0));
                if (op == Op::OpStore) {
                    words.Store(at, inst.Word(1));
                } else {
                    Instruction copy(Op::OpCopyObject, inst.type_id(), inst.result_id());
                    copy.AddId(words.Load(at));
                    rewritten.push_back(std::move(copy));
                }
                continue;
            }
            const std::uint32_t result = inst.result_id();
            rewritten.push_back(std::move(inst));
            for (const CoalescedAllocation& allocation : coalesced) {
                if (result == 0 || result != allocation.site.result) continue;
                e.Store(allocation.address, allocation.site.address);
                e.Store(allocation.live, e.SelectU32(e.NotEqual(allocation.site.count, e.U32(0)), e.U32(1), e.U32(0)));
            }
        }
        block.instructions = std::move(rewritten);
        module.InvalidateIndexes();
    }

    // The wrapper: no record until the allocation says so, the node's code, then the records' writes.
    const std::uint32_t lowered_entry = ctx_.EntryFunction();
    FunctionBuilder b(module, ctx_);
    const std::uint32_t wrapper = b.DefineFunction(ctx_.void_type, {}, [&](std::span<const std::uint32_t>) {
        Emitter& e = b.emit();
        for (const CoalescedAllocation& allocation : coalesced) e.Store(allocation.live, e.U32(0));
        e.Emit(Op::OpFunctionCall, ctx_.void_type, {lowered_entry});
        for (const CoalescedAllocation& allocation : coalesced) EmitRecordWrites(module, ctx_, b, allocation);
        e.EmitVoid(Op::OpReturn, {});
    });
    FlushPendingFunctions(module, ctx_);
    RetargetEntryPoint(module, lowered_entry, wrapper);
    ctx_.entry_function = wrapper;
    return true;
}

}  // namespace execgraph::spirv::lowering
