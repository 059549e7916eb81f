// AMD's gpu_dispatch sample (GPUOpen Vulkan-Samples@0cfdd95), run end to end through the layer from the DXC-compiled
// binaries AMD ships: "classify" (one node) feeds the node array "compose"[0..2], which shades a synthetic G-buffer
// into an rgba8 storage image. See shared/fixtures/amd-vulkan-samples/README.md.
//
// The reference never goes through the emulation: compose_*_fe.spv is turned into a plain compute shader by a minimal,
// test-local rewrite (its NodePayloadAMDX input becomes a push-constant block holding the tile coordinate), and each
// permutation shades every tile with ordinary vkCmdDispatch calls. The CPU does the classification (which compose index
// a tile or pixel must reach), so the graph's routing, coverage and payload transport are all checked against it.
//
// The modules declare RuntimeDescriptorArray and Int16, and the reference needs 16-bit push constants, so the test
// skips on devices without those features (lavapipe on bookworm lacks descriptor indexing).
//
// Run on a GPU by hand (one command line):
//   EXECGRAPH_AMD_FIXTURES_DIR=<dir holding gpu_dispatch/> VK_DRIVER_FILES=<icd> VK_ADD_LAYER_PATH=<layer dir>:<vvl dir>
//   ./execgraph_gpu_tests
// EXECGRAPH_GPU_TEST_NO_VALIDATION leaves the validation layer out. With EXECGRAPH_GPU_TEST_OUTPUT=<dir> (or OUT) set,
// the output and reference images are written there as PNGs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "png_writer.h"
#include "vulkan_test_support.h"

namespace execgraph::test {
namespace {

constexpr uint32_t kWidth = 256;
constexpr uint32_t kHeight = 256;
constexpr uint32_t kTileSize = 16;  // classify and compose are 16x16 workgroups
constexpr uint32_t kTilesX = (kWidth + kTileSize - 1) / kTileSize;
constexpr uint32_t kTilesY = (kHeight + kTileSize - 1) / kTileSize;
// One material: the compose array AMD compiled has PayloadNodeArraySize 3, i.e. masks 1..3 (background, material 0,
// both). NumMaterials = 2 would route masks up to 7 past the declared array.
constexpr uint32_t kNumMaterials = 1;
constexpr uint32_t kComposeCount = 3;
// The rgba8 output may differ by rounding where the driver compiles the lowered and the plain shader differently
// (contraction of a*b+c into FMA, say); the math is the same SPIR-V, so anything beyond this is a real difference.
constexpr int kChannelTolerance = 2;

// ---------------------------------------------------------------------------------------------------------------------
// SPIR-V constants this file needs (the v2 AMDX values are not in bookworm's headers).
// ---------------------------------------------------------------------------------------------------------------------
constexpr uint32_t kOpExtension = 10;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpCapability = 17;
constexpr uint32_t kOpTypeStruct = 30;
constexpr uint32_t kOpTypePointer = 32;
constexpr uint32_t kOpVariable = 59;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kOpMemberDecorate = 72;
constexpr uint32_t kOpExecutionModeId = 331;
constexpr uint32_t kOpDecorateId = 332;
constexpr uint32_t kOpTypeNodePayloadArrayAMDX = 5076;
constexpr uint32_t kCapabilityShaderEnqueueAMDX = 5067;
constexpr uint32_t kCapabilityStoragePushConstant16 = 4435;
constexpr uint32_t kStorageClassNodePayloadAMDX = 5068;
constexpr uint32_t kStorageClassPushConstant = 9;
constexpr uint32_t kDecorationBlock = 2;
constexpr uint32_t kDecorationOffset = 35;

bool IsAmdxOpcode(uint32_t opcode) { return opcode >= 5074 && opcode <= 5110; }
bool IsAmdxExecutionMode(uint32_t mode) { return mode >= 5069 && mode <= 5102; }

std::string SpirvString(const std::vector<uint32_t>& words, size_t first, size_t end) {
    std::string text;
    for (size_t i = first; i < end; ++i) {
        for (int shift = 0; shift < 32; shift += 8) {
            const char c = static_cast<char>(words[i] >> shift);
            if (c == '\0') return text;
            text.push_back(c);
        }
    }
    return text;
}

// Turns a broadcasting compose node whose input is read as element 0 of its payload array (compose_*_fe/de) into a
// plain compute shader: the payload array type becomes a Block struct around the record, its storage class
// PushConstant, and the AMDX capability, extension, execution modes and decorations go. The access chains
// (%in %uint_0 %member) stay valid: index 0 of the Block is the record. Returns an empty vector on any other shape.
std::vector<uint32_t> NodeToPlainCompute(const std::vector<uint32_t>& words, std::string* error) {
    if (words.size() < 5) {
        *error = "too short";
        return {};
    }
    std::vector<uint32_t> payload_arrays;
    for (size_t i = 5; i < words.size();) {
        const uint32_t count = words[i] >> 16;
        if ((words[i] & 0xffffu) == kOpTypeNodePayloadArrayAMDX) payload_arrays.push_back(words[i + 1]);
        if (count == 0) {
            *error = "zero word count";
            return {};
        }
        i += count;
    }
    if (payload_arrays.size() != 1) {
        *error = "expected exactly one payload array type (the input), got " + std::to_string(payload_arrays.size());
        return {};
    }
    const uint32_t payload_array = payload_arrays[0];
    std::vector<uint32_t> out(words.begin(), words.begin() + 5);
    bool block_decorated = false;
    for (size_t i = 5; i < words.size();) {
        const uint32_t opcode = words[i] & 0xffffu;
        const uint32_t count = words[i] >> 16;
        std::vector<uint32_t> instruction(words.begin() + static_cast<std::ptrdiff_t>(i),
                                          words.begin() + static_cast<std::ptrdiff_t>(i + count));
        i += count;
        if (opcode == kOpCapability && instruction[1] == kCapabilityShaderEnqueueAMDX) {
            // The record holds uint16_t2 members; a push-constant block of them needs this capability instead.
            instruction[1] = kCapabilityStoragePushConstant16;
        } else if (opcode == kOpExtension && SpirvString(instruction, 1, count) == "SPV_AMDX_shader_enqueue") {
            continue;
        } else if ((opcode == kOpExecutionModeId || opcode == kOpExecutionMode) && IsAmdxExecutionMode(instruction[2])) {
            continue;
        } else if (opcode == kOpDecorateId && instruction[1] == payload_array) {
            // NodeMaxPayloadsAMDX on the input array: its place in the annotation section takes the Block decorations.
            if (!block_decorated) {
                out.insert(out.end(), {(3u << 16) | kOpDecorate, payload_array, kDecorationBlock});
                out.insert(out.end(), {(5u << 16) | kOpMemberDecorate, payload_array, 0, kDecorationOffset, 0});
                block_decorated = true;
            }
            continue;
        } else if (opcode == kOpTypeNodePayloadArrayAMDX) {
            instruction[0] = (3u << 16) | kOpTypeStruct;
        } else if (opcode == kOpTypePointer && instruction[2] == kStorageClassNodePayloadAMDX) {
            instruction[2] = kStorageClassPushConstant;
        } else if (opcode == kOpVariable && instruction[3] == kStorageClassNodePayloadAMDX) {
            instruction[3] = kStorageClassPushConstant;
        } else if (IsAmdxOpcode(opcode)) {
            *error = "AMDX instruction " + std::to_string(opcode) + " has no plain-compute equivalent here";
            return {};
        }
        out.insert(out.end(), instruction.begin(), instruction.end());
    }
    if (!block_decorated) {
        *error = "the input payload array carries no NodeMaxPayloadsAMDX decoration to replace";
        return {};
    }
    return out;
}

using execgraph::examples::WritePng;

std::string OutputFolder() {
    for (const char* name : {"EXECGRAPH_GPU_TEST_OUTPUT", "OUT"}) {
        const char* value = std::getenv(name);
        if (value != nullptr && *value != '\0') return value;
    }
    return "";
}

std::vector<uint32_t> ReadSpirvFixture(const std::string& name) {
    const char* folder = std::getenv("EXECGRAPH_AMD_FIXTURES_DIR");
    const std::string path = std::string(folder != nullptr ? folder : EXECGRAPH_AMD_FIXTURES_DIR) + "/gpu_dispatch/" + name;
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        ADD_FAILURE() << "cannot read " << path << " (set EXECGRAPH_AMD_FIXTURES_DIR)";
        return {};
    }
    std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), words.size() * 4);
    return words;
}

