// The kernels compiled for aarch64's NEON (AdvSIMD, 4 float lanes, FMA):
// kernels_impl.h instantiated with vec_neon.h. Empty on x86, where kernels_avx2.cc and
// kernels_avx512.cc are the vector tables.
#include "engine/cpu/kernels_prelude.h"

#if defined(__aarch64__)
#include "engine/cpu/vec_neon.h"

#define KILN_CPU_ISA neon
#define KILN_CPU_ISA_ENUM kNeon
#include "engine/cpu/kernels_impl.h"
#endif  // __aarch64__
