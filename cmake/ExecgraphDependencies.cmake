# Every dependency comes from Debian bookworm's packages (scripts/install-deps.sh installs them).
find_package(Vulkan REQUIRED)              # libvulkan-dev 1.3.239: headers and loader
find_package(Threads REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)   # generates the SPIR-V operand tables at build time
find_package(SPIRV-Tools REQUIRED)         # validates and optimises *lowered* modules only
find_package(SPIRV-Tools-opt REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SPIRV_CROSS_C REQUIRED IMPORTED_TARGET spirv-cross-c-shared)   # GLSL renderings of lowered shader dumps
find_program(GLSLANG_VALIDATOR glslangValidator REQUIRED)   # compiles meta shaders and test shaders

# spirv.core.grammar.json from spirv-headers: source of the SPIR-V operand tables.
find_file(SPIRV_CORE_GRAMMAR_JSON spirv.core.grammar.json
    PATHS /usr/include/spirv/unified1 ${CMAKE_INSTALL_FULL_INCLUDEDIR}/spirv/unified1 REQUIRED NO_DEFAULT_PATH)

if(NOT TARGET Vulkan::Headers)
    add_library(Vulkan::Headers INTERFACE IMPORTED)
    set_target_properties(Vulkan::Headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Vulkan_INCLUDE_DIRS}")
endif()

if(EXECGRAPH_BUILD_TESTS)
    find_package(GTest REQUIRED)
endif()
