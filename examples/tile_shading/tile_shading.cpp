// tile_shading: a complete VK_AMDX_shader_enqueue (execution graph) program, meant to be read from top to bottom.
//
// The graph is the "classify, then shade" shape that AMD's work-graph samples use, made small:
//
//     host payload {ring_width}
//            |
//            v
//     classify  (broadcasting, 16x16 workgroups = one per 16x16-pixel tile of a 256x256 image)
//            |   each tile picks a material 0..2 and sends one record {tile_x, tile_y, ring} to shade[material]
//            v
//     shade[0]  shade[1]  shade[2]   (one node array; one module, three specializations; 16x16 threads per tile)
//            |
//            v
//     storage buffer "pixels": 256x256 packed RGBA8
//
// Nothing on the host decides which tile goes to which shader: that decision is made on the GPU by classify, and the
// execution graph runtime launches the right consumer for every record. The program then reads the image back,
// compares it with the same computation done on the CPU, writes it as a PNG and prints one verification line.
//
// The node shaders are SPIR-V assembly in the shapes DXC emits (classify.spvasm and shade.spvasm next to this file,
// both commented line by line); the build assembles them into tile_shading_spirv.h.
//
// Run it through the execgraph layer on lavapipe (from the repository root, after building):
//   export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json NODEVICE_SELECT=1 VK_ADD_LAYER_PATH=build/layer
//   VK_INSTANCE_LAYERS=VK_LAYER_EXECGRAPH_shader_enqueue build/examples/tile_shading/execgraph_tile_shading [out.png [ref.png]]
// (scripts/demo.sh does all of this, building included.)
// Arguments: the PNG to write (default tile_shading.png) and, optionally, a second PNG for the CPU reference image.
// Exit status: 0 when every pixel matches the reference, 1 otherwise (including any Vulkan error on the way).
#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

// The AMDX types, enumerants and PFN typedefs. Debian bookworm's Vulkan headers (1.3.239) predate the extension's
// second revision; this header declares exactly what the current vulkan_beta.h declares for it.
#include "execgraph/vk_amdx_compat.h"
#include "png_writer.h"
// Generated at build time from classify.spvasm and shade.spvasm: tile_shading_spirv::kClassify and ::kShade.
#include "tile_shading_spirv.h"

