// AMDX-aware front end over the SPIRV-Tools 2023.1 assembler. See amdx_assembler.h for the approach.
//
// Behaviour of the 2023.1 assembler that this file relies on, established with spirv-as experiments:
//   * `!<integer>` is accepted in any operand position: `OpCapability !5067`, `OpTypePointer !5068 %arr`,
//     `OpVariable %ptr !5068`, `OpDecorate %x !5099`, `OpDecorateId %arr !5020 %n`, `OpMemberDecorate %s 0 !5105`,
//     `OpDecorate %v BuiltIn !5021`, `OpExecutionModeId %main !5072 %x %y %z` all encode as expected. After an
//     immediate, every remaining token of the instruction is encoded as an untyped id, number or string, so id operands
//     of AMDX modes and decorations, and even the 2023 literal-string `PayloadNodeNameAMDX "name"`, come out right.
//   * `!<integer>` as the opcode word works only as the first token of an instruction (`%r = !0x...` is rejected
//     with "Invalid Opcode prefix"), and such a raw instruction is silently appended to the previous instruction
//     whenever that one can still take operands: after `%a = OpLoad %t %p`, the line `!0x0002138B %p` became part of
//     the OpLoad (word count 6). That makes raw opcode words unusable for readable test text, hence the placeholders.
//   * The assembler does not type-check operands, so a placeholder such as OpSelect accepts any ids.

#include "amdx_assembler.h"

