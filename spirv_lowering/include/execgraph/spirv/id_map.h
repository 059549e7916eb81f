// SPDX-License-Identifier: Apache-2.0
// Id-keyed table: a dense vector when the id bound is reasonable for the module size, a hash map otherwise, so that a
// (valid but odd) header bound of 0xffffffff cannot make us allocate gigabytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace execgraph::spirv {

template <typename T>
class IdMap {
  public:
    // `instruction_count` is a hint: ids beyond ~8 per instruction mean a sparse id space.
    void Reset(std::uint32_t bound, std::size_t instruction_count) {
        dense_.clear();
        sparse_.clear();
        use_dense_ = bound <= instruction_count * 8 + 4096;
        if (use_dense_) dense_.assign(bound, T{});
    }
    // nullptr when the id was never set (or is out of the dense range).
    const T* Find(std::uint32_t id) const {
        if (use_dense_) return id < dense_.size() && !(dense_[id] == T{}) ? &dense_[id] : nullptr;
        const auto it = sparse_.find(id);
        return it != sparse_.end() ? &it->second : nullptr;
    }
    // The id must be below the bound given to Reset (callers check ids against the bound first).
    T& operator[](std::uint32_t id) {
        if (use_dense_) {
            if (id >= dense_.size()) dense_.resize(static_cast<std::size_t>(id) + 1, T{});
            return dense_[id];
        }
        return sparse_[id];
    }

  private:
    std::vector<T> dense_;
    std::unordered_map<std::uint32_t, T> sparse_;
    bool use_dense_ = true;
};

}  // namespace execgraph::spirv
