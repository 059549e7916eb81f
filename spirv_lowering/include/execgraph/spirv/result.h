// SPDX-License-Identifier: Apache-2.0
// Error reporting for the SPIR-V library: no exceptions cross its boundary (style guide §3.3), so every
// fallible call returns a Status or a Result<T>. g++ 12 lacks std::expected; this is the small subset we need.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace execgraph::spirv {

// Word offset meaning "not tied to a position in an input binary" (e.g. errors about built IR).
inline constexpr std::uint32_t kNoWordOffset = 0xffffffffu;

struct Error {
    std::uint32_t word_offset = kNoWordOffset;  // index of the offending word in the input, header included
    std::string message;

    // "word 42: unknown opcode 9999", or just the message when there is no offset.
    std::string ToString() const;
};

class [[nodiscard]] Status {
  public:
    Status() = default;                                            // success
    Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit so `return Error{...}` works

    bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    const Error& error() const { return error_; }

  private:
    Error error_;
    bool ok_ = true;
};

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit by design
    Result(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

    bool ok() const { return storage_.index() == 0; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return std::get<1>(storage_); }
    Status status() const { return ok() ? Status() : Status(error()); }

    T& value() & { return std::get<0>(storage_); }
    const T& value() const& { return std::get<0>(storage_); }
    T&& value() && { return std::get<0>(std::move(storage_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

  private:
    std::variant<T, Error> storage_;
};

}  // namespace execgraph::spirv