namespace {

// ---------------------------------------------------------------------------------------------------------------------
// The problem: sizes, the host payload, the material colours, and the CPU reference.
// ---------------------------------------------------------------------------------------------------------------------

constexpr uint32_t kImageSize = 256;                        // pixels per side
constexpr uint32_t kTileSize = 16;                          // pixels per tile side = shade's LocalSize 16 16 1
constexpr uint32_t kTilesPerSide = kImageSize / kTileSize;  // 16 = classify's StaticNumWorkgroupsAMDX 16 16 1
constexpr uint32_t kPixelCount = kImageSize * kImageSize;
constexpr uint32_t kMaterialCount = 3;  // = PayloadNodeArraySizeAMDX of classify's output

// The one record the host sends to classify. Its layout must match ClassifyRecord in classify.spvasm (Offset 0).
struct ClassifyRecord {
    uint32_t ring_width;  // pixels per ring: ring = floor(|tile centre - image centre| / ring_width); must not be 0
};
static_assert(sizeof(ClassifyRecord) == 4);
constexpr ClassifyRecord kClassifyRecord{24};

// The record classify sends to shade[material]; only the shaders use it, the host needs it for the reference only.
struct TileRecord {
    uint32_t tile_x;
    uint32_t tile_y;
    uint32_t ring;
};

// Base colours 0x00BBGGRR, one per material: the value of shade.spvasm's specialization constant BaseColor (SpecId 0)
// for shade[0], shade[1] and shade[2].
constexpr std::array<uint32_t, kMaterialCount> kMaterialColors = {
    0x00d08a3au,  // steel blue
    0x0030a0f0u,  // orange
    0x0060c070u,  // green
};

// classify.spvasm, on the CPU: which material a tile gets, and the record it sends.
uint32_t ClassifyTile(uint32_t tile_x, uint32_t tile_y, uint32_t ring_width, TileRecord* record) {
    // Unsigned arithmetic on purpose, as in the shader: a negative difference wraps around and its square modulo 2^32
    // is still the exact square.
    const uint32_t dx = tile_x * kTileSize + kTileSize / 2 - kImageSize / 2;
    const uint32_t dy = tile_y * kTileSize + kTileSize / 2 - kImageSize / 2;
    const uint32_t d2 = dx * dx + dy * dy;
    uint32_t ring = 0;  // floor(sqrt(d2) / ring_width) without floating point, exactly as the shader's loop does it
    while ((ring + 1) * ring_width * (ring + 1) * ring_width <= d2) ++ring;
    const uint32_t checker = ((tile_x >> 3) ^ (tile_y >> 3)) & 1u;  // the quadrant
    *record = TileRecord{tile_x, tile_y, ring};
    return (ring + checker) % kMaterialCount;
}

// shade.spvasm, on the CPU: the packed RGBA8 value of one pixel of a tile.
uint32_t ShadePixel(uint32_t base_color, const TileRecord& tile, uint32_t local_x, uint32_t local_y) {
    uint32_t intensity = 255 - 4 * (local_x + local_y) - 32 * (tile.ring & 1u);
    if (local_x == 0 || local_y == 0) intensity >>= 1;
    const uint32_t red = ((base_color >> 0) & 255u) * intensity >> 8;
    const uint32_t green = ((base_color >> 8) & 255u) * intensity >> 8;
    const uint32_t blue = ((base_color >> 16) & 255u) * intensity >> 8;
    return red | (green << 8) | (blue << 16) | 0xff000000u;
}

// The whole graph on the CPU. Also counts how many tiles each material got, which the program prints.
std::vector<uint32_t> ReferenceImage(uint32_t ring_width, std::array<uint32_t, kMaterialCount>* tiles_per_material) {
    std::vector<uint32_t> pixels(kPixelCount, 0);
    *tiles_per_material = {};
    for (uint32_t tile_y = 0; tile_y < kTilesPerSide; ++tile_y) {
        for (uint32_t tile_x = 0; tile_x < kTilesPerSide; ++tile_x) {
            TileRecord tile;
            const uint32_t material = ClassifyTile(tile_x, tile_y, ring_width, &tile);
            ++(*tiles_per_material)[material];
            for (uint32_t local_y = 0; local_y < kTileSize; ++local_y) {
                for (uint32_t local_x = 0; local_x < kTileSize; ++local_x) {
                    const uint32_t x = tile_x * kTileSize + local_x;
                    const uint32_t y = tile_y * kTileSize + local_y;
                    pixels[y * kImageSize + x] = ShadePixel(kMaterialColors[material], tile, local_x, local_y);
                }
            }
        }
    }
    return pixels;
}


// ---------------------------------------------------------------------------------------------------------------------
// Error handling: every VkResult is checked; a failure throws with the name of the call, and main() reports it.
// ---------------------------------------------------------------------------------------------------------------------

const char* ResultName(VkResult result) {
    switch (result) {
        // clang-format off
        case VK_SUCCESS: return "VK_SUCCESS";
        case VK_NOT_READY: return "VK_NOT_READY";
        case VK_TIMEOUT: return "VK_TIMEOUT";
        case VK_INCOMPLETE: return "VK_INCOMPLETE";
        case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
        case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
        case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
        case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
        case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
        case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
        case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
        case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
        case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
        case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
        case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
        case VK_ERROR_UNKNOWN: return "VK_ERROR_UNKNOWN";
        case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
        case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
        case VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS: return "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS";
        case VK_PIPELINE_COMPILE_REQUIRED: return "VK_PIPELINE_COMPILE_REQUIRED";
        // clang-format on
        default:
            return "(unnamed VkResult)";
    }
}

class Failure : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

void Check(VkResult result, const char* call) {
    if (result != VK_SUCCESS) {
        throw Failure(std::string(call) + " returned " + ResultName(result) + " (" + std::to_string(static_cast<int>(result)) +
                      ")");
    }
}

void Require(bool condition, const std::string& message) {
    if (!condition) throw Failure(message);
}

// Messages from the layers (the execgraph layer reports pipeline-creation and dispatch problems this way, with ids such
// as EXECGRAPH-PIPELINE-CREATION) and from the driver go to stderr, so that they show next to the program's output.
// Warnings and errors are always shown; informational messages only from the execgraph layer (ids "EXECGRAPH-..."),
// because the loader sends a page of informational messages about its manifest search to every messenger.
VKAPI_ATTR VkBool32 VKAPI_CALL DebugMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                                            const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
    const bool from_execgraph = data->pMessageIdName != nullptr && std::strncmp(data->pMessageIdName, "EXECGRAPH-", 10) == 0;
    if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT && !from_execgraph) return VK_FALSE;
    const char* level = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT     ? "error"
                        : severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT ? "warning"
                                                                                      : "info";
    std::fprintf(stderr, "[vulkan %s] %s%s%s\n", level, data->pMessageIdName ? data->pMessageIdName : "",
                 data->pMessageIdName ? ": " : "", data->pMessage ? data->pMessage : "");
    return VK_FALSE;  // never abort the call that triggered the message
}

