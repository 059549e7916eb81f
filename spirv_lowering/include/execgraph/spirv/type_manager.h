// SPDX-License-Identifier: Apache-2.0
// Find-or-create for types and constants (VVL GPU-AV convention: Get* dedupes, Create* always makes a new one).
// New declarations are appended to the end of the types/values section, after everything they can refer to.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "execgraph/spirv/module.h"

namespace execgraph::spirv {

class TypeManager {
  public:
    // Indexes the module's existing non-aggregate types and non-specialization constants.
    explicit TypeManager(Module& module);

    std::uint32_t GetVoid();
    std::uint32_t GetBool();
    std::uint32_t GetInt(std::uint32_t width, bool is_signed);
    std::uint32_t GetUint32() { return GetInt(32, false); }
    std::uint32_t GetFloat(std::uint32_t width);
    std::uint32_t GetVector(std::uint32_t component_type, std::uint32_t count);
    // Get* for arrays may return a type that already carries an ArrayStride; use CreateArray when the caller decorates it.
    std::uint32_t GetArray(std::uint32_t element_type, std::uint32_t length_constant_id);
    std::uint32_t GetRuntimeArray(std::uint32_t element_type);
    std::uint32_t GetPointer(StorageClass storage_class, std::uint32_t pointee_type);
    std::uint32_t GetFunction(std::uint32_t return_type, std::span<const std::uint32_t> parameter_types = {});

    // Structs are told apart by their decorations, so they are never deduplicated.
    std::uint32_t CreateStruct(std::span<const std::uint32_t> member_types);
    std::uint32_t CreateArray(std::uint32_t element_type, std::uint32_t length_constant_id);
    std::uint32_t CreateRuntimeArray(std::uint32_t element_type);

    std::uint32_t GetConstantUint(std::uint64_t value, std::uint32_t width = 32);
    std::uint32_t GetConstantInt(std::int64_t value, std::uint32_t width = 32);
    std::uint32_t GetConstantFloat(float value);
    std::uint32_t GetConstantBool(bool value);
    std::uint32_t GetConstantComposite(std::uint32_t type, std::span<const std::uint32_t> constituents);
    std::uint32_t GetConstantNull(std::uint32_t type);

    // 0 when no structurally identical declaration exists.
    std::uint32_t FindType(Op opcode, std::span<const std::uint32_t> operand_words) const;

  private:
    struct KeyHash {
        std::size_t operator()(const std::vector<std::uint32_t>& key) const;
    };
    static bool IsDeduplicated(Op opcode);
    static std::vector<std::uint32_t> KeyOf(const Instruction& inst);
    std::uint32_t FindOrAdd(Instruction prototype);
    std::uint32_t Add(Instruction prototype);
    std::uint32_t GetScalarConstant(std::uint32_t type, std::uint64_t bits, std::uint32_t width);

    Module& module_;
    std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, KeyHash> known_;
};

}  // namespace execgraph::spirv
