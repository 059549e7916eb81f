// SPDX-License-Identifier: Apache-2.0
// Seeds fuzz/corpus: assembles every tests/spirv_corpus/*.spvasm with the AMDX front end and copies every AMD fixture
// .spv, so the fuzzer starts from real DXC output and from each AMDX feature the tests cover.
//   execgraph_spirv_fuzz_make_corpus SPVASM_DIR AMD_FIXTURES_DIR OUT_DIR
// (CMake target execgraph_spirv_fuzz_seed_corpus runs it with the repository's paths.)
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "amdx_assembler.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s SPVASM_DIR AMD_FIXTURES_DIR OUT_DIR\n", argv[0]);
        return 64;
    }
    const fs::path spvasm_dir(argv[1]);
    const fs::path fixtures_dir(argv[2]);
    const fs::path out_dir(argv[3]);
    fs::create_directories(out_dir);
    int written = 0;
    int failed = 0;
    for (const auto& entry : fs::directory_iterator(spvasm_dir)) {
        if (entry.path().extension() != ".spvasm") continue;
        std::ifstream file(entry.path());
        std::stringstream text;
        text << file.rdbuf();
        const execgraph::test::AssembleResult assembled = execgraph::test::AssembleAmdx(text.str());
        if (!assembled.ok()) {
            std::fprintf(stderr, "%s: %s\n", entry.path().c_str(), assembled.error.c_str());
            ++failed;
            continue;
        }
        const fs::path out = out_dir / ("corpus_" + entry.path().stem().string() + ".spv");
        std::ofstream(out, std::ios::binary)
            .write(reinterpret_cast<const char*>(assembled.words.data()),
                   static_cast<std::streamsize>(assembled.words.size() * sizeof(std::uint32_t)));
        ++written;
    }
    std::error_code error;
    if (fs::is_directory(fixtures_dir, error)) {
        for (const auto& entry : fs::recursive_directory_iterator(fixtures_dir)) {
            if (entry.path().extension() != ".spv") continue;
            // Flattened as amd_<sample>_<shader>.spv: shader names repeat across samples.
            const fs::path out = out_dir / ("amd_" + entry.path().parent_path().filename().string() + "_" + entry.path().filename().string());
            fs::copy_file(entry.path(), out, fs::copy_options::overwrite_existing, error);
            if (error) {
                std::fprintf(stderr, "%s: %s\n", entry.path().c_str(), error.message().c_str());
                ++failed;
                continue;
            }
            fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
            ++written;
        }
    } else {
        std::fprintf(stderr, "note: %s not found; only the assembled corpus was written\n", fixtures_dir.c_str());
    }
    std::printf("wrote %d seed inputs to %s\n", written, out_dir.c_str());
    return failed == 0 ? 0 : 1;
}