// ---------------------------------------------------------------------------------------------------------------------
// The synthetic G-buffer: a sphere-shaded disc and two boxes of material 0 over background (depth 0), so the frame has
// background-only tiles (compose[0]), material-only tiles (compose[1]) and mixed tiles (compose[2]).
// ---------------------------------------------------------------------------------------------------------------------
struct GBuffer {
    std::vector<uint32_t> material;  // R32_UINT
    std::vector<float> depth;        // R32_SFLOAT; 0 = background (classify's test)
    std::vector<float> normal;       // R32G32B32A32_SFLOAT
    std::vector<float> tex_coord;    // R32G32B32A32_SFLOAT
};

GBuffer MakeGBuffer() {
    GBuffer g;
    const size_t count = static_cast<size_t>(kWidth) * kHeight;
    g.material.assign(count, 0);
    g.depth.assign(count, 0.0f);
    g.normal.assign(count * 4, 0.0f);
    g.tex_coord.assign(count * 4, 0.0f);
    for (uint32_t y = 0; y < kHeight; ++y) {
        for (uint32_t x = 0; x < kWidth; ++x) {
            const size_t i = static_cast<size_t>(y) * kWidth + x;
            const float dx = (static_cast<float>(x) - 120.0f) / 84.0f;
            const float dy = (static_cast<float>(y) - 136.0f) / 84.0f;
            const float r2 = dx * dx + dy * dy;
            const bool in_disc = r2 < 1.0f;
            const bool in_box = (x >= 200 && x < 248 && y >= 16 && y < 72) || (x >= 24 && x < 40 && y >= 24 && y < 40);
            float nx = 0.0f, ny = 0.0f, nz = -1.0f;
            if (in_disc) {
                nx = dx;
                ny = dy;
                nz = -std::sqrt(1.0f - r2);
                g.depth[i] = 0.5f + 0.25f * r2;
            } else if (in_box) {
                g.depth[i] = 0.75f;
            }
            g.material[i] = 0;  // the only material; background is told apart by depth alone
            g.normal[i * 4 + 0] = nx;
            g.normal[i * 4 + 1] = ny;
            g.normal[i * 4 + 2] = nz;
            g.normal[i * 4 + 3] = 0.0f;
            g.tex_coord[i * 4 + 0] = static_cast<float>(x) / kWidth;
            g.tex_coord[i * 4 + 1] = static_cast<float>(y) / kHeight;
        }
    }
    return g;
}

// classify's mask: bit 0 background, bit 1+m material m. The compose index is the mask minus one.
uint32_t PixelMask(const GBuffer& g, uint32_t x, uint32_t y) {
    const size_t i = static_cast<size_t>(y) * kWidth + x;
    return g.depth[i] == 0.0f ? 1u : 1u << ((g.material[i] + 1) & 31u);
}

