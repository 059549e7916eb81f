// What the driver's compiler made of compute shaders: the statistics of VK_KHR_pipeline_executable_properties (on NVIDIA
// 580: register count, binary size, stack, local and shared memory) for SPIR-V files, such as the lowered nodes that the
// layer's dump_shaders_path writes, and for the shaders this project builds in (the workload suite's hand-written
// baseline passes and the scheduler's meta shaders). Nsight Compute does not profile Vulkan on the machines these figures
// come from; a lowered node's register count against its baseline pass's is the first thing to compare when the graph is
// slower (docs/performance.md, "Where the time still goes").
//
// Every pipeline is created with one layout: set 0 holds eight storage buffers and the push-constant range is the
// device's whole maxPushConstantsSize, which covers the lowered nodes and passes of this project (a shader whose
// resources do not fit it fails with a message and the others go on). Specialization constants keep their defaults.
//
// Usage: execgraph_pipeline_stats [--builtin] [--json PATH] [FILE.spv ...]
// Exit status 0 when every pipeline was created and reported, or when the device does not have the extension (said on
// stdout: lavapipe 22.3 does not); 1 when there is no device, a file cannot be read or a pipeline cannot be created.
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench_json.h"
#include "execgraph/meta_shaders.h"

namespace execgraph::bench {
namespace {

const uint32_t kBaseChain[] = {
#include "base_chain.inc"
};
const uint32_t kBaseClassify[] = {
#include "base_classify.inc"
};
const uint32_t kBaseShade[] = {
#include "base_shade.inc"
};
const uint32_t kBaseRecursion[] = {
#include "base_recursion.inc"
};
const uint32_t kBasePayloadConsume[] = {
#include "base_payload_consume.inc"
};
const uint32_t kBaseAppendProduce[] = {
#include "base_append_produce.inc"
};
const uint32_t kBaseRasterSetup[] = {
#include "base_raster_setup.inc"
};

struct Shader {
    std::string name;
    std::vector<uint32_t> words;
};

struct Statistic {
    std::string name;
    double value = 0;
};

std::vector<Shader> BuiltinShaders() {
    auto words = [](const uint32_t* begin, size_t count) { return std::vector<uint32_t>(begin, begin + count); };
#define EXECGRAPH_ARRAY(a) words(a, sizeof(a) / sizeof(a[0]))
    return {
        {"baseline/base_chain", EXECGRAPH_ARRAY(kBaseChain)},
        {"baseline/base_classify", EXECGRAPH_ARRAY(kBaseClassify)},
        {"baseline/base_shade", EXECGRAPH_ARRAY(kBaseShade)},
        {"baseline/base_recursion", EXECGRAPH_ARRAY(kBaseRecursion)},
        {"baseline/base_payload_consume", EXECGRAPH_ARRAY(kBasePayloadConsume)},
        {"baseline/base_append_produce", EXECGRAPH_ARRAY(kBaseAppendProduce)},
        {"baseline/base_raster_setup", EXECGRAPH_ARRAY(kBaseRasterSetup)},
        {"meta/enqueue_entries", words(meta_shaders::kEnqueueEntriesSpv, meta_shaders::kEnqueueEntriesSpvWords)},
        {"meta/level", words(meta_shaders::kLevelSpv, meta_shaders::kLevelSpvWords)},
        {"meta/prepare", words(meta_shaders::kPrepareSpv, meta_shaders::kPrepareSpvWords)},
        {"meta/scatter", words(meta_shaders::kScatterSpv, meta_shaders::kScatterSpvWords)},
        {"meta/write_args", words(meta_shaders::kWriteArgsSpv, meta_shaders::kWriteArgsSpvWords)},
        {"meta/finish", words(meta_shaders::kFinishSpv, meta_shaders::kFinishSpvWords)},
    };
#undef EXECGRAPH_ARRAY
}

bool ReadSpirv(const char* path, std::vector<uint32_t>* words) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return false;
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (bytes.empty() || bytes.size() % 4 != 0) return false;
    words->resize(bytes.size() / 4);
    std::memcpy(words->data(), bytes.data(), bytes.size());
    return true;
}

double StatisticValue(const VkPipelineExecutableStatisticKHR& statistic) {
    switch (statistic.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
            return statistic.value.b32;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
            return double(statistic.value.i64);
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
            return double(statistic.value.u64);
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
            return statistic.value.f64;
        default:
            return 0;
    }
}

class StatsDevice {
  public:
    ~StatsDevice() {
        if (device_ != VK_NULL_HANDLE) {
            vkDestroyPipelineLayout(device_, layout_, nullptr);
            vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
            vkDestroyDevice(device_, nullptr);
        }
        if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
    }

