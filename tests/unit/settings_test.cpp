// SPDX-License-Identifier: Apache-2.0
//
// Tests of the layer-settings reader: each source (environment, vk_layer_settings.txt, VK_EXT_layer_settings),
// their priority, VUL's env-var names and file search order, and that bad input only ever yields warnings.
#include "layer/settings.h"

#include <execgraph/vk_amdx_compat.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace execgraph {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------------------------
// Test environment: every variable the reader looks at is saved, cleared for the test and restored afterwards;
// XDG_DATA_HOME and the working directory point at empty temporary folders so that no file of the machine
// running the tests leaks in.

class ScopedTempDir {
  public:
    ScopedTempDir() {
        std::string pattern = (fs::temp_directory_path() / "execgraph_settings_test_XXXXXX").string();
        if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    }
    ~ScopedTempDir() {
        std::error_code error;
        if (!path_.empty()) fs::remove_all(path_, error);
    }
    const fs::path& path() const { return path_; }

  private:
    fs::path path_;
};

void WriteFile(const fs::path& path, const std::string& contents) {
    fs::create_directories(path.parent_path());
    std::ofstream file(path, std::ios::binary);
    file << contents;
}

bool Contains(const std::vector<std::string>& warnings, const std::string& needle) {
    return std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}

std::string Joined(const std::vector<std::string>& warnings) {
    std::string all;
    for (const std::string& w : warnings) all += w + "\n";
    return all;
}

// Keys of the test-only table below, whose env vars must be cleared as well.
constexpr std::array<std::string_view, 4> kTestOnlyKeys = {"test_int", "test_small_uint", "test_enum", "test_text"};

class SettingsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::vector<std::string> names = {"VK_LAYER_SETTINGS_PATH", "XDG_DATA_HOME", "HOME"};
        for (const SettingDescriptor& row : SettingDescriptors()) {
            for (std::string& name : EnvironmentVariableNames(row.key)) names.push_back(std::move(name));
        }
        for (std::string_view key : kTestOnlyKeys) {
            for (std::string& name : EnvironmentVariableNames(key)) names.push_back(std::move(name));
        }
        for (const std::string& name : names) {
            if (const char* value = getenv(name.c_str()))
                saved_env_[name] = value;
            else
                saved_env_[name] = std::nullopt;
            unsetenv(name.c_str());
        }
        saved_cwd_ = fs::current_path();
        ASSERT_FALSE(root_.path().empty());
        data_home_ = root_.path() / "data_home";
        work_dir_ = root_.path() / "work";
        fs::create_directories(data_home_);
        fs::create_directories(work_dir_);
        SetEnv("XDG_DATA_HOME", data_home_.string());
        fs::current_path(work_dir_);
    }

    void TearDown() override {
        fs::current_path(saved_cwd_);
        for (const auto& [name, value] : saved_env_) {
            if (value)
                setenv(name.c_str(), value->c_str(), 1);
            else
                unsetenv(name.c_str());
        }
    }

    static void SetEnv(const std::string& name, const std::string& value) { setenv(name.c_str(), value.c_str(), 1); }

    // Writes a settings file in a folder of its own and points VK_LAYER_SETTINGS_PATH at the file.
    fs::path UseSettingsFile(const std::string& contents) {
        const fs::path file = root_.path() / "explicit" / "vk_layer_settings.txt";
        WriteFile(file, contents);
        SetEnv("VK_LAYER_SETTINGS_PATH", file.string());
        return file;
    }

    ScopedTempDir root_;
    fs::path data_home_;
    fs::path work_dir_;

  private:
    std::map<std::string, std::optional<std::string>> saved_env_;
    fs::path saved_cwd_;
};

// Builds VkLayerSettingEXT entries whose values outlive the entry.
struct ApiSettings {
    std::vector<VkLayerSettingEXT> entries;
    std::vector<std::unique_ptr<uint64_t>> numbers;
    std::vector<std::unique_ptr<const char*>> strings;

