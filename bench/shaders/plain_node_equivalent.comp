#version 450
// Baseline for bench/graph_creation_bench.cpp: the same work as tests/spirv_corpus/broadcast_static_grid.spvasm
// (write the record's value to UAV[global id]) as an ordinary compute shader, with the value in push constants.
layout(local_size_x = 1024) in;
layout(set = 0, binding = 0) buffer Uav { uint values[]; } uav;
layout(push_constant) uniform Record { uint texture_index; } record;
// Each baseline pipeline gets its own value, so the driver compiles N distinct pipelines as it must for N graph nodes
// (without it, drivers that cache by shader content would compile once).
layout(constant_id = 0) const uint kNodeIndex = 0;
void main() { uav.values[gl_GlobalInvocationID.x] = record.texture_index + kNodeIndex; }
