// SPDX-License-Identifier: Apache-2.0
// execgraph-spirv `lower` and `graph`: runs the built tool (EXECGRAPH_SPIRV_TOOL) on the AMD fixtures and on assembled
// corpus modules and checks that the output has the pieces users rely on (docs/tools.md).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "amdx_assembler.h"

namespace {

namespace fs = std::filesystem;

struct ToolRun {
    int exit_code = -1;
    std::string out;  // stdout and stderr together
};

ToolRun RunTool(const std::string& args) {
    ToolRun run;
    const std::string command = std::string("'") + EXECGRAPH_SPIRV_TOOL + "' " + args + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return run;
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.out.append(buffer, n);
    const int status = pclose(pipe);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
}

std::string Fixture(const std::string& name) {
    return std::string("'") + EXECGRAPH_AMD_FIXTURES_DIR + "/gpu_dispatch/" + name + "'";
}

bool HaveFixtures() { return fs::is_directory(fs::path(EXECGRAPH_AMD_FIXTURES_DIR) / "gpu_dispatch"); }

// This process's scratch folder: CTest runs the tests of this file as parallel processes (`ctest -j`), which would
// overwrite each other's files in one shared folder. One folder per test name and process id; removed at exit.
fs::path ScratchDir() {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string test_name = test != nullptr ? std::string(test->test_suite_name()) + "." + test->name() : "no_test";
    return fs::temp_directory_path() / "execgraph_tool_test" / (test_name + "." + std::to_string(getpid()));
}

class ScratchCleanup : public ::testing::Environment {
  public:
    void TearDown() override {
        const fs::path root = fs::temp_directory_path() / "execgraph_tool_test";
        const std::string suffix = "." + std::to_string(getpid());
        std::error_code ignored;
        for (const fs::directory_entry& entry : fs::directory_iterator(root, ignored)) {
            const std::string name = entry.path().filename().string();
            if (name.size() > suffix.size() && name.ends_with(suffix)) fs::remove_all(entry.path(), ignored);
        }
    }
};
const ::testing::Environment* const kScratchCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

// Assembles tests/spirv_corpus/NAME.spvasm into a temporary .spv the tool can read; returns its quoted path.
std::string CorpusModule(const std::string& name) {
    std::ifstream file(std::string(EXECGRAPH_SPIRV_CORPUS_DIR) + "/" + name + ".spvasm");
    std::stringstream text;
    text << file.rdbuf();
    const execgraph::test::AssembleResult assembled = execgraph::test::AssembleAmdx(text.str());
    EXPECT_TRUE(assembled.ok()) << name << ": " << assembled.error;
    const fs::path dir = ScratchDir();
    fs::create_directories(dir);
    const fs::path path = dir / (name + ".spv");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(assembled.words.data()),
               static_cast<std::streamsize>(assembled.words.size() * sizeof(std::uint32_t)));
    return "'" + path.string() + "'";
}

// The text after the "; lowered" line: the lowered module's disassembly (the summary before it may mention AMDX names).
std::string LoweredPart(const std::string& out) {
    const std::size_t at = out.find("; lowered");
    return at == std::string::npos ? std::string() : out.substr(at);
}

TEST(SpirvToolTest, LowerClassifyPrintsSummaryThenPlainModule) {
    if (!HaveFixtures()) GTEST_SKIP() << "AMD fixtures not found at " << EXECGRAPH_AMD_FIXTURES_DIR;
    const ToolRun run = RunTool("lower " + Fixture("classify_gpu_enqueue_cs_a.spv"));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("launch:        broadcast (dynamic grid)"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("[0] \"compose\""), std::string::npos);
    EXPECT_NE(run.out.find(";   output [0] \"compose\": table offset 0, length 3, record stride 4"), std::string::npos) << run.out;
    const std::string lowered = LoweredPart(run.out);
    ASSERT_FALSE(lowered.empty()) << run.out;
    EXPECT_NE(lowered.find("OpEntryPoint GLCompute"), std::string::npos);
    EXPECT_NE(lowered.find("OpCapability PhysicalStorageBufferAddresses"), std::string::npos);
    EXPECT_EQ(lowered.find("AMDX"), std::string::npos);
    EXPECT_EQ(lowered.find("NodePayload"), std::string::npos);
}

TEST(SpirvToolTest, LowerOptimizeAndExplicitEntry) {
    if (!HaveFixtures()) GTEST_SKIP() << "AMD fixtures not found at " << EXECGRAPH_AMD_FIXTURES_DIR;
    const ToolRun run = RunTool("lower " + Fixture("compose_gpu_enqueue_cs_t.spv") + " main --optimize");
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("launch:        thread"), std::string::npos);
    // Thread nodes run a batch of records per workgroup: the default batch size is the lowered local size.
    EXPECT_NE(run.out.find("; lowered \"main\": local size 32,1,1"), std::string::npos) << run.out.substr(0, 2000);
    EXPECT_NE(run.out.find(", optimized"), std::string::npos);
    EXPECT_EQ(LoweredPart(run.out).find("AMDX"), std::string::npos);
}

