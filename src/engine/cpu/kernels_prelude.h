// Every header the per-ISA kernel files use, included before their `#pragma GCC target`: code
// from these headers (inline functions, templates) must be compiled for the baseline x86-64, or
// an AVX-512 copy of, say, std::min could be the one the linker keeps for the whole program.
// (On aarch64 NEON is the baseline: no target region, nothing to keep apart.)
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "engine/cpu/kernels.h"
