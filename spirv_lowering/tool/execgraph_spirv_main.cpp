// SPDX-License-Identifier: Apache-2.0
// execgraph-spirv: command-line access to the execgraph SPIR-V library.
//   execgraph-spirv dis FILE.spv     disassemble (AMDX included) to stdout
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "execgraph/spirv/disassembler.h"
#include "execgraph/spirv/reader.h"

namespace {

int Usage() {
    std::fprintf(stderr,
                 "usage: execgraph-spirv <command> [args]\n"
                 "commands:\n"
                 "  dis FILE.spv    print a spirv-dis-like disassembly (understands SPV_AMDX_shader_enqueue)\n");
    return 64;  // EX_USAGE
}

int Disassemble(const char* path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        std::fprintf(stderr, "execgraph-spirv: cannot open %s\n", path);
        return 1;
    }
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    execgraph::spirv::Result<execgraph::spirv::Module> module = execgraph::spirv::ReadModuleBytes(bytes);
    if (!module) {
        std::fprintf(stderr, "execgraph-spirv: %s: %s\n", path, module.error().ToString().c_str());
        return 1;
    }
    const std::string text = execgraph::spirv::Disassemble(*module);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "dis") == 0) return Disassemble(argv[2]);
    return Usage();
}
