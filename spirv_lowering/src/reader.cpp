// SPDX-License-Identifier: Apache-2.0
// Binary reader. The stream is walked once: each instruction is decoded against the generated grammar tables
// (operand_decoder.cpp) and then placed into its logical-layout section (spec §2.4), which also enforces the order.
#include "execgraph/spirv/reader.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "amdx_revision.h"
#include "operand_decoder.h"
#include "section_rules.h"

namespace execgraph::spirv {
namespace {

std::uint32_t ByteSwap(std::uint32_t w) { return (w >> 24) | ((w >> 8) & 0xff00u) | ((w << 8) & 0xff0000u) | (w << 24); }

// Instructions that carry only debug line information and may sit between functions.
bool IsDebugLine(Op op) { return op == Op::OpLine || op == Op::OpNoLine || op == Op::OpExtInst; }

std::string Name(Op op) { return std::string(OpcodeName(static_cast<std::uint32_t>(op))); }

class Reader {
  public:
    explicit Reader(std::span<const std::uint32_t> words) : words_(words) {}

    Result<Module> Read() {
        if (Status status = ReadHeader(); !status) return status.error();
        internal::OperandDecoder decoder(words_, module_.header().bound);
        ReserveSections();
        std::uint32_t offset = 5;
        while (offset < words_.size()) {
            const std::uint32_t first = words_[offset];
            const std::uint32_t word_count = first >> 16;
            if (word_count == 0) return Error{offset, "instruction word count is 0"};
            if (word_count > words_.size() - offset) {
                return Error{offset, "instruction word count " + std::to_string(word_count) + " runs past the end of the stream (" +
                                         std::to_string(words_.size() - offset) + " words left)"};
            }
            Result<Instruction> decoded = decoder.Decode(offset);
            if (!decoded) return decoded.error();
            if (Status status = Place(std::move(decoded).value(), offset); !status) return status.error();
            offset += word_count;
        }
        const std::uint32_t end = static_cast<std::uint32_t>(words_.size());
        if (in_function_) return Error{end, "missing OpFunctionEnd: the stream ends inside a function"};
        if (!between_functions_.empty()) functions_.back().trailing = std::move(between_functions_);
        if (sections_[static_cast<std::size_t>(Section::kMemoryModel)].empty()) return Error{end, "missing OpMemoryModel"};
        if (sections_[static_cast<std::size_t>(Section::kEntryPoint)].empty() && !DeclaresLinkage()) {
            // Universal validation rule (spec §2.16.1): without the Linkage capability a module needs an entry point.
            return Error{end, "no OpEntryPoint (only modules declaring the Linkage capability may omit it)"};
        }
        if (Status status = decoder.CheckAllReferencedIdsDefined(); !status) return status.error();
        for (std::size_t i = 0; i < kSectionCount; ++i) module_.mutable_section(static_cast<Section>(i)) = std::move(sections_[i]);
        module_.mutable_functions() = std::move(functions_);
        if (Status status = internal::CheckNotAmdx2023(module_); !status) return status.error();
        return std::move(module_);
    }

  private:
    Status ReadHeader() {
        // Spec §2.3 table 1: magic, version, generator, bound, schema.
        if (words_.size() < 5) {
            return Error{static_cast<std::uint32_t>(words_.size()),
                         "truncated stream: the header needs 5 words, got " + std::to_string(words_.size())};
        }
        ModuleHeader& header = module_.header();
        header = ModuleHeader{words_[0], words_[1], words_[2], words_[3], words_[4]};
        if (header.magic != kSpirvMagic) return Error{0, "bad magic number"};
        const std::uint32_t major = (header.version >> 16) & 0xffu;
        const std::uint32_t minor = (header.version >> 8) & 0xffu;
        if ((header.version & 0xff0000ffu) != 0 || major != 1 || minor > 6) {
            return Error{1, "unsupported SPIR-V version word 0x" + ToHex(header.version) + " (expected 1.0 to 1.6)"};
        }
        if (header.bound == 0) return Error{3, "id bound is 0"};
        return {};
    }

    // One cheap pass over the opcode words to size the module-level sections exactly: growing vectors of
    // Instructions otherwise dominates parse time. Stops quietly at the first bad word count (Read reports it).
    void ReserveSections() {
        std::array<std::size_t, kSectionCount> counts{};
        for (std::size_t offset = 5; offset < words_.size();) {
            const std::uint32_t word_count = words_[offset] >> 16;
            if (word_count == 0) break;
            const Op op = static_cast<Op>(words_[offset] & 0xffffu);
            if (op == Op::OpFunction) break;  // everything module-level precedes the first function
            const internal::Placement placement = internal::PlacementOf(op);
            if (placement.kind != internal::PlacementKind::kFunctionOnly) ++counts[static_cast<std::size_t>(placement.section)];
            offset += word_count;
        }
        for (std::size_t i = 0; i < kSectionCount; ++i) sections_[i].reserve(counts[i]);
    }

    bool DeclaresLinkage() const {
        for (const Instruction& inst : sections_[static_cast<std::size_t>(Section::kCapability)]) {
            if (inst.Word(0) == static_cast<std::uint32_t>(Capability::Linkage)) return true;
        }
        return false;
    }

