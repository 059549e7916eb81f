// SPDX-License-Identifier: Apache-2.0
//
// Layer settings reader following the Vulkan-Utility-Libraries conventions (style-and-ecosystem.md 2.4 and
// 1.4; VUL's src/layer/layer_settings_manager.cpp and layer_settings_util.cpp). Conventions only, no code.
#include "settings.h"

#include <execgraph/vk_amdx_compat.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace execgraph {

namespace {

constexpr SettingEnumName kAllocationReservationNames[] = {
    {"auto", static_cast<uint64_t>(AllocationReservation::kAuto)},
    {"workgroup", static_cast<uint64_t>(AllocationReservation::kWorkgroup)},
    {"subgroup", static_cast<uint64_t>(AllocationReservation::kSubgroup)},
};

constexpr SettingEnumName kRecordStoreCoalescingNames[] = {
    {"auto", static_cast<uint64_t>(RecordStoreCoalescing::kAuto)},
    {"on", static_cast<uint64_t>(RecordStoreCoalescing::kOn)},
    {"off", static_cast<uint64_t>(RecordStoreCoalescing::kOff)},
};

constexpr SettingEnumName kReportPassNames[] = {
    {"auto", static_cast<uint64_t>(ReportPass::kAuto)},
    {"preparer", static_cast<uint64_t>(ReportPass::kPreparer)},
    {"finish", static_cast<uint64_t>(ReportPass::kFinish)},
};

// The table. To add a setting: add the field to LayerSettings and one row here. The row's default text must
// read back as the field's default (checked by SettingsTable.DefaultsMatchStruct).
constexpr SettingDescriptor kSettingDescriptors[] = {
    {"force_enable", "false",
     "Emulate VK_AMDX_shader_enqueue even when the driver exposes it natively (the native implementation is then hidden).",
     SettingField<&LayerSettings::force_enable>()},
    {"log_to_stderr", "true",
     "Print the layer's messages to stderr when the application has no VK_EXT_debug_utils messenger to receive them.",
     SettingField<&LayerSettings::log_to_stderr>()},
    {"validate_lowered_shaders", "false", "Run spirv-val on every lowered shader module and report failures.",
     SettingField<&LayerSettings::validate_lowered_shaders>()},
    {"optimize_lowered_shaders", "false", "Run the SPIRV-Tools performance passes on every lowered shader module.",
     SettingField<&LayerSettings::optimize_lowered_shaders>()},
    {"dump_shaders_path", "",
     "Folder into which the original and lowered SPIR-V of every node, and a GLSL rendering of the lowered one, are written; "
     "empty disables dumping.",
     SettingField<&LayerSettings::dump_shaders_path>()},
    {"replace_shaders_path", "",
     "Folder whose graph<N>_<node>_<index>.lowered.spv files (the names dump_shaders_path writes) replace those nodes' "
     "lowered modules at pipeline creation, to investigate driver compilers with edited lowered shaders; empty disables it.",
     SettingField<&LayerSettings::replace_shaders_path>()},
    {"statistics", "false",
     "Report one JSON line per graph dispatch (levels, node dispatches, records per node, ring high-water marks, drops) "
     "through VK_EXT_debug_utils at INFO severity, id EXECGRAPH-STATISTICS.",
     SettingField<&LayerSettings::statistics>()},
    {"statistics_file", "", "With statistics: also append each JSON line to this file; empty: debug utils only.",
     SettingField<&LayerSettings::statistics_file>()},
    {"level_timestamps", "false",
     "Add the GPU time of each graph dispatch, of its setup and of each of its levels (and of a level's level pass) to the "
     "statistics line, from timestamp queries around the scheduler's passes; turns statistics on.",
     SettingField<&LayerSettings::level_timestamps>()},
    {"overflow_fatal", "false",
     "Abort the process right after reporting a graph dispatch that dropped work (EXECGRAPH-DROPPED-WORK); meant for CI.",
     SettingField<&LayerSettings::overflow_fatal>()},
    {"debug_labels", "true",
     "Label each emulated graph dispatch, each of its levels and each node dispatch with debug-utils labels (needs "
     "VK_EXT_debug_utils enabled on the instance).",
     SettingField<&LayerSettings::debug_labels>()},
    {"level_pass_records_per_workgroup", "0",
     "Records each workgroup of the scheduler's level pass scatters: the producers of a level size that pass with one "
     "workgroup per this many records. 0: chosen by device type (512 on GPUs, 16384 on CPU devices).",
     SettingField<&LayerSettings::level_pass_records_per_workgroup>()},
    {"thread_batch_size", "0",
     "Records one workgroup of a lowered thread node runs. 0: chosen by device type, and larger for nodes without outputs "
     "(see docs/settings.md); otherwise the batch of every thread node, at most the device's maxComputeWorkGroupSize[0] "
     "and maxComputeWorkGroupInvocations.",
     SettingField<&LayerSettings::thread_batch_size>()},
    {"direct_levels", "true",
     "Run a level whose records all go to one thread, coalescing or static broadcast node without a level pass: the last workgroup "
     "of the "
     "level before prepares it, so it follows after one barrier. false: every level has a level pass (for comparisons).",
     SettingField<&LayerSettings::direct_levels>()},
    {"fixed_levels", "true",
     "Dispatch a direct level whose workgroups the layer can bound from the host's entries and the nodes' "
     "NodeMaxPayloadsAMDX (at most fixed_level_max_workgroups) with that many workgroups instead of indirectly, so that "
     "the barrier before it has no indirect-command stage. false: direct levels are always dispatched indirectly (for "
     "comparisons).",
     SettingField<&LayerSettings::fixed_levels>()},
    {"fixed_level_max_workgroups", "0",
     "The most workgroups a fixed level may launch (fixed_levels). 0: chosen by device type (1024 on GPUs, 64 on CPU "
     "devices).",
     SettingField<&LayerSettings::fixed_level_max_workgroups>()},
    {"direct_levels_max_producer_invocations", "0",
     "Most invocations one record of a node may run for the node to prepare a direct level after it (others get a level "
     "pass after their levels); 4294967295: no limit. 0: chosen by device type (every node on GPUs, 64 on CPU devices; "
     "see docs/settings.md).",
     SettingField<&LayerSettings::direct_levels_max_producer_invocations>()},
    {"allocation_reservation", "auto",
     "How lowered broadcast and coalescing nodes reserve payloads that every invocation of a workgroup allocates: "
     "workgroup (one reservation per workgroup, between workgroup barriers), subgroup (one per subgroup), or auto: by "
     "device type (workgroup on GPUs, subgroup on CPU devices; see docs/settings.md).",
     SettingField<&LayerSettings::allocation_reservation>(), kAllocationReservationNames},
    {"report_pass", "auto",
     "Which pass copies a graph dispatch's header and statistics into the report the layer reads back, where no node of "
     "the last level has outputs: preparer (the pass that prepares the last level, one dispatch fewer), finish (a finish "
     "pass beside the last level's node dispatches, so that the last level waits for no writes to host memory), or "
     "auto: by device type (finish on GPUs, preparer on CPU devices; see docs/settings.md).",
     SettingField<&LayerSettings::report_pass>(), kReportPassNames},
    {"record_store_coalescing", "auto",
     "Whether a node that allocates at most one record of 32, 64 or 128 bytes per invocation keeps it in registers and "
     "writes its subgroup's records together at its end, transposed across the lanes so that each store writes "
     "contiguous bytes: on, off, or auto: by device type (on for GPUs, off for CPU devices; see docs/settings.md).",
     SettingField<&LayerSettings::record_store_coalescing>(), kRecordStoreCoalescingNames},
    {"prepared_levels", "false",
     "Record a graph dispatch's levels into a secondary command buffer once and execute that again wherever the same "
     "commands would be recorded, which cuts the CPU time of recording a dispatch. Opt-in: executing it leaves all state "
     "of the command buffer undefined, and the layer restores only the compute state, so the application must bind "
     "everything else again after a graph dispatch (see docs/settings.md).",
     SettingField<&LayerSettings::prepared_levels>()},
    {"records_newest_first", "true",
     "Where a level's records are placed by index for its one consumer, that consumer reads the level's newest records "
     "first, which its producers wrote last and which are still in the GPU's cache. false: oldest first (for comparisons).",
     SettingField<&LayerSettings::records_newest_first>()},
};

// A settings file larger than this is not a settings file; refuse it rather than read it into memory.
constexpr std::uintmax_t kMaxSettingsFileBytes = 1u << 20;
// A longer VkInstanceCreateInfo::pNext chain is treated as corrupt (e.g. a cycle) instead of walked forever.
constexpr size_t kMaxPNextChainLength = 4096;

constexpr std::string_view kWhitespace = " \t\r\n\f\v";

std::string_view Trim(std::string_view text) {
    const size_t first = text.find_first_not_of(kWhitespace);
    if (first == std::string_view::npos) return {};
    const size_t last = text.find_last_not_of(kWhitespace);
    return text.substr(first, last - first + 1);
}

char ToLowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
char ToUpperAscii(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (ToLowerAscii(a[i]) != ToLowerAscii(b[i])) return false;
    }
    return true;
}

