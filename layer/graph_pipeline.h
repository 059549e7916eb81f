// Execution graph pipelines: what vkCreateExecutionGraphPipelinesAMDX builds, and node libraries.
//
// A graph pipeline is a layer object (its VkPipeline handle is the object's address and never reaches the driver). It
// owns one real compute pipeline per distinct lowered node (nodes made from the same module, entry point, specialization
// and output-table shape share one; the node's graph index comes in its push constants), with the graph's lowered layout,
// plus everything the scheduler needs per dispatch: the static node table, the output tables and the levels.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "execgraph/runtime/scratch_layout.h"
#include "execgraph/spirv/node_info.h"
#include "execgraph/vk_amdx_compat.h"
#include "scheduler.h"
#include "scratch_plan.h"

namespace execgraph {

struct DeviceState;

// One node shader as the application described it: kept by libraries until they are linked into a graph, because the
// lowering depends on the graph (node indices, output tables).
struct NodeSource {
    std::shared_ptr<const std::vector<uint32_t>> words;  // the AMDX module
    std::string entry_point;
    std::vector<VkSpecializationMapEntry> specialization_entries;
    std::vector<uint8_t> specialization_data;
    bool has_node_create_info = false;  // VkPipelineShaderStageNodeCreateInfoAMDX was chained
    std::string node_name_override;     // its pName, when not null
    uint32_t node_index_override = VK_SHADER_INDEX_UNUSED_AMDX;
};

struct GraphNode {
    NodeSource source;
    spirv::NodeInfo info;
    std::string name;     // the node's name: VkPipelineShaderStageNodeCreateInfoAMDX::pName or the entry point
    uint32_t shader_index = 0;
    std::vector<uint32_t> output_table_index;   // per info.outputs: first entry in GraphPipeline::output_table
    std::vector<uint32_t> output_table_length;
    // The node's outputs' tables lie one after the other from here (NodePushContext::output_table_base).
    uint32_t output_table_base = 0;
    // The lowered compute pipeline, shared by every node of the graph lowered from the same source with the same
    // output tables shape, and by nodes of other sources whose lowered code came out the same (GraphPipeline::
    // lowered_pipelines owns it).
    VkPipeline pipeline = VK_NULL_HANDLE;
    // The first node lowered from the same source with the same options (itself if none before it): only such nodes may
    // form a dispatch group, since only they were lowered as possible group members (NodeDispatchPlan::group_key).
    uint32_t lowering_group = 0;
    std::array<uint32_t, 3> lowered_local_size{1, 1, 1};
    bool level_hand_off = true;  // its lowered module has the level hand-off (spirv::LoweringOptions::level_hand_off)
    bool group_level_hand_off = false;  // ... able to prepare a group consumer (spirv::LoweringOptions::group_level_hand_off)
    // ... and to check initialization first (spirv::LoweringOptions::group_hand_off_checks_initialization)
    bool group_hand_off_checks_initialization = false;
    // ... and the code for levels whose records are placed by index (spirv::LoweringOptions::records_by_index)
    bool records_by_index = false;
};

struct GraphPipeline {
    bool is_library = false;
    std::vector<NodeSource> library_sources;  // libraries only

    std::vector<GraphNode> nodes;  // graph node index = API node index (vkGetExecutionGraphPipelineNodeIndexAMDX)
    VkPipelineLayout lowered_layout = VK_NULL_HANDLE;
    std::vector<VkPipeline> lowered_pipelines;  // each distinct lowered pipeline once; nodes[].pipeline point into it
    uint32_t context_offset = 0;  // runtime::NodePushContext's offset in push constants
    uint32_t push_constant_size = 0;
    std::vector<std::vector<uint32_t>> levels;  // graph nodes that can have records at each level
    std::vector<uint32_t> output_table;
    std::vector<runtime::NodeStaticInfo> static_infos;
    uint32_t trash_size = 0;      // bytes: the largest allocation one workgroup of any node can make
    uint32_t graph_tag = 0;       // unique in the process; scratch remembers it to catch a graph/scratch mismatch
    uint32_t graph_number = 0;    // per device, 1, 2, ... in creation order (DeviceState::next_graph_number); 0 for libraries
    VkExecutionGraphPipelineScratchSizeAMDX scratch_size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    ScratchPlan scratch_plan{0, 0, 0};
    std::string debug_name;
    // "name[index]" per graph node, shared with the dispatch reports that outlive a dispatch's recording.
    std::shared_ptr<const std::vector<std::string>> node_labels;
    // What the scheduler records from on every dispatch, made once from the fields above (BuildDispatchPlan), so that
    // recording a dispatch copies nothing of the graph.
    GraphPlan dispatch_plan;
    // PlanForEntries' cache.
    struct EntryPlans {
        std::mutex mutex;
        std::map<std::vector<uint32_t>, std::shared_ptr<const GraphPlan>> plans;
    };
    std::unique_ptr<EntryPlans> entry_plans = std::make_unique<EntryPlans>();

    // Fills dispatch_plan; call after the nodes' pipelines, the levels, static infos, scratch plan and labels are final.
    void BuildDispatchPlan();

    // The levels reachable from `entries` (graph nodes with records at level 0) into *levels; returns kInvalidNode, or a
    // node that could receive records deeper than maxExecutionGraphDepth (then *levels is unchanged).
    uint32_t LevelsFrom(std::span<const uint32_t> entries, std::vector<std::vector<uint32_t>>* levels) const;

    // The plan of a dispatch whose entries (vkCmdDispatchGraphAMDX's host infos) name exactly `entry_nodes`: the levels
    // reachable from them, which have fewer nodes than the static ones when the graph has more API entries than the
    // dispatch uses (DXC makes every node one), so fewer dispatches and more direct levels (docs/design.md, "Direct
    // levels"). nullptr: use dispatch_plan. Cached per entry set; safe to call from several threads.
    std::shared_ptr<const GraphPlan> PlanForEntries(std::vector<uint32_t> entry_nodes) const;

    // Destroys the lowered pipelines and layout through the next layer.
    void Destroy(DeviceState& device, const VkAllocationCallbacks* allocator);
};

}  // namespace execgraph
