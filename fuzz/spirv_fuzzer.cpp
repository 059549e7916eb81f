// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the SPIR-V library: bytes -> ReadModuleBytes -> (Disassemble) -> for every entry point
// AnalyzeNode without and with a specialization map -> LowerNode(validate = true). Everything the layer does with an
// application's shader module at vkCreateExecutionGraphPipelinesAMDX time, so none of it may crash, hang, leak or hit UB
// on hostile input: it must fail with an Error instead.
//
// The same LLVMFuzzerTestOneInput is linked into execgraph_spirv_fuzz_replay (replay_main.cpp), which CI runs over
// fuzz/corpus and fuzz/regressions without needing libFuzzer.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "execgraph/spirv/constant_eval.h"
#include "execgraph/spirv/disassembler.h"
#include "execgraph/spirv/grammar.h"
#include "execgraph/spirv/layout.h"
#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/module.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/reader.h"

namespace {

using execgraph::spirv::Instruction;
using execgraph::spirv::Module;
using execgraph::spirv::Op;
using execgraph::spirv::Section;

// Bounds the work per input: libFuzzer judges hangs per input, and a module with hundreds of entry points would only
// repeat the same code paths.
constexpr std::size_t kMaxEntryPoints = 4;

std::uint64_t Fnv1a(std::span<const std::uint8_t> bytes) {
    std::uint64_t hash = 0xcbf29ce484222325ull;
    for (const std::uint8_t byte : bytes) hash = (hash ^ byte) * 0x100000001b3ull;
    return hash;
}

// Values chosen to reach the edges of the spec-constant arithmetic and of every size/count check (0, 1, powers of
// two around the limits, all-ones, wider than 32 bits).
constexpr std::array<std::uint64_t, 16> kInterestingValues = {
    0, 1, 2, 3, 7, 31, 32, 64, 256, 1024, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull};

// A small specialization map "derived from the input": every SpecId the module declares gets a value picked by the
// input's hash (stable per input, so crashes reproduce), plus SpecId 0 in case the module uses it undecorated.
execgraph::spirv::SpecializationMap MakeSpecialization(const Module& module, std::uint64_t seed) {
    execgraph::spirv::SpecializationMap map;
    std::uint64_t state = seed;
    const auto next = [&state] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 33;
    };
    const auto pick = [&] {
        const std::uint64_t r = next();
        return (r & 1) != 0 ? kInterestingValues[(r >> 1) % kInterestingValues.size()] : next();
    };
    map[0] = pick();
    for (const Instruction& inst : module.section(Section::kAnnotation)) {
        if (inst.opcode() != Op::OpDecorate || inst.OperandWordCount() < 3) continue;
        if (inst.Word(1) != static_cast<std::uint32_t>(execgraph::spirv::Decoration::SpecId)) continue;
        if (map.size() >= 16) break;
        map[inst.Word(2)] = pick();
    }
    return map;
}

