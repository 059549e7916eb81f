# CTest script: `cmake --install` into a fresh prefix, then the Vulkan loader must find the layer there through
# XDG_DATA_DIRS alone (no VK_ADD_LAYER_PATH), by its explicit manifest and by its implicit one.
# Arguments: BUILD_DIR, PREFIX, PROBE, ICD (lavapipe's ICD manifest), EMPTY_XDG_DATA_HOME.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result)
    message(FATAL_ERROR "cmake --install failed:\n${output}")
endif()
foreach(manifest explicit_layer.d/VkLayer_execgraph_shader_enqueue.json implicit_layer.d/VkLayer_execgraph_shader_enqueue_implicit.json)
    if(NOT EXISTS "${PREFIX}/share/vulkan/${manifest}")
        message(FATAL_ERROR "the install has no share/vulkan/${manifest}:\n${output}")
    endif()
endforeach()

# Only the prefix is searched for layers; the build tree's layer and the user's settings stay out of sight.
set(environment
    --unset=VK_ADD_LAYER_PATH --unset=VK_LAYER_PATH --unset=VK_INSTANCE_LAYERS --unset=VK_LOADER_LAYERS_ENABLE
    --unset=VK_EXECGRAPH_SHADER_ENQUEUE_DISABLE --unset=XDG_CONFIG_DIRS
    "XDG_DATA_DIRS=${PREFIX}/share" "XDG_DATA_HOME=${EMPTY_XDG_DATA_HOME}"
    "VK_DRIVER_FILES=${ICD}" "VK_ICD_FILENAMES=${ICD}" NODEVICE_SELECT=1)

# probe(<description> <expected exit code> [NAME=VALUE ...] -- <probe arguments>)
function(probe description expected)
    cmake_parse_arguments(PARSE_ARGV 2 ARG "" "" "ENV;ARGS")
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${environment} ${ARG_ENV} "${PROBE}" ${ARG_ARGS}
        RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
    if(NOT result STREQUAL "${expected}")
        message(FATAL_ERROR "${description}: layer_probe ${ARG_ARGS} exited with ${result}, expected ${expected}:\n${output}")
    endif()
    message(STATUS "${description}: ok")
endfunction()

# The implicit manifest loads the layer without it being named...
probe("implicit manifest" 0 ARGS shader-enqueue)
# ...and its disable variable turns that off, which shows the extension came from the installed layer.
probe("implicit manifest, disabled" 1 ENV VK_EXECGRAPH_SHADER_ENQUEUE_DISABLE=1 ARGS shader-enqueue)
# The explicit manifest (the implicit one disabled) loads it by name.
probe("explicit manifest" 0 ENV VK_EXECGRAPH_SHADER_ENQUEUE_DISABLE=1 ARGS shader-enqueue --named)
