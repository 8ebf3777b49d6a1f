// The kernels compiled for AVX-512 (F, BW, VL, DQ) with FMA:
// kernels_impl.h instantiated with vec_avx512.h.
#include "engine/cpu/kernels_prelude.h"

#if defined(__x86_64__)  // x86 only: an aarch64 build has kernels_neon.cc instead

// clang ignores `#pragma GCC target` (the fuzz build compiles with it): its own pragma gives
// every function of the region the same target attribute.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps(), which it then reports as
// uninitialized (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")
#endif
#include "engine/cpu/vec_avx512.h"

#define KILN_CPU_ISA avx512
#define KILN_CPU_ISA_ENUM kAvx512
#include "engine/cpu/kernels_impl.h"
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // __x86_64__