std::string ToUpperAscii(std::string_view text) {
    std::string upper(text);
    for (char& c : upper) c = ToUpperAscii(c);
    return upper;
}

std::string Quoted(std::string_view text) {
    std::string quoted;
    quoted.reserve(text.size() + 2);
    quoted += '"';
    quoted += text;
    quoted += '"';
    return quoted;
}

const char* TypeName(SettingType type) {
    switch (type) {
        case SettingType::kBool:
            return "boolean";
        case SettingType::kInt:
            return "integer";
        case SettingType::kUint:
            return "unsigned integer";
        case SettingType::kString:
            return "string";
        case SettingType::kEnum:
            return "enumeration";
    }
    return "unknown";
}

const char* LayerSettingTypeName(VkLayerSettingTypeEXT type) {
    switch (type) {
        case VK_LAYER_SETTING_TYPE_BOOL32_EXT:
            return "VK_LAYER_SETTING_TYPE_BOOL32_EXT";
        case VK_LAYER_SETTING_TYPE_INT32_EXT:
            return "VK_LAYER_SETTING_TYPE_INT32_EXT";
        case VK_LAYER_SETTING_TYPE_INT64_EXT:
            return "VK_LAYER_SETTING_TYPE_INT64_EXT";
        case VK_LAYER_SETTING_TYPE_UINT32_EXT:
            return "VK_LAYER_SETTING_TYPE_UINT32_EXT";
        case VK_LAYER_SETTING_TYPE_UINT64_EXT:
            return "VK_LAYER_SETTING_TYPE_UINT64_EXT";
        case VK_LAYER_SETTING_TYPE_FLOAT32_EXT:
            return "VK_LAYER_SETTING_TYPE_FLOAT32_EXT";
        case VK_LAYER_SETTING_TYPE_FLOAT64_EXT:
            return "VK_LAYER_SETTING_TYPE_FLOAT64_EXT";
        case VK_LAYER_SETTING_TYPE_STRING_EXT:
            return "VK_LAYER_SETTING_TYPE_STRING_EXT";
        default:
            return "an unknown VkLayerSettingTypeEXT";
    }
}

