// SPDX-License-Identifier: Apache-2.0
//
// Layer settings, read the way Vulkan-Utility-Libraries (VUL) layers read them, so that users configure this
// layer exactly like the validation or extension layers (style-and-ecosystem.md 2.4). VUL itself is not
// packaged on Debian bookworm, hence this small reader of our own.
//
// Three sources, highest priority first:
//   1. environment variables   VK_EXECGRAPH_SHADER_ENQUEUE_<KEY>, then VK_SHADER_ENQUEUE_<KEY>, then VK_<KEY>
//   2. the settings file       execgraph_shader_enqueue.<key> = <value>   in vk_layer_settings.txt
//   3. the Vulkan API          VkLayerSettingEXT entries with pLayerName == kLayerName, in
//                              VkLayerSettingsCreateInfoEXT structs chained to VkInstanceCreateInfo::pNext
// A value that cannot be used (unparsable, wrong type, out of range) is reported as a warning and the next
// source is consulted, so one typo never costs the user a setting given elsewhere.
//
// Adding a setting takes two lines: a field (with its default) in LayerSettings, and a row in the table in
// settings.cpp. Everything else (three sources, parsing, warnings, docs checks in the tests) follows from them.
//
// Nothing here throws or prints: the layer runs inside games. Problems become human-readable warnings that
// the caller emits through VK_EXT_debug_utils (or stderr if log_to_stderr).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace execgraph {

// Must match the manifest's "name". VUL derives the env-var and file-key spellings from it (see
// EnvironmentVariableNames and FileSettingKey).
inline constexpr char kLayerName[] = "VK_LAYER_EXECGRAPH_shader_enqueue";
// lower(kLayerName without "VK_LAYER_") + ".", VUL's GetFileSettingName convention.
inline constexpr char kSettingsFileKeyPrefix[] = "execgraph_shader_enqueue.";
inline constexpr char kSettingsFileName[] = "vk_layer_settings.txt";

// The `allocation_reservation` setting's values.
enum class AllocationReservation : uint8_t { kAuto = 0, kWorkgroup = 1, kSubgroup = 2 };
// The `record_store_coalescing` setting's values.
enum class RecordStoreCoalescing : uint8_t { kAuto = 0, kOn = 1, kOff = 2 };
// The `report_pass` setting's values.
enum class ReportPass : uint8_t { kAuto = 0, kPreparer = 1, kFinish = 2 };

