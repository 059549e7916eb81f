#version 450
layout(location = 0) in vec3 position;
layout(location = 0) out vec3 normal;
layout(set = 0, binding = 0) uniform Camera { mat4 view_projection; mat3 normal_matrix; } camera;
void main() {
    normal = camera.normal_matrix * position;
    gl_Position = camera.view_projection * vec4(position, 1.0);
}
