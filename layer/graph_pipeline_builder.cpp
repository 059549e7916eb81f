// vkCreateExecutionGraphPipelinesAMDX: gather node shaders, analyse them, name and link the nodes, derive the levels,
// lower every node and create one compute pipeline per node.
#include "graph_pipeline_builder.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "execgraph/spirv/lowering.h"
#include "execgraph/spirv/reader.h"
#include "glsl_rendering.h"
#include "layer_state.h"
#include "pnext_chain.h"
#include "scratch_plan.h"

namespace execgraph {
namespace {

using NodeKey = std::pair<std::string, uint32_t>;  // (node name, shader index)

std::string NodeLabel(const std::string& name, uint32_t index) { return "\"" + name + "\"[" + std::to_string(index) + "]"; }

GraphBuildResult Failure(VkResult result, std::string error) { return GraphBuildResult{result, std::move(error), nullptr}; }

spirv::SpecializationMap ReadSpecialization(const NodeSource& source) {
    spirv::SpecializationMap map;
    for (const VkSpecializationMapEntry& entry : source.specialization_entries) {
        if (entry.offset + entry.size > source.specialization_data.size() || entry.size > 8) continue;
        uint64_t value = 0;
        std::memcpy(&value, source.specialization_data.data() + entry.offset, entry.size);  // little-endian, like the host
        map[entry.constantID] = value;
    }
    return map;
}

// Reads one stage into a NodeSource. The module is either a shader module the layer kept (it declared AMDX) or a
// VkShaderModuleCreateInfo chained into the stage (maintenance5 style).
bool ReadStage(DeviceState& device, const VkPipelineShaderStageCreateInfo& stage, NodeSource* source, std::string* error) {
    if (stage.stage != VK_SHADER_STAGE_COMPUTE_BIT) {
        *error = "every stage of an execution graph must be VK_SHADER_STAGE_COMPUTE_BIT (VUID-VkExecutionGraphPipelineCreateInfoAMDX-stage-09128)";
        return false;
    }
    if (stage.module != VK_NULL_HANDLE) {
        auto module = device.amdx_shader_modules.Find(stage.module);
        if (!module) {
            *error = "the shader module of node entry point \"" + std::string(stage.pName ? stage.pName : "") +
                     "\" does not declare the ShaderEnqueueAMDX capability, so it is not a node shader";
            return false;
        }
        source->words = std::shared_ptr<const std::vector<uint32_t>>(*module, &(*module)->words);
    } else if (auto* inline_module = FindInChain<VkShaderModuleCreateInfo>(stage.pNext, VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO)) {
        source->words = std::make_shared<const std::vector<uint32_t>>(inline_module->pCode,
                                                                      inline_module->pCode + inline_module->codeSize / 4);
    } else {
        *error = "a stage has neither a shader module nor a chained VkShaderModuleCreateInfo";
        return false;
    }
    source->entry_point = stage.pName != nullptr ? stage.pName : "";
    if (const VkSpecializationInfo* specialization = stage.pSpecializationInfo) {
        source->specialization_entries.assign(specialization->pMapEntries, specialization->pMapEntries + specialization->mapEntryCount);
        const auto* data = static_cast<const uint8_t*>(specialization->pData);
        source->specialization_data.assign(data, data + specialization->dataSize);
    }
    if (auto* node = FindInChain<VkPipelineShaderStageNodeCreateInfoAMDX>(stage.pNext,
                                                                           VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX)) {
        source->has_node_create_info = true;
        if (node->pName != nullptr) source->node_name_override = node->pName;
        source->node_index_override = node->index;
    }
    return true;
}

// Names the node (facts §10): pName, else the entry point; index, else the ShaderIndexAMDX execution mode, else 0.
void NameNode(GraphNode& node) {
    node.name = node.source.node_name_override.empty() ? node.source.entry_point : node.source.node_name_override;
    node.shader_index = node.source.node_index_override != VK_SHADER_INDEX_UNUSED_AMDX ? node.source.node_index_override
                                                                                      : node.info.shader_index.value_or(0);
}

// folder/graph<N>_<node>_<index>: where a node's shader files are dumped (dump_shaders_path) and replacements are looked
// for (replace_shaders_path). N is the device's graph number; the node's name keeps letters, digits, '_', '-' and '.'.
std::string ShaderFileStem(const std::string& folder, uint32_t graph_number, const GraphNode& node) {
    std::string node_name = node.name;
    for (char& c : node_name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';  // no '/' or spaces
    }
    return folder + "/graph" + std::to_string(graph_number) + "_" + node_name + "_" + std::to_string(node.shader_index);
}

// Writes a node's original AMDX module, its lowered module and a GLSL rendering of the lowered module to the
// `dump_shaders_path` folder as graph<N>_<node>_<index>.{amdx.spv,lowered.spv,glsl}, N being the device's graph number
// (docs/debugging.md). Called once per lowered module, for the first node that uses it (nodes of an array share one). Failures to
// write or render are warnings, never fatal: dumps are a debugging aid.
void DumpNodeShaders(const DeviceState& device, uint32_t graph_number, const GraphNode& node,
                     const std::vector<uint32_t>& lowered) {
    const std::string& folder = device.instance->settings.dump_shaders_path;
    if (folder.empty()) return;
    const std::string stem = ShaderFileStem(folder, graph_number, node);
    auto write = [&](const std::string& path, const void* data, size_t size) {
        FILE* file = std::fopen(path.c_str(), "wb");
        bool written = file != nullptr && std::fwrite(data, 1, size, file) == size;
        if (file != nullptr && std::fclose(file) != 0) written = false;
        if (!written)
            device.messages().Emit(MessageSeverity::kWarning, message_id::kSettings, "dump_shaders_path: could not write " + path);
    };
    write(stem + ".amdx.spv", node.source.words->data(), node.source.words->size() * sizeof(uint32_t));
    write(stem + ".lowered.spv", lowered.data(), lowered.size() * sizeof(uint32_t));
    std::string error;
    if (std::optional<std::string> glsl = RenderGlsl(lowered, node.source.entry_point, &error)) {
        write(stem + ".glsl", glsl->data(), glsl->size());
    } else {
        device.messages().Emit(MessageSeverity::kWarning, message_id::kSettings,
                               "dump_shaders_path: SPIRV-Cross could not render " + stem + ".lowered.spv as GLSL (" + error +
                                   "); the .spv files are unaffected");
    }
}

// With `replace_shaders_path`, a graph<N>_<node>_<index>.lowered.spv in that folder replaces the node's lowered module
// (docs/debugging.md): how one finds out whether a driver miscompiles a lowered node, by running hand-edited variants of
// what dump_shaders_path wrote. The file must pass spirv::CheckLoweredReplacement; a file that does not is an error (the
// pipeline is not created), since running the unreplaced module instead would hide the experiment's outcome. Every
// replacement is a warning, so that a forgotten setting does not go unnoticed. Returns the error text, or "".
std::string ReplaceLoweredShader(const DeviceState& device, uint32_t graph_number, const GraphNode& node,
                                 spirv::LoweredNode* lowered) {
    const std::string& folder = device.instance->settings.replace_shaders_path;
    if (folder.empty()) return "";
    const std::string path = ShaderFileStem(folder, graph_number, node) + ".lowered.spv";
    FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) return "";  // no replacement for this node
    std::vector<uint8_t> bytes;
    uint8_t chunk[4096];
    for (size_t read; (read = std::fread(chunk, 1, sizeof(chunk), file)) > 0;) bytes.insert(bytes.end(), chunk, chunk + read);
    const bool read_error = std::ferror(file) != 0;
    std::fclose(file);
    if (read_error) return "replace_shaders_path: could not read " + path;
    if (bytes.size() % 4 != 0) return "replace_shaders_path: " + path + " is not a whole number of 32-bit words";
    std::vector<uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    if (spirv::Status checked = spirv::CheckLoweredReplacement(words, node.source.entry_point, *lowered); !checked.ok()) {
        return "replace_shaders_path: " + path + " cannot replace node " + NodeLabel(node.name, node.shader_index) + ": " +
               checked.error().ToString();
    }
    lowered->words = std::move(words);
    device.messages().Emit(MessageSeverity::kWarning, message_id::kSettings,
                           "replace_shaders_path: node " + NodeLabel(node.name, node.shader_index) + " runs " + path +
                               " instead of its lowered module");
    return "";
}

// Looks for a cycle through distinct nodes (a node enqueueing itself is recursion, checked at link time). Returns the
// cycle as "\"A\"[0] -> \"B\"[0] -> \"A\"[0]", or nothing when the graph is acyclic.
std::optional<std::string> FindCycle(const GraphPipeline& graph) {
    const uint32_t count = static_cast<uint32_t>(graph.nodes.size());
    std::vector<std::vector<uint32_t>> successors(count);
    for (uint32_t n = 0; n < count; ++n) {
        const GraphNode& node = graph.nodes[n];
        for (size_t o = 0; o < node.output_table_index.size(); ++o) {
            for (uint32_t i = 0; i < node.output_table_length[o]; ++i) {
                const uint32_t target = graph.output_table[node.output_table_index[o] + i];
                if (target != runtime::kInvalidNode && target != n) successors[n].push_back(target);
            }
        }
    }
    // Iterative depth-first search; a successor still on the path closes a cycle.
    enum class Mark : uint8_t { kNew, kOnPath, kDone };
    std::vector<Mark> marks(count, Mark::kNew);
    for (uint32_t root = 0; root < count; ++root) {
        if (marks[root] != Mark::kNew) continue;
        std::vector<std::pair<uint32_t, size_t>> path{{root, 0}};  // (node, next successor to visit)
        marks[root] = Mark::kOnPath;
        while (!path.empty()) {
            auto& [node, next] = path.back();
            if (next == successors[node].size()) {
                marks[node] = Mark::kDone;
                path.pop_back();
                continue;
            }
            const uint32_t target = successors[node][next++];
            if (marks[target] == Mark::kOnPath) {
                std::string cycle;
                bool on_cycle = false;
                for (const auto& step : path) {
                    on_cycle = on_cycle || step.first == target;
                    if (on_cycle) cycle += NodeLabel(graph.nodes[step.first].name, graph.nodes[step.first].shader_index) + " -> ";
                }
                return cycle + NodeLabel(graph.nodes[target].name, graph.nodes[target].shader_index);
            }
            if (marks[target] == Mark::kNew) {
                marks[target] = Mark::kOnPath;
                path.push_back({target, 0});
            }
        }
    }
    return std::nullopt;
}

// "level 0: \"A\"[0]; level 1: \"B\"[0], \"C\"[0]" for the EXECGRAPH-GRAPH-LEVELS notice.
std::string DescribeLevels(const GraphPipeline& graph) {
    std::string text;
    for (size_t level = 0; level < graph.levels.size(); ++level) {
        text += (level == 0 ? "level " : "; level ") + std::to_string(level) + ":";
        for (size_t i = 0; i < graph.levels[level].size(); ++i) {
            const GraphNode& node = graph.nodes[graph.levels[level][i]];
            text += (i == 0 ? " " : ", ") + NodeLabel(node.name, node.shader_index);
        }
    }
    return text;
}

// The module's words with each OpConstantStringAMDX's literal replaced by the order in which its text first appears.
// Those strings are node names (PayloadNodeNameAMDX, SharesInputWithAMDX; facts §8.4), which analysis copies into
// NodeInfo and the graph turns into output tables and static infos, but which no lowering pass reads: modules that
// differ only in the names of the nodes they send to (the steps of a chain, each naming the next) lower to the same
// code for the same options. Which names are equal is kept, so nothing that compares them can tell the modules apart.
// OpSpecConstantStringAMDX keeps its text (specialization may see it). A malformed tail is kept as it is.
std::vector<uint32_t> WordsWithNodeNamesNumbered(const std::vector<uint32_t>& words) {
    constexpr uint32_t kHeaderWords = 5;
    if (words.size() < kHeaderWords) return words;
    std::vector<uint32_t> numbered(words.begin(), words.begin() + kHeaderWords);
    std::map<std::vector<uint32_t>, uint32_t> number_of_text;
    size_t at = kHeaderWords;
    while (at < words.size()) {
        const uint32_t word_count = words[at] >> 16, opcode = words[at] & 0xffffu;
        if (word_count == 0 || at + word_count > words.size()) break;
        if (opcode == static_cast<uint32_t>(spirv::Op::OpConstantStringAMDX) && word_count >= 3) {
            const std::vector<uint32_t> text(words.begin() + at + 2, words.begin() + at + word_count);
            const uint32_t number = number_of_text.emplace(text, static_cast<uint32_t>(number_of_text.size())).first->second;
            numbered.insert(numbered.end(), {(3u << 16) | opcode, words[at + 1], number});
        } else {
            numbered.insert(numbered.end(), words.begin() + at, words.begin() + at + word_count);
        }
        at += word_count;
    }
    numbered.insert(numbered.end(), words.begin() + at, words.end());
    return numbered;
}

// Everything a lowered pipeline depends on besides the graph's layout: the AMDX module's words, the entry point, the
// specialization, and the lowering options (which name no node). Equal keys give identical pipelines. With
// `numbered_words` (WordsWithNodeNamesNumbered of the source's), modules that differ only in node names get one key.
std::string LoweredPipelineKey(const NodeSource& source, const spirv::LoweringOptions& options,
                               const std::vector<uint32_t>* numbered_words = nullptr) {
    std::string key;
    auto append_words = [&key](const void* data, size_t bytes) {
        key.append(std::to_string(bytes)).push_back(':');
        key.append(static_cast<const char*>(data), bytes);
    };
    const std::vector<uint32_t>& words = numbered_words != nullptr ? *numbered_words : *source.words;
    append_words(words.data(), words.size() * sizeof(uint32_t));
    append_words(source.entry_point.data(), source.entry_point.size());
    append_words(source.specialization_entries.data(), source.specialization_entries.size() * sizeof(VkSpecializationMapEntry));
    append_words(source.specialization_data.data(), source.specialization_data.size());
    for (const std::vector<uint32_t>* values :
         {&options.output_table_index, &options.output_table_length, &options.output_record_stride}) {
        append_words(values->data(), values->size() * sizeof(uint32_t));
    }
    const uint32_t scalars[] = {options.context_offset,
                                options.input_record_stride,
                                options.thread_batch_size,
                                options.validate,
                                options.optimize,
                                options.level_pass_records_per_workgroup,
                                options.heap_holds_record_list,
                                options.level_hand_off,
                                options.dispatch_group_member,
                                options.reserve_per_workgroup,
                                options.indirect_level_pass,
                                options.group_level_hand_off,
                                options.group_hand_off_checks_initialization,
                                options.node_table_offset,
                                options.node_stats_offset,
                                options.node_count,
                                options.coalesce_record_stores,
                                options.records_by_index,
                                options.records_newest_first};
    append_words(scalars, sizeof(scalars));
    return key;
}

uint32_t AlignUp(uint32_t value, uint32_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// NodeDispatchPlan::reads_record_list: such nodes read nothing of a directory entry but the payload offset and the
// depth, which a RecordEntry holds too. A broadcast node that finishes writing its input counts down the entry's
// finish_counter, and a dynamic one searches first_workgroup.
bool ReadsRecordList(const spirv::NodeInfo& info) {
    switch (info.launch) {
        case spirv::LaunchKind::kThread:
        case spirv::LaunchKind::kCoalescing:
            return true;
        case spirv::LaunchKind::kBroadcastStatic:
            return !info.uses_finish_writing;
        default:
            return false;
    }
}

uint64_t StaticGridWorkgroups(const spirv::NodeInfo& info) {
    if (info.launch != spirv::LaunchKind::kBroadcastStatic || !info.static_grid) return 0;
    return uint64_t{(*info.static_grid)[0]} * (*info.static_grid)[1] * (*info.static_grid)[2];
}

// Invocations per record of the node, where its workgroups are full: one for a thread node, the workgroup over its
// batch for a coalescing node, the grid's workgroups for a static broadcast node, and for a dynamic grid the most it may
// have (MaxNumWorkgroupsAMDX, to which the level pass clamps the records' grids; without it, up to 65535^3).
uint64_t InvocationsPerRecord(const spirv::NodeInfo& info) {
    const uint64_t workgroup = uint64_t{info.local_size[0]} * info.local_size[1] * info.local_size[2];
    switch (info.launch) {
        case spirv::LaunchKind::kThread:
            return 1;
        case spirv::LaunchKind::kCoalescing:
            return (workgroup + info.input_max_payloads - 1) / std::max<uint32_t>(info.input_max_payloads, 1);
        case spirv::LaunchKind::kBroadcastStatic:
            return info.static_grid ? StaticGridWorkgroups(info) * workgroup : UINT64_MAX;
        case spirv::LaunchKind::kBroadcastDynamic:
            if (!info.max_grid) return UINT64_MAX;
            return uint64_t{(*info.max_grid)[0]} * (*info.max_grid)[1] * (*info.max_grid)[2] * workgroup;
    }
    return UINT64_MAX;  // not reached: every launch kind returns above
}

// NodeDispatchPlan::records_enqueued_per_record. A workgroup enqueues at most each output's NodeMaxPayloadsAMDX
// (VUID-vkCmdDispatchGraphAMDX-NodeMaxPayloadsAMDX-09188), counted per invocation where its allocations are per
// invocation (LowerOutputsPass clamps each allocation to the limit, so that bound holds however the limit is read); a
// record runs one workgroup, except a broadcast node's, which runs its grid (a dynamic one at most MaxNumWorkgroupsAMDX).
uint64_t RecordsEnqueuedPerRecord(const spirv::NodeInfo& info) {
    const uint64_t invocations = uint64_t{info.local_size[0]} * info.local_size[1] * info.local_size[2];
    uint64_t per_workgroup = 0;
    for (const spirv::NodeOutputInfo& output : info.outputs) {
        per_workgroup += output.allocated_at_invocation_scope ? output.max_payloads * invocations : output.max_payloads;
    }
    uint64_t workgroups = 1;
    if (info.launch == spirv::LaunchKind::kBroadcastStatic) {
        workgroups = StaticGridWorkgroups(info);
    } else if (info.launch == spirv::LaunchKind::kBroadcastDynamic) {
        if (!info.max_grid) return UINT64_MAX;
        workgroups = uint64_t{(*info.max_grid)[0]} * (*info.max_grid)[1] * (*info.max_grid)[2];
    }
    if (per_workgroup != 0 && workgroups > UINT64_MAX / per_workgroup) return UINT64_MAX;
    return per_workgroup * workgroups;
}

// Heap bytes per record: records keep their own alignment (8-byte members exist) and never share a 4-byte word.
uint32_t RecordStride(const spirv::RecordLayout& record) {
    if (record.size == 0) return 0;
    return AlignUp(record.size, std::max<uint32_t>(4, record.alignment));
}

// Sets LoweringOptions::level_hand_off for every node: with direct levels, every node gets the hand-off where the device
// takes no limit (GPUs, HandOffMaxInvocationsPerRecordFor), else only nodes that run at most that many invocations per
// record and whose last workgroup of a level may have to prepare a direct next level (GraphPlan::FormDispatchGroups).
// Every node that a level holds sends its records to all its targets at the next level, so a node whose outputs name
// two or more other nodes never precedes a direct level, and a leaf is followed by one only where it shares its level
// with a producer. Those nodes are
// - a node whose outputs name one node that could be a direct level's consumer (a node whose directory the record list
//   can be, that shares no input and whose input nobody shares), not counting itself (a recursion's deepest level
//   sends only to the other target), or only itself;
// - a node whose outputs name only nodes that could together be a direct level's consumer group: two or more
//   static broadcast nodes of one source (a node array), each a possible direct consumer
//   (GraphPlan::FormDispatchGroups makes such a level direct where they form the level's one dispatch group), where its
//   records run at most the device's limit of invocations (any number on GPUs, where nodes above
//   kGroupHandOffMaxInvocationsPerRecordGpu make only small levels direct), with the hand-off's group code;
// - every node of a level that the graph's roots (entries that no other node targets) reach before a direct level:
//   the levels of a dispatch of its roots, as applications dispatch a graph.
// Any other dispatch whose levels put a node without it before a single consumer (say a leaf named as an entry beside
// a root) gets a level pass there instead: FormDispatchGroups makes a level direct only where every node of the level
// before has the hand-off. Nodes with one lowered module (a node array) keep one pipeline, so one of them needing the
// hand-off gives it to all. Returns each node's LoweredPipelineKey with the options set.
std::vector<std::string> SelectLevelHandOffs(const GraphPipeline& graph, bool direct_levels,
                                             std::optional<uint64_t> max_invocations_per_record,
                                             std::vector<spirv::LoweringOptions>* options) {
    const uint32_t count = static_cast<uint32_t>(graph.nodes.size());
    std::vector<bool> shared_by_another(count, false), targeted_by_another(count, false);
    std::vector<std::set<uint32_t>> targets(count);
    for (uint32_t n = 0; n < count; ++n) {
        if (graph.static_infos[n].shares_input_with < count) shared_by_another[graph.static_infos[n].shares_input_with] = true;
        const GraphNode& node = graph.nodes[n];
        for (size_t o = 0; o < node.info.outputs.size(); ++o) {
            for (uint32_t i = 0; i < node.output_table_length[o]; ++i) {
                const uint32_t target = graph.output_table[node.output_table_index[o] + i];
                if (target == runtime::kInvalidNode) continue;
                targets[n].insert(target);
                if (target != n) targeted_by_another[target] = true;
            }
        }
    }
    auto possible_direct_consumer = [&](uint32_t n) {
        return ReadsRecordList(graph.nodes[n].info) && graph.static_infos[n].shares_input_with == runtime::kInvalidNode &&
               !shared_by_another[n];
    };
    // Outputs that name only nodes that could together be a direct level's consumer group: two or more static
    // broadcast nodes of one source (a node array), each a possible direct consumer
    // (FormDispatchGroups makes such a level direct where they are the level's one dispatch group). Such nodes get the
    // group code of the hand-off (LoweringOptions::group_level_hand_off) where their records run at most the device's
    // limit of invocations, or, where it sets none (GPUs), all of them: on lavapipe the chain of node arrays ran 13 to
    // 33% faster, on the H200 33% (once its last workgroups cleared only their own states,
    // runtime::kDirectLevelClearsOwnStates). Nodes above kGroupHandOffMaxInvocationsPerRecordGpu (classify nodes) make
    // the level after them direct only where it is small (NodeDispatchPlan::group_hand_off_needs_small_level): the
    // 10240x5760 classifications ran 3 to 4% slower with their shading level direct (230 400 classify workgroups each
    // counting themselves), while the 1080p ones gained (docs/performance.md).
    std::vector<bool> group_needed(count, false);
    const uint64_t group_max_invocations = max_invocations_per_record.value_or(UINT64_MAX);
    for (uint32_t n = 0; n < count && direct_levels; ++n) {
        if (InvocationsPerRecord(graph.nodes[n].info) > group_max_invocations) continue;
        std::set<uint32_t> others = targets[n];
        others.erase(n);
        if (others.size() < 2) continue;
        const NodeSource& source = graph.nodes[*others.begin()].source;
        group_needed[n] = std::all_of(others.begin(), others.end(), [&](uint32_t t) {
            const NodeSource& other = graph.nodes[t].source;
            // One source as LoweredPipelineKey compares them: by content (each stage may have its own module).
            return possible_direct_consumer(t) && graph.nodes[t].info.launch == spirv::LaunchKind::kBroadcastStatic &&
                   (other.words == source.words || *other.words == *source.words) && other.entry_point == source.entry_point &&
                   other.specialization_data == source.specialization_data;
        });
    }
    // Entries whose hand-off may prepare a group level 1 after a host-prepared level 0 whose dispatch rewrote only their
    // own tables (graphs whose tables exceed kWholeTablesRewriteMaxBytes) need the group code's check of initialization.
    // The host prepares level 0 only for a consumer outside any dispatch group, so members of node arrays (a chain of
    // them starts with one) go without it and keep sharing their lowering with the arrays after them.
    const bool tables_rewritten_in_part =
        uint64_t{count} * sizeof(runtime::NodeStaticInfo) + graph.output_table.size() * sizeof(uint32_t) >
        kWholeTablesRewriteMaxBytes;
    std::unordered_map<std::string_view, uint32_t> nodes_named;
    for (const GraphNode& node : graph.nodes) ++nodes_named[node.name];
    std::vector<bool> needed(count, direct_levels && !max_invocations_per_record);
    if (direct_levels && max_invocations_per_record) {
        for (uint32_t n = 0; n < count; ++n) {
            std::set<uint32_t> others = targets[n];
            others.erase(n);
            if (others.size() == 1) needed[n] = possible_direct_consumer(*others.begin());
            if (others.empty() && targets[n].count(n)) needed[n] = possible_direct_consumer(n);
            if (group_needed[n]) needed[n] = true;
        }
        std::vector<uint32_t> roots;
        for (uint32_t n = 0; n < count; ++n) {
            if (graph.static_infos[n].is_api_entry && graph.static_infos[n].shares_input_with == runtime::kInvalidNode &&
                !targeted_by_another[n]) {
                roots.push_back(n);
            }
        }
        std::vector<std::vector<uint32_t>> root_levels;
        if (!roots.empty() && graph.LevelsFrom(roots, &root_levels) == runtime::kInvalidNode) {
            for (size_t level = 0; level + 1 < root_levels.size(); ++level) {
                if (root_levels[level + 1].size() != 1 || !possible_direct_consumer(root_levels[level + 1][0])) continue;
                for (uint32_t n : root_levels[level]) needed[n] = true;
            }
        }
    }
    for (uint32_t n = 0; n < count; ++n) {
        if (needed[n] && max_invocations_per_record && InvocationsPerRecord(graph.nodes[n].info) > *max_invocations_per_record) {
            needed[n] = false;
        }
    }
    std::unordered_map<std::string, bool> needed_by_module, group_needed_by_module, check_needed_by_module;
    std::vector<std::string> keys(count);
    for (uint32_t n = 0; n < count; ++n) {
        (*options)[n].level_hand_off = false;
        (*options)[n].group_level_hand_off = false;
        (*options)[n].group_hand_off_checks_initialization = false;
        keys[n] = LoweredPipelineKey(graph.nodes[n].source, (*options)[n]);
        needed_by_module[keys[n]] = needed_by_module[keys[n]] || needed[n];
        group_needed_by_module[keys[n]] = group_needed_by_module[keys[n]] || (needed[n] && group_needed[n]);
        check_needed_by_module[keys[n]] =
            check_needed_by_module[keys[n]] || (needed[n] && group_needed[n] && tables_rewritten_in_part &&
                                                graph.static_infos[n].is_api_entry && nodes_named[graph.nodes[n].name] == 1);
    }
    for (uint32_t n = 0; n < count; ++n) {
        (*options)[n].level_hand_off = needed_by_module[keys[n]];
        (*options)[n].group_level_hand_off = (*options)[n].level_hand_off && group_needed_by_module[keys[n]];
        (*options)[n].group_hand_off_checks_initialization = (*options)[n].group_level_hand_off && check_needed_by_module[keys[n]];
        // The keys above were made with the flags unset.
        keys[n] = LoweredPipelineKey(graph.nodes[n].source, (*options)[n]);
    }
    return keys;
}

}  // namespace

VkPipelineCreateFlags2KHR EffectivePipelineFlags(const void* pnext, VkPipelineCreateFlags flags) {
    if (auto* flags2 = FindInChain<VkPipelineCreateFlags2CreateInfoKHR>(pnext, VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR)) {
        return flags2->flags;
    }
    return flags;
}

uint32_t GraphPipeline::LevelsFrom(std::span<const uint32_t> entries, std::vector<std::vector<uint32_t>>* out) const {
    // States are (node, recursion depth): a self-enqueue deepens the recursion up to MaxNodeRecursionAMDX, any other edge
    // starts at 0. The graph is otherwise acyclic (checked at creation).
    std::vector<std::vector<uint32_t>> levels;
    std::set<std::pair<uint32_t, uint32_t>> frontier;
    for (uint32_t n : entries) frontier.insert({n, 0});
    while (!frontier.empty()) {
        if (levels.size() == runtime::kMaxLevels) return frontier.begin()->first;
        std::set<uint32_t> level_nodes;
        std::set<std::pair<uint32_t, uint32_t>> next;
        for (auto [n, depth] : frontier) {
            level_nodes.insert(n);
            const GraphNode& node = nodes[n];
            for (size_t o = 0; o < node.info.outputs.size(); ++o) {
                for (uint32_t i = 0; i < node.output_table_length[o]; ++i) {
                    const uint32_t target = output_table[node.output_table_index[o] + i];
                    if (target == runtime::kInvalidNode) continue;
                    if (target == n) {
                        if (depth < static_infos[n].max_recursion) next.insert({n, depth + 1});
                    } else {
                        next.insert({target, 0});
                    }
                }
            }
        }
        // Nodes that share an input run at the level of the node whose records they read.
        for (uint32_t n = 0; n < nodes.size(); ++n) {
            if (level_nodes.count(static_infos[n].shares_input_with)) level_nodes.insert(n);
        }
        levels.emplace_back(level_nodes.begin(), level_nodes.end());
        frontier = std::move(next);
    }
    *out = std::move(levels);
    return runtime::kInvalidNode;
}

std::shared_ptr<const GraphPlan> GraphPipeline::PlanForEntries(std::vector<uint32_t> entry_nodes) const {
    std::sort(entry_nodes.begin(), entry_nodes.end());
    entry_nodes.erase(std::unique(entry_nodes.begin(), entry_nodes.end()), entry_nodes.end());
    if (entry_nodes.empty() || (!levels.empty() && entry_nodes == levels.front())) return nullptr;
    std::lock_guard<std::mutex> lock(entry_plans->mutex);
    if (auto found = entry_plans->plans.find(entry_nodes); found != entry_plans->plans.end()) return found->second;
    auto plan = std::make_shared<GraphPlan>(dispatch_plan);
    // Every entry is a node of the static level 0, so its levels are a subset of the static ones: never deeper.
    if (LevelsFrom(entry_nodes, &plan->levels) != runtime::kInvalidNode) return nullptr;
    plan->FormDispatchGroups();
    // Applications dispatch a few entry sets, mostly the same ones every frame; a runaway variety just starts over.
    constexpr size_t kMaxCachedEntryPlans = 64;
    if (entry_plans->plans.size() >= kMaxCachedEntryPlans) entry_plans->plans.clear();
    entry_plans->plans.emplace(std::move(entry_nodes), plan);
    return plan;
}

void GraphPipeline::BuildDispatchPlan() {
    dispatch_plan = GraphPlan{};
    dispatch_plan.graph_tag = graph_tag;
    dispatch_plan.scratch_plan = scratch_plan;
    dispatch_plan.levels = levels;
    dispatch_plan.nodes.reserve(nodes.size());
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        dispatch_plan.nodes.push_back(
            {nodes[n].pipeline, lowered_layout, context_offset, nodes[n].info.input_record.size, static_infos[n].record_stride,
             static_infos[n].shares_input_with, static_infos[n].is_api_entry != 0, node_labels ? &(*node_labels)[n] : nullptr,
             !nodes[n].info.outputs.empty(), nodes[n].output_table_base, ReadsRecordList(nodes[n].info),
             StaticGridWorkgroups(nodes[n].info),
             std::accumulate(nodes[n].output_table_length.begin(), nodes[n].output_table_length.end(), 0u), nodes[n].level_hand_off,
             nodes[n].group_level_hand_off,
             nodes[n].group_level_hand_off && InvocationsPerRecord(nodes[n].info) > kGroupHandOffMaxInvocationsPerRecordGpu,
             nodes[n].lowering_group, nodes[n].group_hand_off_checks_initialization, RecordsEnqueuedPerRecord(nodes[n].info)});
    }
    // Records by index need every output that can name the consumer to place records with the consumer's own stride
    // (LoweringOptions::output_record_stride against input_record_stride): the producer places slot r at r * its stride,
    // the consumer looks at r * its own.
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        dispatch_plan.nodes[n].places_records_by_index = nodes[n].records_by_index;
        dispatch_plan.nodes[n].input_by_index = nodes[n].records_by_index && ReadsRecordList(nodes[n].info);
    }
    for (const GraphNode& producer : nodes) {
        for (size_t output = 0; output < producer.info.outputs.size(); ++output) {
            const uint32_t stride = RecordStride(producer.info.outputs[output].record);
            const uint32_t first = producer.output_table_index[output];
            for (uint32_t entry = first; entry < first + producer.output_table_length[output] && entry < output_table.size();
                 ++entry) {
                const uint32_t target = output_table[entry];
                if (target < nodes.size() && stride != static_infos[target].record_stride)
                    dispatch_plan.nodes[target].input_by_index = false;
            }
        }
    }
    dispatch_plan.FormDispatchGroups();
    // What the level pass and the lowered nodes of a dispatch group read in scratch (written at initialization).
    for (uint32_t n = 0; n < nodes.size(); ++n) {
        static_infos[n].output_table_base = nodes[n].output_table_base;
        static_infos[n].dispatch_group_first = dispatch_plan.dispatch_group_first[n];
        static_infos[n].dispatch_group_size = dispatch_plan.dispatch_group_size[n];
    }
    // Initialization writes these, and host-prepared dispatches rewrite them (GraphPlan::node_table).
    dispatch_plan.node_table = static_infos;
    dispatch_plan.output_table = output_table;
}