uint32_t TileMask(const GBuffer& g, uint32_t tile_x, uint32_t tile_y) {
    uint32_t mask = 0;
    for (uint32_t y = tile_y * kTileSize; y < std::min(kHeight, (tile_y + 1) * kTileSize); ++y) {
        for (uint32_t x = tile_x * kTileSize; x < std::min(kWidth, (tile_x + 1) * kTileSize); ++x) mask |= PixelMask(g, x, y);
    }
    return mask;
}

// Spec constants 0..6 of compose (ViewWidth, ViewHeight, NumMaterials, NumTexturesPerMaterial, ShaderPermutation,
// AluComplexity, UseTextureArray); classify reads id 2 only. ShaderPermutation is the classification mask the
// compose index stands for (index + 1), as the shader's branches test it bit by bit.
struct ComposeConstants {
    std::array<uint32_t, 7> values{};
    std::array<VkSpecializationMapEntry, 7> entries{};
    VkSpecializationInfo info{};

    explicit ComposeConstants(uint32_t permutation) {
        values = {kWidth, kHeight, kNumMaterials, 0, permutation, 1, VK_FALSE};
        for (uint32_t id = 0; id < 7; ++id) entries[id] = {id, id * 4, 4};
        info = {7, entries.data(), sizeof(values), values.data()};
    }
    ComposeConstants(const ComposeConstants&) = delete;
    ComposeConstants& operator=(const ComposeConstants&) = delete;
};

struct UboData {
    float projection[16];
    float modelview[16];
    float inverse_proj_model_view[16];
    float light_pos[4];
    uint32_t highlighted_shader_permutation;
    uint32_t pad[3];
};

struct Image {
    VkImage image = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
};

struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceAddress address = 0;
    VkDeviceSize size = 0;
    void* mapped = nullptr;
};

struct Comparison {
    uint32_t unwritten = 0;  // alpha 0: the clear colour survived, no compose invocation wrote the pixel
    uint32_t differing = 0;  // any channel differs
    uint32_t beyond_tolerance = 0;
    int max_difference = 0;
};

Comparison Compare(const std::vector<uint32_t>& actual, const std::vector<uint32_t>& expected) {
    Comparison c;
    for (size_t i = 0; i < actual.size(); ++i) {
        if ((actual[i] >> 24) == 0) ++c.unwritten;
        int worst = 0;
        for (int shift = 0; shift < 32; shift += 8) {
            const int a = static_cast<int>((actual[i] >> shift) & 0xffu);
            const int e = static_cast<int>((expected[i] >> shift) & 0xffu);
            worst = std::max(worst, std::abs(a - e));
        }
        if (worst > 0) ++c.differing;
        if (worst > kChannelTolerance) ++c.beyond_tolerance;
        c.max_difference = std::max(c.max_difference, worst);
    }
    return c;
}

class AmdGpuDispatch : public ::testing::Test {
  protected:
    void SetUp() override {
        InstanceOptions options;
        options.layers = {kLayerName};
        if (std::getenv("EXECGRAPH_GPU_TEST_NO_VALIDATION") == nullptr) options.layers.push_back(kValidationLayerName);
        instance_ = std::make_unique<TestInstance>(options, &log_);
        ASSERT_EQ(instance_->result(), VK_SUCCESS) << log_.Problems();
        physical_device_ = instance_->PhysicalDevice();
        ASSERT_NE(physical_device_, VK_NULL_HANDLE);
        VkPhysicalDeviceProperties properties;
        vkGetPhysicalDeviceProperties(physical_device_, &properties);
        device_name_ = properties.deviceName;

        VkPhysicalDeviceVulkan12Features vulkan12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        VkPhysicalDeviceVulkan11Features vulkan11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &vulkan12};
        VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vulkan11};
        vkGetPhysicalDeviceFeatures2(physical_device_, &features);
        std::string missing;
        if (!instance_->AdvertisesShaderEnqueue()) missing += " VK_AMDX_shader_enqueue(layer)";
        if (!vulkan12.runtimeDescriptorArray) missing += " runtimeDescriptorArray";
        if (!features.features.shaderInt16) missing += " shaderInt16";
        if (!vulkan11.storagePushConstant16) missing += " storagePushConstant16";
        if (!vulkan11.storageBuffer16BitAccess) missing += " storageBuffer16BitAccess";
        // Debugging aid: lavapipe compiles these modules anyway (binding 6, the only runtime array, is never used), so the
        // test can run on the CPU; validation then reports VUID-VkShaderModuleCreateInfo-pCode-01091 for the capability.
        const bool only_descriptor_indexing_missing = missing == " runtimeDescriptorArray";
        if (only_descriptor_indexing_missing && std::getenv("EXECGRAPH_GPU_TEST_WITHOUT_DESCRIPTOR_INDEXING") != nullptr) {
            missing.clear();
        }
        if (!missing.empty()) {
            GTEST_SKIP() << device_name_ << " lacks what AMD's gpu_dispatch shaders need:" << missing
                         << " (they declare RuntimeDescriptorArray and Int16; run this test on a GPU)";
        }

        // Enable exactly what the modules declare; the layer adds what the emulation itself needs.
        VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        enable12.descriptorIndexing = vulkan12.descriptorIndexing;
        enable12.runtimeDescriptorArray = vulkan12.runtimeDescriptorArray;
        enable12.bufferDeviceAddress = VK_TRUE;
        VkPhysicalDeviceVulkan11Features enable11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &enable12};
        enable11.storagePushConstant16 = VK_TRUE;
        enable11.storageBuffer16BitAccess = VK_TRUE;
        VkPhysicalDeviceFeatures enabled{};
        enabled.shaderInt16 = VK_TRUE;
        DeviceOptions device_options;
        device_options.extra_pnext = &enable11;
        device_options.enabled_features = &enabled;
        device_ = std::make_unique<TestDevice>(*instance_, device_options);
        ASSERT_EQ(device_->result(), VK_SUCCESS) << log_.Problems();
        device = device_->handle();
        vkGetDeviceQueue(device, device_->queue_family(), 0, &queue_);
        VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pool_info.queueFamilyIndex = device_->queue_family();
        ASSERT_EQ(vkCreateCommandPool(device, &pool_info, nullptr, &command_pool_), VK_SUCCESS);
