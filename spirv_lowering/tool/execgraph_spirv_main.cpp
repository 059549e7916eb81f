// SPDX-License-Identifier: Apache-2.0
// execgraph-spirv: command-line access to the execgraph SPIR-V library.
//   execgraph-spirv dis FILE.spv                disassemble (AMDX included) to stdout
//   execgraph-spirv summary FILE.spv [ENTRY]    print the node facts of ENTRY (default: every entry point)
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "execgraph/spirv/disassembler.h"
#include "execgraph/spirv/grammar.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/reader.h"

namespace {

int Usage() {
    std::fprintf(stderr,
                 "usage: execgraph-spirv <command> [args]\n"
                 "commands:\n"
                 "  dis FILE.spv                print a spirv-dis-like disassembly (understands SPV_AMDX_shader_enqueue)\n"
                 "  summary FILE.spv [ENTRY]    print the node facts (launch, local size, grid, input record, outputs,\n"
                 "                              flags) of entry point ENTRY, or of every entry point when omitted\n");
    return 64;  // EX_USAGE
}

execgraph::spirv::Result<execgraph::spirv::Module> Load(const char* path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return execgraph::spirv::Error{execgraph::spirv::kNoWordOffset, "cannot open file"};
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    return execgraph::spirv::ReadModuleBytes(bytes);
}

int Disassemble(const char* path) {
    execgraph::spirv::Result<execgraph::spirv::Module> module = Load(path);
    if (!module) {
        std::fprintf(stderr, "execgraph-spirv: %s: %s\n", path, module.error().ToString().c_str());
        return 1;
    }
    const std::string text = execgraph::spirv::Disassemble(*module);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

const char* LaunchName(execgraph::spirv::LaunchKind kind) {
    switch (kind) {
        case execgraph::spirv::LaunchKind::kBroadcastStatic:
            return "broadcast (static grid)";
        case execgraph::spirv::LaunchKind::kBroadcastDynamic:
            return "broadcast (dynamic grid)";
        case execgraph::spirv::LaunchKind::kCoalescing:
            return "coalescing";
        case execgraph::spirv::LaunchKind::kThread:
            return "thread";
    }
    return "?";
}

std::string Triple(const std::array<std::uint32_t, 3>& v) {
    return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

void PrintNode(const execgraph::spirv::NodeInfo& node) {
    using execgraph::spirv::NodeOutputInfo;
    std::printf("node \"%s\" (%%%u)\n", node.entry_point_name.c_str(), node.entry_point_id);
    std::printf("  launch:        %s\n", LaunchName(node.launch));
    std::printf("  local size:    %s\n", Triple(node.local_size).c_str());
    if (node.static_grid) std::printf("  static grid:   %s\n", Triple(*node.static_grid).c_str());
    if (node.max_grid) std::printf("  max grid:      %s\n", Triple(*node.max_grid).c_str());
    if (node.shader_index) std::printf("  shader index:  %u\n", *node.shader_index);
    if (node.max_recursion) std::printf("  max recursion: %u\n", *node.max_recursion);
    std::printf("  api entry:     %s\n", node.is_api_entry ? "yes" : "no");
    if (node.shares_input_with_name) {
        std::printf("  shares input:  \"%s\" index %u\n", node.shares_input_with_name->c_str(), node.shares_input_with_index);
    }
    if (node.input_variable_id != 0) {
        std::printf("  input:         %%%u, record %%%u, %u bytes, align %u, max payloads %u%s\n", node.input_variable_id,
                    node.input_record.struct_type_id, node.input_record.size, node.input_record.alignment, node.input_max_payloads,
                    node.input_record.track_finish_writing ? ", track finish writing" : "");
    } else {
        std::printf("  input:         none declared (implicit record of %u bytes)\n", node.input_record.size);
    }
    if (node.dispatch_grid) {
        std::printf("  grid member:   offset %u, %u x uint%u\n", node.dispatch_grid->byte_offset,
                    node.dispatch_grid->component_count, node.dispatch_grid->component_bits);
    }
    std::printf("  outputs:       %zu\n", node.outputs.size());
    for (std::size_t i = 0; i < node.outputs.size(); ++i) {
        const NodeOutputInfo& out = node.outputs[i];
        const std::string size = out.array_size ? std::to_string(*out.array_size) : (out.sparse ? "unbounded" : "single");
        std::string scopes;
        if (out.allocated_at_workgroup_scope) scopes += "workgroup";
        if (out.allocated_at_invocation_scope) scopes += scopes.empty() ? "invocation" : "+invocation";
        if (scopes.empty()) scopes = "never allocated";
        std::printf("    [%zu] \"%s\" (%%%u) base %u, array %s%s, max payloads %u, record %u bytes, scopes %s%s", i,
                    out.name.c_str(), out.payload_array_type_id, out.base_index, size.c_str(), out.sparse ? " sparse" : "",
                    out.max_payloads, out.record.size, scopes.c_str(),
                    out.allocated_with_runtime_index ? ", runtime node index" : "");
        if (out.shares_payload_limits_with) std::printf(", shares limits with [%u]", *out.shares_payload_limits_with);
        std::printf("\n");
    }
    std::string flags;
    const auto flag = [&flags](bool on, const char* name) {
        if (on) flags += std::string(flags.empty() ? "" : " ") + name;
    };
    flag(node.uses_finish_writing, "finish-writing");
    flag(node.uses_payload_array_length, "array-length");
    flag(node.uses_is_payload_valid, "is-valid");
    flag(node.uses_remaining_recursion_levels, "remaining-recursion-levels");
    flag(node.uses_shader_index_builtin, "shader-index-builtin");
    flag(node.uses_workgroup_barrier, "workgroup-barrier");
    flag(node.uses_workgroup_memory, "workgroup-memory");
    flag(node.uses_output_memory_semantics, "output-memory-semantics");
    std::printf("  flags:         %s\n", flags.empty() ? "none" : flags.c_str());
}

int Summary(const char* path, const char* entry) {
    execgraph::spirv::Result<execgraph::spirv::Module> module = Load(path);
    if (!module) {
        std::fprintf(stderr, "execgraph-spirv: %s: %s\n", path, module.error().ToString().c_str());
        return 1;
    }
    std::vector<std::string> names;
    if (entry != nullptr) {
        names.emplace_back(entry);
    } else {
        for (const execgraph::spirv::Instruction& inst : module->section(execgraph::spirv::Section::kEntryPoint)) {
            if (inst.opcode() == execgraph::spirv::Op::OpEntryPoint && inst.OperandWordCount() > 2)
                names.push_back(inst.StringAt(2));
        }
    }
    int rc = 0;
    for (const std::string& name : names) {
        execgraph::spirv::Result<execgraph::spirv::NodeInfo> node = execgraph::spirv::AnalyzeNode(*module, name, nullptr);
        if (!node) {
            std::fprintf(stderr, "execgraph-spirv: %s: %s\n", path, node.error().ToString().c_str());
            rc = 1;
            continue;
        }
        PrintNode(*node);
    }
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "dis") == 0) return Disassemble(argv[2]);
    if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "summary") == 0) return Summary(argv[2], argc == 4 ? argv[3] : nullptr);
    return Usage();
}