// What a valid textual value looks like, for warnings.
std::string ExpectedText(SettingType type, std::span<const SettingEnumName> enum_names) {
    switch (type) {
        case SettingType::kBool:
            return "a boolean (true/false, 1/0, on/off, yes/no)";
        case SettingType::kInt:
            return "a decimal or 0x-prefixed integer";
        case SettingType::kUint:
            return "a decimal or 0x-prefixed unsigned integer";
        case SettingType::kString:
            return "a string";
        case SettingType::kEnum: {
            std::string names = "one of";
            for (const SettingEnumName& name : enum_names) {
                names += ' ';
                names += name.name;
            }
            return names;
        }
    }
    return "a value";
}

// Unsigned magnitude in decimal or with a 0x prefix; no sign, no trailing characters.
std::optional<uint64_t> ParseMagnitude(std::string_view text) {
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        base = 16;
        text.remove_prefix(2);
    }
    if (text.empty()) return std::nullopt;
    uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<int64_t> ParseInt64(std::string_view text) {
    bool negative = false;
    if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
        negative = text[0] == '-';
        text.remove_prefix(1);
    }
    const std::optional<uint64_t> magnitude = ParseMagnitude(text);
    if (!magnitude) return std::nullopt;
    if (negative) {
        // -2^63 is representable although +2^63 is not.
        if (*magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
        return static_cast<int64_t>(0 - *magnitude);
    }
    if (*magnitude > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(*magnitude);
}

std::optional<uint64_t> ParseUint64(std::string_view text) {
    if (!text.empty() && text[0] == '+') text.remove_prefix(1);
    return ParseMagnitude(text);
}

std::optional<uint64_t> KnownEnumValue(std::span<const SettingEnumName> enum_names, uint64_t value) {
    for (const SettingEnumName& name : enum_names) {
        if (name.value == value) return value;
    }
    return std::nullopt;
}

// The value of an API entry whose integer payload has been widened, converted to the setting's type.
std::optional<SettingValue> ConvertApiInteger(SettingType type, std::span<const SettingEnumName> enum_names, bool is_negative,
                                              uint64_t bits) {
    switch (type) {
        case SettingType::kBool:
            return SettingValue(bits != 0);
        case SettingType::kInt:
            if (!is_negative && bits > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
            return SettingValue(static_cast<int64_t>(bits));
        case SettingType::kUint:
            if (is_negative) return std::nullopt;
            return SettingValue(bits);
        case SettingType::kEnum:
            if (is_negative) return std::nullopt;
            if (auto known = KnownEnumValue(enum_names, bits)) return SettingValue(*known);
            return std::nullopt;
        case SettingType::kString:
            return std::nullopt;
    }
    return std::nullopt;
}

// Which VkLayerSettingTypeEXT an API entry may use for each setting type: the natural type(s), and STRING, parsed
// like a file value so that tools which only emit strings work. Booleans also take INT32/UINT32 (nonzero = true)
// for C callers that hold an int flag.
bool ApiTypeAccepted(SettingType type, VkLayerSettingTypeEXT api_type) {
    if (api_type == VK_LAYER_SETTING_TYPE_STRING_EXT) return true;
    switch (type) {
        case SettingType::kBool:
            return api_type == VK_LAYER_SETTING_TYPE_BOOL32_EXT || api_type == VK_LAYER_SETTING_TYPE_INT32_EXT ||
                   api_type == VK_LAYER_SETTING_TYPE_UINT32_EXT;
        case SettingType::kInt:
        case SettingType::kUint:
        case SettingType::kEnum:
            return api_type == VK_LAYER_SETTING_TYPE_INT32_EXT || api_type == VK_LAYER_SETTING_TYPE_INT64_EXT ||
                   api_type == VK_LAYER_SETTING_TYPE_UINT32_EXT || api_type == VK_LAYER_SETTING_TYPE_UINT64_EXT;
        case SettingType::kString:
            return false;
    }
    return false;
}

// Parses one VkLayerSettingEXT for a known key; on failure returns nullopt and sets *problem.
std::optional<SettingValue> ParseApiSetting(const settings_internal::SettingKeySpec& spec, const VkLayerSettingEXT& setting,
                                            std::string* problem) {
    if (!ApiTypeAccepted(spec.type, setting.type)) {
        *problem = std::string("has type ") + LayerSettingTypeName(setting.type) + ", which cannot be used for a " +
                   TypeName(spec.type) + " setting";
        return std::nullopt;
    }
    if (setting.valueCount == 0 || setting.pValues == nullptr) {
        *problem = "has no value (valueCount is 0 or pValues is NULL)";
        return std::nullopt;
    }
    // Every setting of this layer is single-valued; like VUL's scalar getters, use the first value.
    std::optional<SettingValue> value;
    switch (setting.type) {
        case VK_LAYER_SETTING_TYPE_BOOL32_EXT:
            value = SettingValue(static_cast<const VkBool32*>(setting.pValues)[0] != VK_FALSE);
            break;
        case VK_LAYER_SETTING_TYPE_INT32_EXT: {
            const int32_t v = static_cast<const int32_t*>(setting.pValues)[0];
            value = ConvertApiInteger(spec.type, spec.enum_names, v < 0, static_cast<uint64_t>(static_cast<int64_t>(v)));
            break;
        }
        case VK_LAYER_SETTING_TYPE_INT64_EXT: {
            const int64_t v = static_cast<const int64_t*>(setting.pValues)[0];
            value = ConvertApiInteger(spec.type, spec.enum_names, v < 0, static_cast<uint64_t>(v));
            break;
        }
        case VK_LAYER_SETTING_TYPE_UINT32_EXT:
            value = ConvertApiInteger(spec.type, spec.enum_names, false, static_cast<const uint32_t*>(setting.pValues)[0]);
            break;
        case VK_LAYER_SETTING_TYPE_UINT64_EXT:
            value = ConvertApiInteger(spec.type, spec.enum_names, false, static_cast<const uint64_t*>(setting.pValues)[0]);
            break;
        case VK_LAYER_SETTING_TYPE_STRING_EXT: {
            const char* text = static_cast<const char* const*>(setting.pValues)[0];
            if (text == nullptr) {
                *problem = "has a NULL string value";
                return std::nullopt;
            }
            const std::string_view view = spec.type == SettingType::kString ? std::string_view(text) : Trim(text);
            value = ParseSettingText(spec.type, spec.enum_names, view);
            if (!value) {
                *problem = "has the value " + Quoted(text) + ", which is not " + ExpectedText(spec.type, spec.enum_names);
                return std::nullopt;
            }
            break;
        }
        default:
            break;
    }
    if (!value) {
        *problem = std::string("has a ") + LayerSettingTypeName(setting.type) + " value that is not " +
                   ExpectedText(spec.type, spec.enum_names);
    }
    return value;
}

std::optional<size_t> FindKey(std::span<const settings_internal::SettingKeySpec> keys, std::string_view key) {
    for (size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].key == key) return i;
    }
    return std::nullopt;
}

