// Sanitizer builds only (linked through execgraph_pin_vulkan_libraries() in tests/vulkan_support/CMakeLists.txt): keeps
// lavapipe, the validation layer and execgraph's layer mapped for the whole process. The loader unloads the driver and
// the layers at vkDestroyInstance, and LeakSanitizer, which reports at exit, then can neither name their frames (so the
// suppressions in scripts/sanitizer_suppressions/lsan.supp, which match Mesa and validation-layer internals by library
// name, cannot apply) nor see the pointers their unmapped globals held: with lavapipe 22.3.6-1+deb12u2, any program
// that only creates an instance and enumerates physical devices reported 128 bytes "leaked" from an unknown module. Pinning
// (RTLD_NODELETE) before main() covers every program that loads Vulkan, tests, probes and benchmarks alike, and shows
// the layer's own leaks with symbols.
#include <dlfcn.h>

#include <initializer_list>

namespace {

__attribute__((constructor)) void PinVulkanLibraries() {
    for (const char* library : {"libvulkan_lvp.so", "libVkLayer_khronos_validation.so", EXECGRAPH_PINNED_LAYER_PATH}) {
        dlopen(library, RTLD_NOW | RTLD_NODELETE);  // a library that is missing is simply not pinned
    }
}

}  // namespace
