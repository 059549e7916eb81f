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

// payload_throughput (bench/modules/payload_*.spvasm): word k of a 64-byte record is HashItem(index) ^ (k * 0x9E3779B9),
// and its checksum the sum of word k * (2k + 1); as four uvec4s, j = k / 4.
uvec4 PayloadSalt(uint j) { return (uvec4(4u * j) + uvec4(0u, 1u, 2u, 3u)) * 0x9E3779B9u; }
uvec4 PayloadWeight(uint j) { return uvec4(8u * j) + uvec4(1u, 3u, 5u, 7u); }

// append_rate (bench/modules/append_*.spvasm): records go to HashItem(index) % kAppendBins.
const uint kAppendBins = 64u;

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

// Reserves `wanted` records in queues[queue] for this invocation (any number of invocations may ask, including 0) and
// returns the first slot; raises the consuming pass's workgroup count (`group_size` records per workgroup).
uint AppendRecordsTo(uint queue, uint wanted, uint group_size) {
    uint total = subgroupAdd(wanted);
    uint before = subgroupExclusiveAdd(wanted);
    uint first = 0u;
    if (subgroupElect() && total != 0u) {
        first = atomicAdd(queues[queue].count, total);
        atomicMax(queues[queue].workgroups, (first + total + group_size - 1u) / group_size);
    }
    return subgroupBroadcastFirst(first) + before;
}

uint AppendRecords(uint wanted) { return AppendRecordsTo(pass.out_queue, wanted, pass.consumer_group_size); }

// Like AppendRecordsTo for a pass that runs one workgroup per record: the dispatch is (x <= 65535, y rows), the
// largest count every device supports in x, and the consumer computes its record as y * 65535 + x.
uint AppendWorkgroupItems(uint queue, uint wanted) {
    uint total = subgroupAdd(wanted);
    uint before = subgroupExclusiveAdd(wanted);
    uint first = 0u;
    if (subgroupElect() && total != 0u) {
        first = atomicAdd(queues[queue].count, total);
        atomicMax(queues[queue].workgroups, min(first + total, 65535u));
        atomicMax(queues[queue].one_y, (first + total + 65534u) / 65535u);
    }
    return subgroupBroadcastFirst(first) + before;
}

// Workload 7: a procedural triangle, set up for rasterisation. Right triangle with legs of `size` pixels (1 to 256,
// log-uniform) at a random screen position, random orientation; flat depth. Edge functions E(x, y) = a x + b y + c are
// exact in integers and oriented so that covered pixels have all three >= 0. The record layout is shared with the
// node modules (bench/modules/raster_*.spvasm): {grid, tiles_x, value, min_x, min_y, max_x, max_y, width, a0, b0, c0,
// a1, b1, c1, a2, b2, c2}.
const uint kTriangleWords = 17u;
const uint kSmallTrianglePixels = 256u;  // bounding boxes up to this area go to the one-invocation rasteriser

struct Triangle {
    uint words[17];
};

Triangle SetUpTriangle(uint index, uint width, uint height) {
    uint a = HashItem(4u * index), b = HashItem(4u * index + 1u), h = HashItem(4u * index + 2u);
    uint depth = HashItem(4u * index + 3u) & 0xFFFFu;
    int size = int(1u + (h >> 8) % (1u << (2u + h % 7u)));
    int x0 = int(a % width), y0 = int(b % height);
    int x1 = ((h >> 28) & 1u) != 0u ? x0 - size : x0 + size;
    int y2 = ((h >> 29) & 1u) != 0u ? y0 - size : y0 + size;
    // Vertices (x0, y0), (x1, y0), (x0, y2).
    int min_x = max(min(x0, x1), 0), max_x = min(max(x0, x1), int(width) - 1);
    int min_y = max(min(y0, y2), 0), max_y = min(max(y0, y2), int(height) - 1);
    // Edge (xa, ya) -> (xb, yb): a = ya - yb, b = xb - xa, c = xa * yb - xb * ya.
    int a0 = 0, b0 = x1 - x0, c0 = x0 * y0 - x1 * y0;  // v0 -> v1
    int a1 = y0 - y2, b1 = x0 - x1, c1 = x1 * y2 - x0 * y0;  // v1 -> v2
    int a2 = y2 - y0, b2 = 0, c2 = x0 * y0 - x0 * y2;  // v2 -> v0
    if (a0 * x0 + b0 * y2 + c0 < 0) {  // clockwise: flip so that inside is positive
        a0 = -a0; b0 = -b0; c0 = -c0;
        a1 = -a1; b1 = -b1; c1 = -c1;
        a2 = -a2; b2 = -b2; c2 = -c2;
    }
    uint box_width = uint(max_x - min_x + 1), box_height = uint(max_y - min_y + 1);
    uint tiles_x = (box_width + 7u) / 8u, tiles_y = (box_height + 7u) / 8u;
    Triangle t;
    t.words = uint[17](tiles_x * tiles_y, tiles_x, (depth << 16) | (index & 0xFFFFu), uint(min_x), uint(min_y), uint(max_x),
                       uint(max_y), width, uint(a0), uint(b0), uint(c0), uint(a1), uint(b1), uint(c1), uint(a2), uint(b2), uint(c2));
    return t;
}

bool IsSmallTriangle(Triangle t) {
    return (t.words[5] - t.words[3] + 1u) * (t.words[6] - t.words[4] + 1u) <= kSmallTrianglePixels;
}

// Covers pixel (x, y) of triangle `t` (kept in `lists` at `base`) when it lies inside: atomicMax of the triangle's value.
void ShadeTrianglePixel(uint base, uint x, uint y) {
    int ix = int(x), iy = int(y);
    bool inside = true;
    for (uint e = 0u; e < 3u; ++e) {
        int a = int(lists[base + 8u + 3u * e]), b = int(lists[base + 9u + 3u * e]), c = int(lists[base + 10u + 3u * e]);
        inside = inside && a * ix + b * iy + c >= 0;
    }
    if (inside) atomicMax(uav[y * lists[base + 7u] + x], lists[base + 2u]);
}