// The environment is read with getenv; VUL treats an empty variable as unset, and so do we.
const char* GetNonEmptyEnv(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return (value != nullptr && value[0] != '\0') ? value : nullptr;
}

bool IsRegularFile(const std::filesystem::path& path) {
    std::error_code error;
    return std::filesystem::is_regular_file(path, error);
}

void CollectEnvironmentCandidates(std::span<const settings_internal::SettingKeySpec> keys,
                                  std::vector<settings_internal::SettingCandidate>& candidates,
                                  std::vector<std::string>& warnings) {
    for (size_t index = 0; index < keys.size(); ++index) {
        const settings_internal::SettingKeySpec& spec = keys[index];
        for (const std::string& name : EnvironmentVariableNames(spec.key)) {
            const char* raw = GetNonEmptyEnv(name);
            if (raw == nullptr) continue;
            const std::string_view text = spec.type == SettingType::kString ? std::string_view(raw) : Trim(raw);
            if (std::optional<SettingValue> value = ParseSettingText(spec.type, spec.enum_names, text)) {
                candidates.push_back({index, std::move(*value), "environment variable " + name});
            } else {
                warnings.push_back("Environment variable " + name + "=" + Quoted(raw) + " is not " +
                                   ExpectedText(spec.type, spec.enum_names) + "; ignored.");
            }
        }
    }
}

