// State the emulation needs from the application's ordinary commands on emulating devices: pipeline layouts, the
// compute and execution-graph bind points, push constants, and which command buffers exist.
//
// The execution-graph bind point (VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX) is unknown to the driver, so binds to it
// stay in the layer. Compute-bind-point state is shadowed because a graph dispatch records compute work of its own and
// must leave the application's compute state exactly as it was (docs/design.md, "Runtime contract").
#include <algorithm>
#include <cstring>

#include "graph_pipeline.h"
#include "intercepts.h"
#include "layer_state.h"

namespace execgraph::intercept {
namespace {

std::shared_ptr<CommandBufferState> StateOf(DeviceState& device, VkCommandBuffer command_buffer) {
    if (auto state = device.command_buffers.Find(command_buffer)) return *state;
    // Command buffers allocated before the layer saw them cannot exist on an emulating device; stay robust anyway.
    return device.command_buffers.FindOrInsert(command_buffer, std::make_shared<CommandBufferState>());
}

// The command buffer a thread last recorded into, with its state, for RecordingStateOf.
struct RecordingCommandBufferCache {
    const DeviceState* device;
    VkCommandBuffer command_buffer;
    CommandBufferState* state;
    uint64_t generation;  // RecordingCacheGeneration() when filled
};
thread_local RecordingCommandBufferCache t_recording_command_buffer{};

// StateOf for the intercepts of recorded commands, without the map's lock or a reference where this thread recorded into
// the same command buffer last (the common case: one thread records one command buffer at a time). The state lives as
// long as the command buffer, which cannot be freed while it is being recorded (external synchronization); replacing or
// removing any command buffer's state advances the generation (InvalidateRecordingCaches).
CommandBufferState& RecordingStateOf(DeviceState& device, VkCommandBuffer command_buffer) {
    const uint64_t generation = RecordingCacheGeneration();
    RecordingCommandBufferCache& cache = t_recording_command_buffer;
    if (cache.generation == generation && cache.command_buffer == command_buffer && cache.device == &device) return *cache.state;
    std::shared_ptr<CommandBufferState> state = StateOf(device, command_buffer);
    cache = {&device, command_buffer, state.get(), generation};
    return *state;
}

void RecordSetBindings(BindPointState& bind_point, VkPipelineLayout layout, uint32_t first_set, uint32_t set_count,
                       const VkDescriptorSet* sets, uint32_t dynamic_offset_count, const uint32_t* dynamic_offsets) {
    if (bind_point.sets.size() < first_set + set_count) bind_point.sets.resize(first_set + set_count);
    // Dynamic offsets are consumed in set order; without the set layouts' dynamic-descriptor counts the layer keeps them
    // all with the first set and replays the whole call's offsets with it.
    for (uint32_t i = 0; i < set_count; ++i) {
        BindPointState::SetBinding& binding = bind_point.sets[first_set + i];
        binding.set = sets[i];
        binding.layout = layout;
        binding.dynamic_offsets.clear();
        binding.replays_following = 0;
    }
    if (set_count > 0 && dynamic_offset_count > 0) {
        bind_point.sets[first_set].dynamic_offsets.assign(dynamic_offsets, dynamic_offsets + dynamic_offset_count);
        bind_point.sets[first_set].replays_following = set_count;
    } else if (set_count > 0) {
        bind_point.sets[first_set].replays_following = 1;
    }
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL CreatePipelineLayout(VkDevice device, const VkPipelineLayoutCreateInfo* pCreateInfo,
                                                    const VkAllocationCallbacks* pAllocator, VkPipelineLayout* pPipelineLayout) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = state->dispatch.CreatePipelineLayout(device, pCreateInfo, pAllocator, pPipelineLayout);
    if (result != VK_SUCCESS) return result;
    auto info = std::make_shared<PipelineLayoutInfo>();
    info->set_layouts.assign(pCreateInfo->pSetLayouts, pCreateInfo->pSetLayouts + pCreateInfo->setLayoutCount);
    info->push_constant_ranges.assign(pCreateInfo->pPushConstantRanges,
                                      pCreateInfo->pPushConstantRanges + pCreateInfo->pushConstantRangeCount);
    for (const VkPushConstantRange& range : info->push_constant_ranges) {
        info->push_constant_end = std::max(info->push_constant_end, range.offset + range.size);
    }
    state->pipeline_layouts.InsertOrAssign(*pPipelineLayout, std::move(info));
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL DestroyPipelineLayout(VkDevice device, VkPipelineLayout pipelineLayout,
                                                 const VkAllocationCallbacks* pAllocator) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return;
    // Graph pipelines keep their own lowered layouts, so the application may destroy its layout right after creation.
    state->pipeline_layouts.Pop(pipelineLayout);
    // A prepared secondary names layouts by handle, and a new layout may get this one's (prepared_levels.h).
    if (state->prepared_levels && pipelineLayout != VK_NULL_HANDLE) state->prepared_levels->DropAll();
    state->dispatch.DestroyPipelineLayout(device, pipelineLayout, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL AllocateCommandBuffers(VkDevice device, const VkCommandBufferAllocateInfo* pAllocateInfo,
                                                      VkCommandBuffer* pCommandBuffers) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    VkResult result = state->dispatch.AllocateCommandBuffers(device, pAllocateInfo, pCommandBuffers);
    if (result != VK_SUCCESS) return result;
    for (uint32_t i = 0; i < pAllocateInfo->commandBufferCount; ++i) {
        auto command_buffer = std::make_shared<CommandBufferState>();
        command_buffer->pool = pAllocateInfo->commandPool;
        command_buffer->is_primary = pAllocateInfo->level == VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        state->command_buffers.InsertOrAssign(pCommandBuffers[i], std::move(command_buffer));
    }
    InvalidateRecordingCaches();  // a handle may be reused, and its state was replaced
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL FreeCommandBuffers(VkDevice device, VkCommandPool commandPool, uint32_t commandBufferCount,
                                              const VkCommandBuffer* pCommandBuffers) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return;
    for (uint32_t i = 0; i < commandBufferCount; ++i) {
        if (pCommandBuffers[i] != VK_NULL_HANDLE) state->command_buffers.Pop(pCommandBuffers[i]);
    }
    InvalidateRecordingCaches();
    state->dispatch.FreeCommandBuffers(device, commandPool, commandBufferCount, pCommandBuffers);
}

VKAPI_ATTR void VKAPI_CALL DestroyCommandPool(VkDevice device, VkCommandPool commandPool, const VkAllocationCallbacks* pAllocator) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return;
    if (commandPool != VK_NULL_HANDLE) {
        state->command_buffers.PopIf([commandPool](VkCommandBuffer, const std::shared_ptr<CommandBufferState>& command_buffer) {
            return command_buffer->pool == commandPool;
        });
        state->command_pool_families.Pop(commandPool);
        InvalidateRecordingCaches();
    }
    state->dispatch.DestroyCommandPool(device, commandPool, pAllocator);
}

// ---- Prepared levels (the `prepared_levels` setting; prepared_levels.h) ------------------------------------------------
// These are intercepted only where the setting is on, but the loader may hand them out from vkGetInstanceProcAddr for any
// device, so each forwards whatever the device.

VKAPI_ATTR VkResult VKAPI_CALL CreateCommandPool(VkDevice device, const VkCommandPoolCreateInfo* pCreateInfo,
                                                 const VkAllocationCallbacks* pAllocator, VkCommandPool* pCommandPool) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    const VkResult result = state->dispatch.CreateCommandPool(device, pCreateInfo, pAllocator, pCommandPool);
    // Protected command buffers cannot execute the layer's unprotected secondaries (VUID-vkCmdExecuteCommands-commandBuffer-01820),
    // so such pools get no family and their dispatches record their levels directly.
    if (result == VK_SUCCESS && state->prepared_levels && !(pCreateInfo->flags & VK_COMMAND_POOL_CREATE_PROTECTED_BIT)) {
        state->command_pool_families.InsertOrAssign(*pCommandPool, pCreateInfo->queueFamilyIndex);
    }
    return result;
}

// Updating, freeing or resetting a descriptor set invalidates the command buffers that bound it ("Command Buffer
// Lifecycle"), prepared secondaries included: the cache drops those, and the next dispatch prepares its levels again.
VKAPI_ATTR void VKAPI_CALL UpdateDescriptorSets(VkDevice device, uint32_t descriptorWriteCount,
                                                const VkWriteDescriptorSet* pDescriptorWrites, uint32_t descriptorCopyCount,
                                                const VkCopyDescriptorSet* pDescriptorCopies) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return;
    if (state->prepared_levels && state->prepared_levels->size() > 0) {
        std::vector<VkDescriptorSet> sets;
        for (uint32_t i = 0; i < descriptorWriteCount; ++i) sets.push_back(pDescriptorWrites[i].dstSet);
        for (uint32_t i = 0; i < descriptorCopyCount; ++i) sets.push_back(pDescriptorCopies[i].dstSet);
        state->prepared_levels->DropBinding(sets);
    }
    state->dispatch.UpdateDescriptorSets(device, descriptorWriteCount, pDescriptorWrites, descriptorCopyCount, pDescriptorCopies);
}

