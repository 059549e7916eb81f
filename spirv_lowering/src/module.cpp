// SPDX-License-Identifier: Apache-2.0
#include "execgraph/spirv/module.h"

#include <algorithm>

namespace execgraph::spirv {
namespace {

bool IsDecoration(Op op) {
    return op == Op::OpDecorate || op == Op::OpDecorateId || op == Op::OpDecorateString || op == Op::OpMemberDecorate ||
           op == Op::OpMemberDecorateString;
}

bool LessByTarget(const std::pair<std::uint32_t, const Instruction*>& a, const std::pair<std::uint32_t, const Instruction*>& b) {
    return a.first < b.first;
}

}  // namespace

Module::Module(const Module& other) : header_(other.header_), sections_(other.sections_), functions_(other.functions_) {}

Module& Module::operator=(const Module& other) {
    if (this != &other) {
        header_ = other.header_;
        sections_ = other.sections_;
        functions_ = other.functions_;
        InvalidateIndexes();
    }
    return *this;
}

const Instruction& Module::Append(Section s, Instruction instruction) {
    std::vector<Instruction>& target = sections_[static_cast<std::size_t>(s)];
    const bool reallocates = target.size() == target.capacity();
    target.push_back(std::move(instruction));
    const Instruction& added = target.back();
    if (reallocates) {
        InvalidateIndexes();
    } else if (index_valid_) {
        IndexInstruction(added);
    }
    return added;
}

void Module::AddCapability(Capability capability) {
    for (const Instruction& inst : section(Section::kCapability)) {
        if (inst.Word(0) == static_cast<std::uint32_t>(capability)) return;
    }
    Append(Section::kCapability, Instruction(Op::OpCapability).AddEnum(OperandKind::Capability, capability));
}

void Module::AddExtension(std::string_view name) {
    for (const Instruction& inst : section(Section::kExtension)) {
        if (inst.StringAt(0) == name) return;
    }
    Instruction inst(Op::OpExtension);
    inst.AddString(name);
    Append(Section::kExtension, std::move(inst));
}

void Module::IndexInstruction(const Instruction& inst) const {
    if (inst.result_id() != 0 && inst.result_id() < header_.bound) defs_[inst.result_id()] = &inst;
    if (IsDecoration(inst.opcode()) && inst.OperandWordCount() > 0) {
        decorations_.emplace_back(inst.Word(0), &inst);
        decorations_sorted_ = false;
    } else if (inst.opcode() == Op::OpName && inst.OperandWordCount() > 0) {
        names_.emplace_back(inst.Word(0), &inst);
        names_sorted_ = false;
    }
}

void Module::BuildIndexes() const {
    defs_.Reset(header_.bound, InstructionCount());
    decorations_.clear();
    names_.clear();
    ForEachInstruction([this](const Instruction& inst) { IndexInstruction(inst); });
    index_valid_ = true;
}

const Instruction* Module::FindDef(std::uint32_t id) const {
    if (!index_valid_) BuildIndexes();
    const Instruction* const* found = defs_.Find(id);
    return found != nullptr ? *found : nullptr;
}

std::span<const Instruction* const> Module::DecorationsOf(std::uint32_t id) const {
    if (!index_valid_) BuildIndexes();
    if (!decorations_sorted_) {
        std::stable_sort(decorations_.begin(), decorations_.end(), LessByTarget);
        decoration_view_.clear();
        for (const auto& entry : decorations_) decoration_view_.push_back(entry.second);
        decorations_sorted_ = true;
    }
    const auto range = std::equal_range(decorations_.begin(), decorations_.end(), std::make_pair(id, nullptr), LessByTarget);
    const std::size_t first = static_cast<std::size_t>(range.first - decorations_.begin());
    const std::size_t count = static_cast<std::size_t>(range.second - range.first);
    return std::span<const Instruction* const>(decoration_view_.data() + first, count);
}

std::string Module::NameOf(std::uint32_t id) const {
    if (!index_valid_) BuildIndexes();
    if (!names_sorted_) {
        std::stable_sort(names_.begin(), names_.end(), LessByTarget);
        names_sorted_ = true;
    }
    const auto it = std::lower_bound(names_.begin(), names_.end(), std::make_pair(id, nullptr), LessByTarget);
    if (it == names_.end() || it->first != id) return {};
    return it->second->StringAt(1);
}

std::size_t Module::InstructionCount() const {
    std::size_t count = 0;
    for (const auto& section : sections_) count += section.size();
    for (const Function& function : functions_) {
        count += function.header.size() + 1 + function.trailing.size();
        for (const BasicBlock& block : function.blocks) count += block.instructions.size();
    }
    return count;
}

}  // namespace execgraph::spirv