// vk_layer_settings.txt: "key = value" lines, '#' starts a comment anywhere on a line (VUL does the same, so a
// value cannot contain '#'), whitespace around key and value is ignored. The file is shared by all layers: only
// keys with our prefix concern us. For a key given twice the last line wins (VUL keeps the last one too).
void CollectFileCandidates(std::span<const settings_internal::SettingKeySpec> keys,
                           std::vector<settings_internal::SettingCandidate>& candidates, std::vector<std::string>& warnings) {
    const std::optional<std::string> path = FindSettingsFile(warnings);
    if (!path) return;

    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(*path, error);
    if (error) {
        warnings.push_back("Cannot read the settings file " + *path + ": " + error.message() + "; file settings ignored.");
        return;
    }
    if (size > kMaxSettingsFileBytes) {
        warnings.push_back("The settings file " + *path + " is larger than 1 MiB; file settings ignored.");
        return;
    }
    std::ifstream file(*path, std::ios::binary);
    if (!file) {
        warnings.push_back("Cannot open the settings file " + *path + "; file settings ignored.");
        return;
    }

    std::vector<settings_internal::SettingCandidate> file_candidates;
    const std::string_view prefix = kSettingsFileKeyPrefix;
    std::string line;
    for (size_t line_number = 1; std::getline(file, line); ++line_number) {
        std::string_view content = line;
        if (const size_t comment = content.find('#'); comment != std::string_view::npos) content = content.substr(0, comment);
        content = Trim(content);
        if (content.empty()) continue;
        const std::string where = *path + ":" + std::to_string(line_number);
        const size_t equals = content.find('=');
        if (equals == std::string_view::npos) {
            if (content.starts_with(prefix)) {
                warnings.push_back(where + ": expected " + Quoted(content) + " to be written as \"key = value\"; line ignored.");
            }
            continue;
        }
        const std::string_view file_key = Trim(content.substr(0, equals));
        const std::string_view text = Trim(content.substr(equals + 1));
        if (!file_key.starts_with(prefix)) continue;  // another layer's setting
        const std::string_view key = file_key.substr(prefix.size());
        const std::optional<size_t> index = FindKey(keys, key);
        if (!index) {
            warnings.push_back(where + ": unknown setting " + Quoted(file_key) + " for " + kLayerName + "; ignored.");
            continue;
        }
        const settings_internal::SettingKeySpec& spec = keys[*index];
        if (std::optional<SettingValue> value = ParseSettingText(spec.type, spec.enum_names, text)) {
            file_candidates.push_back({*index, std::move(*value), "settings file " + where});
        } else {
            warnings.push_back(where + ": " + Quoted(file_key) + " = " + Quoted(text) + " is not " +
                               ExpectedText(spec.type, spec.enum_names) + "; ignored.");
        }
    }
    // Later lines take precedence over earlier ones.
    for (auto it = file_candidates.rbegin(); it != file_candidates.rend(); ++it) candidates.push_back(std::move(*it));
}

