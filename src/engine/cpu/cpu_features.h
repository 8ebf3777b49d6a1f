// CPU features detected once at run time, and the instruction set the kernels dispatch to.
//
// One binary runs on any x86-64: kernels are compiled for AVX-512, AVX2+FMA and plain C++, and
// the widest one the CPU (and the OS, which must save the wide registers) supports is chosen on
// first use. KILN_CPU_ISA=scalar|avx2|avx512 in the environment caps that choice. On aarch64 the
// kernels are compiled for NEON (AdvSIMD, 4 float lanes, which every aarch64 CPU has) and plain
// C++: KILN_CPU_ISA=scalar|neon there.
#pragma once

#include <string>
#include <vector>

namespace kiln::cpu {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;  // float16 conversions (every AVX2 CPU has them)
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool neon = false;  // aarch64 AdvSIMD (HWCAP_ASIMD)
};

// Detected on the first call (cpuid + xgetbv on x86, the auxiliary vector on aarch64), then cached.
const CpuFeatures& cpu_features();

// The CPU's model name as /proc/cpuinfo gives it ("unknown" where it gives none), with what tells
// CPUs of one name apart (virtual machines call Ice Lake and Sapphire Rapids Xeons alike): x86's
// family, model and stepping, aarch64's implementer and part.
std::string cpu_identity();

// Instruction sets the kernels are built for: x86's narrowest first, then aarch64's NEON. Only
// one architecture's are compiled into a binary, so only those are ever supported; comparing
// kNeon with an x86 one means nothing.
enum class Isa { kScalar, kAvx2, kAvx512, kNeon };

const char* isa_name(Isa isa);  // "scalar", "avx2", "avx512", "neon"
bool isa_supported(Isa isa);    // the CPU and the OS can run kernels built for isa
std::vector<Isa> supported_isas();  // narrowest first; kScalar always
Isa best_isa();  // the widest supported, capped by KILN_CPU_ISA

// The ISA the kernels run: best_isa() unless a test or a benchmark chose another.
Isa active_isa();
// Switches every kernel to `isa` (which must be supported); returns the previous one. Not
// thread-safe against kernels running at the same time: for tests and benchmarks.
Isa set_active_isa(Isa isa);

}  // namespace kiln::cpu
