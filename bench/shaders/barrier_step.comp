#version 460
// One dependent step of bench/barrier_floor_bench.cpp: invocation 0 reads the counter the previous step wrote and
// writes it back one higher, and rewrites the indirect arguments (1, 1, 1) that an indirect variant dispatches with, so
// that both the read-after-write on the counter and the write-after-read on the arguments are real hazards. The other
// workgroups (the wide variants) return at once, as a layer's surplus workgroups past a level's records do.
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words {
    uint words[];
};
layout(push_constant) uniform Push {
    Words data;
} push;
void main() {
    if (gl_WorkGroupID.x != 0u || gl_LocalInvocationIndex != 0u) return;
    uint value = push.data.words[4];
    push.data.words[0] = 1u;
    push.data.words[1] = 1u;
    push.data.words[2] = 1u;
    push.data.words[4] = value + 1u;
}