    void Bool(const char* layer, const char* name, VkBool32 value) {
        numbers.push_back(std::make_unique<uint64_t>(0));
        *reinterpret_cast<VkBool32*>(numbers.back().get()) = value;
        entries.push_back({layer, name, VK_LAYER_SETTING_TYPE_BOOL32_EXT, 1, numbers.back().get()});
    }
    void Int32(const char* layer, const char* name, int32_t value) {
        numbers.push_back(std::make_unique<uint64_t>(0));
        *reinterpret_cast<int32_t*>(numbers.back().get()) = value;
        entries.push_back({layer, name, VK_LAYER_SETTING_TYPE_INT32_EXT, 1, numbers.back().get()});
    }
    void Uint32(const char* layer, const char* name, uint32_t value) {
        numbers.push_back(std::make_unique<uint64_t>(0));
        *reinterpret_cast<uint32_t*>(numbers.back().get()) = value;
        entries.push_back({layer, name, VK_LAYER_SETTING_TYPE_UINT32_EXT, 1, numbers.back().get()});
    }
    void Int64(const char* layer, const char* name, int64_t value) {
        numbers.push_back(std::make_unique<uint64_t>(static_cast<uint64_t>(value)));
        entries.push_back({layer, name, VK_LAYER_SETTING_TYPE_INT64_EXT, 1, numbers.back().get()});
    }
    void Uint64(const char* layer, const char* name, uint64_t value) {
        numbers.push_back(std::make_unique<uint64_t>(value));
        entries.push_back({layer, name, VK_LAYER_SETTING_TYPE_UINT64_EXT, 1, numbers.back().get()});
    }
    void String(const char* layer, const char* name, const char* value) {
        strings.push_back(std::make_unique<const char*>(value));
        entries.push_back({layer, name, VK_LAYER_SETTING_TYPE_STRING_EXT, 1, strings.back().get()});
    }

    VkLayerSettingsCreateInfoEXT CreateInfo(const void* next = nullptr) const {
        return {VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT, next, static_cast<uint32_t>(entries.size()), entries.data()};
    }
};

// ---------------------------------------------------------------------------------------------------------------
// The table and the naming conventions.

TEST(SettingsTable, ContainsTheInitialSettings) {
    const std::map<std::string_view, SettingType> expected = {
        {"force_enable", SettingType::kBool},
        {"log_to_stderr", SettingType::kBool},
        {"validate_lowered_shaders", SettingType::kBool},
        {"optimize_lowered_shaders", SettingType::kBool},
        {"dump_shaders_path", SettingType::kString},
        {"replace_shaders_path", SettingType::kString},
        {"statistics", SettingType::kBool},
        {"statistics_file", SettingType::kString},
        {"level_timestamps", SettingType::kBool},
        {"overflow_fatal", SettingType::kBool},
        {"debug_labels", SettingType::kBool},
        {"level_pass_records_per_workgroup", SettingType::kUint},
        {"thread_batch_size", SettingType::kUint},
        {"direct_levels", SettingType::kBool},
        {"fixed_levels", SettingType::kBool},
        {"fixed_level_max_workgroups", SettingType::kUint},
        {"direct_levels_max_producer_invocations", SettingType::kUint},
        {"allocation_reservation", SettingType::kEnum},
        {"report_pass", SettingType::kEnum},
        {"record_store_coalescing", SettingType::kEnum},
        {"prepared_levels", SettingType::kBool},
        {"records_newest_first", SettingType::kBool},
    };
    std::map<std::string_view, SettingType> actual;
    for (const SettingDescriptor& row : SettingDescriptors()) {
        EXPECT_TRUE(actual.emplace(row.key, row.type()).second) << "duplicate key " << row.key;
        EXPECT_FALSE(row.description.empty()) << row.key;
    }
    EXPECT_EQ(actual, expected);
}

TEST(SettingsTable, DefaultsMatchStruct) {
    const LayerSettings defaults;
    for (const SettingDescriptor& row : SettingDescriptors()) {
        EXPECT_EQ(FormatSettingValue(row.type(), row.enum_names, row.field.load(defaults)), row.default_value) << row.key;
        // And the default text parses back into the same value.
        std::optional<SettingValue> parsed = ParseSettingText(row.type(), row.enum_names, row.default_value);
        ASSERT_TRUE(parsed.has_value()) << row.key;
        EXPECT_EQ(*parsed, row.field.load(defaults)) << row.key;
    }
    EXPECT_FALSE(defaults.force_enable);
    EXPECT_TRUE(defaults.log_to_stderr);
    EXPECT_FALSE(defaults.validate_lowered_shaders);
    EXPECT_FALSE(defaults.optimize_lowered_shaders);
    EXPECT_TRUE(defaults.dump_shaders_path.empty());
    EXPECT_FALSE(defaults.statistics);
    EXPECT_TRUE(defaults.statistics_file.empty());
    EXPECT_FALSE(defaults.level_timestamps);
    EXPECT_FALSE(defaults.overflow_fatal);
    EXPECT_TRUE(defaults.debug_labels);
}

