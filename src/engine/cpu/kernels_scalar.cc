// The kernels compiled for the baseline x86-64 (one lane at a time):
// kernels_impl.h instantiated with vec_scalar.h.
#include "engine/cpu/kernels_prelude.h"

#include "engine/cpu/vec_scalar.h"

#define KILN_CPU_ISA scalar
#define KILN_CPU_ISA_ENUM kScalar
#include "engine/cpu/kernels_impl.h"