bool HasExtension(const std::vector<VkExtensionProperties>& extensions, const char* name) {
    for (const VkExtensionProperties& extension : extensions) {
        if (std::strcmp(extension.extensionName, name) == 0) return true;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------------------------------
// The program. Members are created in the order below and destroyed in reverse by the destructor, also when a step
// throws, so an error anywhere still shuts Vulkan down cleanly.
// ---------------------------------------------------------------------------------------------------------------------

// A buffer with its memory, its device address and (host-visible memory) its mapping.
struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    VkDeviceAddress address = 0;
    void* mapped = nullptr;
};

class TileShadingExample {
  public:
    TileShadingExample() = default;
    TileShadingExample(const TileShadingExample&) = delete;
    TileShadingExample& operator=(const TileShadingExample&) = delete;
    ~TileShadingExample();

    void CreateInstance();
    void PickPhysicalDevice();
    void CreateDevice();
    void LoadAmdxEntryPoints();
    void CreateResources();
    void CreateExecutionGraph();
    void CreateScratch();
    void RecordAndSubmit();
    std::vector<uint32_t> ReadBack() const;

  private:
    // Creates into *buffer (a member), so that whatever exists when a step fails is destroyed by the destructor.
    void CreateBuffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags properties, Buffer* buffer);
    void DestroyBuffer(Buffer* buffer);
    uint32_t FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags properties) const;
    VkShaderModule CreateShaderModule(const uint32_t* words, size_t word_count);

    VkInstance instance_ = VK_NULL_HANDLE;
    bool debug_utils_ = false;  // VK_EXT_debug_utils enabled on the instance
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger_ = nullptr;
    VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;

    // The seven VK_AMDX_shader_enqueue commands. They are device commands that the loader does not export, so every
    // application gets them from vkGetDeviceProcAddr (this example uses five).
    PFN_vkCreateExecutionGraphPipelinesAMDX vkCreateExecutionGraphPipelinesAMDX = nullptr;
    PFN_vkGetExecutionGraphPipelineScratchSizeAMDX vkGetExecutionGraphPipelineScratchSizeAMDX = nullptr;
    PFN_vkGetExecutionGraphPipelineNodeIndexAMDX vkGetExecutionGraphPipelineNodeIndexAMDX = nullptr;
    PFN_vkCmdInitializeGraphScratchMemoryAMDX vkCmdInitializeGraphScratchMemoryAMDX = nullptr;
    PFN_vkCmdDispatchGraphAMDX vkCmdDispatchGraphAMDX = nullptr;
    PFN_vkCmdDispatchGraphIndirectAMDX vkCmdDispatchGraphIndirectAMDX = nullptr;
    PFN_vkCmdDispatchGraphIndirectCountAMDX vkCmdDispatchGraphIndirectCountAMDX = nullptr;

    Buffer pixels_;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
    VkDescriptorSet descriptor_set_ = VK_NULL_HANDLE;
    VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
    VkShaderModule classify_module_ = VK_NULL_HANDLE;
    VkShaderModule shade_module_ = VK_NULL_HANDLE;
    VkPipeline graph_ = VK_NULL_HANDLE;
    Buffer scratch_;
    VkCommandPool command_pool_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
};