TEST(SettingsNames, EnvironmentVariableNamesFollowVul) {
    EXPECT_EQ(EnvironmentVariableNames("force_enable"),
              (std::vector<std::string>{"VK_EXECGRAPH_SHADER_ENQUEUE_FORCE_ENABLE", "VK_SHADER_ENQUEUE_FORCE_ENABLE",
                                        "VK_FORCE_ENABLE"}));
    EXPECT_EQ(EnvironmentVariableNames("dump_shaders_path")[0], "VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH");
}

TEST(SettingsNames, FileKeyAndLayerName) {
    EXPECT_STREQ(kLayerName, "VK_LAYER_EXECGRAPH_shader_enqueue");
    EXPECT_EQ(FileSettingKey("force_enable"), "execgraph_shader_enqueue.force_enable");
}

TEST(SettingsParse, BoolSpellings) {
    for (const char* yes : {"true", "TRUE", "True", "1", "on", "ON", "yes", "Yes"}) {
        EXPECT_EQ(ParseSettingText(SettingType::kBool, {}, yes), SettingValue(true)) << yes;
    }
    for (const char* no : {"false", "FALSE", "0", "off", "Off", "no", "NO"}) {
        EXPECT_EQ(ParseSettingText(SettingType::kBool, {}, no), SettingValue(false)) << no;
    }
    for (const char* bad : {"", "2", "maybe", "truee", "t", "y", " true"}) {
        EXPECT_FALSE(ParseSettingText(SettingType::kBool, {}, bad).has_value()) << bad;
    }
}

TEST(SettingsParse, Integers) {
    EXPECT_EQ(ParseSettingText(SettingType::kInt, {}, "-42"), SettingValue(int64_t{-42}));
    EXPECT_EQ(ParseSettingText(SettingType::kInt, {}, "+7"), SettingValue(int64_t{7}));
    EXPECT_EQ(ParseSettingText(SettingType::kInt, {}, "0x10"), SettingValue(int64_t{16}));
    EXPECT_EQ(ParseSettingText(SettingType::kInt, {}, "-9223372036854775808"), SettingValue(INT64_MIN));
    EXPECT_FALSE(ParseSettingText(SettingType::kInt, {}, "9223372036854775808").has_value());
    EXPECT_FALSE(ParseSettingText(SettingType::kInt, {}, "12abc").has_value());
    EXPECT_FALSE(ParseSettingText(SettingType::kInt, {}, "0x").has_value());
    EXPECT_EQ(ParseSettingText(SettingType::kUint, {}, "18446744073709551615"), SettingValue(UINT64_MAX));
    EXPECT_EQ(ParseSettingText(SettingType::kUint, {}, "0XfF"), SettingValue(uint64_t{255}));
    EXPECT_FALSE(ParseSettingText(SettingType::kUint, {}, "-1").has_value());
    EXPECT_FALSE(ParseSettingText(SettingType::kUint, {}, "18446744073709551616").has_value());
}

// ---------------------------------------------------------------------------------------------------------------
// Defaults and environment variables.

TEST_F(SettingsTest, NoSourcesGiveDefaultsAndNoWarnings) {
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
    EXPECT_FALSE(result.settings.force_enable);
    EXPECT_TRUE(result.settings.log_to_stderr);
    EXPECT_TRUE(result.settings.debug_labels);
    EXPECT_TRUE(result.settings.dump_shaders_path.empty());
}

TEST_F(SettingsTest, EachEnvironmentNameFormWorks) {
    for (const std::string& name : EnvironmentVariableNames("force_enable")) {
        SetEnv(name, "1");
        const SettingsReadResult result = ReadLayerSettings(nullptr);
        EXPECT_TRUE(result.settings.force_enable) << name;
        EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
        unsetenv(name.c_str());
    }
}

TEST_F(SettingsTest, EnvironmentNamesAreConsultedInVulOrder) {
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS", "off");
    SetEnv("VK_SHADER_ENQUEUE_STATISTICS", "on");
    SetEnv("VK_STATISTICS", "on");
    EXPECT_FALSE(ReadLayerSettings(nullptr).settings.statistics);
    unsetenv("VK_EXECGRAPH_SHADER_ENQUEUE_STATISTICS");
    SetEnv("VK_STATISTICS", "off");
    EXPECT_TRUE(ReadLayerSettings(nullptr).settings.statistics);  // vendor-trimmed beats namespace-trimmed
}

