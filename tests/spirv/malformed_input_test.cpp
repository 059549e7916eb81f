// SPDX-License-Identifier: Apache-2.0
// Malformed input must produce an Error with a word offset and a reason, never a crash (run under ASan/UBSan in CI).
#include <gtest/gtest.h>

#include <random>

#include "execgraph/spirv/reader.h"
#include "execgraph/spirv/writer.h"
#include "test_util.h"

namespace execgraph::spirv {
namespace {

constexpr std::uint32_t kOpName = 5, kOpExtension = 10, kOpMemoryModel = 14, kOpEntryPoint = 15, kOpExecutionMode = 16,
                        kOpCapability = 17, kOpTypeVoid = 19, kOpTypeInt = 21, kOpTypeFunction = 33, kOpConstant = 43,
                        kOpFunction = 54, kOpFunctionEnd = 56, kOpDecorate = 71, kOpLabel = 248, kOpReturn = 253;

// A minimal valid compute module; `extra_types` lets a test add instructions to the types section.
test::WordBuilder MinimalModule(std::uint32_t bound = 8) {
    test::WordBuilder b(bound);
    b.Op(kOpCapability, {1});
    b.Op(kOpMemoryModel, {0, 1});
    b.OpWithString(kOpEntryPoint, {5, 3}, "main");
    b.Op(kOpExecutionMode, {3, 17, 1, 1, 1});
    b.Op(kOpTypeVoid, {1});
    b.Op(kOpTypeFunction, {2, 1});
    return b;
}
test::WordBuilder& AddMainFunction(test::WordBuilder& b) {
    b.Op(kOpFunction, {1, 3, 0, 2});
    b.Op(kOpLabel, {4});
    b.Op(kOpReturn, {});
    b.Op(kOpFunctionEnd, {});
    return b;
}

Error ExpectError(const std::vector<std::uint32_t>& words) {
    Result<Module> module = ReadModule(words);
    EXPECT_FALSE(module.ok());
    return module.ok() ? Error{} : module.error();
}

TEST(Malformed, MinimalModuleIsValid) {
    test::WordBuilder b = MinimalModule();
    AddMainFunction(b);
    Result<Module> module = ReadModule(b.words());
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    EXPECT_EQ(WriteModule(*module), b.words());
}

TEST(Malformed, TruncatedHeader) {
    const Error error = ExpectError({0x07230203u, 0x00010600u});
    EXPECT_EQ(error.word_offset, 2u);
    EXPECT_NE(error.message.find("truncated"), std::string::npos);
    const std::uint8_t bytes[] = {0x03, 0x02, 0x23, 0x07, 0x00, 0x06};
    Result<Module> from_bytes = ReadModuleBytes(bytes);
    ASSERT_FALSE(from_bytes.ok());
    EXPECT_NE(from_bytes.error().message.find("whole number of words"), std::string::npos);
}

TEST(Malformed, BadMagic) {
    test::WordBuilder b = MinimalModule();
    std::vector<std::uint32_t> words = AddMainFunction(b).words();
    words[0] = 0x12345678u;
    const Error error = ExpectError(words);
    EXPECT_EQ(error.word_offset, 0u);
    EXPECT_NE(error.message.find("magic"), std::string::npos);
}

TEST(Malformed, UnsupportedVersion) {
    test::WordBuilder b(8, 0x00010700u);
    const Error error = ExpectError(b.words());
    EXPECT_EQ(error.word_offset, 1u);
    EXPECT_NE(error.message.find("version"), std::string::npos);
}

TEST(Malformed, WordCountZero) {
    test::WordBuilder b = MinimalModule();
    std::vector<std::uint32_t> words = b.words();
    words.push_back(kOpTypeInt);  // word count 0
    const Error error = ExpectError(words);
    EXPECT_EQ(error.word_offset, words.size() - 1);
    EXPECT_NE(error.message.find("word count is 0"), std::string::npos);
}

TEST(Malformed, WordCountPastEnd) {
    test::WordBuilder b = MinimalModule();
    std::vector<std::uint32_t> words = b.words();
    words.push_back((9u << 16) | kOpTypeInt);
    words.push_back(7);
    const Error error = ExpectError(words);
    EXPECT_EQ(error.word_offset, words.size() - 2);
    EXPECT_NE(error.message.find("past the end"), std::string::npos);
}

TEST(Malformed, IdAtOrAboveBound) {
    test::WordBuilder b = MinimalModule(8);
    b.Op(kOpTypeInt, {8, 32, 0});  // result id == bound
    AddMainFunction(b);
    const Error error = ExpectError(b.words());
    EXPECT_NE(error.message.find("out of bounds"), std::string::npos);
    EXPECT_EQ(b.words()[error.word_offset], 8u);  // the offset names the offending word itself

    test::WordBuilder c = MinimalModule(8);
    c.Op(kOpTypeFunction, {6, 100});  // operand id past the bound
    AddMainFunction(c);
    const Error operand_error = ExpectError(c.words());
    EXPECT_EQ(c.words()[operand_error.word_offset], 100u);
}

TEST(Malformed, UnknownOpcode) {
    test::WordBuilder b = MinimalModule();
    b.Op(4999, {1, 2});
    const Error error = ExpectError(b.words());
    EXPECT_EQ(error.word_offset, b.words().size() - 3);
    EXPECT_NE(error.message.find("unknown opcode 4999"), std::string::npos);
}

TEST(Malformed, TooFewAndTooManyOperands) {
    test::WordBuilder few = MinimalModule();
    few.Op(kOpTypeInt, {6, 32});  // missing signedness
    AddMainFunction(few);
    EXPECT_NE(ExpectError(few.words()).message.find("missing LiteralInteger"), std::string::npos);

    test::WordBuilder many = MinimalModule();
    many.Op(kOpTypeInt, {6, 32, 0, 9});
    AddMainFunction(many);
    const Error error = ExpectError(many.words());
    EXPECT_NE(error.message.find("unexpected word"), std::string::npos);
    EXPECT_EQ(many.words()[error.word_offset], 9u);
}

TEST(Malformed, ConstantWidthMustMatchType) {
    test::WordBuilder b = MinimalModule();
    b.Op(kOpTypeInt, {6, 64, 0});
    b.Op(kOpConstant, {6, 7, 1});  // a 64-bit constant needs two words
    AddMainFunction(b);
    EXPECT_NE(ExpectError(b.words()).message.find("runs past the end of the instruction"), std::string::npos);
}

TEST(Malformed, UnterminatedString) {
    test::WordBuilder b(8);
    b.Op(kOpCapability, {1});
    b.Op(kOpExtension, {0x41414141u, 0x42424242u});  // no NUL byte
    const Error error = ExpectError(b.words());
    EXPECT_EQ(error.word_offset, 8u);
    EXPECT_NE(error.message.find("unterminated string"), std::string::npos);
}

TEST(Malformed, UnknownParameterizedEnumerant) {
    test::WordBuilder b = MinimalModule();
    b.Op(kOpDecorate, {1, 4444});  // Decoration 4444 does not exist; its operand count is unknowable
    const Error error = ExpectError(b.words());
    EXPECT_NE(error.message.find("unknown Decoration 4444"), std::string::npos);
}

TEST(Malformed, WrongSection) {
    test::WordBuilder b(8);
    b.Op(kOpMemoryModel, {0, 1});
    b.Op(kOpCapability, {1});  // capabilities come first
    Error error = ExpectError(b.words());
    EXPECT_EQ(error.word_offset, 8u);
    EXPECT_NE(error.message.find("wrong section"), std::string::npos);

    test::WordBuilder c = MinimalModule();
    c.Op(kOpFunction, {1, 3, 0, 2});
    c.Op(kOpLabel, {4});
    c.Op(kOpTypeInt, {6, 32, 0});  // a type inside a function
    c.Op(kOpReturn, {});
    c.Op(kOpFunctionEnd, {});
    error = ExpectError(c.words());
    EXPECT_NE(error.message.find("not allowed inside a function"), std::string::npos);

    test::WordBuilder d = MinimalModule();
    AddMainFunction(d);
    d.OpWithString(kOpName, {1}, "late");  // debug names after the functions
    error = ExpectError(d.words());
    EXPECT_NE(error.message.find("wrong section"), std::string::npos);
}

TEST(Malformed, UndefinedIdAndDuplicateDefinition) {
    test::WordBuilder b = MinimalModule();  // entry point names %3, but no function defines it
    Error error = ExpectError(b.words());
    EXPECT_NE(error.message.find("never defined"), std::string::npos);

    test::WordBuilder dup = MinimalModule();
    dup.Op(kOpTypeInt, {1, 32, 0});  // %1 is already OpTypeVoid
    error = ExpectError(dup.words());
    EXPECT_NE(error.message.find("defined twice"), std::string::npos);
}

TEST(Malformed, TruncationAtEveryWordOfARealModule) {
    const std::vector<std::uint32_t> words = test::ReadWords(test::FixturePath("gpu_dispatch/classify_gpu_enqueue_cs_a.spv"));
    ASSERT_GT(words.size(), 100u);
    for (std::size_t length = 0; length < words.size(); ++length) {
        Result<Module> module = ReadModule(std::span<const std::uint32_t>(words.data(), length));
        ASSERT_FALSE(module.ok()) << "prefix of " << length << " words parsed";
        EXPECT_NE(module.error().word_offset, kNoWordOffset) << module.error().message;
        EXPECT_LE(module.error().word_offset, length) << module.error().message;
    }
}

TEST(Malformed, RandomCorruptionNeverCrashes) {
    // Deterministic mutation loop: flip bits, overwrite words, splice word counts. Every result must be either a
    // module that serialises back to exactly the mutated words, or an error carrying an in-range offset.
    std::vector<std::vector<std::uint32_t>> seeds = {
        test::ReadWords(test::FixturePath("gpu_dispatch/classify_gpu_enqueue_cs_a.spv")),
        test::ReadWords(test::FixturePath("gpu_draw_dispatch/compute_to_mesh_multi_cs.spv")),
        test::ReadWords(test::ShaderPath("compute_spec_debug.spv")),
    };
    std::mt19937 rng(20240917u);
    int accepted = 0;
    for (int iteration = 0; iteration < 3000; ++iteration) {
        std::vector<std::uint32_t> words = seeds[static_cast<std::size_t>(iteration) % seeds.size()];
        ASSERT_GT(words.size(), 5u);
        const int mutations = 1 + static_cast<int>(rng() % 4);
        for (int m = 0; m < mutations; ++m) {
            const std::size_t index = rng() % words.size();
            switch (rng() % 4) {
                case 0:
                    words[index] ^= 1u << (rng() % 32);
                    break;
                case 1:
                    words[index] = rng();
                    break;
                case 2:
                    words[index] = (words[index] & 0xffffu) | ((rng() % 12) << 16);
                    break;  // word count
                case 3:
                    words[index] = rng() % 64;
                    break;  // small values: plausible ids and enumerants
            }
        }
        Result<Module> module = ReadModule(words);
        if (module.ok()) {
            ++accepted;
            EXPECT_EQ(WriteModule(*module), words) << "iteration " << iteration;
        } else {
            EXPECT_LT(module.error().word_offset, words.size() + 1) << module.error().message;
            EXPECT_FALSE(module.error().message.empty());
        }
    }
    std::printf("random corruption: %d of 3000 mutated modules still parsed\n", accepted);
}

TEST(Malformed, ByteSwappedInputIsAccepted) {
    test::WordBuilder b = MinimalModule();
    std::vector<std::uint32_t> words = AddMainFunction(b).words();
    for (std::uint32_t& w : words) w = __builtin_bswap32(w);
    Result<Module> module = ReadModule(words);
    ASSERT_TRUE(module.ok()) << module.error().ToString();
    EXPECT_EQ(module->header().magic, 0x07230203u);
}

}  // namespace
}  // namespace execgraph::spirv