// VkLayerSettingsCreateInfoEXT may be chained several times; entries are considered in chain order and, as in
// VUL's FindLayerSettingValue, the first usable entry for a key wins. Entries of other layers are skipped.
void CollectApiCandidates(std::span<const settings_internal::SettingKeySpec> keys, const void* instance_create_info_pnext,
                          std::vector<settings_internal::SettingCandidate>& candidates, std::vector<std::string>& warnings) {
    size_t create_info_number = 0;
    size_t chain_length = 0;
    for (const auto* link = static_cast<const VkBaseInStructure*>(instance_create_info_pnext); link != nullptr;
         link = link->pNext) {
        if (++chain_length > kMaxPNextChainLength) {
            warnings.push_back("VkInstanceCreateInfo::pNext has more than " + std::to_string(kMaxPNextChainLength) +
                               " structures (a cycle?); the rest is ignored.");
            return;
        }
        if (link->sType != VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT) continue;
        const auto* create_info = reinterpret_cast<const VkLayerSettingsCreateInfoEXT*>(link);
        ++create_info_number;
        const std::string struct_name = "VkLayerSettingsCreateInfoEXT #" + std::to_string(create_info_number) + " in pNext";
        if (create_info->settingCount > 0 && create_info->pSettings == nullptr) {
            warnings.push_back(struct_name + " has settingCount " + std::to_string(create_info->settingCount) +
                               " but pSettings is NULL; ignored.");
            continue;
        }
        for (uint32_t i = 0; i < create_info->settingCount; ++i) {
            const VkLayerSettingEXT& setting = create_info->pSettings[i];
            if (setting.pLayerName == nullptr || std::strcmp(setting.pLayerName, kLayerName) != 0) continue;
            const std::string where = struct_name + ", pSettings[" + std::to_string(i) + "]";
            if (setting.pSettingName == nullptr) {
                warnings.push_back(where + " names " + kLayerName + " but its pSettingName is NULL; ignored.");
                continue;
            }
            const std::optional<size_t> index = FindKey(keys, setting.pSettingName);
            if (!index) {
                warnings.push_back(where + ": unknown setting " + Quoted(setting.pSettingName) + " for " + kLayerName +
                                   "; ignored.");
                continue;
            }
            std::string problem;
            if (std::optional<SettingValue> value = ParseApiSetting(keys[*index], setting, &problem)) {
                if (setting.valueCount > 1) {
                    warnings.push_back(where + ": setting " + Quoted(setting.pSettingName) + " has " +
                                       std::to_string(setting.valueCount) + " values; only the first is used.");
                }
                candidates.push_back({*index, std::move(*value), where});
            } else {
                warnings.push_back(where + ": setting " + Quoted(setting.pSettingName) + " " + problem + "; ignored.");
            }
        }
    }
}

}  // namespace

