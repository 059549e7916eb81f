# The layer-settings reader as a static library, shared by the layer module and the unit tests.
# layer/CMakeLists.txt include()s this file; tests/unit includes it too when the layer folder is not built yet.
# Sources include it as "layer/settings.h" (or "settings.h" from inside layer/).
add_library(execgraph_settings STATIC ${PROJECT_SOURCE_DIR}/layer/settings.cpp ${PROJECT_SOURCE_DIR}/layer/settings.h)
target_include_directories(execgraph_settings PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(execgraph_settings PUBLIC execgraph::headers PRIVATE execgraph_compile_options)
target_compile_features(execgraph_settings PUBLIC cxx_std_20)
# Linked into the layer's shared object: keep its symbols out of the dynamic symbol table (and PIC, which the
# top level already turns on for every target).
set_target_properties(execgraph_settings PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