// Every setting of the layer, with its default. Keep in sync with the table in settings.cpp (a test checks
// that each row's default text matches the default written here).
struct LayerSettings {
    // Emulate VK_AMDX_shader_enqueue even on a driver that exposes it natively.
    bool force_enable = false;
    // Print messages to stderr when the application has no VK_EXT_debug_utils messenger.
    bool log_to_stderr = true;
    // Run spirv-val on every lowered shader module.
    bool validate_lowered_shaders = false;
    // Run the SPIRV-Tools performance passes on every lowered shader module.
    bool optimize_lowered_shaders = false;
    // Folder into which original and lowered SPIR-V modules and GLSL renderings are written; empty disables dumping.
    std::string dump_shaders_path;
    // Folder whose graph<N>_<node>_<index>.lowered.spv files replace those nodes' lowered modules; empty disables it.
    std::string replace_shaders_path;
    // One JSON line of statistics per graph dispatch, through debug utils (INFO, EXECGRAPH-STATISTICS).
    bool statistics = false;
    // With `statistics`: also append each line to this file; empty: debug utils only.
    std::string statistics_file;
    // GPU time of each graph dispatch and of each of its levels, from timestamp queries, in the statistics line (turns
    // `statistics` on).
    bool level_timestamps = false;
    // Abort the process after reporting a graph dispatch that dropped work (for CI).
    bool overflow_fatal = false;
    // Label graph dispatches, levels and node dispatches with debug-utils labels (when VK_EXT_debug_utils is enabled).
    bool debug_labels = true;
    // Records each workgroup of the fused level pass scatters (GraphHeader::level_pass_records_per_workgroup); 0: by
    // device type (LevelPassRecordsPerWorkgroupFor in layer/scheduler.h).
    uint32_t level_pass_records_per_workgroup = 0;
    // Records one lowered workgroup of a thread node runs (its batch); 0: by device type (ThreadBatchSizeFor in
    // layer/scheduler.h), kLeafThreadBatchSize for nodes without outputs. Clamped to the device's workgroup size limits.
    uint32_t thread_batch_size = 0;
    // Run levels whose records all go to one thread, coalescing or static broadcast node without a level pass (GraphPlan's direct levels).
    bool direct_levels = true;
    // Dispatch direct levels whose workgroups the host can bound without indirect arguments (GraphPlan's fixed levels,
    // DispatchOptions::fixed_level_max_workgroups).
    bool fixed_levels = true;
    // The most workgroups a fixed level may launch; 0: by device type (FixedLevelMaxWorkgroupsFor in layer/scheduler.h).
    uint32_t fixed_level_max_workgroups = 0;
    // The most invocations one record of a node may run for the node to get the level hand-off, which prepares a direct
    // level after it; 0: by device type (HandOffMaxInvocationsPerRecordFor in layer/scheduler.h).
    uint32_t direct_levels_max_producer_invocations = 0;
    // How lowered broadcast and coalescing nodes reserve Invocation-visibility allocations that all their invocations
    // reach (spirv::LoweringOptions::reserve_per_workgroup); kAuto: by device type (ReservesPerWorkgroupFor in
    // layer/scheduler.h).
    AllocationReservation allocation_reservation = AllocationReservation::kAuto;
    ReportPass report_pass = ReportPass::kAuto;
    // Whether lowered nodes write one-record allocations of 32 to 128 bytes per subgroup, transposed
    // (spirv::LoweringOptions::coalesce_record_stores); kAuto: by device type (CoalescesRecordStoresFor in layer/scheduler.h).
    RecordStoreCoalescing record_store_coalescing = RecordStoreCoalescing::kAuto;
    // Opt-in: record a graph dispatch's levels once into a secondary command buffer and execute it again while the
    // commands would be the same (layer/prepared_levels.h). Leaves the command buffer's non-compute state undefined.
    bool prepared_levels = false;
    // Whether the single consumer of a level whose records are placed by index reads them newest first
    // (spirv::LoweringOptions::records_newest_first).
    bool records_newest_first = true;
};

enum class SettingType : uint8_t { kBool, kInt, kUint, kString, kEnum };

// One accepted spelling of an enum setting (compared case-insensitively) and the value it stands for.
struct SettingEnumName {
    std::string_view name;
    uint64_t value;
};

// A parsed value: kBool -> bool, kInt -> int64_t, kUint and kEnum -> uint64_t, kString -> std::string.
using SettingValue = std::variant<bool, int64_t, uint64_t, std::string>;

// Typed access to one field of a settings struct, generated by SettingField<&Settings::member>().
template <typename Settings>
struct BasicSettingField {
    SettingType type;
    // Stores the value; false if it does not fit the field (e.g. an int64 beyond an int32 field).
    bool (*store)(Settings& settings, const SettingValue& value);
    SettingValue (*load)(const Settings& settings);
};

// One row of the settings table.
template <typename Settings>
struct BasicSettingDescriptor {
    std::string_view key;            // e.g. "force_enable"; the API setting name and the file/env suffix
    std::string_view default_value;  // the default as it would be written in vk_layer_settings.txt
    std::string_view description;    // one sentence, used by docs and the sample settings file
    BasicSettingField<Settings> field;
    std::span<const SettingEnumName> enum_names = {};  // only for SettingType::kEnum

    constexpr SettingType type() const { return field.type; }
};

using SettingDescriptor = BasicSettingDescriptor<LayerSettings>;