std::span<const SettingDescriptor> SettingDescriptors() { return kSettingDescriptors; }

// VUL's GetEnvSettingName: "VK_" + upper(layer name without "VK_LAYER_") + "_" + upper(key) (TRIM_NONE), then
// with the vendor part removed (TRIM_VENDOR), then "VK_" + upper(key) alone (TRIM_NAMESPACE).
std::vector<std::string> EnvironmentVariableNames(std::string_view key) {
    constexpr std::string_view kLayerPrefix = "VK_LAYER_";
    std::string_view name = kLayerName;
    name.remove_prefix(kLayerPrefix.size());  // "EXECGRAPH_shader_enqueue"
    const std::string upper_key = ToUpperAscii(key);
    const std::string full = ToUpperAscii(name);                         // "EXECGRAPH_SHADER_ENQUEUE"
    const std::string without_vendor = full.substr(full.find('_') + 1);  // "SHADER_ENQUEUE"
    return {"VK_" + full + "_" + upper_key, "VK_" + without_vendor + "_" + upper_key, "VK_" + upper_key};
}

std::string FileSettingKey(std::string_view key) { return std::string(kSettingsFileKeyPrefix) + std::string(key); }

// The search order of VUL's LayerSettings::FindSettingsFile on Linux, which is what vkconfig and users of the
// Khronos layers expect (style-and-ecosystem.md 2.4). The first match is the only file read:
//   1. $XDG_DATA_HOME/vulkan/settings.d/vk_layer_settings.txt, or $HOME/.local/share/... when XDG_DATA_HOME is
//      unset: where vkconfig writes its settings. Used only if it is a regular file.
//   2. $VK_LAYER_SETTINGS_PATH: a file, or a folder holding vk_layer_settings.txt. As in VUL, once it names an
//      existing path, the search stops there even if the folder has no settings file.
//   3. ./vk_layer_settings.txt in the current working directory.
std::optional<std::string> FindSettingsFile(std::vector<std::string>& warnings) {
    namespace fs = std::filesystem;
    std::string data_home;
    if (const char* xdg = GetNonEmptyEnv("XDG_DATA_HOME")) {
        data_home = xdg;
    } else if (const char* home = GetNonEmptyEnv("HOME")) {
        data_home = std::string(home) + "/.local/share";
    }
    if (!data_home.empty()) {
        const std::string vkconfig_file = data_home + "/vulkan/settings.d/" + kSettingsFileName;
        if (IsRegularFile(vkconfig_file)) return vkconfig_file;
    }

    if (const char* env_path = GetNonEmptyEnv("VK_LAYER_SETTINGS_PATH")) {
        std::error_code error;
        const fs::file_status status = fs::status(env_path, error);
        if (fs::is_directory(status)) {
            const std::string in_folder = std::string(env_path) + "/" + kSettingsFileName;
            if (IsRegularFile(in_folder)) return in_folder;
            return std::nullopt;  // VUL stops here too: the user pointed at this folder.
        }
        if (fs::is_regular_file(status)) return std::string(env_path);
        if (fs::exists(status)) {
            // A FIFO or device would block or never end; refuse it.
            warnings.push_back(std::string("VK_LAYER_SETTINGS_PATH=") + env_path + " is neither a file nor a folder; ignored.");
            return std::nullopt;
        }
        warnings.push_back(std::string("VK_LAYER_SETTINGS_PATH=") + env_path +
                           " does not exist; looking for vk_layer_settings.txt in the working directory instead.");
    }

    std::error_code error;
    const fs::path cwd = fs::current_path(error);
    const fs::path in_cwd = error ? fs::path(kSettingsFileName) : cwd / kSettingsFileName;
    if (IsRegularFile(in_cwd)) return in_cwd.string();
    return std::nullopt;
}

