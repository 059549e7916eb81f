#include "messages.h"

#include <cstdio>
#include <algorithm>
#include <vector>

namespace execgraph {

int32_t MessageIdNumber(std::string_view id) {
    uint32_t hash = 2166136261u;
    for (char c : id) {
        hash ^= static_cast<uint8_t>(c);
        hash *= 16777619u;
    }
    return static_cast<int32_t>(hash);
}

namespace {

VkDebugUtilsMessageSeverityFlagBitsEXT ToDebugUtilsSeverity(MessageSeverity severity) {
    switch (severity) {
        case MessageSeverity::kVerbose:
            return VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT;
        case MessageSeverity::kInfo:
            return VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT;
        case MessageSeverity::kWarning:
            return VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
        case MessageSeverity::kError:
            return VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    }
    return VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
}

const char* SeverityName(MessageSeverity severity) {
    switch (severity) {
        case MessageSeverity::kVerbose:
            return "VERBOSE";
        case MessageSeverity::kInfo:
            return "INFO";
        case MessageSeverity::kWarning:
            return "WARNING";
        case MessageSeverity::kError:
            return "ERROR";
    }
    return "ERROR";
}

}  // namespace

void MessageSink::AddMessenger(VkDebugUtilsMessengerEXT handle, const VkDebugUtilsMessengerCreateInfoEXT& create_info) {
    if (create_info.pfnUserCallback == nullptr) return;
    std::lock_guard lock(mutex_);
    messengers_.push_back(
        {handle, create_info.messageSeverity, create_info.messageType, create_info.pfnUserCallback, create_info.pUserData});
}

void MessageSink::RemoveMessenger(VkDebugUtilsMessengerEXT handle) {
    std::lock_guard lock(mutex_);
    std::erase_if(messengers_, [handle](const Messenger& messenger) { return messenger.handle == handle; });
}

void MessageSink::AddCreationMessengers(const void* instance_create_info_pnext) {
    for (auto* node = static_cast<const VkBaseInStructure*>(instance_create_info_pnext); node != nullptr; node = node->pNext) {
        if (node->sType == VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT) {
            AddMessenger(VK_NULL_HANDLE, *reinterpret_cast<const VkDebugUtilsMessengerCreateInfoEXT*>(node));
        }
    }
}

void MessageSink::Emit(MessageSeverity severity, const char* id, std::string_view text,
                       std::initializer_list<MessageObject> objects) const {
    const std::string message = "execgraph: " + std::string(text);
    // Problems with how the app uses the API are VALIDATION; notices about the emulation itself are GENERAL.
    const VkDebugUtilsMessageTypeFlagsEXT type = severity >= MessageSeverity::kWarning ? VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
                                                                                         : VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    const VkDebugUtilsMessageSeverityFlagBitsEXT debug_utils_severity = ToDebugUtilsSeverity(severity);

    // Call the callbacks outside the lock: a callback may create or destroy messengers.
    std::vector<Messenger> messengers;
    {
        std::lock_guard lock(mutex_);
        messengers = messengers_;
    }
    if (!messengers.empty()) {
        std::vector<VkDebugUtilsObjectNameInfoEXT> object_infos;
        object_infos.reserve(objects.size());
        for (const MessageObject& object : objects) {
            object_infos.push_back({VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT, nullptr, object.type, object.handle, nullptr});
        }
        VkDebugUtilsMessengerCallbackDataEXT callback_data{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT};
        callback_data.pMessageIdName = id;
        callback_data.messageIdNumber = MessageIdNumber(id);
        callback_data.pMessage = message.c_str();
        callback_data.objectCount = static_cast<uint32_t>(object_infos.size());
        callback_data.pObjects = object_infos.data();
        for (const Messenger& messenger : messengers) {
            if ((messenger.severities & debug_utils_severity) && (messenger.types & type)) {
                messenger.callback(debug_utils_severity, type, &callback_data, messenger.user_data);
            }
        }
        return;
    }
    // The stderr fallback shows only what needs attention; verbose and info notices need a messenger.
    if (log_to_stderr_ && severity >= MessageSeverity::kWarning) {
        std::fprintf(stderr, "[%s] %s: %s\n", SeverityName(severity), id, message.c_str());
    }
}

}  // namespace execgraph