TEST_F(SettingsTest, EmptyEnvironmentVariableCountsAsUnset) {
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_LOG_TO_STDERR", "");
    SetEnv("VK_SHADER_ENQUEUE_LOG_TO_STDERR", "no");
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_FALSE(result.settings.log_to_stderr);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
}

TEST_F(SettingsTest, EnvironmentValuesAreTrimmedExceptStrings) {
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_OVERFLOW_FATAL", "  Yes \t");
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH", "/tmp/my shaders ");
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_TRUE(result.settings.overflow_fatal);
    EXPECT_EQ(result.settings.dump_shaders_path, "/tmp/my shaders ");
}

TEST_F(SettingsTest, InvalidEnvironmentValueWarnsAndKeepsDefault) {
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_DEBUG_LABELS", "maybe");
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_TRUE(result.settings.debug_labels);
    ASSERT_EQ(result.warnings.size(), 1u) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "VK_EXECGRAPH_SHADER_ENQUEUE_DEBUG_LABELS")) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "\"maybe\"")) << Joined(result.warnings);
}

// ---------------------------------------------------------------------------------------------------------------
// vk_layer_settings.txt

TEST_F(SettingsTest, FileParsing) {
    UseSettingsFile(
        "# A comment line\n"
        "\n"
        "   execgraph_shader_enqueue.force_enable   =   TRUE   # trailing comment\n"
        "execgraph_shader_enqueue.log_to_stderr=off\r\n"
        "\texecgraph_shader_enqueue.dump_shaders_path = /tmp/dump dir\n"
        "khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT\n"
        "khronos_validation.unknown_thing = whatever\n"
        "some line without equals sign of another layer\n"
        "execgraph_shader_enqueue.statistics = yes\n"
        "execgraph_shader_enqueue.statistics = no\n");
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
    EXPECT_TRUE(result.settings.force_enable);
    EXPECT_FALSE(result.settings.log_to_stderr);
    EXPECT_EQ(result.settings.dump_shaders_path, "/tmp/dump dir");
    EXPECT_FALSE(result.settings.statistics);  // the last line for a key wins
}

TEST_F(SettingsTest, FileUnknownKeysAndBadValuesWarnWithLineNumbers) {
    const fs::path file = UseSettingsFile(
        "execgraph_shader_enqueue.force_enabled = true\n"
        "execgraph_shader_enqueue.overflow_fatal = sometimes\n"
        "execgraph_shader_enqueue.debug_labels\n"
        "execgraph_shader_enqueue.validate_lowered_shaders = on\n");
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_EQ(result.warnings.size(), 3u) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, file.string() + ":1: unknown setting \"execgraph_shader_enqueue.force_enabled\""))
        << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, file.string() + ":2: \"execgraph_shader_enqueue.overflow_fatal\" = \"sometimes\""))
        << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, file.string() + ":3: expected")) << Joined(result.warnings);
    EXPECT_FALSE(result.settings.force_enable);
    EXPECT_FALSE(result.settings.overflow_fatal);
    EXPECT_TRUE(result.settings.validate_lowered_shaders);  // a bad line does not spoil the others
}

TEST_F(SettingsTest, FileBadLastValueFallsBackToEarlierLine) {
    UseSettingsFile(
        "execgraph_shader_enqueue.statistics = yes\n"
        "execgraph_shader_enqueue.statistics = yess\n");
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_TRUE(result.settings.statistics);
    EXPECT_EQ(result.warnings.size(), 1u) << Joined(result.warnings);
}

TEST_F(SettingsTest, SettingsPathMayNameAFolder) {
    const fs::path folder = root_.path() / "folder";
    WriteFile(folder / "vk_layer_settings.txt", "execgraph_shader_enqueue.force_enable = 1\n");
    SetEnv("VK_LAYER_SETTINGS_PATH", folder.string());
    std::vector<std::string> warnings;
    EXPECT_EQ(FindSettingsFile(warnings), (folder / "vk_layer_settings.txt").string());
    EXPECT_TRUE(warnings.empty());
    EXPECT_TRUE(ReadLayerSettings(nullptr).settings.force_enable);
}