TEST(SpirvToolTest, LowerEveryCorpusModule) {
    for (const auto& entry : fs::directory_iterator(EXECGRAPH_SPIRV_CORPUS_DIR)) {
        if (entry.path().extension() != ".spvasm") continue;
        const std::string name = entry.path().stem().string();
        const ToolRun run = RunTool("lower " + CorpusModule(name));
        if (name == "revision2023_reject") {
            EXPECT_EQ(run.exit_code, 1) << run.out;
            EXPECT_NE(run.out.find("2023"), std::string::npos) << run.out;
            continue;
        }
        EXPECT_EQ(run.exit_code, 0) << name << ":\n" << run.out;
        const std::string lowered = LoweredPart(run.out);
        EXPECT_FALSE(lowered.empty()) << name;
        EXPECT_EQ(lowered.find("AMDX"), std::string::npos) << name;
    }
}

TEST(SpirvToolTest, LowerReportsNonNodeEntryPoints) {
    if (!HaveFixtures()) GTEST_SKIP() << "AMD fixtures not found at " << EXECGRAPH_AMD_FIXTURES_DIR;
    const ToolRun run = RunTool("lower " + Fixture("geometry_ps.spv"));
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.out.find("not GLCompute"), std::string::npos) << run.out;
}

TEST(SpirvToolTest, GraphHasClassifyToComposeEdges) {
    if (!HaveFixtures()) GTEST_SKIP() << "AMD fixtures not found at " << EXECGRAPH_AMD_FIXTURES_DIR;
    const ToolRun run = RunTool("graph " + Fixture("classify_gpu_enqueue_cs_a.spv") + "=classify " +
                                Fixture("compose_gpu_enqueue_cs_a.spv") + "=compose:0 " + Fixture("compose_gpu_enqueue_cs_fe.spv") +
                                "=compose:1 " + Fixture("compose_gpu_enqueue_cs_de.spv") + "=compose:2 " + Fixture("geometry_ps.spv"));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("digraph execgraph {"), std::string::npos);
    EXPECT_NE(run.out.find("\"classify[0]\" [label=\"classify[0]\\nbroadcast (dynamic grid)"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("\"compose[0]\" [label=\"compose[0]\\ncoalescing"), std::string::npos) << run.out;
    for (const char* target : {"compose[0]", "compose[1]", "compose[2]"}) {
        EXPECT_NE(run.out.find(std::string("\"classify[0]\" -> \"") + target + "\""), std::string::npos) << target << "\n" << run.out;
    }
    EXPECT_EQ(run.out.find("style=dashed"), std::string::npos) << "every classify output is matched";
    EXPECT_NE(run.out.find("skipped"), std::string::npos) << "the raster shader is reported, not drawn";
}

TEST(SpirvToolTest, GraphUnmatchedOutputIsDashedPlaceholder) {
    if (!HaveFixtures()) GTEST_SKIP() << "AMD fixtures not found at " << EXECGRAPH_AMD_FIXTURES_DIR;
    const ToolRun run = RunTool("graph " + Fixture("classify_gpu_enqueue_cs_fe.spv") + "=classify");
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("\"classify[0]\" -> \"compose[0..2]?\""), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("style=dashed"), std::string::npos);
}

TEST(SpirvToolTest, GraphRecursionIsSelfLoopAndChainsByName) {
    const ToolRun run = RunTool("graph " + CorpusModule("vkd3d_basic_recursion_entry") + " " + CorpusModule("vkd3d_basic_recursion_recursive") +
                                " " + CorpusModule("hello_first_node") + " " + CorpusModule("hello_second_node") + " " +
                                CorpusModule("hello_third_node"));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("\"EntryNode[0]\" -> \"Recursive[0]\""), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("\"Recursive[0]\" -> \"Recursive[0]\""), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("max recursion"), std::string::npos);
    EXPECT_NE(run.out.find("\"firstNode[0]\" -> \"secondNode[0]\""), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("\"secondNode[0]\" -> \"thirdNode[0]\""), std::string::npos) << run.out;
}

TEST(SpirvToolTest, GraphSparseOutputIsDashed) {
    const ToolRun run = RunTool("graph " + CorpusModule("output_sparse_array"));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("style=dashed"), std::string::npos) << run.out;
}

TEST(SpirvToolTest, UsageErrors) {
    EXPECT_EQ(RunTool("lower").exit_code, 64);
    EXPECT_EQ(RunTool("lower a.spv b c").exit_code, 64);
    EXPECT_EQ(RunTool("graph").exit_code, 64);
    const ToolRun missing = RunTool("lower /nonexistent/file.spv");
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.out.find("cannot open file"), std::string::npos) << missing.out;
}

}  // namespace