std::optional<SettingValue> ParseSettingText(SettingType type, std::span<const SettingEnumName> enum_names, std::string_view text) {
    switch (type) {
        case SettingType::kBool:
            for (std::string_view yes : {"true", "1", "on", "yes"}) {
                if (EqualsIgnoreCase(text, yes)) return SettingValue(true);
            }
            for (std::string_view no : {"false", "0", "off", "no"}) {
                if (EqualsIgnoreCase(text, no)) return SettingValue(false);
            }
            return std::nullopt;
        case SettingType::kInt:
            if (auto value = ParseInt64(text)) return SettingValue(*value);
            return std::nullopt;
        case SettingType::kUint:
            if (auto value = ParseUint64(text)) return SettingValue(*value);
            return std::nullopt;
        case SettingType::kString:
            return SettingValue(std::string(text));
        case SettingType::kEnum:
            for (const SettingEnumName& name : enum_names) {
                if (EqualsIgnoreCase(text, name.name)) return SettingValue(name.value);
            }
            if (auto number = ParseUint64(text)) {
                if (auto known = KnownEnumValue(enum_names, *number)) return SettingValue(*known);
            }
            return std::nullopt;
    }
    return std::nullopt;
}

std::string FormatSettingValue(SettingType type, std::span<const SettingEnumName> enum_names, const SettingValue& value) {
    if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
    if (const int64_t* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
    if (const std::string* s = std::get_if<std::string>(&value)) return *s;
    const uint64_t u = std::get<uint64_t>(value);
    if (type == SettingType::kEnum) {
        for (const SettingEnumName& name : enum_names) {
            if (name.value == u) return std::string(name.name);
        }
    }
    return std::to_string(u);
}

SettingsReadResult ReadLayerSettings(const void* instance_create_info_pnext) noexcept {
    return ReadSettingsWithTable(SettingDescriptors(), instance_create_info_pnext);
}

namespace settings_internal {

std::vector<SettingCandidate> CollectSettingCandidates(std::span<const SettingKeySpec> keys, const void* instance_create_info_pnext,
                                                       std::vector<std::string>& warnings) {
    // Priority order, highest first (VUL: environment > file > API).
    std::vector<SettingCandidate> candidates;
    CollectEnvironmentCandidates(keys, candidates, warnings);
    CollectFileCandidates(keys, candidates, warnings);
    CollectApiCandidates(keys, instance_create_info_pnext, candidates, warnings);
    return candidates;
}

std::string OutOfRangeWarning(std::string_view key, const SettingValue& value, const std::string& origin) {
    const std::string text = std::visit(
        [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return v;
            } else if constexpr (std::is_same_v<T, bool>) {
                return v ? "true" : "false";
            } else {
                return std::to_string(v);
            }
        },
        value);
    return "Setting " + Quoted(key) + " from " + origin + ": value " + text + " is out of range; ignored.";
}

std::string InternalErrorWarning() { return "Out of memory while reading the layer settings; all settings are at their defaults."; }

}  // namespace settings_internal

}  // namespace execgraph