#include <spirv/unified1/spirv.hpp11>

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace execgraph::test {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203u;
constexpr size_t kHeaderWords = 5;

// AMDX enumerant spellings -> values. Names are unique across kinds, so one flat table suffices; values are not
// unique (ShaderIndexAMDX is both an execution mode and a built-in, 5073), which does not matter for name -> value.
struct Enumerant {
    std::string_view name;
    uint32_t value;
};
constexpr std::array kEnumerants = {
    Enumerant{"ShaderEnqueueAMDX", 5067},                // Capability
    Enumerant{"NodePayloadAMDX", 5068},                  // StorageClass
    Enumerant{"RemainingRecursionLevelsAMDX", 5021},     // BuiltIn
    Enumerant{"ShaderIndexAMDX", 5073},                  // BuiltIn and ExecutionMode
    Enumerant{"CoalescingAMDX", 5069},                   // ExecutionMode
    Enumerant{"IsApiEntryAMDX", 5070},                   // ExecutionMode
    Enumerant{"MaxNodeRecursionAMDX", 5071},             // ExecutionMode
    Enumerant{"StaticNumWorkgroupsAMDX", 5072},          // ExecutionMode
    Enumerant{"MaxNumWorkgroupsAMDX", 5077},             // ExecutionMode
    Enumerant{"SharesInputWithAMDX", 5102},              // ExecutionMode
    Enumerant{"NodeSharesPayloadLimitsWithAMDX", 5019},  // Decoration
    Enumerant{"NodeMaxPayloadsAMDX", 5020},              // Decoration
    Enumerant{"TrackFinishWritingAMDX", 5078},           // Decoration
    Enumerant{"PayloadNodeNameAMDX", 5091},              // Decoration
    Enumerant{"PayloadNodeBaseIndexAMDX", 5098},         // Decoration
    Enumerant{"PayloadNodeSparseArrayAMDX", 5099},       // Decoration
    Enumerant{"PayloadNodeArraySizeAMDX", 5100},         // Decoration
    Enumerant{"PayloadDispatchIndirectAMDX", 5105},      // Decoration (member)
    // 2023 revision only: lets tests write modules the layer must reject.
    Enumerant{"NodeOutputPayloadAMDX", 5076},    // StorageClass, removed in 2024
    Enumerant{"CoalescedInputCountAMDX", 5021},  // BuiltIn, became RemainingRecursionLevelsAMDX
};

enum class OperandKind { kIds, kString };

// An AMDX opcode and the standard instruction with the identical binary shape that stands in for it.
struct AmdxOpcode {
    std::string_view name;
    uint32_t opcode;
    bool has_result;           // `%x = ...` form required
    size_t operand_tokens;     // Tokens after the mnemonic, including the result type when there is one.
    OperandKind operand_kind;  // kIds: every operand token must be an id; kString: exactly one quoted string.
    std::string_view placeholder_name;
    uint32_t placeholder_opcode;
};
constexpr std::array kAmdxOpcodes = {
    // <result> = OpTypeNodePayloadArrayAMDX <payload type>: same shape as OpTypeRuntimeArray.
    AmdxOpcode{"OpTypeNodePayloadArrayAMDX", 5076, true, 1, OperandKind::kIds, "OpTypeRuntimeArray",
               static_cast<uint32_t>(spv::Op::OpTypeRuntimeArray)},
    // <result> = Op <type> <scope> <count> <index>: type + 3 ids, like OpSelect.
    AmdxOpcode{"OpAllocateNodePayloadsAMDX", 5074, true, 4, OperandKind::kIds, "OpSelect",
               static_cast<uint32_t>(spv::Op::OpSelect)},
    // Op <payload array>: one id, no result, like OpReturnValue.
    AmdxOpcode{"OpEnqueueNodePayloadsAMDX", 5075, false, 1, OperandKind::kIds, "OpReturnValue",
               static_cast<uint32_t>(spv::Op::OpReturnValue)},
    // <result> = Op <type> <id>: like OpCopyObject.
    AmdxOpcode{"OpFinishWritingNodePayloadAMDX", 5078, true, 2, OperandKind::kIds, "OpCopyObject",
               static_cast<uint32_t>(spv::Op::OpCopyObject)},
    AmdxOpcode{"OpNodePayloadArrayLengthAMDX", 5090, true, 2, OperandKind::kIds, "OpCopyObject",
               static_cast<uint32_t>(spv::Op::OpCopyObject)},
    // <result> = Op <type> <id> <id>: like OpIAdd.
    AmdxOpcode{"OpIsNodePayloadValidAMDX", 5101, true, 3, OperandKind::kIds, "OpIAdd",
               static_cast<uint32_t>(spv::Op::OpIAdd)},
    // <result> = Op "literal": like OpString (result id, no type, one literal string).
    AmdxOpcode{"OpConstantStringAMDX", 5103, true, 1, OperandKind::kString, "OpString",
               static_cast<uint32_t>(spv::Op::OpString)},
    AmdxOpcode{"OpSpecConstantStringAMDX", 5104, true, 1, OperandKind::kString, "OpString",
               static_cast<uint32_t>(spv::Op::OpString)},
    // 2023 revision (reject fixtures): OpInitializeNodePayloadsAMDX <array> <scope> <count> <index>, no result, 4 ids,
    // like OpEmitMeshTasksEXT with its optional payload operand; OpFinalizeNodePayloadsAMDX <array>.
    AmdxOpcode{"OpInitializeNodePayloadsAMDX", 5090, false, 4, OperandKind::kIds, "OpEmitMeshTasksEXT",
               static_cast<uint32_t>(spv::Op::OpEmitMeshTasksEXT)},
    AmdxOpcode{"OpFinalizeNodePayloadsAMDX", 5075, false, 1, OperandKind::kIds, "OpReturnValue",
               static_cast<uint32_t>(spv::Op::OpReturnValue)},
};

struct Token {
    size_t begin;
    size_t end;
    size_t line;  // 1-based
};

// One instruction as the assembler will see it: an optional `%result =`, an opcode token and its operand tokens.
struct TextInstruction {
    std::optional<size_t> result_token;
    size_t opcode_token;
    std::vector<size_t> operand_tokens;
};

struct Patch {
    size_t instruction_ordinal;
    const AmdxOpcode* op;
    size_t line;
};

std::string LineError(size_t line, std::string_view message) {
    return "line " + std::to_string(line) + ": " + std::string(message);
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Splits like spvTextWordGet: whitespace separates words, ';' starts a comment, and quotes (with backslash escapes)
// protect both. Exact agreement matters only for where instructions start, which depends on Op-words and `%x =`.
std::vector<Token> Tokenize(std::string_view text) {
    std::vector<Token> tokens;
    size_t line = 1;
    size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            ++i;
        } else if (IsSpace(c)) {
            ++i;
        } else if (c == ';') {
            while (i < text.size() && text[i] != '\n') ++i;
        } else {
            const size_t begin = i;
            const size_t token_line = line;
            bool quoting = false;
            bool escaping = false;
            while (i < text.size()) {
                const char ch = text[i];
                if (!quoting && !escaping && (IsSpace(ch) || ch == ';')) break;
                if (ch == '\n') ++line;  // Newlines inside a quoted string still count for later line numbers.
                if (ch == '\\' && !escaping) {
                    escaping = true;
                } else {
                    if (ch == '"' && !escaping) quoting = !quoting;
                    escaping = false;
                }
                ++i;
            }
            tokens.push_back({begin, i, token_line});
        }
    }
    return tokens;
}

bool StartsWithOp(std::string_view word) {
    return word.size() >= 3 && word[0] == 'O' && word[1] == 'p' && word[2] >= 'A' && word[2] <= 'Z';
}

