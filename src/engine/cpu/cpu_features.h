// CPU features detected once at run time, and the instruction set the kernels dispatch to.
//
// One binary runs on any x86-64: kernels are compiled for AVX-512, AVX2+FMA and plain C++, and
// the widest one the CPU (and the OS, which must save the wide registers) supports is chosen on
// first use. KILN_CPU_ISA=scalar|avx2|avx512 in the environment caps that choice.
#pragma once

#include <vector>

namespace kiln::cpu {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
};

// Detected on the first call (cpuid + xgetbv), then cached.
const CpuFeatures& cpu_features();

// Instruction sets the kernels are built for, narrowest first.
enum class Isa { kScalar, kAvx2, kAvx512 };

const char* isa_name(Isa isa);  // "scalar", "avx2", "avx512"
bool isa_supported(Isa isa);    // the CPU and the OS can run kernels built for isa
std::vector<Isa> supported_isas();  // narrowest first; kScalar always
Isa best_isa();  // the widest supported, capped by KILN_CPU_ISA

// The ISA the kernels run: best_isa() unless a test or a benchmark chose another.
Isa active_isa();
// Switches every kernel to `isa` (which must be supported); returns the previous one. Not
// thread-safe against kernels running at the same time: for tests and benchmarks.
Isa set_active_isa(Isa isa);

}  // namespace kiln::cpu