TileShadingExample::~TileShadingExample() {
    if (device_ != VK_NULL_HANDLE) {
        vkDeviceWaitIdle(device_);  // nothing may still be using what is destroyed below
        if (fence_ != VK_NULL_HANDLE) vkDestroyFence(device_, fence_, nullptr);
        if (command_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, command_pool_, nullptr);
        DestroyBuffer(&scratch_);
        // An execution graph pipeline is an ordinary VkPipeline once created: vkDestroyPipeline destroys it.
        if (graph_ != VK_NULL_HANDLE) vkDestroyPipeline(device_, graph_, nullptr);
        if (shade_module_ != VK_NULL_HANDLE) vkDestroyShaderModule(device_, shade_module_, nullptr);
        if (classify_module_ != VK_NULL_HANDLE) vkDestroyShaderModule(device_, classify_module_, nullptr);
        if (pipeline_layout_ != VK_NULL_HANDLE) vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
        if (descriptor_pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
        if (set_layout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
        DestroyBuffer(&pixels_);
        vkDestroyDevice(device_, nullptr);
    }
    if (messenger_ != VK_NULL_HANDLE) destroy_messenger_(instance_, messenger_, nullptr);
    if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

// Step 1: the instance. Nothing AMDX-specific here: VK_AMDX_shader_enqueue is a *device* extension. The instance asks
// for Vulkan 1.3 (the execgraph layer emulates execution graphs with 1.3 compute features) and enables
// VK_EXT_debug_utils when it is available: the messenger makes the layer's explanations of any failure visible, and
// with the extension enabled the layer also labels every graph dispatch, level and node for RenderDoc or Nsight
// (docs/debugging.md).
void TileShadingExample::CreateInstance() {
    uint32_t count = 0;
    Check(vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr), "vkEnumerateInstanceExtensionProperties");
    std::vector<VkExtensionProperties> extensions(count);
    Check(vkEnumerateInstanceExtensionProperties(nullptr, &count, extensions.data()), "vkEnumerateInstanceExtensionProperties");
    debug_utils_ = HasExtension(extensions, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    const bool debug_utils = debug_utils_;

    VkApplicationInfo application{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    application.pApplicationName = "execgraph tile_shading example";
    application.apiVersion = VK_API_VERSION_1_3;

    VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger_info.pfnUserCallback = DebugMessage;

    const char* enabled_extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstanceCreateInfo create_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    create_info.pApplicationInfo = &application;
    if (debug_utils) {
        // Chained here as well, the messenger also receives the messages sent while vkCreateInstance itself runs.
        create_info.pNext = &messenger_info;
        create_info.enabledExtensionCount = 1;
        create_info.ppEnabledExtensionNames = &enabled_extension;
    }
    Check(vkCreateInstance(&create_info, nullptr, &instance_), "vkCreateInstance");

    if (debug_utils) {
        auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
        destroy_messenger_ = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
        Require(create_messenger != nullptr && destroy_messenger_ != nullptr, "VK_EXT_debug_utils entry points are missing");
        Check(create_messenger(instance_, &messenger_info, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
    } else {
        std::fprintf(stderr, "note: VK_EXT_debug_utils is not available; the layer prints its warnings and errors to stderr\n");
    }
}

// Step 2: a physical device that advertises VK_AMDX_shader_enqueue, supports the shaderEnqueue feature and has a
// compute queue. With the execgraph layer enabled, every Vulkan 1.3 device that can run the emulation qualifies.
void TileShadingExample::PickPhysicalDevice() {
    uint32_t count = 0;
    Check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(count);
    Check(vkEnumeratePhysicalDevices(instance_, &count, devices.data()), "vkEnumeratePhysicalDevices");
    Require(count > 0, "no Vulkan device found (is a driver installed? on CPU-only machines: lavapipe, mesa-vulkan-drivers)");

    for (VkPhysicalDevice device : devices) {
        VkPhysicalDeviceProperties properties;
        vkGetPhysicalDeviceProperties(device, &properties);

        uint32_t extension_count = 0;
        Check(vkEnumerateDeviceExtensionProperties(device, nullptr, &extension_count, nullptr),
              "vkEnumerateDeviceExtensionProperties");
        std::vector<VkExtensionProperties> extensions(extension_count);
        Check(vkEnumerateDeviceExtensionProperties(device, nullptr, &extension_count, extensions.data()),
              "vkEnumerateDeviceExtensionProperties");
        if (!HasExtension(extensions, VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME)) {
            std::printf("skipping %s: VK_AMDX_shader_enqueue is not advertised\n", properties.deviceName);
            continue;
        }

        // Advertising the extension is not enough: the feature bit says whether execution graphs can be used.
        // (shaderMeshEnqueue, mesh nodes, is a separate feature this example does not need.)
        VkPhysicalDeviceShaderEnqueueFeaturesAMDX enqueue_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX};
        VkPhysicalDeviceVulkan12Features vulkan12_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                           &enqueue_features};
        VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vulkan12_features};
        vkGetPhysicalDeviceFeatures2(device, &features);
        if (!enqueue_features.shaderEnqueue || !vulkan12_features.bufferDeviceAddress) {
            std::printf("skipping %s: shaderEnqueue=%u bufferDeviceAddress=%u\n", properties.deviceName,
                        enqueue_features.shaderEnqueue, vulkan12_features.bufferDeviceAddress);
            continue;
        }

        uint32_t family_count = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, nullptr);
        std::vector<VkQueueFamilyProperties> families(family_count);
        vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, families.data());
        for (uint32_t family = 0; family < family_count; ++family) {
            // Execution graphs are dispatched on queues that support compute.
            if (families[family].queueFlags & VK_QUEUE_COMPUTE_BIT) {
                physical_device_ = device;
                queue_family_ = family;
                break;
            }
        }
        if (physical_device_ != VK_NULL_HANDLE) {
            std::printf("device: %s (Vulkan %u.%u.%u)\n", properties.deviceName, VK_API_VERSION_MAJOR(properties.apiVersion),
                        VK_API_VERSION_MINOR(properties.apiVersion), VK_API_VERSION_PATCH(properties.apiVersion));
            break;
        }
    }
    Require(physical_device_ != VK_NULL_HANDLE,
            "no device supports VK_AMDX_shader_enqueue; enable the layer: VK_INSTANCE_LAYERS=VK_LAYER_EXECGRAPH_shader_enqueue "
            "(and VK_ADD_LAYER_PATH=<build>/layer when it is not installed)");

    // The limits of the implementation, e.g. how deep a graph may be and how large payloads may be.
    VkPhysicalDeviceShaderEnqueuePropertiesAMDX limits{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_PROPERTIES_AMDX};
    VkPhysicalDeviceProperties2 properties2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &limits};
    vkGetPhysicalDeviceProperties2(physical_device_, &properties2);
    std::printf("execution graph limits: depth %u, payload size %u bytes, %u payloads per output\n", limits.maxExecutionGraphDepth,
                limits.maxExecutionGraphShaderPayloadSize, limits.maxExecutionGraphShaderPayloadCount);
    Require(sizeof(TileRecord) <= limits.maxExecutionGraphShaderPayloadSize, "the device's payload size limit is too small");
}

