// SPDX-License-Identifier: Apache-2.0
// The module IR: sections in the SPIR-V logical layout order (spec §2.4), so serialising is a concatenation, plus
// functions made of blocks. Original instruction order is kept inside every section; in particular the
// types/constants/globals section stays in input order because DXC defines constants *after* the
// OpTypeNodePayloadArrayAMDX that an OpDecorateId refers to them from (dxc-spirv-shapes.md §3.2).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "execgraph/spirv/id_map.h"
#include "execgraph/spirv/instruction.h"

namespace execgraph::spirv {

inline constexpr std::uint32_t kSpirvMagic = 0x07230203u;
inline constexpr std::uint32_t kSpirvVersion1_6 = 0x00010600u;

struct ModuleHeader {
    std::uint32_t magic = kSpirvMagic;
    std::uint32_t version = kSpirvVersion1_6;
    std::uint32_t generator = 0;
    std::uint32_t bound = 1;  // every id is < bound
    std::uint32_t schema = 0;
};

// Module-level sections in layout order (spec §2.4 items 1-9). Functions follow them.
enum class Section : std::uint8_t {
    kCapability,
    kExtension,
    kExtInstImport,
    kMemoryModel,
    kEntryPoint,
    kExecutionMode,
    kDebugString,           // OpString, OpSourceExtension, OpSource, OpSourceContinued
    kDebugName,             // OpName, OpMemberName
    kDebugModuleProcessed,  // OpModuleProcessed
    kAnnotation,            // decorations
    kTypesValues,           // types, constants, module-scope variables, OpUndef, OpLine/OpNoLine, non-semantic OpExtInst
};
inline constexpr std::size_t kSectionCount = 11;

struct BasicBlock {
    // instructions[0] is the OpLabel. Debug-line instructions (OpLine/OpNoLine/non-semantic OpExtInst) found between
    // a terminator and the next OpLabel stay at the end of the earlier block, so the byte order is preserved.
    std::vector<Instruction> instructions;

    std::uint32_t label_id() const { return instructions.empty() ? 0 : instructions.front().result_id(); }
};

struct Function {
    // OpFunction, its OpFunctionParameters, and debug-line instructions around them. glslang -g emits OpLine between
    // one OpFunctionEnd and the next OpFunction; those lines lead this header, before the OpFunction.
    std::vector<Instruction> header;
    std::vector<BasicBlock> blocks;  // empty for a function declaration
    Instruction end{Op::OpFunctionEnd};
    // Debug-line instructions after the last OpFunctionEnd of the module (only ever on the last function).
    std::vector<Instruction> trailing;

    const Instruction* definition() const {
        for (const Instruction& inst : header) {
            if (inst.opcode() == Op::OpFunction) return &inst;
        }
        return nullptr;
    }
    std::uint32_t result_id() const {
        const Instruction* def = definition();
        return def != nullptr ? def->result_id() : 0;
    }
};

class Module {
  public:
    Module() = default;
    Module(const Module& other);
    Module& operator=(const Module& other);
    Module(Module&&) noexcept = default;
    Module& operator=(Module&&) noexcept = default;

    ModuleHeader& header() { return header_; }
    const ModuleHeader& header() const { return header_; }

    const std::vector<Instruction>& section(Section s) const { return sections_[static_cast<std::size_t>(s)]; }
    // Direct mutable access; invalidates the lookup indexes (they are rebuilt on the next query).
    std::vector<Instruction>& mutable_section(Section s) {
        InvalidateIndexes();
        return sections_[static_cast<std::size_t>(s)];
    }
    const std::vector<Function>& functions() const { return functions_; }
    std::vector<Function>& mutable_functions() {
        InvalidateIndexes();
        return functions_;
    }

    // Appends to a module-level section, keeping the indexes current when that is cheap.
    const Instruction& Append(Section s, Instruction instruction);

    // Returns a fresh id and bumps the header's bound.
    std::uint32_t TakeNextId() { return header_.bound++; }

    // Convenience builders that skip duplicates.
    void AddCapability(Capability capability);
    void AddExtension(std::string_view name);

    // Lookups. Pointers stay valid until the module is next mutated.
    const Instruction* FindDef(std::uint32_t id) const;
    // OpDecorate, OpDecorateId, OpDecorateString, OpMemberDecorate and OpMemberDecorateString targeting `id`.
    std::span<const Instruction* const> DecorationsOf(std::uint32_t id) const;
    // The string of the OpName for `id`, or "".
    std::string NameOf(std::uint32_t id) const;
    void InvalidateIndexes() const { index_valid_ = false; }

    std::size_t InstructionCount() const;

    template <typename Fn>
    void ForEachInstruction(Fn&& fn) const {
        for (const auto& section : sections_) {
            for (const Instruction& inst : section) fn(inst);
        }
        for (const Function& function : functions_) {
            for (const Instruction& inst : function.header) fn(inst);
            for (const BasicBlock& block : function.blocks) {
                for (const Instruction& inst : block.instructions) fn(inst);
            }
            fn(function.end);
            for (const Instruction& inst : function.trailing) fn(inst);
        }
    }
    // Mutable variant; invalidates the indexes.
    template <typename Fn>
    void ForEachInstructionMutable(Fn&& fn) {
        InvalidateIndexes();
        for (auto& section : sections_) {
            for (Instruction& inst : section) fn(inst);
        }
        for (Function& function : functions_) {
            for (Instruction& inst : function.header) fn(inst);
            for (BasicBlock& block : function.blocks) {
                for (Instruction& inst : block.instructions) fn(inst);
            }
            fn(function.end);
            for (Instruction& inst : function.trailing) fn(inst);
        }
    }

  private:
    void BuildIndexes() const;
    void IndexInstruction(const Instruction& inst) const;

    ModuleHeader header_;
    std::array<std::vector<Instruction>, kSectionCount> sections_;
    std::vector<Function> functions_;

    // Lazily built lookups (logically const).
    mutable bool index_valid_ = false;
    mutable IdMap<const Instruction*> defs_;
    mutable std::vector<std::pair<std::uint32_t, const Instruction*>> decorations_;  // sorted by target
    mutable bool decorations_sorted_ = true;
    mutable std::vector<const Instruction*> decoration_view_;
    mutable std::vector<std::pair<std::uint32_t, const Instruction*>> names_;  // sorted by target
    mutable bool names_sorted_ = true;
};

}  // namespace execgraph::spirv
