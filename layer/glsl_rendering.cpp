#include "glsl_rendering.h"

#include <spirv_cross_c.h>

namespace execgraph {

std::optional<std::string> RenderGlsl(std::span<const uint32_t> words, const std::string& entry_point, std::string* error) {
    spvc_context context = nullptr;
    if (spvc_context_create(&context) != SPVC_SUCCESS) {
        *error = "SPIRV-Cross could not create a context";
        return std::nullopt;
    }
    // The C API catches SPIRV-Cross's exceptions and turns them into results; the last error string says why.
    auto fail = [&](const char* step) {
        *error = std::string(step) + ": " + spvc_context_get_last_error_string(context);
        spvc_context_destroy(context);
        return std::nullopt;
    };
    spvc_parsed_ir ir = nullptr;
    if (spvc_context_parse_spirv(context, words.data(), words.size(), &ir) != SPVC_SUCCESS) return fail("parsing");
    spvc_compiler compiler = nullptr;
    if (spvc_context_create_compiler(context, SPVC_BACKEND_GLSL, ir, SPVC_CAPTURE_MODE_TAKE_OWNERSHIP, &compiler) != SPVC_SUCCESS) {
        return fail("creating the GLSL compiler");
    }
    if (spvc_compiler_set_entry_point(compiler, entry_point.c_str(), SpvExecutionModelGLCompute) != SPVC_SUCCESS) {
        return fail("selecting the entry point");
    }
    spvc_compiler_options options = nullptr;
    if (spvc_compiler_create_compiler_options(compiler, &options) != SPVC_SUCCESS ||
        spvc_compiler_options_set_uint(options, SPVC_COMPILER_OPTION_GLSL_VERSION, 460) != SPVC_SUCCESS ||
        spvc_compiler_options_set_bool(options, SPVC_COMPILER_OPTION_GLSL_VULKAN_SEMANTICS, SPVC_TRUE) != SPVC_SUCCESS ||
        spvc_compiler_install_compiler_options(compiler, options) != SPVC_SUCCESS) {
        return fail("setting the GLSL options");
    }
    const char* source = nullptr;
    if (spvc_compiler_compile(compiler, &source) != SPVC_SUCCESS) return fail("compiling");
    std::string glsl = source;
    spvc_context_destroy(context);
    return glsl;
}

}  // namespace execgraph
