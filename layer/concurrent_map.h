// Sharded concurrent map for per-instance, per-device and per-command-buffer state.
//
// Layers are called from many application threads at once. One global mutex would serialise every intercepted call,
// so (like Vulkan-Utility-Libraries' concurrent map) the key space is split into shards, each with its own
// shared_mutex: lookups take a shared lock on one shard only, and inserts/erases lock just that shard.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace execgraph {

template <typename Key, typename Value, int kShardBits = 4>
class ConcurrentMap {
  public:
    // Inserts or replaces the value for key.
    void InsertOrAssign(const Key& key, Value value) {
        Shard& shard = ShardFor(key);
        std::unique_lock lock(shard.mutex);
        shard.map.insert_or_assign(key, std::move(value));
    }

    // Inserts value unless key is present; returns the value the map holds for key afterwards.
    Value FindOrInsert(const Key& key, Value value) {
        Shard& shard = ShardFor(key);
        std::unique_lock lock(shard.mutex);
        return shard.map.try_emplace(key, std::move(value)).first->second;
    }

    // Returns a copy of the value (cheap for shared_ptr values), or nullopt.
    std::optional<Value> Find(const Key& key) const {
        const Shard& shard = ShardFor(key);
        std::shared_lock lock(shard.mutex);
        auto it = shard.map.find(key);
        if (it == shard.map.end()) return std::nullopt;
        return it->second;
    }

    bool Contains(const Key& key) const { return Find(key).has_value(); }

    // Removes the value and returns it so the caller can destroy it outside the lock.
    std::optional<Value> Pop(const Key& key) {
        Shard& shard = ShardFor(key);
        std::unique_lock lock(shard.mutex);
        auto it = shard.map.find(key);
        if (it == shard.map.end()) return std::nullopt;
        Value value = std::move(it->second);
        shard.map.erase(it);
        return value;
    }

    // Removes every entry for which predicate(key, value) is true and returns the removed values.
    template <typename Predicate>
    std::vector<Value> PopIf(Predicate predicate) {
        std::vector<Value> removed;
        for (Shard& shard : shards_) {
            std::unique_lock lock(shard.mutex);
            for (auto it = shard.map.begin(); it != shard.map.end();) {
                if (predicate(it->first, it->second)) {
                    removed.push_back(std::move(it->second));
                    it = shard.map.erase(it);
                } else {
                    ++it;
                }
            }
        }
        return removed;
    }

    size_t Size() const {
        size_t total = 0;
        for (const Shard& shard : shards_) {
            std::shared_lock lock(shard.mutex);
            total += shard.map.size();
        }
        return total;
    }

  private:
    struct Shard {
        mutable std::shared_mutex mutex;
        std::unordered_map<Key, Value> map;
    };

    static size_t ShardIndex(const Key& key) {
        // Handles and dispatch keys are pointers with zero low bits; mix before taking the shard bits.
        size_t hash = std::hash<Key>{}(key);
        hash ^= hash >> 17;
        hash *= 0x9E3779B97F4A7C15ull;
        return (hash >> 32) & ((size_t{1} << kShardBits) - 1);
    }
    Shard& ShardFor(const Key& key) { return shards_[ShardIndex(key)]; }
    const Shard& ShardFor(const Key& key) const { return shards_[ShardIndex(key)]; }

    std::array<Shard, size_t{1} << kShardBits> shards_;
};

}  // namespace execgraph
