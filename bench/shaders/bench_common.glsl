// Shared by the hand-written baselines of bench/workload_bench.cpp. The AMDX node modules in bench/modules compute the
// same functions (written out in SPIR-V), and workload_bench.cpp has the CPU reference of each.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require

uint TileMaterialHash(uint x, uint y) {
    uint h = (x * 73856093u) ^ (y * 19349663u);
    return h ^ (h >> 7);
}

uint ShadePixel(uint x, uint y, uint material) {
    uint v = (x * 73856093u) ^ (y * 19349663u) ^ (material * 83492791u);
    uint rounds = 16u + 16u * (material & 3u);
    for (uint i = 0u; i < rounds; ++i) {
        v = v * 1664525u + 1013904223u;
        v ^= v >> 13;
    }
    return v;
}

uint HashItem(uint v) {
    v *= 2654435761u;
    v ^= v >> 15;
    v *= 2246822519u;
    return v ^ (v >> 13);
}

uint ChildSeed(uint seed, uint k) {
    uint s = (seed * 8u + k) * 2654435761u;
    return s ^ (s >> 16);
}

// Work queues as engines chain indirect passes: {count, workgroups, 1, 1}; the last three are the
// VkDispatchIndirectCommand of the consuming pass (offset 4). Producers append with one atomic per subgroup and raise
// the consumer's workgroup count themselves, so each pass needs one barrier and no separate argument pass.
struct Queue {
    uint count;
    uint workgroups;
    uint one_y;
    uint one_z;
};

layout(set = 0, binding = 0) buffer Uav { uint uav[]; };
layout(set = 0, binding = 1) buffer Lists { uint lists[]; };
layout(set = 0, binding = 2) buffer Queues { Queue queues[]; };

layout(push_constant) uniform Pass {
    uint in_queue;
    uint out_queue;
    uint in_offset;   // first uint of the input records in `lists`
    uint out_offset;  // first uint of the output records in `lists`
    uint param0;
    uint param1;
    uint consumer_group_size;  // invocations per workgroup of the pass that reads out_queue
    uint param3;
} pass;

// Reserves `wanted` records in out_queue for this invocation (any number of invocations may ask, including 0) and returns
// the first slot; updates the consumer's workgroup count.
uint AppendRecords(uint wanted) {
    uint total = subgroupAdd(wanted);
    uint before = subgroupExclusiveAdd(wanted);
    uint first = 0u;
    if (subgroupElect() && total != 0u) {
        first = atomicAdd(queues[pass.out_queue].count, total);
        atomicMax(queues[pass.out_queue].workgroups, (first + total + pass.consumer_group_size - 1u) / pass.consumer_group_size);
    }
    return subgroupBroadcastFirst(first) + before;
}
