// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>

#include <string>
#include <vector>

#include "execgraph/spirv/pass.h"
#include "execgraph/spirv/passes/strip_debug_info_pass.h"
#include "execgraph/spirv/reader.h"
#include "execgraph/spirv/writer.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

class RecordingPass : public Pass {
  public:
    RecordingPass(const char* name, std::vector<std::string>* log, bool modifies, bool fails)
        : name_(name), log_(log), modifies_(modifies), fails_(fails) {}
    const char* Name() const override { return name_; }
    Result<bool> Run(Module&) override {
        log_->push_back(name_);
        if (fails_) return Error{kNoWordOffset, "boom"};
        return modifies_;
    }

  private:
    const char* name_;
    std::vector<std::string>* log_;
    bool modifies_;
    bool fails_;
};

TEST(PassManager, RunsInOrderAndReportsModification) {
    std::vector<std::string> log;
    PassManager manager;
    manager.Add<RecordingPass>("First", &log, false, false);
    manager.Add<RecordingPass>("Second", &log, true, false);
    manager.Add<RecordingPass>("Third", &log, false, false);
    Module module;
    Result<bool> result = manager.Run(module);
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(*result);
    EXPECT_EQ(log, (std::vector<std::string>{"First", "Second", "Third"}));
}

TEST(PassManager, StopsAtFirstErrorAndNamesThePass) {
    std::vector<std::string> log;
    PassManager manager;
    manager.Add<RecordingPass>("Good", &log, false, false);
    manager.Add<RecordingPass>("Bad", &log, false, true);
    manager.Add<RecordingPass>("Never", &log, false, false);
    Module module;
    Result<bool> result = manager.Run(module);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().message, "Bad: boom");
    EXPECT_EQ(log, (std::vector<std::string>{"Good", "Bad"}));
}

TEST(StripDebugInfoPass, RemovesDebugInfoAndStaysValid) {
    const std::vector<std::uint32_t> words = test::ReadWords(test::ShaderPath("compute_spec_debug.spv"));
    Result<Module> module = ReadModule(words);
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    PassManager manager;
    manager.Add<StripDebugInfoPass>();
    Result<bool> changed = manager.Run(*module);
    ASSERT_TRUE(changed.ok()) << changed.error().ToString();
    EXPECT_TRUE(*changed);
    int debug_instructions = 0;
    module->ForEachInstruction([&debug_instructions](const Instruction& inst) {
        const Op op = inst.opcode();
        debug_instructions += op == Op::OpLine || op == Op::OpNoLine || op == Op::OpName || op == Op::OpMemberName ||
                              op == Op::OpString || op == Op::OpSource || op == Op::OpModuleProcessed;
    });
    EXPECT_EQ(debug_instructions, 0);
    const std::vector<std::uint32_t> stripped = WriteModule(*module);
    EXPECT_LT(stripped.size(), words.size());

    spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
    spv_diagnostic diagnostic = nullptr;
    spv_const_binary_t binary{stripped.data(), stripped.size()};
    EXPECT_EQ(spvValidate(context, &binary, &diagnostic), SPV_SUCCESS) << (diagnostic ? diagnostic->error : "");
    spvDiagnosticDestroy(diagnostic);
    spvContextDestroy(context);

    // Running it again finds nothing to do.
    Result<bool> again = manager.Run(*module);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(*again);
}

}  // namespace
}  // namespace execgraph::spirv
