// vkCmdInitializeGraphScratchMemoryAMDX and the three graph dispatch commands on emulating devices.
#include "graph_dispatch.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "graph_pipeline.h"
#include "layer_state.h"
#include "prepared_levels.h"
#include "scheduler.h"
#include "scratch_plan.h"

namespace execgraph {
namespace {

void ReportDispatchError(const DeviceState& device, VkCommandBuffer command_buffer, const std::string& text) {
    device.messages().Emit(MessageSeverity::kError, message_id::kDispatch, text + "; the command was skipped",
                           {ObjectOf(VK_OBJECT_TYPE_COMMAND_BUFFER, command_buffer)});
}

// The command buffer's state if it is a primary command buffer the layer knows; otherwise reports and returns null.
// Secondary command buffers cannot hold graph commands: the layer's recording restores state and reads back results
// per command buffer, which a secondary one executed from an unknown primary would break, and the spec forbids it.
std::shared_ptr<CommandBufferState> FindPrimaryCommandBuffer(const DeviceState& device, VkCommandBuffer command_buffer,
                                                             const char* command, const char* vuid_suffix) {
    std::shared_ptr<CommandBufferState> state = device.command_buffers.Find(command_buffer).value_or(nullptr);
    if (!state) {
        ReportDispatchError(device, command_buffer, std::string(command) + ": unknown command buffer");
        return nullptr;
    }
    if (!state->is_primary) {
        ReportDispatchError(device, command_buffer,
                            std::string(command) + ": must be recorded in a primary command buffer, not a secondary one (VUID-" +
                                command + "-" + vuid_suffix + ")");
        return nullptr;
    }
    return state;
}

// The spec's checks that the layer can make on the host (facts §11, §12), so that bad input is skipped with a message
// instead of reaching the GPU.
std::optional<BufferRange> CheckScratch(const DeviceState& device, VkCommandBuffer command_buffer, const GraphPipeline& graph,
                                        VkDeviceAddress scratch, VkDeviceSize scratch_size, const char* command) {
    if (scratch_size < graph.scratch_size.minSize) {
        ReportDispatchError(device, command_buffer,
                            std::string(command) + ": scratchSize " + std::to_string(scratch_size) +
                                " is smaller than the graph's minSize " + std::to_string(graph.scratch_size.minSize) +
                                " (VUID-" + command + "-scratchSize-10193)");
        return std::nullopt;
    }
    std::optional<BufferRange> range = device.scratch_buffers.Find(scratch, scratch_size);
    if (!range) {
        ReportDispatchError(device, command_buffer,
                            std::string(command) + ": [scratch, scratch + scratchSize) does not lie in a buffer created with "
                                                   "VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX whose address was queried with "
                                                   "vkGetBufferDeviceAddress (VUID-" + command + "-scratch-09184)");
    }
    return range;
}

// Binds the recorded descriptor sets of one bind point at the compute bind point, each bind call as the application made
// it, with `layout_override` in place of the application's layout when given.
void ReplaySetBindings(const DeviceDispatchTable& commands, VkCommandBuffer command_buffer, const BindPointState& bind_point,
                       VkPipelineLayout layout_override) {
    for (uint32_t set = 0; set < bind_point.sets.size(); ++set) {
        const BindPointState::SetBinding& binding = bind_point.sets[set];
        if (binding.replays_following == 0) continue;
        std::vector<VkDescriptorSet> sets;
        for (uint32_t i = 0; i < binding.replays_following && set + i < bind_point.sets.size(); ++i) {
            sets.push_back(bind_point.sets[set + i].set);
        }
        commands.CmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE,
                                       layout_override != VK_NULL_HANDLE ? layout_override : binding.layout, set,
                                       static_cast<uint32_t>(sets.size()), sets.data(),
                                       static_cast<uint32_t>(binding.dynamic_offsets.size()), binding.dynamic_offsets.data());
    }
}

// Puts back the application's compute bind point and push constants, which the graph dispatch replaced
// (docs/design.md, "How a node receives its scheduler context").
void RestoreComputeState(DeviceState& device, VkCommandBuffer command_buffer, const CommandBufferState& state) {
    if (state.compute.pipeline != VK_NULL_HANDLE) {
        device.dispatch.CmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, state.compute.pipeline);
    }
    ReplaySetBindings(device.dispatch, command_buffer, state.compute, VK_NULL_HANDLE);
    for (const PushConstantWrite& write : state.push_constants) {
        device.dispatch.CmdPushConstants(command_buffer, write.layout, write.stages, write.offset,
                                         static_cast<uint32_t>(write.bytes.size()), write.bytes.data());
    }
}

