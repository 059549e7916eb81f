#version 450
// The two compute pipelines bench/recording_bench.cpp binds: never submitted, only recorded. They use the whole
// 128-byte push-constant range and the storage buffer, so every push and descriptor bind is state the pipeline reads.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kVariant = 0u;  // makes the two pipelines distinct
layout(push_constant) uniform Push {
    uvec4 words[8];
} push;
layout(set = 0, binding = 0) buffer Data {
    uint data[];
};
void main() {
    if (gl_GlobalInvocationID.x == push.words[0].x) data[push.words[7].w] = push.words[3].y + kVariant;
}