TEST_F(SettingsTest, FileSearchOrderIsVuls) {
    // 3. the working directory, when nothing else is there
    WriteFile(work_dir_ / "vk_layer_settings.txt", "execgraph_shader_enqueue.dump_shaders_path = cwd\n");
    EXPECT_EQ(ReadLayerSettings(nullptr).settings.dump_shaders_path, "cwd");

    // 2. VK_LAYER_SETTINGS_PATH beats the working directory
    UseSettingsFile("execgraph_shader_enqueue.dump_shaders_path = explicit\n");
    EXPECT_EQ(ReadLayerSettings(nullptr).settings.dump_shaders_path, "explicit");

    // 1. vkconfig's $XDG_DATA_HOME/vulkan/settings.d file beats both
    WriteFile(data_home_ / "vulkan/settings.d/vk_layer_settings.txt", "execgraph_shader_enqueue.dump_shaders_path = xdg\n");
    EXPECT_EQ(ReadLayerSettings(nullptr).settings.dump_shaders_path, "xdg");

    // Only one file is read: keys missing from the winning file are not taken from the others.
    UseSettingsFile("execgraph_shader_enqueue.statistics = on\n");
    EXPECT_FALSE(ReadLayerSettings(nullptr).settings.statistics);
}

TEST_F(SettingsTest, HomeLocalShareIsUsedWithoutXdgDataHome) {
    const fs::path home = root_.path() / "home";
    WriteFile(home / ".local/share/vulkan/settings.d/vk_layer_settings.txt", "execgraph_shader_enqueue.overflow_fatal = true\n");
    unsetenv("XDG_DATA_HOME");
    SetEnv("HOME", home.string());
    EXPECT_TRUE(ReadLayerSettings(nullptr).settings.overflow_fatal);
}

TEST_F(SettingsTest, SettingsPathFolderWithoutFileStopsTheSearch) {
    WriteFile(work_dir_ / "vk_layer_settings.txt", "execgraph_shader_enqueue.force_enable = true\n");
    const fs::path empty_folder = root_.path() / "empty";
    fs::create_directories(empty_folder);
    SetEnv("VK_LAYER_SETTINGS_PATH", empty_folder.string());
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_FALSE(result.settings.force_enable);  // as in VUL, the working directory is not consulted
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
}

TEST_F(SettingsTest, MissingSettingsPathWarnsAndFallsBackToWorkingDirectory) {
    WriteFile(work_dir_ / "vk_layer_settings.txt", "execgraph_shader_enqueue.force_enable = true\n");
    SetEnv("VK_LAYER_SETTINGS_PATH", (root_.path() / "does_not_exist.txt").string());
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_TRUE(result.settings.force_enable);
    EXPECT_TRUE(Contains(result.warnings, "does not exist")) << Joined(result.warnings);
}

TEST_F(SettingsTest, SettingsPathNamingADeviceIsRefused) {
    SetEnv("VK_LAYER_SETTINGS_PATH", "/dev/null");
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_TRUE(Contains(result.warnings, "neither a file nor a folder")) << Joined(result.warnings);
}

TEST_F(SettingsTest, ShippedSampleFileIsValidAndCoversEverySetting) {
    const fs::path sample = fs::path(EXECGRAPH_SOURCE_DIR) / "layer" / "vk_layer_settings.txt";
    ASSERT_TRUE(fs::is_regular_file(sample)) << sample;
    SetEnv("VK_LAYER_SETTINGS_PATH", sample.string());
    const SettingsReadResult result = ReadLayerSettings(nullptr);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);

    std::ifstream file(sample);
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const LayerSettings defaults;
    for (const SettingDescriptor& row : SettingDescriptors()) {
        EXPECT_NE(text.find(FileSettingKey(row.key)), std::string::npos) << row.key << " missing from the sample";
        // The sample's active lines state the defaults, so copying it changes nothing until edited.
        EXPECT_EQ(row.field.load(result.settings), row.field.load(defaults)) << row.key;
    }
}

TEST(SettingsDocs, EverySettingIsDocumented) {
    std::ifstream file(fs::path(EXECGRAPH_SOURCE_DIR) / "docs" / "settings.md");
    ASSERT_TRUE(file.good());
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (const SettingDescriptor& row : SettingDescriptors()) {
        EXPECT_NE(text.find("`" + std::string(row.key) + "`"), std::string::npos) << row.key;
        EXPECT_NE(text.find(EnvironmentVariableNames(row.key)[0]), std::string::npos) << row.key;
        EXPECT_NE(text.find(FileSettingKey(row.key)), std::string::npos) << row.key;
    }
}

