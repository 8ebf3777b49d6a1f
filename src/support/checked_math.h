// Overflow-checked integer arithmetic for sizes that come from untrusted files.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace kiln {

inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Product of non-negative dims, or nullopt on a negative dim or overflow.
inline std::optional<int64_t> checked_product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    auto r = checked_mul(n, d);
    if (!r) return std::nullopt;
    n = *r;
  }
  return n;
}

}  // namespace kiln