// Step 3: the device, with VK_AMDX_shader_enqueue enabled, the shaderEnqueue feature turned on, and
// bufferDeviceAddress: the scratch memory of an execution graph is passed to the commands by device address.
void TileShadingExample::CreateDevice() {
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = queue_family_;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;

    VkPhysicalDeviceShaderEnqueueFeaturesAMDX enqueue_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ENQUEUE_FEATURES_AMDX};
    enqueue_features.shaderEnqueue = VK_TRUE;
    VkPhysicalDeviceVulkan12Features vulkan12_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &enqueue_features};
    vulkan12_features.bufferDeviceAddress = VK_TRUE;

    const char* extension = VK_AMDX_SHADER_ENQUEUE_EXTENSION_NAME;
    VkDeviceCreateInfo create_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &vulkan12_features};
    create_info.queueCreateInfoCount = 1;
    create_info.pQueueCreateInfos = &queue_info;
    create_info.enabledExtensionCount = 1;
    create_info.ppEnabledExtensionNames = &extension;
    Check(vkCreateDevice(physical_device_, &create_info, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
}

// Step 4: the AMDX commands, from vkGetDeviceProcAddr. A null pointer means the extension was not really enabled.
void TileShadingExample::LoadAmdxEntryPoints() {
    auto load = [this](const char* name) {
        PFN_vkVoidFunction function = vkGetDeviceProcAddr(device_, name);
        Require(function != nullptr, std::string("vkGetDeviceProcAddr returned NULL for ") + name);
        return function;
    };
    vkCreateExecutionGraphPipelinesAMDX =
        reinterpret_cast<PFN_vkCreateExecutionGraphPipelinesAMDX>(load("vkCreateExecutionGraphPipelinesAMDX"));
    vkGetExecutionGraphPipelineScratchSizeAMDX =
        reinterpret_cast<PFN_vkGetExecutionGraphPipelineScratchSizeAMDX>(load("vkGetExecutionGraphPipelineScratchSizeAMDX"));
    vkGetExecutionGraphPipelineNodeIndexAMDX =
        reinterpret_cast<PFN_vkGetExecutionGraphPipelineNodeIndexAMDX>(load("vkGetExecutionGraphPipelineNodeIndexAMDX"));
    vkCmdInitializeGraphScratchMemoryAMDX =
        reinterpret_cast<PFN_vkCmdInitializeGraphScratchMemoryAMDX>(load("vkCmdInitializeGraphScratchMemoryAMDX"));
    vkCmdDispatchGraphAMDX = reinterpret_cast<PFN_vkCmdDispatchGraphAMDX>(load("vkCmdDispatchGraphAMDX"));
    // Not used below, but part of the extension: dispatches whose payloads (or whose count) live in device memory.
    vkCmdDispatchGraphIndirectAMDX = reinterpret_cast<PFN_vkCmdDispatchGraphIndirectAMDX>(load("vkCmdDispatchGraphIndirectAMDX"));
    vkCmdDispatchGraphIndirectCountAMDX =
        reinterpret_cast<PFN_vkCmdDispatchGraphIndirectCountAMDX>(load("vkCmdDispatchGraphIndirectCountAMDX"));
}

uint32_t TileShadingExample::FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags properties) const {
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory);
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
        if ((type_bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & properties) == properties) return i;
    }
    throw Failure("no memory type with property flags " + std::to_string(properties));
}

void TileShadingExample::CreateBuffer(VkDeviceSize size, VkBufferUsageFlags usage, VkMemoryPropertyFlags properties,
                                      Buffer* buffer) {
    Buffer& result = *buffer;
    result.size = size;
    VkBufferCreateInfo create_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create_info.size = size;
    create_info.usage = usage;
    create_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    Check(vkCreateBuffer(device_, &create_info, nullptr, &result.buffer), "vkCreateBuffer");

    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(device_, result.buffer, &requirements);
    // Buffers used through a device address need memory allocated with VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT.
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.pNext = (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) ? &flags : nullptr;
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = FindMemoryType(requirements.memoryTypeBits, properties);
    Check(vkAllocateMemory(device_, &allocate, nullptr, &result.memory), "vkAllocateMemory");
    Check(vkBindBufferMemory(device_, result.buffer, result.memory, 0), "vkBindBufferMemory");

    if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) {
        VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
        address_info.buffer = result.buffer;
        result.address = vkGetBufferDeviceAddress(device_, &address_info);
    }
    if (properties & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        Check(vkMapMemory(device_, result.memory, 0, VK_WHOLE_SIZE, 0, &result.mapped), "vkMapMemory");
    }
}

void TileShadingExample::DestroyBuffer(Buffer* buffer) {
    if (buffer->buffer != VK_NULL_HANDLE) vkDestroyBuffer(device_, buffer->buffer, nullptr);
    if (buffer->memory != VK_NULL_HANDLE) vkFreeMemory(device_, buffer->memory, nullptr);  // also unmaps
    *buffer = Buffer{};
}

VkShaderModule TileShadingExample::CreateShaderModule(const uint32_t* words, size_t word_count) {
    // Node shaders are ordinary shader modules: the AMDX content is all inside the SPIR-V.
    VkShaderModuleCreateInfo create_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    create_info.codeSize = word_count * sizeof(uint32_t);
    create_info.pCode = words;
    VkShaderModule module = VK_NULL_HANDLE;
    Check(vkCreateShaderModule(device_, &create_info, nullptr, &module), "vkCreateShaderModule");
    return module;
}

