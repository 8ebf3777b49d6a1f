// The kernels compiled for AVX2 with FMA:
// kernels_impl.h instantiated with vec_avx2.h.
#include "engine/cpu/kernels_prelude.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "engine/cpu/vec_avx2.h"

#define KILN_CPU_ISA avx2
#define KILN_CPU_ISA_ENUM kAvx2
#include "engine/cpu/kernels_impl.h"
#pragma GCC pop_options