    // "" on success; otherwise why there is no device to measure with. *supported says whether it has the extension.
    std::string Create(bool* supported) {
        *supported = false;
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.apiVersion = VK_API_VERSION_1_3;
        VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        instance_info.pApplicationInfo = &app;
        if (vkCreateInstance(&instance_info, nullptr, &instance_) != VK_SUCCESS) return "vkCreateInstance failed";
        uint32_t count = 0;
        vkEnumeratePhysicalDevices(instance_, &count, nullptr);
        if (count == 0) return "no Vulkan device";
        std::vector<VkPhysicalDevice> devices(count);
        vkEnumeratePhysicalDevices(instance_, &count, devices.data());
        const VkPhysicalDevice physical = devices[0];
        VkPhysicalDeviceProperties properties;
        vkGetPhysicalDeviceProperties(physical, &properties);
        device_name_ = properties.deviceName;
        push_constant_bytes_ = properties.limits.maxPushConstantsSize;

        uint32_t extension_count = 0;
        vkEnumerateDeviceExtensionProperties(physical, nullptr, &extension_count, nullptr);
        std::vector<VkExtensionProperties> extensions(extension_count);
        vkEnumerateDeviceExtensionProperties(physical, nullptr, &extension_count, extensions.data());
        for (const VkExtensionProperties& extension : extensions) {
            *supported |= std::strcmp(extension.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0;
        }
        if (!*supported) return "";

        // What the lowered nodes and the meta shaders declare (docs/design.md, "Requirements").
        VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
        executable.pipelineExecutableInfo = VK_TRUE;
        VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &executable};
        VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &features12};
        VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &features11};
        vkGetPhysicalDeviceFeatures2(physical, &features);  // turn on whatever the device has
        executable.pipelineExecutableInfo = VK_TRUE;
        float priority = 1;
        VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        queue.queueCount = 1;
        queue.pQueuePriorities = &priority;
        const char* extension_name = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
        device_info.queueCreateInfoCount = 1;
        device_info.pQueueCreateInfos = &queue;
        device_info.enabledExtensionCount = 1;
        device_info.ppEnabledExtensionNames = &extension_name;
        if (vkCreateDevice(physical, &device_info, nullptr, &device_) != VK_SUCCESS) return "vkCreateDevice failed";
        get_statistics_ = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
            vkGetDeviceProcAddr(device_, "vkGetPipelineExecutableStatisticsKHR"));

        VkDescriptorSetLayoutBinding bindings[8];
        for (uint32_t b = 0; b < 8; ++b) {
            bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
        }
        VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        set_info.bindingCount = 8;
        set_info.pBindings = bindings;
        if (vkCreateDescriptorSetLayout(device_, &set_info, nullptr, &set_layout_) != VK_SUCCESS) return "set layout";
        const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes_};
        VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
        layout_info.setLayoutCount = 1;
        layout_info.pSetLayouts = &set_layout_;
        layout_info.pushConstantRangeCount = 1;
        layout_info.pPushConstantRanges = &range;
        if (vkCreatePipelineLayout(device_, &layout_info, nullptr, &layout_) != VK_SUCCESS) return "pipeline layout";
        return "";
    }

    const std::string& device_name() const { return device_name_; }

    // The statistics of the pipeline's one executable, or an error text.
    std::string Measure(const Shader& shader, std::vector<Statistic>* statistics) {
        VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        module_info.codeSize = shader.words.size() * 4;
        module_info.pCode = shader.words.data();
        VkShaderModule module = VK_NULL_HANDLE;
        if (vkCreateShaderModule(device_, &module_info, nullptr, &module) != VK_SUCCESS) return "vkCreateShaderModule failed";
        VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        pipeline_info.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
        pipeline_info.stage = {
            VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module, "main", nullptr};
        pipeline_info.layout = layout_;
        VkPipeline pipeline = VK_NULL_HANDLE;
        const VkResult created = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline);
        vkDestroyShaderModule(device_, module, nullptr);
        if (created != VK_SUCCESS) {
            return "vkCreateComputePipelines failed (" + std::to_string(created) +
                   "): entry point \"main\", set 0 storage buffers and push constants only";
        }
        VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
        executable.pipeline = pipeline;
        executable.executableIndex = 0;
        uint32_t count = 0;
        get_statistics_(device_, &executable, &count, nullptr);
        std::vector<VkPipelineExecutableStatisticKHR> raw(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
        get_statistics_(device_, &executable, &count, raw.data());
        vkDestroyPipeline(device_, pipeline, nullptr);
        for (const VkPipelineExecutableStatisticKHR& statistic : raw)
            statistics->push_back({statistic.name, StatisticValue(statistic)});
        return "";
    }

  private:
    VkInstance instance_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    uint32_t push_constant_bytes_ = 128;
    std::string device_name_;
    PFN_vkGetPipelineExecutableStatisticsKHR get_statistics_ = nullptr;
};