// Step 5: the resources the node shaders use. Nothing here is specific to execution graphs: the pixel buffer is a
// storage buffer in a descriptor set, and the pipeline layout is the one every node of the graph shares. Node shaders
// are compute shaders, so the bindings are visible to VK_SHADER_STAGE_COMPUTE_BIT.
void TileShadingExample::CreateResources() {
    // Host-visible so that the result can be read directly; zeroed so that a tile no shader wrote shows up as a
    // transparent black hole in the PNG and as a mismatch in the verification.
    CreateBuffer(kPixelCount * sizeof(uint32_t), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, &pixels_);
    std::memset(pixels_.mapped, 0, pixels_.size);

    const VkDescriptorSetLayoutBinding binding{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo set_layout_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_layout_info.bindingCount = 1;
    set_layout_info.pBindings = &binding;
    Check(vkCreateDescriptorSetLayout(device_, &set_layout_info, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");

    const VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &pool_size;
    Check(vkCreateDescriptorPool(device_, &pool_info, nullptr, &descriptor_pool_), "vkCreateDescriptorPool");

    VkDescriptorSetAllocateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    set_info.descriptorPool = descriptor_pool_;
    set_info.descriptorSetCount = 1;
    set_info.pSetLayouts = &set_layout_;
    Check(vkAllocateDescriptorSets(device_, &set_info, &descriptor_set_), "vkAllocateDescriptorSets");

    const VkDescriptorBufferInfo buffer_info{pixels_.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = descriptor_set_;
    write.dstBinding = 0;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &buffer_info;
    vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);

    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout_;
    Check(vkCreatePipelineLayout(device_, &layout_info, nullptr, &pipeline_layout_), "vkCreatePipelineLayout");

    VkCommandPoolCreateInfo pool_create{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_create.queueFamilyIndex = queue_family_;
    Check(vkCreateCommandPool(device_, &pool_create, nullptr, &command_pool_), "vkCreateCommandPool");
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    Check(vkCreateFence(device_, &fence_info, nullptr, &fence_), "vkCreateFence");
}

// Step 6: the execution graph pipeline. Every node is one VkPipelineShaderStageCreateInfo (stage COMPUTE). A node's
// name is VkPipelineShaderStageNodeCreateInfoAMDX::pName, or the entry point name when that structure is absent or
// pName is NULL; its index within the name is ::index, or the module's ShaderIndexAMDX when index is
// VK_SHADER_INDEX_UNUSED_AMDX. Outputs find their consumers by name and index when the graph is created: classify's
// output "shade" (PayloadNodeArraySizeAMDX 3) needs the nodes ("shade", 0), ("shade", 1) and ("shade", 2).
void TileShadingExample::CreateExecutionGraph() {
    classify_module_ = CreateShaderModule(tile_shading_spirv::kClassify, std::size(tile_shading_spirv::kClassify));
    shade_module_ = CreateShaderModule(tile_shading_spirv::kShade, std::size(tile_shading_spirv::kShade));

    // One specialization per material: SpecId 0 (BaseColor) = that material's colour.
    const VkSpecializationMapEntry base_color_entry{0, 0, sizeof(uint32_t)};
    std::array<VkSpecializationInfo, kMaterialCount> specializations{};
    std::array<VkPipelineShaderStageNodeCreateInfoAMDX, kMaterialCount> shade_nodes{};
    std::array<VkPipelineShaderStageCreateInfo, 1 + kMaterialCount> stages{};

    // classify: no VkPipelineShaderStageNodeCreateInfoAMDX, so the node is ("classify", ShaderIndexAMDX = 0).
    stages[0] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    stages[0].stage = VK_SHADER_STAGE_COMPUTE_BIT;
    stages[0].module = classify_module_;
    stages[0].pName = "classify";

    // shade[0..2]: the same module and entry point three times, with different node indices and specializations.
    for (uint32_t material = 0; material < kMaterialCount; ++material) {
        specializations[material].mapEntryCount = 1;
        specializations[material].pMapEntries = &base_color_entry;
        specializations[material].dataSize = sizeof(uint32_t);
        specializations[material].pData = &kMaterialColors[material];

        shade_nodes[material] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX};
        shade_nodes[material].pName = "shade";
        shade_nodes[material].index = material;

        VkPipelineShaderStageCreateInfo& stage = stages[1 + material];
        stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, &shade_nodes[material]};
        stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        stage.module = shade_module_;
        stage.pName = "shade";  // the OpEntryPoint name in the module
        stage.pSpecializationInfo = &specializations[material];
    }

    VkExecutionGraphPipelineCreateInfoAMDX create_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_CREATE_INFO_AMDX};
    create_info.stageCount = static_cast<uint32_t>(stages.size());
    create_info.pStages = stages.data();
    create_info.pLibraryInfo = nullptr;  // graphs can also be assembled from pipeline libraries; not needed here
    create_info.layout = pipeline_layout_;
    create_info.basePipelineHandle = VK_NULL_HANDLE;
    create_info.basePipelineIndex = -1;
    // On failure the layer explains why (unknown output node, unsupported SPIR-V, ...) through the debug messenger.
    Check(vkCreateExecutionGraphPipelinesAMDX(device_, VK_NULL_HANDLE, 1, &create_info, nullptr, &graph_),
          "vkCreateExecutionGraphPipelinesAMDX");
    std::printf("execution graph created: classify -> shade[0..%u]\n", kMaterialCount - 1);

    // Optional: a name for debuggers. The execgraph layer puts it in the label of every dispatch of this graph
    // (vkCmdDispatchGraphAMDX "tile_shading" (graph 1)) and names the lowered pipelines after their nodes,
    // tile_shading/shade[2] etc. (nodes made from one module with one specialization share a pipeline, named after the
    // first with " and N more nodes"; the shade[i] here differ in their specialization, so each has its own).
    if (debug_utils_) {
        auto set_name =
            reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(vkGetDeviceProcAddr(device_, "vkSetDebugUtilsObjectNameEXT"));
        VkDebugUtilsObjectNameInfoEXT name{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
        name.objectType = VK_OBJECT_TYPE_PIPELINE;
        name.objectHandle = reinterpret_cast<uint64_t>(graph_);
        name.pObjectName = "tile_shading";
        if (set_name != nullptr) Check(set_name(device_, &name), "vkSetDebugUtilsObjectNameEXT");
    }
}

// Step 7: scratch memory. The graph's runtime keeps its queues of pending payloads in memory the application provides.
// The pipeline reports a minimum size (enough to run the graph at all), a maximum (beyond which more memory does not
// help) and a granularity for sizes in between. The buffer needs the EXECUTION_GRAPH_SCRATCH usage and a device
// address; vkCmdInitializeGraphScratchMemoryAMDX requires that address to be a multiple of 64 (keep it so when you
// sub-allocate scratch from a larger buffer). Initialization and dispatches read and write scratch as compute-shader
// storage accesses, so two dispatches sharing a scratch range must be ordered by a barrier, like step 8a does.
void TileShadingExample::CreateScratch() {
    VkExecutionGraphPipelineScratchSizeAMDX size_info{VK_STRUCTURE_TYPE_EXECUTION_GRAPH_PIPELINE_SCRATCH_SIZE_AMDX};
    Check(vkGetExecutionGraphPipelineScratchSizeAMDX(device_, graph_, &size_info), "vkGetExecutionGraphPipelineScratchSizeAMDX");
    std::printf("scratch size: min %llu, max %llu, granularity %llu bytes\n", static_cast<unsigned long long>(size_info.minSize),
                static_cast<unsigned long long>(size_info.maxSize), static_cast<unsigned long long>(size_info.sizeGranularity));
    Require(size_info.minSize <= size_info.maxSize, "scratch size query returned minSize > maxSize");

    // Take as much as the graph can use, within a budget of 16 MiB: min + a whole number of granules.
    constexpr VkDeviceSize kBudget = 16ull << 20;
    VkDeviceSize size = size_info.minSize;
    if (size_info.maxSize > size && size < kBudget) {
        VkDeviceSize extra = std::min(size_info.maxSize, kBudget) - size;
        if (size_info.sizeGranularity > 0) extra -= extra % size_info.sizeGranularity;
        size += extra;
    }
    if (size == 0) size = 4;  // a valid buffer even if the graph needs no scratch at all

    // Device-local: only the GPU touches scratch.
    CreateBuffer(size, VK_BUFFER_USAGE_EXECUTION_GRAPH_SCRATCH_BIT_AMDX | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &scratch_);
    Require(scratch_.address % 64 == 0, "the scratch address is not a multiple of 64");
    std::printf("scratch buffer: %llu bytes at device address 0x%llx\n", static_cast<unsigned long long>(scratch_.size),
                static_cast<unsigned long long>(scratch_.address));
}

// Step 8: record the work and run it.
void TileShadingExample::RecordAndSubmit() {
    // Host dispatches address a node by its *index* in the graph, which the pipeline maps from (name, index).
    VkPipelineShaderStageNodeCreateInfoAMDX classify_node{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_NODE_CREATE_INFO_AMDX};
    classify_node.pName = "classify";
    classify_node.index = 0;
    uint32_t classify_index = 0;
    Check(vkGetExecutionGraphPipelineNodeIndexAMDX(device_, graph_, &classify_node, &classify_index),
          "vkGetExecutionGraphPipelineNodeIndexAMDX(\"classify\", 0)");

    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = command_pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    Check(vkAllocateCommandBuffers(device_, &allocate, &cmd), "vkAllocateCommandBuffers");  // freed with the pool
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    Check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");

    // 8a. Scratch must be initialized for this graph before its first dispatch (and again whenever anything else wrote
    //     to it). The initialization reads and writes scratch as compute-shader storage accesses, and so does the
    //     dispatch: a compute -> compute barrier orders them.
    vkCmdInitializeGraphScratchMemoryAMDX(cmd, graph_, scratch_.address, scratch_.size);
    VkMemoryBarrier scratch_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    scratch_barrier.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    scratch_barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &scratch_barrier, 0,
                         nullptr, 0, nullptr);

    // 8b. Bind the graph and its descriptor set at the execution graph bind point (not the compute one).
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, graph_);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_EXECUTION_GRAPH_AMDX, pipeline_layout_, 0, 1, &descriptor_set_, 0, nullptr);

    // 8c. Dispatch: a list of (node index, payloads) entries; here one entry with one payload for classify. With
    //     vkCmdDispatchGraphAMDX both the list and the payloads are host memory, read when the command is recorded,
    //     so they can live on the stack. classify's fixed grid turns the one payload into 16x16 workgroups, and
    //     everything after that (the 256 records to shade[], their workgroups) is created on the GPU.
    VkDispatchGraphInfoAMDX dispatch{};
    dispatch.nodeIndex = classify_index;
    dispatch.payloadCount = 1;
    dispatch.payloads.hostAddress = &kClassifyRecord;
    dispatch.payloadStride = sizeof(ClassifyRecord);
    VkDispatchGraphCountInfoAMDX count_info{};
    count_info.count = 1;
    count_info.infos.hostAddress = &dispatch;
    count_info.stride = sizeof(VkDispatchGraphInfoAMDX);
    vkCmdDispatchGraphAMDX(cmd, scratch_.address, scratch_.size, &count_info);

    // 8d. Make the shaders' writes to the pixel buffer visible to the host, which reads it after the fence.
    VkMemoryBarrier host_barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    host_barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    host_barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host_barrier, 0, nullptr, 0,
                         nullptr);
    Check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");

    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    Check(vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
    Check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, 60ull * 1000 * 1000 * 1000), "vkWaitForFences");
}

