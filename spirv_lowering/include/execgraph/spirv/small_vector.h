// SPDX-License-Identifier: Apache-2.0
// A vector with inline storage for trivially copyable elements. Instructions keep their operand words in one,
// so parsing a module does not allocate per instruction (VVL measured that almost every opcode has <= 6 operands).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace execgraph::spirv {

template <typename T, std::size_t kInline>
class SmallVector {
    static_assert(std::is_trivially_copyable_v<T>, "SmallVector copies elements with memcpy");

  public:
    using value_type = T;
    using iterator = T*;
    using const_iterator = const T*;

    SmallVector() = default;
    SmallVector(const SmallVector& other) { Assign(other.data(), other.size_); }
    SmallVector(SmallVector&& other) noexcept { Steal(other); }
    SmallVector& operator=(const SmallVector& other) {
        if (this != &other) {
            size_ = 0;
            Assign(other.data(), other.size_);
        }
        return *this;
    }
    SmallVector& operator=(SmallVector&& other) noexcept {
        if (this != &other) {
            Release();
            Steal(other);
        }
        return *this;
    }
    ~SmallVector() { Release(); }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T* data() { return heap_ != nullptr ? heap_ : inline_; }
    const T* data() const { return heap_ != nullptr ? heap_ : inline_; }
    T* begin() { return data(); }
    T* end() { return data() + size_; }
    const T* begin() const { return data(); }
    const T* end() const { return data() + size_; }
    T& operator[](std::size_t i) {
        assert(i < size_);
        return data()[i];
    }
    const T& operator[](std::size_t i) const {
        assert(i < size_);
        return data()[i];
    }
    T& back() { return (*this)[size_ - 1]; }

    void clear() { size_ = 0; }
    void reserve(std::size_t capacity) {
        if (capacity > capacity_) Grow(capacity);
    }
    void push_back(const T& value) {
        if (size_ == capacity_) Grow(capacity_ * 2);
        data()[size_++] = value;
    }
    void pop_back() {
        assert(size_ > 0);
        --size_;
    }
    void resize(std::size_t size, const T& fill = T{}) {
        reserve(size);
        for (std::size_t i = size_; i < size; ++i) data()[i] = fill;
        size_ = size;
    }
    // Inserts `count` copies of `value` before position `index`.
    void insert(std::size_t index, std::size_t count, const T& value) {
        assert(index <= size_);
        reserve(size_ + count);
        std::memmove(data() + index + count, data() + index, (size_ - index) * sizeof(T));
        for (std::size_t i = 0; i < count; ++i) data()[index + i] = value;
        size_ += count;
    }
    void erase(std::size_t first, std::size_t last) {
        assert(first <= last && last <= size_);
        std::memmove(data() + first, data() + last, (size_ - last) * sizeof(T));
        size_ -= last - first;
    }

  private:
    void Assign(const T* values, std::size_t count) {
        reserve(count);
        if (count != 0) std::memcpy(data(), values, count * sizeof(T));
        size_ = count;
    }
    void Grow(std::size_t capacity) {
        capacity = std::max<std::size_t>(capacity, kInline);
        T* grown = static_cast<T*>(std::malloc(capacity * sizeof(T)));
        if (grown == nullptr) throw std::bad_alloc();  // allocation failure is the one fatal condition
        if (size_ != 0) std::memcpy(grown, data(), size_ * sizeof(T));
        std::free(heap_);
        heap_ = grown;
        capacity_ = capacity;
    }
    void Release() {
        std::free(heap_);
        heap_ = nullptr;
        capacity_ = kInline;
        size_ = 0;
    }
    void Steal(SmallVector& other) {
        if (other.heap_ != nullptr) {
            heap_ = other.heap_;
            capacity_ = other.capacity_;
            size_ = other.size_;
            other.heap_ = nullptr;
            other.capacity_ = kInline;
            other.size_ = 0;
        } else {
            Assign(other.inline_, other.size_);
            other.size_ = 0;
        }
    }

    T* heap_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = kInline;
    T inline_[kInline];
};

}  // namespace execgraph::spirv