VKAPI_ATTR void VKAPI_CALL UpdateDescriptorSetWithTemplate(VkDevice device, VkDescriptorSet descriptorSet,
                                                           VkDescriptorUpdateTemplate descriptorUpdateTemplate, const void* pData) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return;
    if (state->prepared_levels) state->prepared_levels->DropBinding({&descriptorSet, 1});
    state->dispatch.UpdateDescriptorSetWithTemplate(device, descriptorSet, descriptorUpdateTemplate, pData);
}

VKAPI_ATTR VkResult VKAPI_CALL FreeDescriptorSets(VkDevice device, VkDescriptorPool descriptorPool, uint32_t descriptorSetCount,
                                                  const VkDescriptorSet* pDescriptorSets) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    if (state->prepared_levels) state->prepared_levels->DropBinding({pDescriptorSets, descriptorSetCount});
    return state->dispatch.FreeDescriptorSets(device, descriptorPool, descriptorSetCount, pDescriptorSets);
}

// The layer does not track which pool each set came from, so resetting or destroying any pool drops every prepared
// secondary (docs/settings.md says so: an application that resets its pools every frame prepares every frame).
VKAPI_ATTR VkResult VKAPI_CALL ResetDescriptorPool(VkDevice device, VkDescriptorPool descriptorPool,
                                                   VkDescriptorPoolResetFlags flags) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return VK_ERROR_INITIALIZATION_FAILED;
    if (state->prepared_levels) state->prepared_levels->DropAll();
    return state->dispatch.ResetDescriptorPool(device, descriptorPool, flags);
}

