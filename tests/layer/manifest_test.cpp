// The loader reads the layer's device extensions and their entry points from the manifest, not from the library: a
// manifest that forgets an entry point or the implicit layer's disable variable breaks applications silently. These
// tests read the manifests the build generates (build-tree explicit, and the implicit one tests load).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "vulkan_test_support.h"

namespace execgraph::test {
namespace {

std::string ReadFile(const char* path) {
    std::ifstream file(path);
    EXPECT_TRUE(file.good()) << "cannot read " << path;
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

void ExpectListsTheExtensionAndEveryEntryPoint(const std::string& manifest) {
    EXPECT_NE(manifest.find("\"name\": \"VK_LAYER_EXECGRAPH_shader_enqueue\""), std::string::npos);
    EXPECT_NE(manifest.find("\"vkNegotiateLoaderLayerInterfaceVersion\""), std::string::npos);
    const size_t extension = manifest.find("\"name\": \"VK_AMDX_shader_enqueue\"");
    ASSERT_NE(extension, std::string::npos);
    EXPECT_NE(manifest.find("\"spec_version\": \"2\"", extension), std::string::npos);
    for (const char* command : kShaderEnqueueCommands) {
        EXPECT_NE(manifest.find(std::string("\"") + command + "\"", extension), std::string::npos) << command;
    }
}

TEST(Manifests, ExplicitListsTheExtensionAndAllSevenEntryPoints) {
    const std::string manifest = ReadFile(EXECGRAPH_EXPLICIT_MANIFEST);
    ExpectListsTheExtensionAndEveryEntryPoint(manifest);
    EXPECT_EQ(manifest.find("disable_environment"), std::string::npos) << "an explicit layer has no disable variable";
}

TEST(Manifests, ImplicitListsTheExtensionEntryPointsAndDisableVariable) {
    const std::string manifest = ReadFile(EXECGRAPH_IMPLICIT_MANIFEST);
    ExpectListsTheExtensionAndEveryEntryPoint(manifest);
    EXPECT_NE(manifest.find("\"disable_environment\": { \"VK_EXECGRAPH_SHADER_ENQUEUE_DISABLE\": \"1\" }"), std::string::npos);
}

}  // namespace
}  // namespace execgraph::test