// The manifests' settings (json/manifest_settings.json, for Vulkan Configurator) list every setting with its variable.
TEST(SettingsDocs, ManifestListsEverySetting) {
    std::ifstream file(fs::path(EXECGRAPH_SOURCE_DIR) / "json" / "manifest_settings.json");
    ASSERT_TRUE(file.good());
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (const SettingDescriptor& row : SettingDescriptors()) {
        EXPECT_NE(text.find("\"key\": \"" + std::string(row.key) + "\""), std::string::npos) << row.key;
        EXPECT_NE(text.find("\"" + EnvironmentVariableNames(row.key)[0] + "\""), std::string::npos) << row.key;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// VK_EXT_layer_settings

TEST_F(SettingsTest, ApiSettingsOfEachAcceptedType) {
    ApiSettings api;
    api.Bool(kLayerName, "force_enable", VK_TRUE);
    api.Int32(kLayerName, "statistics", 5);
    api.Uint32(kLayerName, "log_to_stderr", 0);
    api.String(kLayerName, "overflow_fatal", " Yes ");
    api.String(kLayerName, "dump_shaders_path", "/tmp/api");
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    const SettingsReadResult result = ReadLayerSettings(&create_info);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
    EXPECT_TRUE(result.settings.force_enable);
    EXPECT_TRUE(result.settings.statistics);
    EXPECT_FALSE(result.settings.log_to_stderr);
    EXPECT_TRUE(result.settings.overflow_fatal);
    EXPECT_EQ(result.settings.dump_shaders_path, "/tmp/api");
}

TEST_F(SettingsTest, OtherLayersEntriesAreIgnored) {
    ApiSettings api;
    api.Bool("VK_LAYER_KHRONOS_validation", "force_enable", VK_TRUE);
    api.Bool("VK_LAYER_KHRONOS_validation", "no_such_setting_of_ours", VK_TRUE);
    api.Bool(nullptr, "force_enable", VK_TRUE);
    api.Bool("VK_LAYER_EXECGRAPH_shader_enqueue_other", "force_enable", VK_TRUE);
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    const SettingsReadResult result = ReadLayerSettings(&create_info);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
    EXPECT_FALSE(result.settings.force_enable);
}

TEST_F(SettingsTest, SeveralChainedCreateInfosAreAllRead) {
    ApiSettings first;
    first.Bool(kLayerName, "statistics", VK_TRUE);
    first.Bool(kLayerName, "debug_labels", VK_FALSE);
    ApiSettings second;
    second.Bool(kLayerName, "statistics", VK_FALSE);  // later in the chain: loses to the first
    second.Bool(kLayerName, "overflow_fatal", VK_TRUE);
    // Unrelated structures in between (the loader adds its own to a layer's VkInstanceCreateInfo::pNext).
    const VkLayerSettingsCreateInfoEXT second_info = second.CreateInfo();
    const VkValidationFeaturesEXT unrelated{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT, &second_info};
    const VkLayerSettingsCreateInfoEXT first_info = first.CreateInfo(&unrelated);
    const VkApplicationInfo head{VK_STRUCTURE_TYPE_APPLICATION_INFO, &first_info};
    const SettingsReadResult result = ReadLayerSettings(&head);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
    EXPECT_TRUE(result.settings.statistics);
    EXPECT_FALSE(result.settings.debug_labels);
    EXPECT_TRUE(result.settings.overflow_fatal);
}

TEST_F(SettingsTest, BadApiEntriesWarnAndNeverCrash) {
    ApiSettings api;
    api.Bool(kLayerName, "not_a_setting", VK_TRUE);
    api.Bool(kLayerName, nullptr, VK_TRUE);
    api.Bool(kLayerName, "dump_shaders_path", VK_TRUE);  // bool for a string setting
    api.Int64(kLayerName, "force_enable", 1);            // INT64 is not accepted for booleans
    api.String(kLayerName, "statistics", "perhaps");
    api.String(kLayerName, "debug_labels", nullptr);
    api.entries.push_back({kLayerName, "overflow_fatal", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 0, nullptr});
    api.entries.push_back({kLayerName, "log_to_stderr", VK_LAYER_SETTING_TYPE_FLOAT32_EXT, 1, api.numbers.back().get()});
    api.entries.push_back(
        {kLayerName, "validate_lowered_shaders", static_cast<VkLayerSettingTypeEXT>(99), 1, api.numbers.back().get()});
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    const SettingsReadResult result = ReadLayerSettings(&create_info);
    EXPECT_EQ(result.warnings.size(), api.entries.size()) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "unknown setting \"not_a_setting\"")) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "pSettingName is NULL")) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "VK_LAYER_SETTING_TYPE_BOOL32_EXT, which cannot be used for a string"))
        << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "VK_LAYER_SETTING_TYPE_INT64_EXT")) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "\"perhaps\"")) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "NULL string")) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "has no value")) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "VK_LAYER_SETTING_TYPE_FLOAT32_EXT")) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "unknown VkLayerSettingTypeEXT")) << Joined(result.warnings);
    const LayerSettings defaults;
    for (const SettingDescriptor& row : SettingDescriptors()) {
        EXPECT_EQ(row.field.load(result.settings), row.field.load(defaults)) << row.key;
    }
}