// Groups tokens into instructions with the same boundary rule the assembler uses (AssemblyContext::isStartOfNewInst):
// a new instruction starts at a word beginning with "Op" + capital letter, or at `%id =`.
std::vector<TextInstruction> GroupInstructions(std::string_view text, const std::vector<Token>& tokens) {
    auto word = [&](size_t t) { return text.substr(tokens[t].begin, tokens[t].end - tokens[t].begin); };
    std::vector<TextInstruction> instructions;
    size_t t = 0;
    while (t < tokens.size()) {
        TextInstruction inst;
        if (word(t).starts_with('%') && t + 1 < tokens.size() && word(t + 1) == "=") {
            inst.result_token = t;
            t += 2;
            if (t >= tokens.size()) {
                // Dangling `%x =`; let the assembler report it.
                inst.opcode_token = t - 1;
                instructions.push_back(inst);
                break;
            }
        }
        inst.opcode_token = t++;
        while (t < tokens.size()) {
            const std::string_view w = word(t);
            if (StartsWithOp(w) || (w.starts_with('%') && t + 1 < tokens.size() && word(t + 1) == "=")) break;
            inst.operand_tokens.push_back(t++);
        }
        instructions.push_back(std::move(inst));
    }
    return instructions;
}

const AmdxOpcode* FindAmdxOpcode(std::string_view name) {
    for (const AmdxOpcode& op : kAmdxOpcodes) {
        if (op.name == name) return &op;
    }
    return nullptr;
}

std::optional<uint32_t> FindEnumerant(std::string_view name) {
    for (const Enumerant& e : kEnumerants) {
        if (e.name == name) return e.value;
    }
    return std::nullopt;
}

// Checks an AMDX instruction's shape up front so that errors name the AMDX instruction, not its placeholder.
std::string CheckAmdxShape(std::string_view text, const std::vector<Token>& tokens, const TextInstruction& inst,
                           const AmdxOpcode& op) {
    auto word = [&](size_t t) { return text.substr(tokens[t].begin, tokens[t].end - tokens[t].begin); };
    const size_t line = tokens[inst.opcode_token].line;
    const std::string name(op.name);
    if (op.has_result && !inst.result_token) return LineError(line, name + " needs a result id (`%id = " + name + " ...`)");
    if (!op.has_result && inst.result_token) return LineError(line, name + " has no result id");
    if (inst.operand_tokens.size() != op.operand_tokens) {
        return LineError(line, name + " expects " + std::to_string(op.operand_tokens) + " operand(s), got " +
                                   std::to_string(inst.operand_tokens.size()));
    }
    for (size_t t : inst.operand_tokens) {
        const std::string_view w = word(t);
        if (op.operand_kind == OperandKind::kString) {
            if (w.size() < 2 || w.front() != '"' || w.back() != '"') {
                return LineError(tokens[t].line, name + " expects a quoted literal string, got '" + std::string(w) + "'");
            }
        } else if (!w.starts_with('%')) {
            return LineError(tokens[t].line, name + " expects id operands (%name), got '" + std::string(w) + "'");
        }
    }
    return {};
}

struct ContextDeleter {
    void operator()(spv_context c) const { spvContextDestroy(c); }
};

// Runs spvTextToBinary and converts its diagnostic into "line N: ...".
AssembleResult RunAssembler(std::string_view text, spv_target_env target_env) {
    AssembleResult result;
    std::unique_ptr<spv_context_t, ContextDeleter> context(spvContextCreate(target_env));
    if (!context) {
        result.error = "line 0: unsupported target environment";
        return result;
    }
    spv_binary binary = nullptr;
    spv_diagnostic diagnostic = nullptr;
    const spv_result_t status = spvTextToBinary(context.get(), text.data(), text.size(), &binary, &diagnostic);
    if (status == SPV_SUCCESS && binary != nullptr) {
        result.words.assign(binary->code, binary->code + binary->wordCount);
    } else {
        // The diagnostic's own line counter skips newlines inside quoted strings, so derive the line from its byte index.
        size_t line = diagnostic ? diagnostic->position.line + 1 : 0;
        if (diagnostic && diagnostic->isTextSource && diagnostic->position.index <= text.size()) {
            line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + diagnostic->position.index, '\n'));
        }
        const std::string message = diagnostic && diagnostic->error ? diagnostic->error : "spvTextToBinary failed";
        result.error = LineError(line, message);
    }
    spvBinaryDestroy(binary);
    spvDiagnosticDestroy(diagnostic);
    return result;
}

}  // namespace

AssembleResult AssemblePlain(std::string_view text, spv_target_env target_env) { return RunAssembler(text, target_env); }

