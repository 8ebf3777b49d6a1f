// The kernels compiled for AVX2 with FMA and F16C:
// kernels_impl.h instantiated with vec_avx2.h.
#include "engine/cpu/kernels_prelude.h"

#if defined(__x86_64__)  // x86 only: an aarch64 build has kernels_neon.cc instead

// clang ignores `#pragma GCC target` (the fuzz build compiles with it): its own pragma gives
// every function of the region the same target attribute.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
#include "engine/cpu/vec_avx2.h"

#define KILN_CPU_ISA avx2
#define KILN_CPU_ISA_ENUM kAvx2
#include "engine/cpu/kernels_impl.h"
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // __x86_64__