VKAPI_ATTR void VKAPI_CALL DestroyDescriptorPool(VkDevice device, VkDescriptorPool descriptorPool,
                                                 const VkAllocationCallbacks* pAllocator) {
    std::shared_ptr<DeviceState> state = FindDeviceState(GetDispatchKey(device));
    if (!state) return;
    if (state->prepared_levels && descriptorPool != VK_NULL_HANDLE) state->prepared_levels->DropAll();
    state->dispatch.DestroyDescriptorPool(device, descriptorPool, pAllocator);
}

namespace {
// A query is active from its begin to its end in one command buffer (queries cannot span command buffers); the layer
// needs only how many are active, not which. Returns the device's state to forward with (null: none).
DeviceState* CountQuery(VkCommandBuffer commandBuffer, bool begins) {
    DeviceState* state = FindRecordingDeviceState(GetDispatchKey(commandBuffer));
    if (state == nullptr || !state->prepared_levels) return state;
    uint32_t& active = RecordingStateOf(*state, commandBuffer).active_queries;
    if (begins) {
        ++active;
    } else if (active > 0) {
        --active;
    }
    return state;
}
}  // namespace

VKAPI_ATTR void VKAPI_CALL CmdBeginQuery(VkCommandBuffer commandBuffer, VkQueryPool queryPool, uint32_t query,
                                         VkQueryControlFlags flags) {
    if (DeviceState* state = CountQuery(commandBuffer, true)) state->dispatch.CmdBeginQuery(commandBuffer, queryPool, query, flags);
}

VKAPI_ATTR void VKAPI_CALL CmdEndQuery(VkCommandBuffer commandBuffer, VkQueryPool queryPool, uint32_t query) {
    if (DeviceState* state = CountQuery(commandBuffer, false)) state->dispatch.CmdEndQuery(commandBuffer, queryPool, query);
}

VKAPI_ATTR void VKAPI_CALL CmdBeginQueryIndexedEXT(VkCommandBuffer commandBuffer, VkQueryPool queryPool, uint32_t query,
                                                   VkQueryControlFlags flags, uint32_t index) {
    if (DeviceState* state = CountQuery(commandBuffer, true)) {
        state->dispatch.CmdBeginQueryIndexedEXT(commandBuffer, queryPool, query, flags, index);
    }
}

VKAPI_ATTR void VKAPI_CALL CmdEndQueryIndexedEXT(VkCommandBuffer commandBuffer, VkQueryPool queryPool, uint32_t query,
                                                 uint32_t index) {
    if (DeviceState* state = CountQuery(commandBuffer, false))
        state->dispatch.CmdEndQueryIndexedEXT(commandBuffer, queryPool, query, index);
}

VKAPI_ATTR VkResult VKAPI_CALL BeginCommandBuffer(VkCommandBuffer commandBuffer, const VkCommandBufferBeginInfo* pBeginInfo) {
    DeviceState* state = FindRecordingDeviceState(GetDispatchKey(commandBuffer));
    if (state == nullptr) return VK_ERROR_INITIALIZATION_FAILED;
    // Beginning resets a command buffer's state (implicitly or after vkResetCommandBuffer/vkResetCommandPool).
    RecordingStateOf(*state, commandBuffer).Reset();
    return state->dispatch.BeginCommandBuffer(commandBuffer, pBeginInfo);
}