AssembleResult AssembleAmdx(std::string_view text, spv_target_env target_env) {
    const std::vector<Token> tokens = Tokenize(text);
    const std::vector<TextInstruction> instructions = GroupInstructions(text, tokens);
    auto word = [&](size_t t) { return text.substr(tokens[t].begin, tokens[t].end - tokens[t].begin); };

    // Replacement text per token; tokens are visited in order, so the rewritten text is built in one pass below.
    std::vector<std::pair<size_t, std::string>> replacements;
    std::vector<Patch> patches;
    for (size_t ordinal = 0; ordinal < instructions.size(); ++ordinal) {
        const TextInstruction& inst = instructions[ordinal];
        if (const AmdxOpcode* op = FindAmdxOpcode(word(inst.opcode_token))) {
            if (std::string error = CheckAmdxShape(text, tokens, inst, *op); !error.empty()) return {{}, error};
            replacements.emplace_back(inst.opcode_token, std::string(op->placeholder_name));
            patches.push_back({ordinal, op, tokens[inst.opcode_token].line});
        }
        for (size_t t : inst.operand_tokens) {
            if (std::optional<uint32_t> value = FindEnumerant(word(t))) replacements.emplace_back(t, "!" + std::to_string(*value));
        }
    }

    // Token replacements never contain newlines, so every line keeps its number and assembler diagnostics map 1:1.
    std::string rewritten;
    rewritten.reserve(text.size() + 64);
    size_t copied = 0;
    for (const auto& [t, replacement] : replacements) {
        rewritten.append(text.substr(copied, tokens[t].begin - copied));
        rewritten.append(replacement);
        copied = tokens[t].end;
    }
    rewritten.append(text.substr(copied));

    AssembleResult result = RunAssembler(rewritten, target_env);
    if (!result.ok()) {
        // Point out the placeholder if the failure is on an AMDX line, because the assembler names the placeholder.
        for (const Patch& patch : patches) {
            if (result.error.starts_with("line " + std::to_string(patch.line) + ":")) {
                result.error += " (" + std::string(patch.op->name) + " is assembled as placeholder " +
                                std::string(patch.op->placeholder_name) + ")";
                break;
            }
        }
        return result;
    }
    if (patches.empty()) return result;

    // Walk the binary; the assembler emits exactly one instruction per text instruction, in order.
    std::vector<size_t> offsets;
    for (size_t i = kHeaderWords; i < result.words.size();) {
        const uint32_t count = result.words[i] >> 16;
        if (count == 0) break;
        offsets.push_back(i);
        i += count;
    }
    if (offsets.size() != instructions.size()) {
        return {{}, LineError(patches.front().line,
                              "cannot locate AMDX instructions: the text has " + std::to_string(instructions.size()) +
                                  " instructions but the binary " + std::to_string(offsets.size()) +
                                  " (raw !<word> opcodes cannot be mixed with AMDX mnemonics)")};
    }
    for (const Patch& patch : patches) {
        uint32_t& first_word = result.words[offsets[patch.instruction_ordinal]];
        if ((first_word & 0xFFFFu) != patch.op->placeholder_opcode) {
            return {{}, LineError(patch.line, "internal error: placeholder for " + std::string(patch.op->name) + " not found")};
        }
        first_word = (first_word & 0xFFFF0000u) | patch.op->opcode;
    }
    return result;
}

std::vector<std::vector<uint32_t>> FindInstructions(std::span<const uint32_t> words, uint32_t opcode) {
    std::vector<std::vector<uint32_t>> found;
    for (size_t i = kHeaderWords; i < words.size();) {
        const uint32_t count = words[i] >> 16;
        if (count == 0 || i + count > words.size()) break;
        if ((words[i] & 0xFFFFu) == opcode) found.emplace_back(words.begin() + i + 1, words.begin() + i + count);
        i += count;
    }
    return found;
}

std::string CheckModuleStructure(std::span<const uint32_t> words) {
    if (words.size() < kHeaderWords) return "shorter than the SPIR-V header";
    if (words[0] != kSpirvMagic) return "bad magic number";
    if (words[3] == 0) return "id bound is 0";
    for (size_t i = kHeaderWords; i < words.size();) {
        const uint32_t count = words[i] >> 16;
        if (count == 0) return "instruction at word " + std::to_string(i) + " has word count 0";
        if (i + count > words.size()) return "instruction at word " + std::to_string(i) + " runs past the end";
        i += count;
    }
    return {};
}

std::vector<uint32_t> PackLiteralString(std::string_view text) {
    std::vector<uint32_t> words(text.size() / 4 + 1, 0u);  // +1 guarantees room for the terminating NUL.
    for (size_t i = 0; i < text.size(); ++i) {
        words[i / 4] |= static_cast<uint32_t>(static_cast<unsigned char>(text[i])) << (8 * (i % 4));
    }
    return words;
}

}  // namespace execgraph::test