TEST_F(SettingsTest, NullSettingsArrayAndMultipleValues) {
    const VkLayerSettingsCreateInfoEXT broken{VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT, nullptr, 3, nullptr};
    SettingsReadResult result = ReadLayerSettings(&broken);
    EXPECT_TRUE(Contains(result.warnings, "pSettings is NULL")) << Joined(result.warnings);

    const VkBool32 values[2] = {VK_TRUE, VK_FALSE};
    const VkLayerSettingEXT setting{kLayerName, "force_enable", VK_LAYER_SETTING_TYPE_BOOL32_EXT, 2, values};
    const VkLayerSettingsCreateInfoEXT create_info{VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT, nullptr, 1, &setting};
    result = ReadLayerSettings(&create_info);
    EXPECT_TRUE(result.settings.force_enable);
    EXPECT_TRUE(Contains(result.warnings, "only the first is used")) << Joined(result.warnings);
}

TEST_F(SettingsTest, CyclicPNextChainDoesNotHang) {
    VkApplicationInfo a{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    VkApplicationInfo b{VK_STRUCTURE_TYPE_APPLICATION_INFO, &a};
    a.pNext = &b;
    const SettingsReadResult result = ReadLayerSettings(&a);
    EXPECT_TRUE(Contains(result.warnings, "a cycle?")) << Joined(result.warnings);
}

// ---------------------------------------------------------------------------------------------------------------
// Priority: environment > file > API, and an unusable value falls through to the next source.

TEST_F(SettingsTest, EnvironmentBeatsFileBeatsApi) {
    ApiSettings api;
    api.String(kLayerName, "dump_shaders_path", "from-api");
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    EXPECT_EQ(ReadLayerSettings(&create_info).settings.dump_shaders_path, "from-api");

    UseSettingsFile("execgraph_shader_enqueue.dump_shaders_path = from-file\n");
    EXPECT_EQ(ReadLayerSettings(&create_info).settings.dump_shaders_path, "from-file");

    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_DUMP_SHADERS_PATH", "from-env");
    EXPECT_EQ(ReadLayerSettings(&create_info).settings.dump_shaders_path, "from-env");
}

TEST_F(SettingsTest, UnusableValueFallsThroughToLowerPriority) {
    ApiSettings api;
    api.Bool(kLayerName, "force_enable", VK_TRUE);
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    UseSettingsFile("execgraph_shader_enqueue.force_enable = definitely\n");
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_FORCE_ENABLE", "sure");
    const SettingsReadResult result = ReadLayerSettings(&create_info);
    EXPECT_TRUE(result.settings.force_enable);
    EXPECT_EQ(result.warnings.size(), 2u) << Joined(result.warnings);
}

TEST_F(SettingsTest, SourcesCombinePerKey) {
    ApiSettings api;
    api.Bool(kLayerName, "statistics", VK_TRUE);
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    UseSettingsFile("execgraph_shader_enqueue.overflow_fatal = true\n");
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_DEBUG_LABELS", "false");
    const SettingsReadResult result = ReadLayerSettings(&create_info);
    EXPECT_TRUE(result.settings.statistics);
    EXPECT_TRUE(result.settings.overflow_fatal);
    EXPECT_FALSE(result.settings.debug_labels);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
}

// ---------------------------------------------------------------------------------------------------------------
// The generic machinery with setting types that LayerSettings does not use yet (int, uint, enum).

enum class TestLevel : uint8_t { kQuiet = 0, kNormal = 1, kVerbose = 7 };

struct TestSettings {
    int32_t test_int = -1;
    uint16_t test_small_uint = 10;
    TestLevel test_enum = TestLevel::kNormal;
    std::string test_text = "abc";
};

constexpr SettingEnumName kTestLevelNames[] = {{"quiet", 0}, {"normal", 1}, {"verbose", 7}};

constexpr BasicSettingDescriptor<TestSettings> kTestTable[] = {
    {"test_int", "-1", "A signed test setting.", SettingField<&TestSettings::test_int>()},
    {"test_small_uint", "10", "An unsigned test setting narrower than 64 bits.", SettingField<&TestSettings::test_small_uint>()},
    {"test_enum", "normal", "An enum test setting.", SettingField<&TestSettings::test_enum>(), kTestLevelNames},
    {"test_text", "abc", "A string test setting.", SettingField<&TestSettings::test_text>()},
};

TEST(SettingsGeneric, FieldTypesFollowTheMembers) {
    static_assert(kTestTable[0].type() == SettingType::kInt);
    static_assert(kTestTable[1].type() == SettingType::kUint);
    static_assert(kTestTable[2].type() == SettingType::kEnum);
    static_assert(kTestTable[3].type() == SettingType::kString);
    const TestSettings defaults;
    for (const auto& row : kTestTable) {
        EXPECT_EQ(FormatSettingValue(row.type(), row.enum_names, row.field.load(defaults)), row.default_value) << row.key;
    }
}

TEST(SettingsGeneric, EnumParsing) {
    EXPECT_EQ(ParseSettingText(SettingType::kEnum, kTestLevelNames, "VERBOSE"), SettingValue(uint64_t{7}));
    EXPECT_EQ(ParseSettingText(SettingType::kEnum, kTestLevelNames, "0"), SettingValue(uint64_t{0}));
    EXPECT_FALSE(ParseSettingText(SettingType::kEnum, kTestLevelNames, "3").has_value());
    EXPECT_FALSE(ParseSettingText(SettingType::kEnum, kTestLevelNames, "loud").has_value());
    EXPECT_EQ(FormatSettingValue(SettingType::kEnum, kTestLevelNames, uint64_t{7}), "verbose");
}

TEST_F(SettingsTest, GenericTableFromAllSources) {
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_TEST_INT", "0x20");
    UseSettingsFile(
        "execgraph_shader_enqueue.test_enum = Verbose\n"
        "execgraph_shader_enqueue.test_small_uint = 65535\n");
    ApiSettings api;
    api.String(kLayerName, "test_text", "from api");
    api.Int32(kLayerName, "test_small_uint", 3);  // loses to the file
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    const auto result = ReadSettingsWithTable<TestSettings>(kTestTable, &create_info);
    EXPECT_TRUE(result.warnings.empty()) << Joined(result.warnings);
    EXPECT_EQ(result.settings.test_int, 32);
    EXPECT_EQ(result.settings.test_small_uint, 65535);
    EXPECT_EQ(result.settings.test_enum, TestLevel::kVerbose);
    EXPECT_EQ(result.settings.test_text, "from api");
}

TEST_F(SettingsTest, GenericTableOutOfRangeFallsThrough) {
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_TEST_SMALL_UINT", "65536");  // parses as uint64 but does not fit uint16
    SetEnv("VK_EXECGRAPH_SHADER_ENQUEUE_TEST_INT", "4294967296");    // does not fit int32
    ApiSettings api;
    api.Uint64(kLayerName, "test_small_uint", 12);
    api.Int32(kLayerName, "test_enum", 7);
    api.Uint32(kLayerName, "test_int", 0xFFFFFFFFu);  // fits int64 but not int32
    api.Int64(kLayerName, "test_int", -5);
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    const auto result = ReadSettingsWithTable<TestSettings>(kTestTable, &create_info);
    EXPECT_EQ(result.settings.test_small_uint, 12);
    EXPECT_EQ(result.settings.test_int, -5);
    EXPECT_EQ(result.settings.test_enum, TestLevel::kVerbose);
    EXPECT_EQ(result.warnings.size(), 3u) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings,
                         "from environment variable VK_EXECGRAPH_SHADER_ENQUEUE_TEST_SMALL_UINT: value 65536 is out of range"))
        << Joined(result.warnings);
}

TEST_F(SettingsTest, GenericTableRejectsBadEnumAndSignedness) {
    ApiSettings api;
    api.String(kLayerName, "test_enum", "loud");
    api.Int32(kLayerName, "test_small_uint", -1);
    api.Uint32(kLayerName, "test_enum", 3);
    const VkLayerSettingsCreateInfoEXT create_info = api.CreateInfo();
    const auto result = ReadSettingsWithTable<TestSettings>(kTestTable, &create_info);
    EXPECT_EQ(result.settings.test_enum, TestLevel::kNormal);
    EXPECT_EQ(result.settings.test_small_uint, 10);
    EXPECT_EQ(result.warnings.size(), 3u) << Joined(result.warnings);
    EXPECT_TRUE(Contains(result.warnings, "one of quiet normal verbose")) << Joined(result.warnings);
}

}  // namespace
}  // namespace execgraph