VKAPI_ATTR void VKAPI_CALL CmdBindPipeline(VkCommandBuffer commandBuffer, VkPipelineBindPoint pipelineBindPoint, VkPipeline pipeline) {
    DeviceState* state = FindRecordingDeviceState(GetDispatchKey(commandBuffer));
    if (state == nullptr) return;
    CommandBufferState* command_buffer = &RecordingStateOf(*state, commandBuffer);
    if (pipelineBindPoint == VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX) {
        auto graph = state->graph_pipelines.Find(pipeline);
        if (!graph || (*graph)->is_library) {
            state->messages().Emit(MessageSeverity::kError, message_id::kInvalidUsage,
                                   "vkCmdBindPipeline: the pipeline bound to VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX is not an "
                                   "execution graph pipeline (libraries cannot be bound, VUID-vkCmdBindPipeline-pipeline-03382)",
                                   {ObjectOf(VK_OBJECT_TYPE_PIPELINE, pipeline)});
            command_buffer->bound_graph.reset();
            return;
        }
        command_buffer->bound_graph = *graph;
        command_buffer->graph.pipeline = pipeline;
        return;
    }
    if (pipelineBindPoint == VK_PIPELINE_BIND_POINT_COMPUTE) command_buffer->compute.pipeline = pipeline;
    state->dispatch.CmdBindPipeline(commandBuffer, pipelineBindPoint, pipeline);
}

VKAPI_ATTR void VKAPI_CALL CmdBindDescriptorSets(VkCommandBuffer commandBuffer, VkPipelineBindPoint pipelineBindPoint,
                                                 VkPipelineLayout layout, uint32_t firstSet, uint32_t descriptorSetCount,
                                                 const VkDescriptorSet* pDescriptorSets, uint32_t dynamicOffsetCount,
                                                 const uint32_t* pDynamicOffsets) {
    DeviceState* state = FindRecordingDeviceState(GetDispatchKey(commandBuffer));
    if (state == nullptr) return;
    CommandBufferState* command_buffer = &RecordingStateOf(*state, commandBuffer);
    if (pipelineBindPoint == VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX) {
        // Seen by every node of the next graph dispatch; bound for real, with the lowered layout, at dispatch time.
        RecordSetBindings(command_buffer->graph, layout, firstSet, descriptorSetCount, pDescriptorSets, dynamicOffsetCount,
                          pDynamicOffsets);
        return;
    }
    if (pipelineBindPoint == VK_PIPELINE_BIND_POINT_COMPUTE) {
        RecordSetBindings(command_buffer->compute, layout, firstSet, descriptorSetCount, pDescriptorSets, dynamicOffsetCount,
                          pDynamicOffsets);
    }
    state->dispatch.CmdBindDescriptorSets(commandBuffer, pipelineBindPoint, layout, firstSet, descriptorSetCount, pDescriptorSets,
                                          dynamicOffsetCount, pDynamicOffsets);
}

VKAPI_ATTR void VKAPI_CALL CmdPushConstants(VkCommandBuffer commandBuffer, VkPipelineLayout layout, VkShaderStageFlags stageFlags,
                                            uint32_t offset, uint32_t size, const void* pValues) {
    DeviceState* state = FindRecordingDeviceState(GetDispatchKey(commandBuffer));
    if (state == nullptr) return;
    auto& writes = RecordingStateOf(*state, commandBuffer).push_constants;
    // The same range pushed again replaces its earlier write, which moves to the end (replay order is push order, so
    // that overlapping ranges end as the application left them) and keeps its bytes' storage: an application that
    // pushes the same ranges over and over allocates nothing here.
    const auto* bytes = static_cast<const uint8_t*>(pValues);
    auto same_range = std::find_if(writes.begin(), writes.end(), [&](const PushConstantWrite& write) {
        return write.layout == layout && write.stages == stageFlags && write.offset == offset && write.bytes.size() == size;
    });
    if (same_range != writes.end()) {
        std::rotate(same_range, same_range + 1, writes.end());
        std::copy(bytes, bytes + size, writes.back().bytes.begin());
    } else {
        writes.push_back({layout, stageFlags, offset, std::vector<uint8_t>(bytes, bytes + size)});
    }
    state->dispatch.CmdPushConstants(commandBuffer, layout, stageFlags, offset, size, pValues);
}

}  // namespace execgraph::intercept