// The application's push constants, pushed with the lowered layout. The meta passes between levels push their own
// parameters into the same bytes, so this runs once per level (every node has the lowered layout), not once per graph
// dispatch.
void PushApplicationConstants(const DeviceDispatchTable& commands, VkCommandBuffer command_buffer, const CommandBufferState& state,
                              const GraphPipeline& graph) {
    for (const PushConstantWrite& write : state.push_constants) {
        if (!(write.stages & VK_SHADER_STAGE_COMPUTE_BIT) || write.offset + write.bytes.size() > graph.context_offset) continue;
        commands.CmdPushConstants(command_buffer, graph.lowered_layout, VK_SHADER_STAGE_COMPUTE_BIT, write.offset,
                                  static_cast<uint32_t>(write.bytes.size()), write.bytes.data());
    }
}

// Host-side checks of vkCmdDispatchGraphAMDX's infos (facts §12.2: read at record time).
bool CheckHostInfos(const DeviceState& device, VkCommandBuffer command_buffer, const GraphPipeline& graph,
                    const VkDispatchGraphCountInfoAMDX& count_info, const char* command) {
    for (uint32_t i = 0; i < count_info.count; ++i) {
        const auto& info = *reinterpret_cast<const VkDispatchGraphInfoAMDX*>(static_cast<const uint8_t*>(count_info.infos.hostAddress) +
                                                                              i * count_info.stride);
        // Built only for a message: recording a valid dispatch builds no strings.
        auto where = [&] { return std::string(command) + ": infos[" + std::to_string(i) + "]"; };
        if (info.nodeIndex >= graph.nodes.size()) {
            ReportDispatchError(
                device, command_buffer,
                where() + ".nodeIndex " + std::to_string(info.nodeIndex) + " is not a node index of the bound graph");
            return false;
        }
        const GraphNode& node = graph.nodes[info.nodeIndex];
        if (!node.info.is_api_entry || node.info.shares_input_with_name) {
            ReportDispatchError(device, command_buffer,
                                where() + " names node \"" + node.name +
                                    "\", which cannot be dispatched from the API (IsApiEntryAMDX false or "
                                    "SharesInputWithAMDX, facts §12.3)");
            return false;
        }
        // The API's records have no producer workgroups to finish writing them (facts §12.3).
        if (node.info.uses_finish_writing) {
            ReportDispatchError(device, command_buffer,
                                where() + " names node \"" + node.name + "\"[" + std::to_string(node.shader_index) +
                                    "], which uses OpFinishWritingNodePayloadAMDX: such nodes must not be "
                                    "dispatched from the API (facts §12.3)");
            return false;
        }
        if (info.payloadCount > 0 && info.payloads.hostAddress == nullptr) {
            ReportDispatchError(device, command_buffer,
                                where() + ".payloads is NULL with payloadCount " + std::to_string(info.payloadCount));
            return false;
        }
        const uint32_t record_size = node.info.input_record.size;
        if (info.payloadCount > 1 && info.payloadStride != 0 && info.payloadStride < record_size) {
            ReportDispatchError(device, command_buffer,
                                where() + ".payloadStride " + std::to_string(info.payloadStride) + " is smaller than node \"" +
                                    node.name + "\"'s " + std::to_string(record_size) + "-byte record");
            return false;
        }
    }
    return true;
}

// The scheduler as this device runs it (layer_state.h: the choices made by device type or settings at device creation).
SchedulerRecorder RecorderFor(DeviceState& device) {
    return SchedulerRecorder(&device.dispatch, device.meta_pipelines.get(), true, device.level_pass_records_per_workgroup,
                             device.indirect_level_pass, device.finish_pass_reports);
}

// Prepared levels of one graph dispatch (prepared_levels.h): captured through the device's capture table, then executed
// as the cached secondary holding the same commands, which the primary keeps until it can no longer be pending.
class PreparedLevelsOfDispatch final : public PreparedLevelRecorder {
  public:
    PreparedLevelsOfDispatch(DeviceState& device, CommandBufferState& state, uint32_t queue_family, uint32_t graph_number)
        : device_(device), state_(state), queue_family_(queue_family), graph_number_(graph_number) {}

    const DeviceDispatchTable* Begin() override {
        capture_.Clear();
        scope_.emplace(capture_);
        return device_.capture_dispatch.get();
    }

