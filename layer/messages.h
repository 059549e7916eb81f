// Reports the layer's diagnostics to the application.
//
// Messages go to the application's VK_EXT_debug_utils messengers: the ones it creates with
// vkCreateDebugUtilsMessengerEXT (which the layer intercepts to learn their callbacks) and, while vkCreateInstance runs,
// the ones chained in VkInstanceCreateInfo::pNext. The layer calls the callbacks itself, as the validation layers do,
// rather than through vkSubmitDebugUtilsMessageEXT: the loader holds its global lock during vkCreateInstance and
// vkCreateDevice, and submitting from inside them would deadlock. Without any messenger, warnings and errors fall back
// to stderr (never stdout, which belongs to the app), unless the `log_to_stderr` setting turns that off.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace execgraph {

enum class MessageSeverity { kVerbose, kInfo, kWarning, kError };

// Stable message ids, so applications and tests can filter on them (Vulkan-ValidationLayers style).
namespace message_id {
inline constexpr char kSettings[] = "EXECGRAPH-SETTINGS";
inline constexpr char kEmulationUnavailable[] = "EXECGRAPH-EMULATION-UNAVAILABLE";
inline constexpr char kEmulationActive[] = "EXECGRAPH-EMULATION-ACTIVE";
inline constexpr char kInvalidUsage[] = "EXECGRAPH-INVALID-USAGE";
inline constexpr char kOutOfMemory[] = "EXECGRAPH-OUT-OF-MEMORY";
inline constexpr char kPipelineCreation[] = "EXECGRAPH-PIPELINE-CREATION";
inline constexpr char kDispatch[] = "EXECGRAPH-DISPATCH";
inline constexpr char kDroppedWork[] = "EXECGRAPH-DROPPED-WORK";
inline constexpr char kGraphLevels[] = "EXECGRAPH-GRAPH-LEVELS";  // verbose: the nodes each level dispatches
inline constexpr char kGraphPipelines[] = "EXECGRAPH-GRAPH-PIPELINES";  // verbose: how many lowered pipelines the nodes share
inline constexpr char kStatistics[] = "EXECGRAPH-STATISTICS";
inline constexpr char kPreparedLevels[] = "EXECGRAPH-PREPARED-LEVELS";  // verbose: a prepared secondary was recorded
}  // namespace message_id

// An object a message is about, shown by debuggers and validation-style message formatters.
struct MessageObject {
    VkObjectType type;
    uint64_t handle;
};

template <typename Handle>
MessageObject ObjectOf(VkObjectType type, Handle handle) {
    return MessageObject{type, reinterpret_cast<uint64_t>(handle)};
}

class MessageSink {
  public:
    explicit MessageSink(bool log_to_stderr = true) : log_to_stderr_(log_to_stderr) {}
    MessageSink(const MessageSink&) = delete;
    MessageSink& operator=(const MessageSink&) = delete;

    void SetLogToStderr(bool log_to_stderr) { log_to_stderr_ = log_to_stderr; }

    // `handle` is VK_NULL_HANDLE for the instance-creation messengers from VkInstanceCreateInfo::pNext.
    void AddMessenger(VkDebugUtilsMessengerEXT handle, const VkDebugUtilsMessengerCreateInfoEXT& create_info);
    void RemoveMessenger(VkDebugUtilsMessengerEXT handle);
    // Adds every VkDebugUtilsMessengerCreateInfoEXT in the chain, as instance-creation messengers.
    void AddCreationMessengers(const void* instance_create_info_pnext);

    void Emit(MessageSeverity severity, const char* id, std::string_view text,
              std::initializer_list<MessageObject> objects = {}) const;

  private:
    struct Messenger {
        VkDebugUtilsMessengerEXT handle;
        VkDebugUtilsMessageSeverityFlagsEXT severities;
        VkDebugUtilsMessageTypeFlagsEXT types;
        PFN_vkDebugUtilsMessengerCallbackEXT callback;
        void* user_data;
    };

    mutable std::mutex mutex_;
    std::vector<Messenger> messengers_;
    bool log_to_stderr_;
};

// 32-bit FNV-1a of the id, as debug-utils messageIdNumber.
int32_t MessageIdNumber(std::string_view id);

}  // namespace execgraph