// Options a linker would plausibly produce for this node: tables one after another, strides = record size rounded up
// to the record alignment, the runtime context right after the application's push-constant block. The lowering has to
// cope with anything AnalyzeNode accepted, so sizes are derived from the (hostile) NodeInfo without sanitising beyond
// keeping the running table index from wrapping.
execgraph::spirv::LoweringOptions MakeOptions(const Module& module, const execgraph::spirv::NodeInfo& info, std::uint64_t seed) {
    execgraph::spirv::LoweringOptions options;
    options.context_offset = 0;
    for (const Instruction& inst : module.section(Section::kTypesValues)) {
        if (inst.opcode() != Op::OpVariable || inst.OperandWordCount() < 1) continue;
        if (inst.Word(0) != static_cast<std::uint32_t>(execgraph::spirv::StorageClass::PushConstant)) continue;
        const Instruction* pointer = module.FindDef(inst.type_id());
        if (pointer == nullptr || pointer->opcode() != Op::OpTypePointer || pointer->OperandWordCount() < 2) continue;
        const execgraph::spirv::Result<std::uint32_t> size = execgraph::spirv::ExplicitLayoutSize(module, pointer->Word(1));
        if (size.ok()) options.context_offset = static_cast<std::uint32_t>(std::min<std::uint64_t>((std::uint64_t{*size} + 7u) & ~7ull, 0xfffffff8u));
    }
    std::uint64_t next = 0;
    for (const execgraph::spirv::NodeOutputInfo& output : info.outputs) {
        const std::uint32_t length = output.array_size.value_or(output.unbounded() ? 16u : 1u);
        options.output_table_index.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(next, 0xffffffffu)));
        options.output_table_length.push_back(length);
        next += length;
        const std::uint64_t alignment = std::max(output.record.alignment, 4u);
        const std::uint64_t stride = output.record.size == 0 ? 0 : (output.record.size + alignment - 1) / alignment * alignment;
        options.output_record_stride.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(stride, 0xfffffffcu)));
    }
    options.input_record_stride = static_cast<std::uint32_t>(std::min<std::uint64_t>((std::uint64_t{info.input_record.size} + 3u) & ~3ull, 0xfffffffcu));
    options.thread_batch_size = (seed & 0x100) != 0 ? 64 : 32;
    options.validate = true;
    options.optimize = false;  // spirv-opt is a third-party black box with its own fuzzing; keep exec/s up
    return options;
}

// EXECGRAPH_FUZZ_VERBOSE=1 prints how far each entry point got, to check that the seeds reach the lowering at all.
bool Verbose() {
    static const bool verbose = std::getenv("EXECGRAPH_FUZZ_VERBOSE") != nullptr;
    return verbose;
}

void AnalyzeAndLower(const Module& module, const std::string& entry, const execgraph::spirv::SpecializationMap* specialization,
                     std::uint64_t seed) {
    const execgraph::spirv::Result<execgraph::spirv::NodeInfo> info = execgraph::spirv::AnalyzeNode(module, entry, specialization);
    if (!info.ok()) {
        if (Verbose()) std::fprintf(stderr, "  %s: analysis: %s\n", entry.c_str(), info.error().ToString().c_str());
        return;
    }
    const execgraph::spirv::LoweringOptions options = MakeOptions(module, *info, seed);
    const execgraph::spirv::Result<execgraph::spirv::LoweredNode> lowered = execgraph::spirv::LowerNode(module, *info, options);
    if (Verbose()) {
        std::fprintf(stderr, "  %s%s: lowering: %s\n", entry.c_str(), specialization != nullptr ? " (specialized)" : "",
                     lowered.ok() ? "ok" : lowered.error().ToString().c_str());
    }
    if (!lowered.ok()) return;
    // The lowered words are ours; reading them back must always succeed (LowerNode promises valid SPIR-V).
    const execgraph::spirv::Result<Module> again = execgraph::spirv::ReadModule(lowered->words);
    if (!again.ok()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> bytes(data, size);
    // Whole input first (exercises the truncated-stream error), then the whole words of it.
    (void)execgraph::spirv::ReadModuleBytes(bytes);
    const execgraph::spirv::Result<Module> module = execgraph::spirv::ReadModuleBytes(bytes.first(size & ~std::size_t{3}));
    if (!module.ok()) return 0;
    (void)execgraph::spirv::Disassemble(*module);

    const std::uint64_t seed = Fnv1a(bytes);
    std::vector<std::string> entries;
    for (const Instruction& inst : module->section(Section::kEntryPoint)) {
        if (inst.opcode() == Op::OpEntryPoint && inst.OperandWordCount() > 2) entries.push_back(inst.StringAt(2));
        if (entries.size() >= kMaxEntryPoints) break;
    }
    const execgraph::spirv::SpecializationMap specialization = MakeSpecialization(*module, seed);
    for (const std::string& entry : entries) {
        AnalyzeAndLower(*module, entry, nullptr, seed);
        AnalyzeAndLower(*module, entry, &specialization, seed);
    }
    return 0;
}