// Step 9: read the result. After the fence, the pixel buffer holds what the shade nodes wrote. Scratch is never read by
// the application: its contents belong to the implementation.
std::vector<uint32_t> TileShadingExample::ReadBack() const {
    // The memory is HOST_COHERENT, so no vkInvalidateMappedMemoryRanges is needed after the host barrier and the fence.
    const uint32_t* mapped = static_cast<const uint32_t*>(pixels_.mapped);
    return std::vector<uint32_t>(mapped, mapped + kPixelCount);
}

// Compares with the reference; prints up to `max_reports` differing pixels with the tile and material they belong to.
uint32_t CountMatches(const std::vector<uint32_t>& gpu, const std::vector<uint32_t>& reference, uint32_t max_reports) {
    uint32_t matches = 0, reported = 0;
    for (uint32_t i = 0; i < kPixelCount; ++i) {
        if (gpu[i] == reference[i]) {
            ++matches;
            continue;
        }
        if (reported++ < max_reports) {
            const uint32_t x = i % kImageSize, y = i / kImageSize;
            TileRecord tile;
            const uint32_t material = ClassifyTile(x / kTileSize, y / kTileSize, kClassifyRecord.ring_width, &tile);
            std::fprintf(stderr, "mismatch at pixel (%u, %u), tile (%u, %u), material %u: got 0x%08x, expected 0x%08x\n", x, y,
                         tile.tile_x, tile.tile_y, material, gpu[i], reference[i]);
        }
    }
    return matches;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string png_path = argc > 1 ? argv[1] : "tile_shading.png";
    const std::string reference_png_path = argc > 2 ? argv[2] : "";

    std::array<uint32_t, kMaterialCount> tiles_per_material{};
    const std::vector<uint32_t> reference = ReferenceImage(kClassifyRecord.ring_width, &tiles_per_material);
    if (!reference_png_path.empty()) {
        if (!execgraph::examples::WritePng(reference_png_path, reference, kImageSize, kImageSize)) {
            std::fprintf(stderr, "error: cannot write %s\n", reference_png_path.c_str());
            return 1;
        }
        std::printf("wrote %s (the CPU reference)\n", reference_png_path.c_str());
    }

    std::vector<uint32_t> image;
    try {
        TileShadingExample example;
        example.CreateInstance();
        example.PickPhysicalDevice();
        example.CreateDevice();
        example.LoadAmdxEntryPoints();
        example.CreateResources();
        example.CreateExecutionGraph();
        example.CreateScratch();
        example.RecordAndSubmit();
        image = example.ReadBack();
    } catch (const Failure& failure) {
        std::fprintf(stderr, "error: %s\n", failure.what());
        std::printf("verification: FAILED, the graph did not run (%s)\n", failure.what());
        return 1;
    }
    std::printf("classify sent %u tiles to shade[0], %u to shade[1], %u to shade[2] (per the CPU reference)\n",
                tiles_per_material[0], tiles_per_material[1], tiles_per_material[2]);

    // Write the image before judging it: a wrong image is easiest to understand by looking at it.
    const bool png_ok = execgraph::examples::WritePng(png_path, image, kImageSize, kImageSize);
    if (png_ok) {
        std::printf("wrote %s (%ux%u, the image the execution graph produced)\n", png_path.c_str(), kImageSize, kImageSize);
    } else {
        std::fprintf(stderr, "error: cannot write %s\n", png_path.c_str());
    }

    const uint32_t matches = CountMatches(image, reference, 8);
    const bool ok = matches == kPixelCount;
    std::printf("verification: %s, %u of %u pixels match the CPU reference\n", ok ? "OK" : "FAILED", matches, kPixelCount);
    return ok && png_ok ? 0 : 1;
}
