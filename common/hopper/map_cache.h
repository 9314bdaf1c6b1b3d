// A small cache of values built once per key and remembered: the Hopper kernels keep the tensor maps of the last few
// problems (pointers and sizes) in one, so a forward called again with the same tensors encodes nothing. Plain C++
// (tests/cpu_map_cache_test.cpp tests it), safe to call from several threads.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <tuple>
#include <utility>

namespace hopper {

// What a problem's tensor maps depend on: the device, the four pointers, the sizes and the boxes' row counts.
struct ProblemKey {
  int device = 0;
  const void *x = nullptr, *w_gate = nullptr, *w_up = nullptr, *m = nullptr;
  int64_t M = 0, dim = 0, hidden = 0;
  int x_rows = 0, w_rows = 0, m_rows = 0;
  auto fields() const { return std::tie(device, x, w_gate, w_up, m, M, dim, hidden, x_rows, w_rows, m_rows); }
  bool operator==(const ProblemKey& o) const { return fields() == o.fields(); }
  bool operator!=(const ProblemKey& o) const { return !(*this == o); }
};

// At most kSize entries; when full, a new key replaces the one inserted longest ago. Lookups are a linear scan: a
// handful of entries, compared field by field.
template <class Key, class Value, int kSize>
class SmallCache {
 public:
  // The value for `key`: the remembered one, else make() (called at most once per miss, under the lock).
  template <class Make>
  Value get(const Key& key, Make&& make) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (int i = 0; i < count_; ++i)
      if (entries_[i].first == key) return entries_[i].second;
    Value value = make();  // may throw: then nothing is remembered
    const int slot = count_ < kSize ? count_++ : next_;
    next_ = (slot + 1) % kSize;
    entries_[slot] = {key, std::move(value)};
    ++builds_;
    return entries_[slot].second;
  }
  int size() const { return count_; }
  int64_t builds() const { return builds_; }  // how many times make() ran: what the tests count

 private:
  std::mutex mutex_;
  std::array<std::pair<Key, Value>, kSize> entries_{};
  int count_ = 0, next_ = 0;
  int64_t builds_ = 0;
};

}  // namespace hopper
