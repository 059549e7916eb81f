// Test-only SPIR-V assembler front end that understands SPV_AMDX_shader_enqueue mnemonics.
//
// Debian bookworm ships SPIRV-Tools 2023.1, which predates SPV_AMDX_shader_enqueue, so its assembler rejects every AMDX
// name. Tests still want to write readable AMDX modules the way DXC / spirv-dis HEAD print them, so this front end
// rewrites the AMDX spellings into forms 2023.1 accepts, assembles in-process with spvTextToBinary, and patches the
// resulting binary. It never runs the validator: 2023.1 would reject every AMDX module.
//
// How the AMDX spellings are handled (see amdx_assembler.cpp for the experiments behind this):
//   * Enumerants (capability, storage class, built-ins, execution modes, decorations) are rewritten in place to the
//     raw-word form `!<value>`, e.g. `OpCapability ShaderEnqueueAMDX` -> `OpCapability !5067`. 2023.1 accepts `!N` in
//     any operand position and then takes the rest of the instruction as untyped ids / literals / strings, which is
//     exactly how the AMDX operands are encoded.
//   * The eight AMDX opcodes (and the two 2023-revision ones, for reject fixtures) are assembled as a standard
//     placeholder instruction of the same binary shape (same result-type/result-id layout, same operand word
//     encoding), and the placeholder's opcode half-word is patched afterwards. Raw `!<opcode-word>` instructions are not
//     used because 2023.1 glues them onto the previous instruction whenever that one still accepts optional or
//     variadic operands (OpLoad, OpStore, OpTypeStruct, OpAccessChain, ...), and because `%id = !word` is rejected.
//
// Besides the 2024 (SPIRV-Headers HEAD) names, the 2023-revision names OpInitializeNodePayloadsAMDX (5090, no result,
// 4 ids), OpFinalizeNodePayloadsAMDX (5075), storage class NodeOutputPayloadAMDX (5076) and built-in
// CoalescedInputCountAMDX (5021) are accepted so that tests can write modules the layer must reject.
//
// Limitation: raw `!<word>` tokens in *opcode* position must not be combined with the AMDX opcode mnemonics in one
// module, because the instruction boundaries of such text cannot be recovered reliably; the front end reports an
// error when it detects the mismatch.

#ifndef EXECGRAPH_TESTS_SUPPORT_AMDX_ASSEMBLER_H_
#define EXECGRAPH_TESTS_SUPPORT_AMDX_ASSEMBLER_H_

#include <spirv-tools/libspirv.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace execgraph::test {

struct AssembleResult {
    std::vector<uint32_t> words;  // Complete module including the 5-word header; empty on error.
    std::string error;            // Empty on success; otherwise "line N: message" (1-based line of the input text).
    bool ok() const { return error.empty(); }
};

// Assembles spirv-as text that may use SPV_AMDX_shader_enqueue (2024 revision) mnemonics by name.
// OpExecutionModeId / OpDecorateId need a target environment of SPIR-V 1.2 or newer; DXC emits SPIR-V 1.6.
AssembleResult AssembleAmdx(std::string_view text, spv_target_env target_env = SPV_ENV_UNIVERSAL_1_6);

// Assembles with plain spvTextToBinary and no rewriting at all; tests use it as the reference for standard SPIR-V.
AssembleResult AssemblePlain(std::string_view text, spv_target_env target_env = SPV_ENV_UNIVERSAL_1_6);

// Returns, for every instruction whose opcode is `opcode`, its words after the opcode word (result type, result id and
// operands exactly as encoded). Stops silently at a malformed instruction; use IsWellFormedModule to check for that.
std::vector<std::vector<uint32_t>> FindInstructions(std::span<const uint32_t> words, uint32_t opcode);

// Structural check without a grammar: magic number, header, every word count non-zero and the instruction stream
// ending exactly at the end of the module. Returns an empty string when well formed, else a description.
std::string CheckModuleStructure(std::span<const uint32_t> words);

// Packs a literal string the way SPIR-V does (UTF-8 bytes, little-endian within a word, NUL-terminated, zero padded).
std::vector<uint32_t> PackLiteralString(std::string_view text);

}  // namespace execgraph::test

#endif  // EXECGRAPH_TESTS_SUPPORT_AMDX_ASSEMBLER_H_