#define EXECGRAPH_LOAD(name) name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name));
        EXECGRAPH_LOAD(vkCreateExecutionGraphPipelinesAMDX)
        EXECGRAPH_LOAD(vkGetExecutionGraphPipelineScratchSizeAMDX)
        EXECGRAPH_LOAD(vkGetExecutionGraphPipelineNodeIndexAMDX)
        EXECGRAPH_LOAD(vkCmdInitializeGraphScratchMemoryAMDX)
        EXECGRAPH_LOAD(vkCmdDispatchGraphAMDX)
#undef EXECGRAPH_LOAD
        ASSERT_NE(vkCmdDispatchGraphAMDX, nullptr);
    }

    void TearDown() override {
        if (device != VK_NULL_HANDLE) {
            vkDeviceWaitIdle(device);
            for (VkPipeline pipeline : pipelines_) vkDestroyPipeline(device, pipeline, nullptr);
            for (VkShaderModule module : modules_) vkDestroyShaderModule(device, module, nullptr);
            for (VkPipelineLayout layout : pipeline_layouts_) vkDestroyPipelineLayout(device, layout, nullptr);
            if (descriptor_pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(device, descriptor_pool_, nullptr);
            if (set_layout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device, set_layout_, nullptr);
            for (Image& image : images_) {
                vkDestroyImageView(device, image.view, nullptr);
                vkDestroyImage(device, image.image, nullptr);
                vkFreeMemory(device, image.memory, nullptr);
            }
            for (Buffer& buffer : buffers_) {
                vkDestroyBuffer(device, buffer.buffer, nullptr);
                vkFreeMemory(device, buffer.memory, nullptr);
            }
            if (command_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device, command_pool_, nullptr);
        }
        device_.reset();
        if (instance_ != nullptr) {
            EXPECT_EQ(log_.Problems(), "");
        }
        instance_.reset();
    }

    uint32_t FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags flags) const {
        VkPhysicalDeviceMemoryProperties properties;
        vkGetPhysicalDeviceMemoryProperties(physical_device_, &properties);
        for (uint32_t i = 0; i < properties.memoryTypeCount; ++i) {
            if ((type_bits & (1u << i)) && (properties.memoryTypes[i].propertyFlags & flags) == flags) return i;
        }
        ADD_FAILURE() << "no memory type with flags " << flags;
        return 0;
    }

    Buffer& CreateBuffer(VkDeviceSize size, VkBufferUsageFlags usage) {
        Buffer result;
        result.size = size;
        VkBufferCreateInfo create_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        create_info.size = size;
        create_info.usage = usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        EXPECT_EQ(vkCreateBuffer(device, &create_info, nullptr, &result.buffer), VK_SUCCESS);
        VkMemoryRequirements requirements;
        vkGetBufferMemoryRequirements(device, result.buffer, &requirements);
        VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
        flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
        VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
        allocate.allocationSize = requirements.size;
        allocate.memoryTypeIndex = FindMemoryType(requirements.memoryTypeBits,
                                                  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        EXPECT_EQ(vkAllocateMemory(device, &allocate, nullptr, &result.memory), VK_SUCCESS);
        EXPECT_EQ(vkBindBufferMemory(device, result.buffer, result.memory, 0), VK_SUCCESS);
        EXPECT_EQ(vkMapMemory(device, result.memory, 0, VK_WHOLE_SIZE, 0, &result.mapped), VK_SUCCESS);
        std::memset(result.mapped, 0, size);
        VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
        address.buffer = result.buffer;
        result.address = vkGetBufferDeviceAddress(device, &address);
        buffers_.push_back(result);
        return buffers_.back();
    }

    Image& CreateImage(VkFormat format, VkImageUsageFlags usage) {
        Image result;
        VkImageCreateInfo create_info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        create_info.imageType = VK_IMAGE_TYPE_2D;
        create_info.format = format;
        create_info.extent = {kWidth, kHeight, 1};
        create_info.mipLevels = 1;
        create_info.arrayLayers = 1;
        create_info.samples = VK_SAMPLE_COUNT_1_BIT;
        create_info.tiling = VK_IMAGE_TILING_OPTIMAL;
        create_info.usage = usage | VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
        EXPECT_EQ(vkCreateImage(device, &create_info, nullptr, &result.image), VK_SUCCESS);
        VkMemoryRequirements requirements;
        vkGetImageMemoryRequirements(device, result.image, &requirements);
        VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        allocate.allocationSize = requirements.size;
        allocate.memoryTypeIndex = FindMemoryType(requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        EXPECT_EQ(vkAllocateMemory(device, &allocate, nullptr, &result.memory), VK_SUCCESS);
        EXPECT_EQ(vkBindImageMemory(device, result.image, result.memory, 0), VK_SUCCESS);
        VkImageViewCreateInfo view_info{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
        view_info.image = result.image;
        view_info.viewType = VK_IMAGE_VIEW_TYPE_2D;
        view_info.format = format;
        view_info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        EXPECT_EQ(vkCreateImageView(device, &view_info, nullptr, &result.view), VK_SUCCESS);
        images_.push_back(result);
        return images_.back();
    }

    void Submit(const std::function<void(VkCommandBuffer)>& record) {
        VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        allocate.commandPool = command_pool_;
        allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        allocate.commandBufferCount = 1;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        ASSERT_EQ(vkAllocateCommandBuffers(device, &allocate, &cmd), VK_SUCCESS);
        VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        vkBeginCommandBuffer(cmd, &begin);
        record(cmd);
        ASSERT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
        VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &cmd;
        ASSERT_EQ(vkQueueSubmit(queue_, 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
        ASSERT_EQ(vkQueueWaitIdle(queue_), VK_SUCCESS);
        vkFreeCommandBuffers(device, command_pool_, 1, &cmd);
    }

    static void Barrier(VkCommandBuffer cmd, VkImage image, VkImageLayout from, VkImageLayout to) {
        VkImageMemoryBarrier barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
        barrier.oldLayout = from;
        barrier.newLayout = to;
        barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        barrier.image = image;
        barrier.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
                             nullptr, 1, &barrier);
    }

    static VkBufferImageCopy WholeImageCopy() {
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {kWidth, kHeight, 1};
        return region;
    }

    // A sampled G-buffer image, uploaded and left in SHADER_READ_ONLY_OPTIMAL.
    Image& UploadImage(VkFormat format, const void* data, size_t bytes) {
        Image& image = CreateImage(format, VK_IMAGE_USAGE_SAMPLED_BIT);
        Buffer& staging = CreateBuffer(bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
        std::memcpy(staging.mapped, data, bytes);
        const VkBufferImageCopy region = WholeImageCopy();
        Submit([&](VkCommandBuffer cmd) {
            Barrier(cmd, image.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
            vkCmdCopyBufferToImage(cmd, staging.buffer, image.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
            Barrier(cmd, image.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL);
        });
        return image;
    }

    VkShaderModule CreateModule(const std::vector<uint32_t>& words) {
        VkShaderModuleCreateInfo create_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        create_info.codeSize = words.size() * sizeof(uint32_t);
        create_info.pCode = words.data();
        VkShaderModule module = VK_NULL_HANDLE;
        EXPECT_EQ(vkCreateShaderModule(device, &create_info, nullptr, &module), VK_SUCCESS);
        modules_.push_back(module);
        return module;
    }

    // Set 0 as AMD's shaders declare it: 0 UBO, 1 storage image (output), 2 material, 3 normal, 4 texcoord, 5 depth.
    // Binding 6 (the texture array behind UseTextureArray) is not referenced by any entry point, so it stays out.
    void CreateLayouts() {
        const VkDescriptorType types[6] = {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
                                           VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,  VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
                                           VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,  VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE};
        std::vector<VkDescriptorSetLayoutBinding> bindings;
        for (uint32_t i = 0; i < 6; ++i) bindings.push_back({i, types[i], 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
        VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        set_info.bindingCount = static_cast<uint32_t>(bindings.size());
        set_info.pBindings = bindings.data();
        ASSERT_EQ(vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout_), VK_SUCCESS);
        const VkDescriptorPoolSize sizes[3] = {{VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kMaxSets},
                                               {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, kMaxSets},
                                               {VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, 4 * kMaxSets}};
        VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        pool_info.maxSets = kMaxSets;
        pool_info.poolSizeCount = 3;
        pool_info.pPoolSizes = sizes;
        ASSERT_EQ(vkCreateDescriptorPool(device, &pool_info, nullptr, &descriptor_pool_), VK_SUCCESS);

        VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout_info.setLayoutCount = 1;
        layout_info.pSetLayouts = &set_layout_;
        ASSERT_EQ(vkCreatePipelineLayout(device, &layout_info, nullptr, &graph_layout_), VK_SUCCESS);
        pipeline_layouts_.push_back(graph_layout_);
        // The reference feeds compose's record {uint16_t2 coord} through push constants instead of a payload.
        const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
        layout_info.pushConstantRangeCount = 1;
        layout_info.pPushConstantRanges = &push;
        ASSERT_EQ(vkCreatePipelineLayout(device, &layout_info, nullptr, &plain_layout_), VK_SUCCESS);
        pipeline_layouts_.push_back(plain_layout_);
    }

    VkDescriptorSet CreateSet(const Buffer& ubo, const Image& output, const std::array<const Image*, 4>& gbuffer) {
        VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        allocate.descriptorPool = descriptor_pool_;
        allocate.descriptorSetCount = 1;
        allocate.pSetLayouts = &set_layout_;
        VkDescriptorSet set = VK_NULL_HANDLE;
        EXPECT_EQ(vkAllocateDescriptorSets(device, &allocate, &set), VK_SUCCESS);
        const VkDescriptorBufferInfo ubo_info{ubo.buffer, 0, VK_WHOLE_SIZE};
        VkDescriptorImageInfo image_infos[5];
        image_infos[0] = {VK_NULL_HANDLE, output.view, VK_IMAGE_LAYOUT_GENERAL};
        for (int i = 0; i < 4; ++i) {
            image_infos[i + 1] = {VK_NULL_HANDLE, gbuffer[i]->view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
        }
        VkWriteDescriptorSet writes[6];
        for (uint32_t binding = 0; binding < 6; ++binding) {
            writes[binding] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
            writes[binding].dstSet = set;
            writes[binding].dstBinding = binding;
            writes[binding].descriptorCount = 1;
            writes[binding].descriptorType = binding == 0   ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                             : binding == 1 ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
                                                            : VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
            if (binding == 0) {
                writes[binding].pBufferInfo = &ubo_info;
            } else {
                writes[binding].pImageInfo = &image_infos[binding - 1];
            }
        }
        vkUpdateDescriptorSets(device, 6, writes, 0, nullptr);
        return set;
    }

    // classify_<variant> as node "classify", compose_<compose_variant> as "compose"[0..2], the way AMD's host code
    // names them: every module's entry point is "main", the names come from VkPipelineShaderStageNodeCreateInfoAMDX.
    VkPipeline CreateGraph(const std::string& classify_variant, const std::string& compose_variant, VkResult* result) {
        const std::vector<uint32_t> classify = ReadSpirvFixture("classify_gpu_enqueue_cs_" + classify_variant + ".spv");
        const std::vector<uint32_t> compose = ReadSpirvFixture("compose_gpu_enqueue_cs_" + compose_variant + ".spv");
        if (classify.empty() || compose.empty()) {
            *result = VK_ERROR_INITIALIZATION_FAILED;
            return VK_NULL_HANDLE;
        }
        std::vector<std::unique_ptr<ComposeConstants>> constants;
        constants.push_back(std::make_unique<ComposeConstants>(0));  // classify reads NumMaterials (id 2) only
        for (uint32_t i = 0; i < kComposeCount; ++i) constants.push_back(std::make_unique<ComposeConstants>(i + 1));
        std::vector<VkPipelineShaderStageNodeCreateInfoAMDX> nodes(1 + kComposeCount);
        std::vector<VkPipelineShaderStageCreateInfo> stages(1 + kComposeCount);
        const VkShaderModule classify_module = CreateModule(classify);
        const VkShaderModule compose_module = CreateModule(compose);
        for (uint32_t i = 0; i <= kComposeCount; ++i) {
            nodes[i] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX, nullptr, i == 0 ? "classify" : "compose",
                        i == 0 ? 0 : i - 1};
            stages[i] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, &nodes[i]};
            stages[i].stage = VK_SHADER_STAGE_COMPUTE_BIT;
            stages[i].module = i == 0 ? classify_module : compose_module;
            stages[i].pName = "main";
            stages[i].pSpecializationInfo = &constants[i]->info;
        }
        VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
        create_info.stageCount = static_cast<uint32_t>(stages.size());
        create_info.pStages = stages.data();
        create_info.layout = graph_layout_;
        create_info.basePipelineIndex = -1;
        VkPipeline pipeline = VK_NULL_HANDLE;
        *result = vkCreateExecutionGraphPipelinesAMDX(device, VK_NULL_HANDLE, 1, &create_info, nullptr, &pipeline);
        if (*result == VK_SUCCESS) pipelines_.push_back(pipeline);
        return pipeline;
    }

    VkPipeline CreatePlainCompose(const std::vector<uint32_t>& words, uint32_t permutation) {
        ComposeConstants constants(permutation);
        VkComputePipelineCreateInfo create_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        create_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        create_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        create_info.stage.module = CreateModule(words);
        create_info.stage.pName = "main";
        create_info.stage.pSpecializationInfo = &constants.info;
        create_info.layout = plain_layout_;
        create_info.basePipelineIndex = -1;
        VkPipeline pipeline = VK_NULL_HANDLE;
        EXPECT_EQ(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &create_info, nullptr, &pipeline), VK_SUCCESS);
        if (pipeline != VK_NULL_HANDLE) pipelines_.push_back(pipeline);
        return pipeline;
    }

    void ClearOutput(VkCommandBuffer cmd, const Image& image) {
        Barrier(cmd, image.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL);
        const VkClearColorValue transparent{};  // alpha 0 marks pixels nobody wrote (compose always writes alpha 1)
        const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdClearColorImage(cmd, image.image, VK_IMAGE_LAYOUT_GENERAL, &transparent, 1, &range);
        Barrier(cmd, image.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL);
    }

    std::vector<uint32_t> ReadBack(const Image& image) {
        Buffer& readback = CreateBuffer(static_cast<VkDeviceSize>(kWidth) * kHeight * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
        const VkBufferImageCopy region = WholeImageCopy();
        Submit([&](VkCommandBuffer cmd) {
            Barrier(cmd, image.image, VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
            vkCmdCopyImageToBuffer(cmd, image.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback.buffer, 1, &region);
            VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
            barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
            barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
            vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0,
                                 nullptr);
        });
        std::vector<uint32_t> pixels(static_cast<size_t>(kWidth) * kHeight);
        std::memcpy(pixels.data(), readback.mapped, pixels.size() * 4);
        return pixels;
    }

    static constexpr uint32_t kMaxSets = 8;

    MessageLog log_;
    std::unique_ptr<TestInstance> instance_;
    std::unique_ptr<TestDevice> device_;
    VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
    std::string device_name_;
    VkDevice device = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool command_pool_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
    VkPipelineLayout graph_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout plain_layout_ = VK_NULL_HANDLE;
    std::vector<VkPipelineLayout> pipeline_layouts_;
    std::vector<VkShaderModule> modules_;
    std::vector<VkPipeline> pipelines_;
    std::deque<Image> images_;  // deques: callers keep references across later creations
    std::deque<Buffer> buffers_;

    PFN_vkCreateExecutionGraphPipelinesAMDX vkCreateExecutionGraphPipelinesAMDX = nullptr;
    PFN_vkGetExecutionGraphPipelineScratchSizeAMDX vkGetExecutionGraphPipelineScratchSizeAMDX = nullptr;
    PFN_vkGetExecutionGraphPipelineNodeIndexAMDX vkGetExecutionGraphPipelineNodeIndexAMDX = nullptr;
    PFN_vkCmdInitializeGraphScratchMemoryAMDX vkCmdInitializeGraphScratchMemoryAMDX = nullptr;
    PFN_vkCmdDispatchGraphAMDX vkCmdDispatchGraphAMDX = nullptr;
};

// The rewrite the reference depends on is itself checked on every machine, GPU or not.
TEST(AmdGpuDispatchReference, ComposeFixedExpansionBecomesPlainCompute) {
    const std::vector<uint32_t> compose = ReadSpirvFixture("compose_gpu_enqueue_cs_fe.spv");
    ASSERT_FALSE(compose.empty());
    std::string error;
    const std::vector<uint32_t> plain = NodeToPlainCompute(compose, &error);
    ASSERT_TRUE(error.empty()) << error;
    // Two words for the Block and Offset decorations replace one OpDecorateId; the extension and two modes go.
    EXPECT_LT(plain.size(), compose.size());
    for (size_t i = 5; i < plain.size(); i += plain[i] >> 16) {
        const uint32_t opcode = plain[i] & 0xffffu;
        EXPECT_FALSE(IsAmdxOpcode(opcode)) << "opcode " << opcode;
        if (opcode == kOpCapability) {
            EXPECT_NE(plain[i + 1], kCapabilityShaderEnqueueAMDX);
        }
        if (opcode == kOpTypePointer) {
            EXPECT_NE(plain[i + 2], kStorageClassNodePayloadAMDX);
        }
    }
}

TEST_F(AmdGpuDispatch, ClassifyComposeMatchesPlainDispatches) {
    ASSERT_NO_FATAL_FAILURE(CreateLayouts());
    const GBuffer g = MakeGBuffer();
    const size_t count = static_cast<size_t>(kWidth) * kHeight;
    const Image& material = UploadImage(VK_FORMAT_R32_UINT, g.material.data(), count * 4);
    const Image& normal = UploadImage(VK_FORMAT_R32G32B32A32_SFLOAT, g.normal.data(), count * 16);
    const Image& tex_coord = UploadImage(VK_FORMAT_R32G32B32A32_SFLOAT, g.tex_coord.data(), count * 16);
    const Image& depth = UploadImage(VK_FORMAT_R32_SFLOAT, g.depth.data(), count * 4);
    const std::array<const Image*, 4> gbuffer = {&material, &normal, &tex_coord, &depth};

    Buffer& ubo = CreateBuffer(sizeof(UboData), VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT);
    UboData ubo_data{};
    for (int i = 0; i < 4; ++i) {
        ubo_data.projection[i * 5] = 1.0f;
        ubo_data.modelview[i * 5] = 1.0f;
        ubo_data.inverse_proj_model_view[i * 5] = 1.0f;
    }
    ubo_data.modelview[14] = 0.25f;  // a translation, so the matrices are not all alike
    const float light[4] = {0.6f, -0.8f, -1.5f, 1.0f};
    std::memcpy(ubo_data.light_pos, light, sizeof(light));
    ubo_data.highlighted_shader_permutation = 0;  // no highlight: every permutation shades normally
    std::memcpy(ubo.mapped, &ubo_data, sizeof(ubo_data));

    // Reference: compose_fe as a plain compute shader, one full frame per permutation (every tile shaded by it).
    std::string error;
    const std::vector<uint32_t> plain = NodeToPlainCompute(ReadSpirvFixture("compose_gpu_enqueue_cs_fe.spv"), &error);
    ASSERT_TRUE(error.empty()) << error;
    std::vector<std::vector<uint32_t>> full(kComposeCount);
    for (uint32_t index = 0; index < kComposeCount; ++index) {
        const VkPipeline pipeline = CreatePlainCompose(plain, index + 1);
        ASSERT_NE(pipeline, VK_NULL_HANDLE) << log_.Problems();
        Image& output = CreateImage(VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_USAGE_STORAGE_BIT);
        const VkDescriptorSet set = CreateSet(ubo, output, gbuffer);
        Submit([&](VkCommandBuffer cmd) {
            ClearOutput(cmd, output);
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, plain_layout_, 0, 1, &set, 0, nullptr);
            for (uint32_t ty = 0; ty < kTilesY; ++ty) {
                for (uint32_t tx = 0; tx < kTilesX; ++tx) {
                    const uint16_t coord[2] = {static_cast<uint16_t>(tx), static_cast<uint16_t>(ty)};
                    vkCmdPushConstants(cmd, plain_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(coord), coord);
                    vkCmdDispatch(cmd, 1, 1, 1);
                }
            }
        });
        full[index] = ReadBack(output);
        const Comparison self = Compare(full[index], full[index]);
        EXPECT_EQ(self.unwritten, 0u) << "reference permutation " << index + 1 << " left pixels unwritten";
    }
    // The tile variants (fe, de) shade a whole tile with the tile's permutation; the per-pixel ones (a, t) route each
    // pixel by its own mask. Both references are picked per pixel from the full frames.
    std::vector<uint32_t> tile_reference(count), pixel_reference(count);
    uint32_t tiles_per_index[kComposeCount] = {};
    for (uint32_t ty = 0; ty < kTilesY; ++ty) {
        for (uint32_t tx = 0; tx < kTilesX; ++tx) ++tiles_per_index[TileMask(g, tx, ty) - 1];
    }
    for (uint32_t y = 0; y < kHeight; ++y) {
        for (uint32_t x = 0; x < kWidth; ++x) {
            const size_t i = static_cast<size_t>(y) * kWidth + x;
            tile_reference[i] = full[TileMask(g, x / kTileSize, y / kTileSize) - 1][i];
            pixel_reference[i] = full[PixelMask(g, x, y) - 1][i];
        }
    }
    // How much the permutations differ tells how much routing the comparison can see.
    const Comparison perm12 = Compare(full[0], full[1]), perm23 = Compare(full[1], full[2]);
    const Comparison tile_vs_pixel = Compare(tile_reference, pixel_reference);
    std::printf("[ info ] device %s; tiles per compose index: %u %u %u; pixels where permutation 1/2 differ: %u, 2/3: %u; "
                "tile vs per-pixel reference differ at %u pixels (max %d)\n",
                device_name_.c_str(), tiles_per_index[0], tiles_per_index[1], tiles_per_index[2], perm12.differing,
                perm23.differing, tile_vs_pixel.differing, tile_vs_pixel.max_difference);
    EXPECT_GT(tiles_per_index[0], 0u);
    EXPECT_GT(tiles_per_index[1], 0u);
    EXPECT_GT(tiles_per_index[2], 0u);
    EXPECT_GT(perm12.differing, 0u) << "background and material shading coincide: routing would go unnoticed";

    const std::string folder = OutputFolder();
    if (!folder.empty()) {
        WritePng(folder + "/amd_gpu_dispatch_reference_tile.png", tile_reference, kWidth, kHeight);
        WritePng(folder + "/amd_gpu_dispatch_reference_pixel.png", pixel_reference, kWidth, kHeight);
    }

    // The graphs: fixed expansion, dynamic expansion, aggregation (coalescing) and thread launch. AMD pairs the
    // thread-launch compose with the aggregation classify (both carry one uint16_t2 pixel per record).
    struct Variant {
        const char* classify;
        const char* compose;
        bool per_pixel;
    };
    const Variant variants[] = {{"fe", "fe", false}, {"de", "de", false}, {"a", "a", true}, {"a", "t", true}};
    for (const Variant& variant : variants) {
        SCOPED_TRACE(std::string("classify_") + variant.classify + " -> compose_" + variant.compose);
        VkResult result = VK_SUCCESS;
        const VkPipeline graph = CreateGraph(variant.classify, variant.compose, &result);
        ASSERT_EQ(result, VK_SUCCESS) << log_.Problems();
        VkExecutionGraphPipelineScratchSizeAMDX scratch_size{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
        ASSERT_EQ(vkGetExecutionGraphPipelineScratchSizeAMDX(device, graph, &scratch_size), VK_SUCCESS);
        // Sized for the frame's fan-out, as an application would: the aggregation classify enqueues one record per pixel
        // (65536 in one generation), and the layer's minSize only guarantees 4096 records per half (layer/scratch_plan.h);
        // beyond that it drops records (see the report). 32 MiB holds the whole frame with room to spare.
        const VkDeviceSize wanted = 32ull << 20;
        VkDeviceSize size = scratch_size.minSize;
        if (size < wanted && scratch_size.sizeGranularity > 0) {
            const VkDeviceSize step = scratch_size.sizeGranularity;
            size += (wanted - size + step - 1) / step * step;
        }
        size = std::min(std::max(size, scratch_size.minSize), std::max(scratch_size.maxSize, scratch_size.minSize));
        Buffer& scratch = CreateBuffer(size, VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX);
        VkPipelineShaderStageNodeCreateInfoAMDX classify_name{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX,
                                                              nullptr, "classify", 0};
        uint32_t classify_index = ~0u;
        ASSERT_EQ(vkGetExecutionGraphPipelineNodeIndexAMDX(device, graph, &classify_name, &classify_index), VK_SUCCESS);
        Image& output = CreateImage(VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_USAGE_STORAGE_BIT);
        const VkDescriptorSet set = CreateSet(ubo, output, gbuffer);
        Submit([&](VkCommandBuffer cmd) {
            vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph, scratch.address, scratch.size);
        });
        // AMD's host payload: the classify grid as a VkDispatchIndirectCommand, one record, stride 12.
        const VkDispatchIndirectCommand grid{kTilesX, kTilesY, 1};
        VkDispatchGraphInfoAMDX info{classify_index, 1, {}, sizeof(grid)};
        info.payloads.hostAddress = &grid;
        VkDispatchGraphCountInfoAMDX count_info{1, {}, sizeof(info)};
        count_info.infos.hostAddress = &info;
        Submit([&](VkCommandBuffer cmd) {
            ClearOutput(cmd, output);
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph_layout_, 0, 1, &set, 0, nullptr);
            vkCmdDispatchGraphAMDX(cmd, scratch.address, scratch.size, &count_info);
        });
        const std::vector<uint32_t> actual = ReadBack(output);
        const std::vector<uint32_t>& expected = variant.per_pixel ? pixel_reference : tile_reference;
        const Comparison c = Compare(actual, expected);
        std::printf("[ info ] classify_%s -> compose_%s: scratch %llu bytes (min %llu); %u unwritten, %u differing pixels, "
                    "%u beyond tolerance %d, max channel difference %d\n",
                    variant.classify, variant.compose, static_cast<unsigned long long>(scratch.size),
                    static_cast<unsigned long long>(scratch_size.minSize), c.unwritten,
                    c.differing, c.beyond_tolerance, kChannelTolerance, c.max_difference);
        EXPECT_EQ(c.unwritten, 0u);
        EXPECT_EQ(c.beyond_tolerance, 0u) << "max channel difference " << c.max_difference;
        if (!folder.empty()) {
            WritePng(folder + "/amd_gpu_dispatch_" + variant.classify + "_" + variant.compose + ".png", actual, kWidth, kHeight);
        }
    }
}

}  // namespace
}  // namespace execgraph::test