template <typename Settings>
struct BasicSettingsReadResult {
    Settings settings;
    std::vector<std::string> warnings;  // to be emitted by the caller through debug utils
};

using SettingsReadResult = BasicSettingsReadResult<LayerSettings>;

// Reads all three sources. instance_create_info_pnext is VkInstanceCreateInfo::pNext (may be null).
SettingsReadResult ReadLayerSettings(const void* instance_create_info_pnext) noexcept;

// The table of all settings, in documentation order.
std::span<const SettingDescriptor> SettingDescriptors();

// Env-var names VUL-style for one key, in lookup order: VK_EXECGRAPH_SHADER_ENQUEUE_<KEY>,
// VK_SHADER_ENQUEUE_<KEY> (vendor trimmed), VK_<KEY> (namespace trimmed).
std::vector<std::string> EnvironmentVariableNames(std::string_view key);

// The key as written in vk_layer_settings.txt: "execgraph_shader_enqueue.<key>".
std::string FileSettingKey(std::string_view key);

// The settings file that would be read, VUL's search order (see settings.cpp); nullopt if there is none.
// Problems met on the way (e.g. VK_LAYER_SETTINGS_PATH naming nothing) are appended to warnings.
std::optional<std::string> FindSettingsFile(std::vector<std::string>& warnings);

// Parses a textual value (env var or file) for a setting of the given type. Bools accept true/false, 1/0,
// on/off, yes/no in any case; integers are decimal or 0x-prefixed hexadecimal; enums accept their names
// (any case) or their numeric value.
std::optional<SettingValue> ParseSettingText(SettingType type, std::span<const SettingEnumName> enum_names, std::string_view text);

// Formats a value the way ParseSettingText reads it back (enums by name).
std::string FormatSettingValue(SettingType type, std::span<const SettingEnumName> enum_names, const SettingValue& value);

// -------------------------------------------------------------------------------------------------------------
// Implementation details shared with the header templates. Not for use outside settings.{h,cpp} and tests.
namespace settings_internal {

struct SettingKeySpec {
    std::string_view key;
    SettingType type;
    std::span<const SettingEnumName> enum_names;
};

// A usable value found for setting `index`, from the source described by `origin` (for warnings).
struct SettingCandidate {
    size_t index;
    SettingValue value;
    std::string origin;
};

// Reads the three sources and returns, for every key, its parsed candidates in priority order (environment,
// then file, then API entries in chain order). Unparsable values and unknown keys become warnings.
std::vector<SettingCandidate> CollectSettingCandidates(std::span<const SettingKeySpec> keys, const void* instance_create_info_pnext,
                                                       std::vector<std::string>& warnings);

std::string OutOfRangeWarning(std::string_view key, const SettingValue& value, const std::string& origin);
std::string InternalErrorWarning();

template <typename T>
struct MemberPointerTraits;
template <typename C, typename F>
struct MemberPointerTraits<F C::*> {
    using Class = C;
    using Field = F;
};

template <typename Field>
constexpr SettingType NaturalSettingType() {
    if constexpr (std::is_same_v<Field, bool>) {
        return SettingType::kBool;
    } else if constexpr (std::is_same_v<Field, std::string>) {
        return SettingType::kString;
    } else if constexpr (std::is_enum_v<Field>) {
        return SettingType::kEnum;
    } else if constexpr (std::is_integral_v<Field> && std::is_signed_v<Field>) {
        return SettingType::kInt;
    } else {
        static_assert(std::is_integral_v<Field> && std::is_unsigned_v<Field>, "unsupported settings field type");
        return SettingType::kUint;
    }
}

template <auto kMember>
bool StoreField(typename MemberPointerTraits<decltype(kMember)>::Class& settings, const SettingValue& value) {
    using Field = typename MemberPointerTraits<decltype(kMember)>::Field;
    if constexpr (std::is_same_v<Field, bool>) {
        if (const bool* v = std::get_if<bool>(&value)) {
            settings.*kMember = *v;
            return true;
        }
    } else if constexpr (std::is_same_v<Field, std::string>) {
        if (const std::string* v = std::get_if<std::string>(&value)) {
            settings.*kMember = *v;
            return true;
        }
    } else if constexpr (std::is_enum_v<Field>) {
        using Underlying = std::underlying_type_t<Field>;
        if (const uint64_t* v = std::get_if<uint64_t>(&value); v && std::in_range<Underlying>(*v)) {
            settings.*kMember = static_cast<Field>(*v);
            return true;
        }
    } else if constexpr (std::is_signed_v<Field>) {
        if (const int64_t* v = std::get_if<int64_t>(&value); v && std::in_range<Field>(*v)) {
            settings.*kMember = static_cast<Field>(*v);
            return true;
        }
    } else {
        if (const uint64_t* v = std::get_if<uint64_t>(&value); v && std::in_range<Field>(*v)) {
            settings.*kMember = static_cast<Field>(*v);
            return true;
        }
    }
    return false;
}

template <auto kMember>
SettingValue LoadField(const typename MemberPointerTraits<decltype(kMember)>::Class& settings) {
    using Field = typename MemberPointerTraits<decltype(kMember)>::Field;
    if constexpr (std::is_same_v<Field, bool> || std::is_same_v<Field, std::string>) {
        return settings.*kMember;
    } else if constexpr (std::is_enum_v<Field>) {
        return static_cast<uint64_t>(settings.*kMember);
    } else if constexpr (std::is_signed_v<Field>) {
        return static_cast<int64_t>(settings.*kMember);
    } else {
        return static_cast<uint64_t>(settings.*kMember);
    }
}

}  // namespace settings_internal

