// GoogleTest main for tests that use Vulkan: sets the environment that points the loader at lavapipe and at the build
// tree's layer before anything touches Vulkan, so a test binary behaves the same under CTest and when run by hand.
// Variables already set win, so the same binaries run on another driver (a GPU) by exporting VK_DRIVER_FILES and
// VK_ADD_LAYER_PATH first.
// In sanitizer builds the Vulkan libraries are also pinned before main() (pin_vulkan_libraries.cpp).
#include <gtest/gtest.h>
#include <stdlib.h>

namespace {
struct EnvironmentVariable {
    const char* name;
    const char* value;
};
const EnvironmentVariable kTestEnvironment[] = {
#include EXECGRAPH_TEST_ENVIRONMENT_FILE
};
}  // namespace

int main(int argc, char** argv) {
    for (const EnvironmentVariable& variable : kTestEnvironment) setenv(variable.name, variable.value, /*overwrite=*/0);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
