// SPDX-License-Identifier: Apache-2.0
// execgraph-spirv: command-line access to the execgraph SPIR-V library.
//   execgraph-spirv dis FILE.spv                disassemble (AMDX included) to stdout
//   execgraph-spirv summary FILE.spv [ENTRY]    print the node facts of ENTRY (default: every entry point)
//   execgraph-spirv lower FILE.spv [ENTRY] [--optimize]
//                                               node facts, then the disassembly of the lowered plain-Vulkan module
//   execgraph-spirv graph FILE.spv[=NAME[:INDEX]]...
//                                               Graphviz dot view of the graph those modules form
// docs/tools.md has examples.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "execgraph/spirv/disassembler.h"
#include "execgraph/spirv/grammar.h"
#include "execgraph/spirv/layout.h"
#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/spirv/reader.h"

namespace {

int Usage() {
    std::fprintf(stderr,
                 "usage: execgraph-spirv <command> [args]\n"
                 "commands:\n"
                 "  dis FILE.spv                print a spirv-dis-like disassembly (understands SPV_AMDX_shader_enqueue)\n"
                 "  summary FILE.spv [ENTRY]    print the node facts (launch, local size, grid, input record, outputs,\n"
                 "                              flags) of entry point ENTRY, or of every entry point when omitted\n"
                 "  lower FILE.spv [ENTRY] [--optimize]\n"
                 "                              print the node facts, then the disassembly of the node lowered to plain\n"
                 "                              Vulkan 1.3 compute (validated; --optimize runs spirv-opt's performance\n"
                 "                              passes). Node index and output tables are placeholders: see docs/tools.md\n"
                 "  graph FILE.spv[=NAME[:INDEX]]...\n"
                 "                              print a Graphviz dot view of the graph the modules form; =NAME[:INDEX]\n"
                 "                              names the module's node as the application would (VkPipelineShaderStage-\n"
                 "                              NodeCreateInfoAMDX), default: entry point name and ShaderIndexAMDX or 0\n");
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

std::vector<std::string> EntryPointNames(const execgraph::spirv::Module& module) {
    std::vector<std::string> names;
    for (const execgraph::spirv::Instruction& inst : module.section(execgraph::spirv::Section::kEntryPoint)) {
        if (inst.opcode() == execgraph::spirv::Op::OpEntryPoint && inst.OperandWordCount() > 2) names.push_back(inst.StringAt(2));
    }
    return names;
}

int Summary(const char* path, const char* entry) {
    execgraph::spirv::Result<execgraph::spirv::Module> module = Load(path);
    if (!module) {
        std::fprintf(stderr, "execgraph-spirv: %s: %s\n", path, module.error().ToString().c_str());
        return 1;
    }
    const std::vector<std::string> names = entry != nullptr ? std::vector<std::string>{entry} : EntryPointNames(*module);
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

// Table length the `lower` command assumes for an output: its declared array size, 1 for a single node, and for an
// unbounded sparse array a placeholder of kUnboundedTableLength entries (a real pipeline sizes it from the nodes that
// exist).
constexpr std::uint32_t kUnboundedTableLength = 16;

// Options as the pipeline linker would pick them for a graph that is just this node's outputs, one table after the other
// (the node's graph index and table base come at dispatch time, in NodePushContext): the runtime context right after the
// application's push-constant block (8-aligned), record strides = size rounded up to the record alignment. Only the
// layout-dependent parts are meaningful outside a real pipeline.
execgraph::spirv::Result<execgraph::spirv::LoweringOptions> PlaceholderOptions(const execgraph::spirv::Module& module,
                                                                               const execgraph::spirv::NodeInfo& info, bool optimize) {
    using execgraph::spirv::Instruction;
    execgraph::spirv::LoweringOptions options;
    for (const Instruction& inst : module.section(execgraph::spirv::Section::kTypesValues)) {
        if (inst.opcode() != execgraph::spirv::Op::OpVariable || inst.OperandWordCount() < 1 ||
            inst.Word(0) != static_cast<std::uint32_t>(execgraph::spirv::StorageClass::PushConstant)) {
            continue;
        }
        const Instruction* pointer = module.FindDef(inst.type_id());
        if (pointer == nullptr || pointer->opcode() != execgraph::spirv::Op::OpTypePointer || pointer->OperandWordCount() < 2) {
            return execgraph::spirv::Error{execgraph::spirv::kNoWordOffset, "push-constant variable %" +
                                                                                  std::to_string(inst.result_id()) + " has no pointer type"};
        }
        const execgraph::spirv::Result<std::uint32_t> size = execgraph::spirv::ExplicitLayoutSize(module, pointer->Word(1));
        if (!size) return size.error();
        options.context_offset = std::max(options.context_offset, (*size + 7u) & ~7u);
    }
    std::uint32_t next = 0;
    for (const execgraph::spirv::NodeOutputInfo& output : info.outputs) {
        const std::uint32_t length = output.array_size.value_or(output.unbounded() ? kUnboundedTableLength : 1u);
        options.output_table_index.push_back(next);
        options.output_table_length.push_back(length);
        next += length;
        const std::uint32_t alignment = std::max(output.record.alignment, 4u);
        options.output_record_stride.push_back(output.record.size == 0 ? 0 : (output.record.size + alignment - 1) / alignment * alignment);
    }
    options.input_record_stride = (info.input_record.size + 3u) & ~3u;
    options.validate = true;
    options.optimize = optimize;
    return options;
}

int Lower(const char* path, const char* entry, bool optimize) {
    execgraph::spirv::Result<execgraph::spirv::Module> module = Load(path);
    if (!module) {
        std::fprintf(stderr, "execgraph-spirv: %s: %s\n", path, module.error().ToString().c_str());
        return 1;
    }
    const std::vector<std::string> names = entry != nullptr ? std::vector<std::string>{entry} : EntryPointNames(*module);
    int rc = 0;
    for (const std::string& name : names) {
        const execgraph::spirv::Result<execgraph::spirv::NodeInfo> node = execgraph::spirv::AnalyzeNode(*module, name, nullptr);
        if (!node) {
            std::fprintf(stderr, "execgraph-spirv: %s: %s\n", path, node.error().ToString().c_str());
            rc = 1;
            continue;
        }
        PrintNode(*node);
        const execgraph::spirv::Result<execgraph::spirv::LoweringOptions> options = PlaceholderOptions(*module, *node, optimize);
        if (!options) {
            std::fprintf(stderr, "execgraph-spirv: %s: %s: %s\n", path, name.c_str(), options.error().ToString().c_str());
            rc = 1;
            continue;
        }
        const execgraph::spirv::Result<execgraph::spirv::LoweredNode> lowered = execgraph::spirv::LowerNode(*module, *node, *options);
        if (!lowered) {
            std::fprintf(stderr, "execgraph-spirv: %s: %s: %s\n", path, name.c_str(), lowered.error().ToString().c_str());
            rc = 1;
            continue;
        }
        std::printf("; lowered \"%s\": local size %s, %s, %zu words%s\n", name.c_str(), Triple(lowered->local_size).c_str(),
                    lowered->requires_scalar_block_layout ? "needs scalarBlockLayout" : "std layout", lowered->words.size(),
                    optimize ? ", optimized" : "");
        std::printf("; placeholders: context offset %u, input stride %u\n", options->context_offset, options->input_record_stride);
        for (std::size_t i = 0; i < node->outputs.size(); ++i) {
            std::printf(";   output [%zu] \"%s\": table offset %u, length %u, record stride %u\n", i, node->outputs[i].name.c_str(),
                        options->output_table_index[i], options->output_table_length[i], options->output_record_stride[i]);
        }
        const execgraph::spirv::Result<execgraph::spirv::Module> again = execgraph::spirv::ReadModule(lowered->words);
        if (!again) {
            std::fprintf(stderr, "execgraph-spirv: %s: %s: lowered module: %s\n", path, name.c_str(), again.error().ToString().c_str());
            rc = 1;
            continue;
        }
        const std::string text = execgraph::spirv::Disassemble(*again);
        std::fwrite(text.data(), 1, text.size(), stdout);
    }
    return rc;
}

// One node of the `graph` view.
struct GraphNode {
    std::string id;  // dot node id: "name[index]", made unique
    std::string name;
    std::uint32_t index = 0;
    std::string file;
    execgraph::spirv::NodeInfo info;
};

// "FILE.spv=NAME:INDEX" -> {FILE.spv, NAME, INDEX}. Only the last '=' splits, so paths may contain '=' as long as a
// name follows; an INDEX that is not a number is part of the name.
struct GraphArgument {
    std::string path;
    std::optional<std::string> name;
    std::optional<std::uint32_t> index;
};

GraphArgument ParseGraphArgument(std::string_view arg) {
    GraphArgument out;
    const std::size_t eq = arg.rfind('=');
    if (eq == std::string_view::npos) {
        out.path = std::string(arg);
        return out;
    }
    out.path = std::string(arg.substr(0, eq));
    std::string_view name = arg.substr(eq + 1);
    const std::size_t colon = name.rfind(':');
    if (colon != std::string_view::npos && colon + 1 < name.size() && colon + 1 + 9 >= name.size() &&
        name.find_first_not_of("0123456789", colon + 1) == std::string_view::npos) {
        out.index = static_cast<std::uint32_t>(std::stoul(std::string(name.substr(colon + 1))));
        name = name.substr(0, colon);
    }
    out.name = std::string(name);
    return out;
}

std::string DotQuote(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string BaseName(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

int Graph(int argc, char** argv) {
    std::vector<GraphNode> nodes;
    std::map<std::string, int> id_uses;
    int rc = 0;
    for (int a = 0; a < argc; ++a) {
        const GraphArgument arg = ParseGraphArgument(argv[a]);
        execgraph::spirv::Result<execgraph::spirv::Module> module = Load(arg.path.c_str());
        if (!module) {
            std::fprintf(stderr, "execgraph-spirv: %s: %s\n", arg.path.c_str(), module.error().ToString().c_str());
            rc = 1;
            continue;
        }
        std::vector<GraphNode> found;
        for (const std::string& entry : EntryPointNames(*module)) {
            execgraph::spirv::Result<execgraph::spirv::NodeInfo> info = execgraph::spirv::AnalyzeNode(*module, entry, nullptr);
            if (!info) {
                // Raster shaders and mesh nodes sit beside compute nodes in sample folders; name them and go on.
                std::fprintf(stderr, "execgraph-spirv: %s: skipped: %s\n", arg.path.c_str(), info.error().ToString().c_str());
                continue;
            }
            GraphNode node;
            node.name = entry;
            node.index = info->shader_index.value_or(0);
            node.file = BaseName(arg.path);
            node.info = *std::move(info);
            found.push_back(std::move(node));
        }
        if (arg.name && found.size() > 1) {
            std::fprintf(stderr, "execgraph-spirv: %s: =%s is ambiguous: the module has %zu node entry points\n", arg.path.c_str(),
                         arg.name->c_str(), found.size());
            rc = 1;
            continue;
        }
        for (GraphNode& node : found) {
            if (arg.name) node.name = *arg.name;
            if (arg.index) node.index = *arg.index;
            node.id = node.name + "[" + std::to_string(node.index) + "]";
            // Two modules claiming one name/index is a pipeline-creation error; keep both visible rather than merge them.
            if (const int uses = id_uses[node.id]++; uses > 0) node.id += " #" + std::to_string(uses + 1);
            nodes.push_back(std::move(node));
        }
    }

    std::printf("digraph execgraph {\n");
    std::printf("    rankdir=LR;\n    node [shape=box, fontname=\"monospace\"];\n    edge [fontname=\"monospace\"];\n");
    for (const GraphNode& node : nodes) {
        std::string label = node.id + "\n" + LaunchName(node.info.launch) + "\n" + node.file;
        if (node.info.max_recursion) label += "\nmax recursion " + std::to_string(*node.info.max_recursion);
        std::printf("    %s [label=%s%s];\n", DotQuote(node.id).c_str(), DotQuote(label).c_str(),
                    node.info.is_api_entry ? "" : ", style=rounded");
    }
    std::map<std::string, bool> missing;  // placeholder ids for outputs that name no node
    for (const GraphNode& node : nodes) {
        for (std::size_t i = 0; i < node.info.outputs.size(); ++i) {
            const execgraph::spirv::NodeOutputInfo& out = node.info.outputs[i];
            const std::uint64_t first = out.base_index;
            // Single node: 1 index; array: array_size indices; unbounded sparse array: every index from the base on.
            const std::uint64_t end = out.array_size ? first + *out.array_size : (out.sparse ? UINT64_MAX : first + 1);
            std::string label = "[" + std::to_string(i) + "] " + std::to_string(out.record.size) + " B";
            if (out.max_payloads > 1) label += ", max " + std::to_string(out.max_payloads);
            bool matched = false;
            for (const GraphNode& target : nodes) {
                if (target.name != out.name || target.index < first || target.index >= end) continue;
                matched = true;
                const bool recursion = &target == &node;
                std::printf("    %s -> %s [label=%s%s];\n", DotQuote(node.id).c_str(), DotQuote(target.id).c_str(),
                            DotQuote(recursion ? label + " (recursion)" : label).c_str(), out.sparse ? ", style=dashed" : "");
            }
            if (!matched) {
                const std::string range = out.array_size ? std::to_string(first) + ".." + std::to_string(end - 1)
                                                         : (out.sparse ? std::to_string(first) + ".." : std::to_string(first));
                const std::string id = out.name + "[" + range + "]?";
                if (!missing[id]) {
                    missing[id] = true;
                    std::printf("    %s [label=%s, style=dashed, color=gray];\n", DotQuote(id).c_str(),
                                DotQuote(out.name + "[" + range + "]\nnot among the modules").c_str());
                }
                std::printf("    %s -> %s [label=%s, style=dashed, color=gray];\n", DotQuote(node.id).c_str(), DotQuote(id).c_str(),
                            DotQuote(label).c_str());
            }
        }
        if (node.info.shares_input_with_name) {
            const std::string id = *node.info.shares_input_with_name + "[" + std::to_string(node.info.shares_input_with_index) + "]";
            std::printf("    %s -> %s [label=\"shares input\", style=dotted, arrowhead=none];\n", DotQuote(node.id).c_str(),
                        DotQuote(id).c_str());
        }
    }
    std::printf("}\n");
    return nodes.empty() ? 1 : rc;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "dis") == 0) return Disassemble(argv[2]);
    if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "summary") == 0) return Summary(argv[2], argc == 4 ? argv[3] : nullptr);
    if (argc >= 3 && std::strcmp(argv[1], "lower") == 0) {
        bool optimize = false;
        std::vector<const char*> positional;
        for (int i = 2; i < argc; ++i) {
            if (std::strcmp(argv[i], "--optimize") == 0) {
                optimize = true;
            } else {
                positional.push_back(argv[i]);
            }
        }
        if (positional.empty() || positional.size() > 2) return Usage();
        return Lower(positional[0], positional.size() == 2 ? positional[1] : nullptr, optimize);
    }
    if (argc >= 3 && std::strcmp(argv[1], "graph") == 0) return Graph(argc - 2, argv + 2);
    return Usage();
}