    void Execute(VkCommandBuffer cmd) override {
        scope_.reset();
        std::string error;
        bool recorded = false;
        std::shared_ptr<PreparedLevels> prepared;
        if (capture_.unsupported) {
            error = "the levels recorded a command the capture cannot hold";
        } else {
            prepared = device_.prepared_levels->FindOrRecord(queue_family_, capture_, &recorded, &error);
        }
        if (!prepared) {
            // The same commands, recorded directly: the dispatch runs as without the setting.
            device_.messages().Emit(MessageSeverity::kWarning, message_id::kPreparedLevels,
                                    "graph " + std::to_string(graph_number_) + ": no prepared levels (" + error +
                                        "); the levels were recorded directly",
                                    {ObjectOf(VK_OBJECT_TYPE_COMMAND_BUFFER, cmd)});
            ReplayCapture(device_.dispatch, cmd, capture_);
            return;
        }
        if (recorded) {
            device_.messages().Emit(MessageSeverity::kVerbose, message_id::kPreparedLevels,
                                    "graph " + std::to_string(graph_number_) + ": recorded prepared levels (" +
                                        std::to_string(capture_.words.size()) + " words of commands; " +
                                        std::to_string(device_.prepared_levels->size()) + " prepared on this device)",
                                    {ObjectOf(VK_OBJECT_TYPE_COMMAND_BUFFER, cmd)});
        }
        device_.dispatch.CmdExecuteCommands(cmd, 1, &prepared->command_buffer);
        // A command buffer that dispatches the same graph again and again holds its secondary once.
        if (state_.prepared_levels.empty() || state_.prepared_levels.back() != prepared) {
            state_.prepared_levels.push_back(std::move(prepared));
        }
    }

  private:
    DeviceState& device_;
    CommandBufferState& state_;
    uint32_t queue_family_;
    uint32_t graph_number_;
    CommandCapture capture_;
    std::optional<CaptureScope> scope_;
};

}  // namespace

void RecordInitializeScratch(DeviceState& device, VkCommandBuffer command_buffer, VkPipeline execution_graph,
                             VkDeviceAddress scratch, VkDeviceSize scratch_size) {
    const char* command = "vkCmdInitializeGraphScratchMemoryAMDX";
    // cmdbufferlevel="primary" in the registry (VUID-vkCmdInitializeGraphScratchMemoryAMDX-bufferlevel).
    if (!FindPrimaryCommandBuffer(device, command_buffer, command, "bufferlevel")) return;
    auto graph = device.graph_pipelines.Find(execution_graph);
    if (!graph || (*graph)->is_library) {
        ReportDispatchError(device, command_buffer, std::string(command) + ": executionGraph is not an execution graph pipeline");
        return;
    }
    if (scratch % 64 != 0) {
        ReportDispatchError(device, command_buffer,
                            std::string(command) + ": scratch must be a multiple of 64 (VUID-vkCmdInitializeGraphScratchMemoryAMDX-scratch-09144)");
        return;
    }
    std::optional<BufferRange> range = CheckScratch(device, command_buffer, **graph, scratch, scratch_size, command);
    if (!range) return;
    const GraphPipeline& pipeline = **graph;
    SchedulerRecorder recorder = RecorderFor(device);
    RecordResult recorded = recorder.RecordInitialize(
        command_buffer, ScratchBinding{range->buffer, range->offset, scratch, scratch_size}, pipeline.scratch_plan,
        pipeline.graph_tag, pipeline.dispatch_plan.node_table, pipeline.dispatch_plan.output_table);
    if (recorded.result != VK_SUCCESS) {
        ReportDispatchError(device, command_buffer, std::string(command) + ": " + recorded.error);
        return;
    }
    device.scratch_buffers.RecordInitialization(scratch, scratch_size, pipeline.graph_tag);
}