void GraphPipeline::Destroy(DeviceState& device, const VkAllocationCallbacks* allocator) {
    for (VkPipeline pipeline : lowered_pipelines) device.dispatch.DestroyPipeline(device.device, pipeline, allocator);
    lowered_pipelines.clear();
    for (GraphNode& node : nodes) node.pipeline = VK_NULL_HANDLE;
    if (lowered_layout != VK_NULL_HANDLE) device.dispatch.DestroyPipelineLayout(device.device, lowered_layout, allocator);
    lowered_layout = VK_NULL_HANDLE;
}

GraphBuildResult BuildNodeLibrary(DeviceState& device, const VkComputePipelineCreateInfo& create_info) {
    NodeSource source;
    std::string error;
    if (!ReadStage(device, create_info.stage, &source, &error)) return Failure(VK_ERROR_UNKNOWN, error);
    // Analyse now so that a bad node fails where the application created it, not later at link time.
    auto module = spirv::ReadModule(*source.words);
    if (!module.ok()) return Failure(VK_ERROR_UNKNOWN, "node library: " + module.error().ToString());
    spirv::SpecializationMap specialization = ReadSpecialization(source);
    auto info = spirv::AnalyzeNode(*module, source.entry_point, &specialization);
    if (!info.ok()) return Failure(VK_ERROR_UNKNOWN, "node library \"" + source.entry_point + "\": " + info.error().ToString());
    auto library = std::make_shared<GraphPipeline>();
    library->is_library = true;
    library->library_sources.push_back(std::move(source));
    return GraphBuildResult{VK_SUCCESS, "", library};
}

