# CTest script: the layer never writes to stdout (it belongs to the application), and its stderr fallback, used when
# the application has no debug-utils messenger, stops when log_to_stderr is false.
# Arguments: PROBE, LAYER_DIR, ICD, EMPTY_XDG_DATA_HOME.
set(environment
    --unset=VK_INSTANCE_LAYERS --unset=VK_LOADER_DEBUG "VK_ADD_LAYER_PATH=${LAYER_DIR}" "XDG_DATA_HOME=${EMPTY_XDG_DATA_HOME}"
    "VK_DRIVER_FILES=${ICD}" "VK_ICD_FILENAMES=${ICD}" NODEVICE_SELECT=1
    # An invalid value: the layer warns about it (EXECGRAPH-SETTINGS) at vkCreateInstance.
    VK_EXECGRAPH_SHADER_ENQUEUE_DEBUG_LABELS=maybe)

foreach(log_to_stderr true false)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${environment} "VK_EXECGRAPH_SHADER_ENQUEUE_LOG_TO_STDERR=${log_to_stderr}"
        "${PROBE}" messages RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE errors)
    if(result)
        message(FATAL_ERROR "log_to_stderr=${log_to_stderr}: layer_probe messages exited with ${result}:\n${output}${errors}")
    endif()
    if(NOT output STREQUAL "")
        message(FATAL_ERROR "log_to_stderr=${log_to_stderr}: something wrote to stdout:\n${output}")
    endif()
    if(log_to_stderr)
        foreach(id EXECGRAPH-SETTINGS EXECGRAPH-DISPATCH)
            string(FIND "${errors}" "${id}" found)
            if(found EQUAL -1)
                message(FATAL_ERROR "log_to_stderr=true: no ${id} message on stderr:\n${errors}")
            endif()
        endforeach()
    else()
        string(FIND "${errors}" "EXECGRAPH-" found)
        if(NOT found EQUAL -1)
            message(FATAL_ERROR "log_to_stderr=false: the layer still wrote to stderr:\n${errors}")
        endif()
    endif()
    message(STATUS "log_to_stderr=${log_to_stderr}: stdout empty, stderr as expected")
endforeach()
