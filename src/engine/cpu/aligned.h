// Vectors whose data start on a 64-byte boundary (a cache line, an AVX-512 register): the packed
// weights kiln's kernels stream. malloc gives 16 bytes (a large block sits 16 bytes past a page),
// and a 64-byte load from there spans two cache lines: kiln_micro_bench SmallMatmul/1x768x256,
// the same loop on the same weights, 13.0 us misaligned against 7.4 aligned (Intel Xeon family 6
// model 207, one core).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace kiln::cpu {

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
};

using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

}  // namespace kiln::cpu
