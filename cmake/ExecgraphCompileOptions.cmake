# Warnings and sanitizers shared by every target of the project.
add_library(execgraph_compile_options INTERFACE)
target_compile_options(execgraph_compile_options INTERFACE -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)

if(EXECGRAPH_SANITIZE)
    string(REPLACE ";" "," _execgraph_sanitizers "${EXECGRAPH_SANITIZE}")
    add_compile_options(-fsanitize=${_execgraph_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    add_link_options(-fsanitize=${_execgraph_sanitizers})
endif()