void RecordGraphDispatch(DeviceState& device, VkCommandBuffer command_buffer, VkDeviceAddress scratch, VkDeviceSize scratch_size,
                         const GraphEntries& entries, const char* command) {
    std::shared_ptr<CommandBufferState> state = FindPrimaryCommandBuffer(device, command_buffer, command, "commandBuffer-09182");
    if (!state) return;
    if (!state->bound_graph) {
        ReportDispatchError(device, command_buffer,
                            std::string(command) + ": no execution graph pipeline is bound to VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX");
        return;
    }
    const GraphPipeline& graph = *state->bound_graph;
    std::optional<BufferRange> range = CheckScratch(device, command_buffer, graph, scratch, scratch_size, command);
    if (!range) return;

    EntrySource source;
    std::shared_ptr<const GraphPlan> entry_plan;  // the plan for the nodes host infos name; null: graph.dispatch_plan
    if (entries.kind == GraphEntries::Kind::kDeviceCountInfo) {
        source = EntrySource::DeviceCountInfo(entries.device_count_info);
    } else {
        const VkDispatchGraphCountInfoAMDX* count_info = entries.host_count_info;
        if (count_info == nullptr || (count_info->count > 0 && count_info->infos.hostAddress == nullptr)) {
            ReportDispatchError(device, command_buffer, std::string(command) + ": pCountInfo or its infos pointer is NULL");
            return;
        }
        if (entries.kind == GraphEntries::Kind::kDeviceInfos) {
            source = EntrySource::HostCountInfo(*count_info);
        } else {
            if (!CheckHostInfos(device, command_buffer, graph, *count_info, command)) return;
            source = EntrySource::HostInfos(*count_info);
            // Only what the named nodes reach can run (GraphPipeline::PlanForEntries).
            std::vector<uint32_t> entry_nodes;
            for (uint32_t i = 0; i < count_info->count; ++i) {
                const auto& info = *reinterpret_cast<const VkDispatchGraphInfoAMDX*>(
                    static_cast<const uint8_t*>(count_info->infos.hostAddress) + i * count_info->stride);
                if (info.payloadCount != 0) entry_nodes.push_back(info.nodeIndex);
            }
            entry_plan = graph.PlanForEntries(std::move(entry_nodes));
        }
    }

    const GraphPlan& plan = entry_plan ? *entry_plan : graph.dispatch_plan;
    // Labels only where the application enabled VK_EXT_debug_utils on its instance (the commands belong to it).
    const bool labels = device.instance->settings.debug_labels && device.instance->debug_utils_enabled &&
                        device.dispatch.CmdBeginDebugUtilsLabelEXT != nullptr &&
                        device.dispatch.CmdEndDebugUtilsLabelEXT != nullptr;
    // What every node sees: the application's execution-graph descriptor sets and push constants, with the lowered layout
    // (identical set layouts, so the sets are compatible). The meta pipelines use no descriptor sets, so the sets are
    // bound once per graph dispatch; push constants are not (PushApplicationConstants). The callback captures one
    // pointer, which std::function stores without allocating.
    struct NodeStateBinding {
        const CommandBufferState& state;
        const GraphPipeline& graph;
    } binding{*state, graph};
    DispatchOptions options;
    options.debug_labels = labels;
    options.direct_levels = device.instance->settings.direct_levels;
    options.fixed_level_max_workgroups = device.instance->settings.fixed_levels ? device.fixed_level_max_workgroups : 0;
    options.initialization_recorded = device.scratch_buffers.LatestInitializationIs(scratch, graph.graph_tag);
    options.bind_node_state = [binding = &binding](const DeviceDispatchTable& commands, VkCommandBuffer cmd, uint32_t,
                                                   bool bind_sets) {
        if (bind_sets) ReplaySetBindings(commands, cmd, binding->state.graph, binding->graph.lowered_layout);
        PushApplicationConstants(commands, cmd, binding->state, binding->graph);
    };
    std::optional<PreparedLevelsOfDispatch> prepared;
    // Not while a query is active in the command buffer (CommandBufferState::active_queries).
    if (device.prepared_levels && state->active_queries == 0) {
        // The layer's secondaries come from a pool of the primary's queue family (VUID-vkCmdExecuteCommands-pCommandBuffers-00094).
        if (std::optional<uint32_t> family = device.command_pool_families.Find(state->pool)) {
            prepared.emplace(device, *state, *family, graph.graph_number);
            options.prepared_levels = &*prepared;
        }
    }
    // The dispatch's label region holds one region per level, and each of those one per node dispatch, so debuggers show
    // the graph as named compute dispatches. "graph N" matches the shader dump file names (docs/debugging.md).
    if (labels) {
        const std::string text = std::string(command) + " " + (graph.debug_name.empty() ? "" : "\"" + graph.debug_name + "\" ") +
                                 "(graph " + std::to_string(graph.graph_number) + ")";
        VkDebugUtilsLabelEXT region{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
        region.pLabelName = text.c_str();
        device.dispatch.CmdBeginDebugUtilsLabelEXT(command_buffer, &region);
    }
    // The dispatch's report: the scheduler's finish pass writes it into the slot reserved here.
    if (device.reporter) {
        // The graph pipeline's handle is the address of its layer object (graph_pipeline.h).
        char handle[32];
        std::snprintf(handle, sizeof(handle), "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(&graph)));
        options.report = device.reporter->Reserve(graph.scratch_plan.node_count(),
                                                  {command, graph.debug_name.empty() ? std::string(handle) : graph.debug_name,
                                                   graph.node_labels},
                                                  DispatchTimestampCount(plan.levels.size()));
    }
    SchedulerRecorder recorder = RecorderFor(device);
    RecordResult recorded = recorder.RecordDispatch(command_buffer, ScratchBinding{range->buffer, range->offset, scratch, scratch_size},
                                                    plan, source, options);
    if ((recorded.result != VK_SUCCESS || recorded.report_left_out) && options.report.address != 0) {
        device.reporter->Cancel(options.report);
    }
    if (labels) device.dispatch.CmdEndDebugUtilsLabelEXT(command_buffer);
    if (recorded.result != VK_SUCCESS) ReportDispatchError(device, command_buffer, std::string(command) + ": " + recorded.error);
    RestoreComputeState(device, command_buffer, *state);
}

}  // namespace execgraph
