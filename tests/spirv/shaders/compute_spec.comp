#version 450
// Spec constants (including one used as the local size), a storage buffer, a loop and a switch.
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const uint kScale = 3u;
layout(constant_id = 2) const bool kEnabled = true;
layout(constant_id = 3) const int kOffset = -7;
layout(std430, set = 0, binding = 0) buffer Data { double wide; uint values[]; } data;
shared uint scratch[64];
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint acc = 0u;
    for (uint k = 0u; k < kScale + 2u; ++k) acc += k * i;
    switch (int(i) + kOffset) {
        case 0: acc += 1u; break;
        case 5: acc *= 2u; break;
        default: break;
    }
    scratch[gl_LocalInvocationIndex % 64u] = acc;
    barrier();
    if (kEnabled) data.values[i] = scratch[(gl_LocalInvocationIndex + 1u) % 64u] + uint(data.wide * 2.0lf);
}