// Binds a table row to a field; the setting's type follows from the field's C++ type (bool, signed or
// unsigned integer, std::string, enum).
template <auto kMember>
constexpr auto SettingField() {
    using Traits = settings_internal::MemberPointerTraits<decltype(kMember)>;
    return BasicSettingField<typename Traits::Class>{settings_internal::NaturalSettingType<typename Traits::Field>(),
                                                     &settings_internal::StoreField<kMember>,
                                                     &settings_internal::LoadField<kMember>};
}

// Reads all three sources for an arbitrary table. ReadLayerSettings is this with SettingDescriptors(); tests
// use it with tables of their own to cover types that LayerSettings does not use yet.
template <typename Settings>
BasicSettingsReadResult<Settings> ReadSettingsWithTable(std::span<const BasicSettingDescriptor<Settings>> table,
                                                        const void* instance_create_info_pnext) noexcept {
    BasicSettingsReadResult<Settings> result;
#if defined(__cpp_exceptions)
    try {
#endif
        std::vector<settings_internal::SettingKeySpec> keys;
        keys.reserve(table.size());
        for (const auto& row : table) keys.push_back({row.key, row.type(), row.enum_names});
        const std::vector<settings_internal::SettingCandidate> candidates =
            settings_internal::CollectSettingCandidates(keys, instance_create_info_pnext, result.warnings);
        // Candidates come in priority order; the first one that fits its field wins.
        std::vector<bool> decided(table.size(), false);
        for (const auto& candidate : candidates) {
            if (decided[candidate.index]) continue;
            const auto& row = table[candidate.index];
            if (row.field.store(result.settings, candidate.value)) {
                decided[candidate.index] = true;
            } else {
                result.warnings.push_back(settings_internal::OutOfRangeWarning(row.key, candidate.value, candidate.origin));
            }
        }
#if defined(__cpp_exceptions)
    } catch (...) {
        // Only std::bad_alloc can get here. Fall back to the defaults rather than take the application down.
        result.settings = Settings{};
        try {
            result.warnings.push_back(settings_internal::InternalErrorWarning());
        } catch (...) {
        }
    }
#endif
    return result;
}

}  // namespace execgraph
