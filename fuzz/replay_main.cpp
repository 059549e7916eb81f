// SPDX-License-Identifier: Apache-2.0
// Replays LLVMFuzzerTestOneInput over files and folders without libFuzzer, so the normal (g++) test build can keep the
// seed corpus and every past crash input green: `execgraph_spirv_fuzz_replay fuzz/corpus fuzz/regressions`.
// A crash aborts the process (and the sanitizers report it when the build enables them); the file being run is printed
// first so the failing input is obvious in CI logs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool RunFile(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        std::fprintf(stderr, "replay: cannot open %s\n", path.c_str());
        return false;
    }
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    // A fresh heap copy of exactly the file's size, so ASan catches reads past the end like libFuzzer would.
    std::vector<std::uint8_t> exact(bytes);
    LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 64;
    }
    std::size_t runs = 0;
    bool ok = true;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path arg(argv[i]);
        std::error_code error;
        if (std::filesystem::is_directory(arg, error)) {
            // Sorted so that runs are reproducible across file systems.
            std::vector<std::filesystem::path> files;
            for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
                if (entry.is_regular_file() && entry.path().filename().string().front() != '.' &&
                    entry.path().extension() != ".md") {
                    files.push_back(entry.path());
                }
            }
            std::sort(files.begin(), files.end());
            for (const auto& file : files) ok = RunFile(file) && ok, ++runs;
        } else {
            ok = RunFile(arg) && ok;
            ++runs;
        }
    }
    std::fprintf(stderr, "replay: %zu inputs, %s\n", runs, ok ? "no crash" : "some inputs could not be read");
    return ok && runs > 0 ? 0 : 1;
}