    static std::string ToHex(std::uint32_t value) {
        static const char kDigits[] = "0123456789abcdef";
        std::string text(8, '0');
        for (int i = 7; i >= 0; --i, value >>= 4) text[static_cast<std::size_t>(i)] = kDigits[value & 0xfu];
        return text;
    }

    Status Place(Instruction inst, std::uint32_t offset) {
        const Op op = inst.opcode();
        const internal::Placement placement = internal::PlacementOf(op);
        if (!in_function_) {
            if (op == Op::OpFunction) {
                seen_function_ = true;
                in_function_ = true;
                in_block_ = false;
                functions_.emplace_back();
                std::vector<Instruction>& header = functions_.back().header;
                header.insert(header.end(), std::make_move_iterator(between_functions_.begin()),
                              std::make_move_iterator(between_functions_.end()));
                between_functions_.clear();
                header.push_back(std::move(inst));
                return {};
            }
            if (seen_function_ && IsDebugLine(op)) {
                between_functions_.push_back(std::move(inst));
                return {};
            }
            Section section;
            if (placement.kind == internal::PlacementKind::kModuleSection) {
                section = placement.section;
            } else if (placement.kind == internal::PlacementKind::kTypesOrFunction) {
                section = Section::kTypesValues;
            } else {
                return Error{offset, Name(op) + " is not allowed outside a function"};
            }
            if (seen_function_) return Error{offset, Name(op) + " is in the wrong section: it appears after the first OpFunction"};
            if (static_cast<int>(section) < current_section_) {
                return Error{offset, Name(op) + " is in the wrong section: " + internal::SectionName(section) +
                                         " instructions must precede " +
                                         internal::SectionName(static_cast<Section>(current_section_)) + " instructions"};
            }
            if (section == Section::kMemoryModel && !sections_[static_cast<std::size_t>(Section::kMemoryModel)].empty()) {
                return Error{offset, "more than one OpMemoryModel"};
            }
            current_section_ = static_cast<int>(section);
            sections_[static_cast<std::size_t>(section)].push_back(std::move(inst));
            return {};
        }

        Function& function = functions_.back();
        switch (op) {
            case Op::OpFunction:
                return Error{offset, "OpFunction inside a function (missing OpFunctionEnd)"};
            case Op::OpFunctionEnd:
                function.end = std::move(inst);
                in_function_ = false;
                return {};
            case Op::OpFunctionParameter:
                if (in_block_) return Error{offset, "OpFunctionParameter after the first OpLabel"};
                function.header.push_back(std::move(inst));
                return {};
            case Op::OpLabel:
                in_block_ = true;
                function.blocks.emplace_back();
                function.blocks.back().instructions.push_back(std::move(inst));
                return {};
            default:
                break;
        }
        if (placement.kind == internal::PlacementKind::kModuleSection) {
            return Error{offset, Name(op) + " is in the wrong section: it is not allowed inside a function"};
        }
        if (!in_block_) {
            if (IsDebugLine(op)) {
                function.header.push_back(std::move(inst));  // debug line info before the first block
                return {};
            }
            return Error{offset, Name(op) + " appears before the first OpLabel of its function"};
        }
        function.blocks.back().instructions.push_back(std::move(inst));
        return {};
    }

    std::span<const std::uint32_t> words_;
    Module module_;
    // Filled here and moved into the module at the end, so the module's lazy indexes are not touched per instruction.
    std::array<std::vector<Instruction>, kSectionCount> sections_;
    std::vector<Function> functions_;
    std::vector<Instruction> between_functions_;  // debug lines after an OpFunctionEnd, waiting for the next OpFunction
    int current_section_ = 0;
    bool seen_function_ = false;
    bool in_function_ = false;
    bool in_block_ = false;
};

}  // namespace

Result<Module> ReadModule(std::span<const std::uint32_t> words) {
    if (!words.empty() && words[0] == ByteSwap(kSpirvMagic)) {
        std::vector<std::uint32_t> swapped(words.begin(), words.end());
        for (std::uint32_t& w : swapped) w = ByteSwap(w);
        return ReadModule(swapped);
    }
    Reader reader(words);
    return reader.Read();
}

Result<Module> ReadModuleBytes(std::span<const std::uint8_t> bytes) {
    if (bytes.size() % 4 != 0) {
        return Error{static_cast<std::uint32_t>(bytes.size() / 4),
                     "truncated stream: " + std::to_string(bytes.size()) + " bytes is not a whole number of words"};
    }
    std::vector<std::uint32_t> words(bytes.size() / 4);
    for (std::size_t i = 0; i < words.size(); ++i) {
        words[i] = static_cast<std::uint32_t>(bytes[4 * i]) | (static_cast<std::uint32_t>(bytes[4 * i + 1]) << 8) |
                   (static_cast<std::uint32_t>(bytes[4 * i + 2]) << 16) | (static_cast<std::uint32_t>(bytes[4 * i + 3]) << 24);
    }
    return ReadModule(words);
}

}  // namespace execgraph::spirv
