// GoogleTest main for tests that use Vulkan: sets the environment that points the loader at lavapipe and at the build
// tree's layer before anything touches Vulkan, so a test binary behaves the same under CTest and when run by hand.
// Variables already set win, so the same binaries run on another driver (a GPU) by exporting VK_DRIVER_FILES and
// VK_ADD_LAYER_PATH first.
#include <gtest/gtest.h>
#include <stdlib.h>

#if defined(EXECGRAPH_PIN_VULKAN_LIBRARIES)
#include <dlfcn.h>
#endif

namespace {
struct EnvironmentVariable {
    const char* name;
    const char* value;
};
const EnvironmentVariable kTestEnvironment[] = {
#include EXECGRAPH_TEST_ENVIRONMENT_FILE
};

#if defined(EXECGRAPH_PIN_VULKAN_LIBRARIES)
// Sanitizer builds only: the loader unloads the driver and the layers at vkDestroyInstance, and LeakSanitizer, which
// reports at exit, then cannot name their frames. Keeping them mapped (RTLD_NODELETE) lets the suppressions match Mesa
// and validation-layer internals by library name, and shows the layer's own leaks with symbols.
void PinVulkanLibraries() {
    for (const char* library : {"libvulkan_lvp.so", "libVkLayer_khronos_validation.so", EXECGRAPH_PINNED_LAYER_PATH}) {
        dlopen(library, RTLD_NOW | RTLD_NODELETE);  // a library that is missing is simply not pinned
    }
}
#endif
}  // namespace

int main(int argc, char** argv) {
    for (const EnvironmentVariable& variable : kTestEnvironment) setenv(variable.name, variable.value, /*overwrite=*/0);
#if defined(EXECGRAPH_PIN_VULKAN_LIBRARIES)
    PinVulkanLibraries();
#endif
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