int Run(int argc, char** argv) {
    bool builtin = false;
    std::string json_path;
    std::vector<Shader> shaders;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--builtin") {
            builtin = true;
        } else if (arg == "--json" && i + 1 < argc) {
            json_path = argv[++i];
        } else if (arg.starts_with("--")) {
            std::fprintf(stderr, "usage: %s [--builtin] [--json PATH] [FILE.spv ...]\n", argv[0]);
            return 2;
        } else {
            Shader shader{arg, {}};
            if (!ReadSpirv(argv[i], &shader.words)) {
                std::fprintf(stderr, "%s: not a SPIR-V file\n", argv[i]);
                return 1;
            }
            shaders.push_back(std::move(shader));
        }
    }
    if (builtin) {
        std::vector<Shader> builtins = BuiltinShaders();
        shaders.insert(shaders.begin(), builtins.begin(), builtins.end());
    }

    StatsDevice device;
    bool supported = false;
    if (const std::string error = device.Create(&supported); !error.empty()) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    if (!supported) {
        std::printf("%s does not have %s: no statistics to report\n", device.device_name().c_str(),
                    VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
        return 0;
    }
    std::printf("device: %s\n", device.device_name().c_str());
    std::string json = "{\n  \"device\": " + JsonString(device.device_name()) + ",\n  \"shaders\": [";
    int status = 0;
    bool first = true;
    for (const Shader& shader : shaders) {
        std::vector<Statistic> statistics;
        if (const std::string error = device.Measure(shader, &statistics); !error.empty()) {
            std::printf("%-40s %s\n", shader.name.c_str(), error.c_str());
            status = 1;
            continue;
        }
        std::printf("%-40s", shader.name.c_str());
        json += std::string(first ? "" : ",") + "\n    {\"name\": " + JsonString(shader.name);
        first = false;
        for (const Statistic& statistic : statistics) {
            std::printf("  %s %g", statistic.name.c_str(), statistic.value);
            json += ", " + JsonString(statistic.name) + ": " + JsonNumber(statistic.value);
        }
        json += "}";
        std::printf("\n");
    }
    json += "\n  ]\n}\n";
    if (!json_path.empty()) std::ofstream(json_path) << json;
    return status;
}

}  // namespace
}  // namespace execgraph::bench

int main(int argc, char** argv) { return execgraph::bench::Run(argc, argv); }