GraphBuildResult BuildExecutionGraphPipeline(DeviceState& device, VkPipelineCache cache,
                                             const VkExecutionGraphPipelineCreateInfoAMDX& create_info,
                                             const VkAllocationCallbacks* allocator) {
    // 1. Gather node sources: the stages, then every library's nodes.
    std::vector<NodeSource> sources;
    for (uint32_t i = 0; i < create_info.stageCount; ++i) {
        NodeSource source;
        std::string error;
        if (!ReadStage(device, create_info.pStages[i], &source, &error)) return Failure(VK_ERROR_UNKNOWN, error);
        sources.push_back(std::move(source));
    }
    if (create_info.pLibraryInfo != nullptr) {
        for (uint32_t i = 0; i < create_info.pLibraryInfo->libraryCount; ++i) {
            auto library = device.graph_pipelines.Find(create_info.pLibraryInfo->pLibraries[i]);
            if (!library || !(*library)->is_library) {
                return Failure(VK_ERROR_UNKNOWN,
                               "pLibraryInfo->pLibraries[" + std::to_string(i) +
                                   "] is not a node library: libraries must be compute pipelines created with "
                                   "VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR | VK_PIPELINE_CREATE_2_EXECUTION_GRAPH_BIT_AMDX, or execution "
                                   "graph libraries (VUID-VkExecutionGraphPipelineCreateInfoAMDX-pLibraryInfo-10181)");
            }
            for (const NodeSource& source : (*library)->library_sources) sources.push_back(source);
        }
    }
    const bool is_library = (create_info.flags & VK_PIPELINE_CREATE_LIBRARY_BIT_KHR) != 0;

    // 2. Analyse and name every node.
    auto graph = std::make_shared<GraphPipeline>();
    std::vector<spirv::Module> modules;
    modules.reserve(sources.size());
    std::map<NodeKey, uint32_t> node_by_key;
    for (NodeSource& source : sources) {
        auto module = spirv::ReadModule(*source.words);
        if (!module.ok()) return Failure(VK_ERROR_UNKNOWN, "node \"" + source.entry_point + "\": " + module.error().ToString());
        spirv::SpecializationMap specialization = ReadSpecialization(source);
        auto info = spirv::AnalyzeNode(*module, source.entry_point, &specialization);
        if (!info.ok()) return Failure(VK_ERROR_UNKNOWN, "node \"" + source.entry_point + "\": " + info.error().ToString());
        GraphNode node;
        node.source = source;
        node.info = std::move(*info);
        NameNode(node);
        const NodeKey key{node.name, node.shader_index};
        if (node_by_key.count(key)) {
            return Failure(VK_ERROR_UNKNOWN, "two nodes are named " + NodeLabel(node.name, node.shader_index) +
                                                 " (VUID-VkExecutionGraphPipelineCreateInfoAMDX-None-09134)");
        }
        node_by_key[key] = static_cast<uint32_t>(graph->nodes.size());
        graph->nodes.push_back(std::move(node));
        modules.push_back(std::move(*module));
    }
    // Nodes that share a name form one node array, which an output addresses with one record type and one launch shape.
    std::map<std::string, uint32_t> first_node_of_name;
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        const GraphNode& node = graph->nodes[n];
        const auto [first, inserted] = first_node_of_name.emplace(node.name, n);
        if (inserted) continue;
        const GraphNode& other = graph->nodes[first->second];
        if (node.info.input_record.size != other.info.input_record.size) {
            std::ostringstream message;
            message << "nodes " << NodeLabel(other.name, other.shader_index) << " and " << NodeLabel(node.name, node.shader_index)
                    << " share a name but their input records are " << other.info.input_record.size << " and "
                    << node.info.input_record.size << " bytes (VUID-VkExecutionGraphPipelineCreateInfoAMDX-None-09135)";
            return Failure(VK_ERROR_UNKNOWN, message.str());
        }
        if (node.info.static_grid.has_value() != other.info.static_grid.has_value()) {
            const GraphNode& with_static = node.info.static_grid ? node : other;
            const GraphNode& without_static = node.info.static_grid ? other : node;
            return Failure(VK_ERROR_UNKNOWN, "nodes " + NodeLabel(with_static.name, with_static.shader_index) + " and " +
                                                 NodeLabel(without_static.name, without_static.shader_index) +
                                                 " share a name but only the first declares StaticNumWorkgroupsAMDX "
                                                 "(VUID-VkExecutionGraphPipelineCreateInfoAMDX-StaticNumWorkgroupsAMDX-09138)");
        }
        // VkPipelineShaderStageNodeCreateInfoAMDX: "two compute shaders where one is coalescing and the other is not,
        // cannot share the same name" (VUID-09137 still says this with the removed CoalescedInputCountAMDX built-in).
        auto coalescing = [](const GraphNode& n) {
            return n.info.launch == spirv::LaunchKind::kCoalescing || n.info.launch == spirv::LaunchKind::kThread;
        };
        if (coalescing(node) != coalescing(other)) {
            const GraphNode& with_mode = coalescing(node) ? node : other;
            const GraphNode& without_mode = coalescing(node) ? other : node;
            return Failure(VK_ERROR_UNKNOWN, "nodes " + NodeLabel(with_mode.name, with_mode.shader_index) + " and " +
                                                 NodeLabel(without_mode.name, without_mode.shader_index) +
                                                 " share a name but only the first declares CoalescingAMDX "
                                                 "(VUID-VkExecutionGraphPipelineCreateInfoAMDX-CoalescedInputCountAMDX-09137)");
        }
    }
    if (is_library) {
        graph->is_library = true;
        graph->library_sources = std::move(sources);
        return GraphBuildResult{VK_SUCCESS, "", graph};
    }
    if (graph->nodes.empty()) return Failure(VK_ERROR_UNKNOWN, "the execution graph has no nodes");

    // 3. Link: every output gets a table from array index to graph node (facts §9, §10, §14).
    std::map<std::string, uint32_t> highest_index_by_name;
    for (const GraphNode& node : graph->nodes) {
        uint32_t& highest = highest_index_by_name[node.name];
        highest = std::max(highest, node.shader_index);
    }
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        GraphNode& node = graph->nodes[n];
        for (const spirv::NodeOutputInfo& output : node.info.outputs) {
            uint32_t length = 1;
            if (output.array_size) {
                length = *output.array_size;
            } else if (output.unbounded()) {
                auto highest = highest_index_by_name.find(output.name);
                length = highest == highest_index_by_name.end() || highest->second < output.base_index
                             ? 0
                             : highest->second - output.base_index + 1;
            }
            if (node.output_table_index.empty()) node.output_table_base = static_cast<uint32_t>(graph->output_table.size());
            node.output_table_index.push_back(static_cast<uint32_t>(graph->output_table.size()));
            node.output_table_length.push_back(length);
            for (uint32_t i = 0; i < length; ++i) {
                const NodeKey key{output.name, output.base_index + i};
                auto target = node_by_key.find(key);
                if (target == node_by_key.end()) {
                    if (!output.sparse) {
                        return Failure(VK_ERROR_UNKNOWN, "node " + NodeLabel(node.name, node.shader_index) + " enqueues to " +
                                                             NodeLabel(key.first, key.second) +
                                                             ", which is not in the graph (VUID-VkExecutionGraphPipelineCreateInfoAMDX-flags-10184)");
                    }
                    graph->output_table.push_back(runtime::kInvalidNode);
                    continue;
                }
                const GraphNode& receiver = graph->nodes[target->second];
                if (receiver.info.input_record.size != output.record.size) {
                    std::ostringstream message;
                    message << "node " << NodeLabel(node.name, node.shader_index) << " writes " << output.record.size
                            << "-byte records to " << NodeLabel(receiver.name, receiver.shader_index) << ", whose input record is "
                            << receiver.info.input_record.size
                            << " bytes (VUID-VkExecutionGraphPipelineCreateInfoAMDX-PayloadNodeNameAMDX-09139)";
                    return Failure(VK_ERROR_UNKNOWN, message.str());
                }
                if (target->second == n && !node.info.max_recursion) {
                    return Failure(VK_ERROR_UNKNOWN, "node " + NodeLabel(node.name, node.shader_index) +
                                                         " enqueues to itself without MaxNodeRecursionAMDX (facts §14)");
                }
                if (target->second != n && receiver.name == node.name) {
                    return Failure(VK_ERROR_UNKNOWN, "node " + NodeLabel(node.name, node.shader_index) + " enqueues to " +
                                                         NodeLabel(receiver.name, receiver.shader_index) +
                                                         ": recursion other than to the node itself is not allowed (facts §14)");
                }
                graph->output_table.push_back(target->second);
            }
        }
    }

    // 4. Static node table, including SharesInputWithAMDX (facts §12.5).
    constexpr uint32_t kMaxNodesSharingAnInput = 256;
    std::map<uint32_t, uint32_t> sharers_of_node;
    graph->static_infos.resize(graph->nodes.size());
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        const GraphNode& node = graph->nodes[n];
        runtime::NodeStaticInfo& info = graph->static_infos[n];
        info = {};
        info.launch = static_cast<uint32_t>(node.info.launch);
        info.record_stride = RecordStride(node.info.input_record);
        const auto grid = node.info.static_grid ? *node.info.static_grid : node.info.max_grid.value_or(std::array<uint32_t, 3>{
                                                                                                      65535, 65535, 65535});
        std::copy(grid.begin(), grid.end(), info.static_grid);
        if (node.info.dispatch_grid) {
            info.grid_offset = node.info.dispatch_grid->byte_offset;
            info.grid_components = node.info.dispatch_grid->component_count;
            info.grid_component_bits = node.info.dispatch_grid->component_bits;
        }
        if (node.info.launch == spirv::LaunchKind::kCoalescing) info.records_per_workgroup = node.info.input_max_payloads;
        info.max_recursion = node.info.max_recursion.value_or(0);
        info.is_api_entry = node.info.is_api_entry ? 1 : 0;
        info.shader_index = node.shader_index;  // BuiltIn ShaderIndexAMDX sees the API's index override
        info.shares_input_with = runtime::kInvalidNode;
        if (node.info.shares_input_with_name) {
            auto host = node_by_key.find({*node.info.shares_input_with_name, node.info.shares_input_with_index});
            if (host == node_by_key.end()) {
                return Failure(VK_ERROR_UNKNOWN, "node " + NodeLabel(node.name, node.shader_index) + " shares the input of " +
                                                     NodeLabel(*node.info.shares_input_with_name, node.info.shares_input_with_index) +
                                                     ", which is not in the graph");
            }
            const GraphNode& host_node = graph->nodes[host->second];
            if (host_node.info.shares_input_with_name) {
                return Failure(VK_ERROR_UNKNOWN,
                               "node " + NodeLabel(node.name, node.shader_index) + " shares the input of " +
                                   NodeLabel(host_node.name, host_node.shader_index) +
                                   ", which itself shares an input: a node may only share the input of a node that "
                                   "does not declare SharesInputWithAMDX (facts §12.5)");
            }
            // The sharing node reads the host's records in place, with the host's record stride, so both must declare the
            // same record (facts §12.5: shared records are read, never written, by every node that shares them).
            if (host_node.info.input_record.size != node.info.input_record.size) {
                std::ostringstream message;
                message << "node " << NodeLabel(node.name, node.shader_index) << " shares the input of "
                        << NodeLabel(host_node.name, host_node.shader_index) << " but declares a " << node.info.input_record.size
                        << "-byte input record where the shared one is " << host_node.info.input_record.size
                        << " bytes (SharesInputWithAMDX, facts §12.5)";
                return Failure(VK_ERROR_UNKNOWN, message.str());
            }
            if (++sharers_of_node[host->second] > kMaxNodesSharingAnInput) {
                return Failure(VK_ERROR_UNKNOWN, "more than " + std::to_string(kMaxNodesSharingAnInput) +
                                                     " nodes share the input of " +
                                                     NodeLabel(host_node.name, host_node.shader_index) + ", the last one being " +
                                                     NodeLabel(node.name, node.shader_index) + " (facts §12.5)");
            }
            info.shares_input_with = host->second;
        }
    }

    if (std::optional<std::string> cycle = FindCycle(*graph)) {
        return Failure(VK_ERROR_UNKNOWN, "nodes " + *cycle +
                                             " enqueue to each other in a cycle: the only recursion allowed is a node enqueueing "
                                             "itself with MaxNodeRecursionAMDX (facts §14)");
    }

    // 5. Levels: which nodes can have records at each depth, starting from every node the API may dispatch.
    std::vector<uint32_t> api_entries;
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        if (graph->static_infos[n].is_api_entry && graph->static_infos[n].shares_input_with == runtime::kInvalidNode) api_entries.push_back(n);
    }
    if (const uint32_t deepest_node = graph->LevelsFrom(api_entries, &graph->levels); deepest_node != runtime::kInvalidNode) {
        // Cycles were rejected above, so this is a chain (or a recursion) longer than the limit (facts §13: the node the
        // API dispatches is depth 1, and every step, recursive or not, adds one).
        const GraphNode& deepest = graph->nodes[deepest_node];
        return Failure(VK_ERROR_UNKNOWN, "node " + NodeLabel(deepest.name, deepest.shader_index) + " can receive records at depth " +
                                             std::to_string(runtime::kMaxLevels + 1) + ", deeper than maxExecutionGraphDepth (" +
                                             std::to_string(runtime::kMaxLevels) + ")");
    }

    // 6. The lowered layout: the application's set layouts, and its push constants followed by the node context.
    auto app_layout = device.pipeline_layouts.Find(create_info.layout);
    if (!app_layout) return Failure(VK_ERROR_UNKNOWN, "layout is not a pipeline layout of this device (VUID-VkExecutionGraphPipelineCreateInfoAMDX-None-11363)");
    const PipelineLayoutInfo& layout_info = **app_layout;
    graph->context_offset = AlignUp(layout_info.push_constant_end, 8);
    graph->push_constant_size = graph->context_offset + sizeof(runtime::NodePushContext);
    const uint32_t max_push = device.instance->SupportOf(device.physical_device).limits.maxPushConstantsSize;
    if (graph->push_constant_size > max_push) {
        return Failure(VK_ERROR_UNKNOWN, "the pipeline layout uses " + std::to_string(layout_info.push_constant_end) +
                                             " bytes of push constants; the emulation needs " + std::to_string(sizeof(runtime::NodePushContext)) +
                                             " more and the device allows " +
                                             std::to_string(max_push));
    }
    const VkPushConstantRange push_range{VK_SHADER_STAGE_COMPUTE_BIT, 0, graph->push_constant_size};
    VkPipelineLayoutCreateInfo layout_create{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_create.setLayoutCount = static_cast<uint32_t>(layout_info.set_layouts.size());
    layout_create.pSetLayouts = layout_info.set_layouts.data();
    layout_create.pushConstantRangeCount = 1;
    layout_create.pPushConstantRanges = &push_range;
    VkResult result = device.dispatch.CreatePipelineLayout(device.device, &layout_create, allocator, &graph->lowered_layout);
    if (result != VK_SUCCESS) return Failure(result, "creating the lowered pipeline layout failed");

    // 7. Lower every node and create its compute pipeline.
    static std::atomic<uint32_t> next_graph_tag{1};
    const uint32_t graph_tag = next_graph_tag.fetch_add(1);
    graph->graph_number = device.next_graph_number.fetch_add(1);
    // Nothing in a lowered module names its node (NodePushContext carries the graph index and output-table base), so nodes
    // with equal sources and options share one lowered module and pipeline: each compose[i] of an array is lowered once.
    std::unordered_map<std::string, const GraphNode*> first_node_by_key;
    // Every record in a heap is some node's input record, allocated through some output: the largest of either sizes the
    // heap against the record entries (step 8), and decides whether one atomic may reserve both.
    uint32_t max_record_stride = 0;
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        max_record_stride = std::max(max_record_stride, graph->static_infos[n].record_stride);
        for (const spirv::NodeOutputInfo& output : graph->nodes[n].info.outputs) {
            max_record_stride = std::max(max_record_stride, RecordStride(output.record));
        }
    }
    const bool heap_holds_record_list = ScratchPlan::HeapHoldsRecordList(max_record_stride);
    // Records by index (docs/design.md, "Records by index") happen only at a level whose every record reaches one node:
    // its consumer is named alone by some output's table, and every node of the level before names at most one node in
    // each output. Only such nodes get the code (LoweringOptions::records_by_index), so that the members of a node array
    // (a classification's shading nodes) and the producers feeding one keep the code they had; the scheduler checks
    // that every producer of the level and its consumer have it (NodeDispatchPlan::places_records_by_index).
    std::vector<bool> named_alone(graph->nodes.size(), false);
    std::vector<bool> names_one_per_output(graph->nodes.size(), true);
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        const GraphNode& node = graph->nodes[n];
        for (size_t output = 0; output < node.info.outputs.size(); ++output) {
            std::set<uint32_t> targets;
            for (uint32_t entry = 0; entry < node.output_table_length[output]; ++entry) {
                const uint32_t target = graph->output_table[node.output_table_index[output] + entry];
                if (target < graph->nodes.size()) targets.insert(target);
            }
            if (targets.size() == 1) named_alone[*targets.begin()] = true;
            if (targets.size() > 1) names_one_per_output[n] = false;
        }
    }
    std::vector<spirv::LoweringOptions> node_options(graph->nodes.size());
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        GraphNode& node = graph->nodes[n];
        spirv::LoweringOptions& options = node_options[n];
        options.context_offset = graph->context_offset;
        for (uint32_t table : node.output_table_index) options.output_table_index.push_back(table - node.output_table_base);
        options.output_table_length = node.output_table_length;
        for (const spirv::NodeOutputInfo& output : node.info.outputs) options.output_record_stride.push_back(RecordStride(output.record));
        options.input_record_stride = graph->static_infos[n].record_stride;
        options.level_pass_records_per_workgroup = device.level_pass_records_per_workgroup;
        // A thread node without outputs runs a larger batch (kLeafThreadBatchSize); every node of an array shares the
        // module, so its members agree.
        options.thread_batch_size = node.info.outputs.empty() ? device.leaf_thread_batch_size : device.thread_batch_size;
        options.heap_holds_record_list = heap_holds_record_list;
        options.records_by_index =
            heap_holds_record_list && (named_alone[n] || (!node.info.outputs.empty() && names_one_per_output[n]));
        options.records_newest_first = options.records_by_index && device.instance->settings.records_newest_first;
        options.reserve_per_workgroup = device.reserve_per_workgroup;
        options.coalesce_record_stores = device.coalesce_record_stores;
        options.indirect_level_pass = device.indirect_level_pass;
        options.validate = device.instance->settings.validate_lowered_shaders;
        options.optimize = device.instance->settings.optimize_lowered_shaders;
        for (const spirv::NodeOutputInfo& output : node.info.outputs) {
            // A dropped allocation gets the trash region, whichever invocation or workgroup made it, and writes at most
            // OutputRecordLimit records there (the lowering clamps counts and record indices to it).
            graph->trash_size =
                std::max(graph->trash_size, spirv::OutputRecordLimit(output) * std::max<uint32_t>(RecordStride(output.record), 4));
        }
    }
    // The graph's part of the scratch layout depends on the graph alone, so the lowering may take its offsets as
    // constants (LoweringOptions::node_table_offset, node_stats_offset, node_count). Nothing below changes the trash size.
    graph->scratch_plan = ScratchPlan(static_cast<uint32_t>(graph->nodes.size()), static_cast<uint32_t>(graph->output_table.size()),
                                      graph->trash_size, max_record_stride);
    if (const std::optional<ScratchLayout> layout = graph->scratch_plan.LayoutFor(graph->scratch_plan.MinSize())) {
        for (spirv::LoweringOptions& options : node_options) {
            options.node_table_offset = layout->node_table_offset;
            options.node_stats_offset = layout->node_stats_offset;
            options.node_count = static_cast<uint32_t>(graph->nodes.size());
        }
    }
    std::vector<std::string> pipeline_keys = SelectLevelHandOffs(*graph, device.instance->settings.direct_levels,
                                                                 device.hand_off_max_invocations_per_record, &node_options);
    // A node whose lowered module no other node shares is never dispatched as part of a group (FormDispatchGroups groups
    // nodes of one pipeline), so it goes without the group code (LoweringOptions::dispatch_group_member).
    std::unordered_map<std::string, uint32_t> nodes_per_key;
    for (const std::string& key : pipeline_keys) ++nodes_per_key[key];
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        if (nodes_per_key[pipeline_keys[n]] != 1) continue;
        node_options[n].dispatch_group_member = false;
        pipeline_keys[n] = LoweredPipelineKey(graph->nodes[n].source, node_options[n]);
    }
    // Only nodes of one source were lowered as members of one group (FormDispatchGroups, NodeDispatchPlan::group_key).
    std::unordered_map<std::string, uint32_t> first_node_of_source;
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        graph->nodes[n].lowering_group = first_node_of_source.emplace(pipeline_keys[n], n).first->second;
    }
    // Nodes whose sources differ only in node names share one lowering and pipeline too: a chain of N steps lowers and
    // compiles twice (the last step has no output), not N times (32 levels on lavapipe: 98 to 127 ms → 5 to 6.5 ms). Replacement
    // files are looked up per lowering (the first node's name), so with replace_shaders_path each source keeps its own,
    // as its documentation promises for every node but the members of an array.
    if (device.instance->settings.replace_shaders_path.empty()) {
        for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
            const std::vector<uint32_t> numbered = WordsWithNodeNamesNumbered(*graph->nodes[n].source.words);
            pipeline_keys[n] = LoweredPipelineKey(graph->nodes[n].source, node_options[n], &numbered);
        }
    }
    for (uint32_t n = 0; n < graph->nodes.size(); ++n) {
        GraphNode& node = graph->nodes[n];
        const spirv::LoweringOptions& options = node_options[n];
        node.level_hand_off = options.level_hand_off;
        node.group_level_hand_off = options.group_level_hand_off;
        node.group_hand_off_checks_initialization = options.group_hand_off_checks_initialization;
        node.records_by_index = options.records_by_index;
        const std::string& key = pipeline_keys[n];
        if (auto shared = first_node_by_key.find(key); shared != first_node_by_key.end()) {
            const GraphNode& first = *shared->second;
            node.pipeline = first.pipeline;
            node.lowered_local_size = first.lowered_local_size;
            if (node.info.launch == spirv::LaunchKind::kThread)
                graph->static_infos[n].records_per_workgroup = first.lowered_local_size[0];
            continue;
        }
        auto lowered = spirv::LowerNode(modules[n], node.info, options);
        if (!lowered.ok()) {
            graph->Destroy(device, allocator);
            return Failure(VK_ERROR_UNKNOWN, "lowering node " + NodeLabel(node.name, node.shader_index) + " failed: " + lowered.error().ToString());
        }
        node.lowered_local_size = lowered->local_size;
        DumpNodeShaders(device, graph->graph_number, node, lowered->words);
        if (std::string replace_error = ReplaceLoweredShader(device, graph->graph_number, node, &*lowered);
            !replace_error.empty()) {
            graph->Destroy(device, allocator);
            return Failure(VK_ERROR_UNKNOWN, replace_error);
        }
        if (node.info.launch == spirv::LaunchKind::kThread) graph->static_infos[n].records_per_workgroup = lowered->local_size[0];

        VkShaderModuleCreateInfo module_create{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        module_create.codeSize = lowered->words.size() * sizeof(uint32_t);
        module_create.pCode = lowered->words.data();
        VkShaderModule module = VK_NULL_HANDLE;
        result = device.dispatch.CreateShaderModule(device.device, &module_create, allocator, &module);
        if (result != VK_SUCCESS) {
            graph->Destroy(device, allocator);
            return Failure(result, "creating the lowered shader module of node " + NodeLabel(node.name, node.shader_index) + " failed");
        }
        VkSpecializationInfo specialization{static_cast<uint32_t>(node.source.specialization_entries.size()),
                                            node.source.specialization_entries.data(), node.source.specialization_data.size(),
                                            node.source.specialization_data.data()};
        VkComputePipelineCreateInfo pipeline_create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        pipeline_create.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        pipeline_create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        pipeline_create.stage.module = module;
        pipeline_create.stage.pName = node.source.entry_point.c_str();
        pipeline_create.stage.pSpecializationInfo = node.source.specialization_entries.empty() ? nullptr : &specialization;
        pipeline_create.layout = graph->lowered_layout;
        result = device.dispatch.CreateComputePipelines(device.device, cache, 1, &pipeline_create, allocator, &node.pipeline);
        device.dispatch.DestroyShaderModule(device.device, module, allocator);
        if (result != VK_SUCCESS) {
            node.pipeline = VK_NULL_HANDLE;
            graph->Destroy(device, allocator);
            return Failure(result, "creating the compute pipeline of node " + NodeLabel(node.name, node.shader_index) + " failed");
        }
        graph->lowered_pipelines.push_back(node.pipeline);
        first_node_by_key.emplace(key, &node);
    }

    // 8. Scratch sizes (scratch_plan.h documents what each guarantees; the plan was made before lowering, step 7).
    graph->scratch_size.minSize = graph->scratch_plan.MinSize();
    graph->scratch_size.maxSize = graph->scratch_plan.MaxSize();
    graph->scratch_size.sizeGranularity = graph->scratch_plan.SizeGranularity();
    graph->graph_tag = graph_tag;
    // Which nodes each level dispatches, for people reading a verbose log (and for tests of the reachability analysis).
    device.messages().Emit(MessageSeverity::kVerbose, message_id::kGraphLevels,
                           "execution graph " + std::to_string(graph_tag) + " dispatches " + DescribeLevels(*graph));
    // How many nodes share each lowered pipeline (for people chasing creation or bind costs, and for tests of the sharing).
    device.messages().Emit(MessageSeverity::kVerbose, message_id::kGraphPipelines,
                           "execution graph " + std::to_string(graph_tag) + " runs its " + std::to_string(graph->nodes.size()) +
                               " nodes with " + std::to_string(graph->lowered_pipelines.size()) + " lowered pipelines");
    auto labels = std::make_shared<std::vector<std::string>>();
    for (const GraphNode& node : graph->nodes) labels->push_back(node.name + "[" + std::to_string(node.shader_index) + "]");
    graph->node_labels = std::move(labels);
    graph->BuildDispatchPlan();
    return GraphBuildResult{VK_SUCCESS, "", graph};
}

}  // namespace execgraph
