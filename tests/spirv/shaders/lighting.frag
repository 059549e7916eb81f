#version 450
layout(location = 0) in vec3 normal;
layout(location = 1) in vec2 uv;
layout(location = 0) out vec4 color;
layout(set = 0, binding = 0) uniform sampler2D albedo;
layout(push_constant) uniform Push { vec3 light; float exposure; } pc;
float Shade(vec3 n) { return max(dot(normalize(n), normalize(pc.light)), 0.0); }
void main() {
    vec4 base = texture(albedo, uv);
    color = vec4(base.rgb * Shade(normal) * pc.exposure, base.a);
}
