// CPU feature detection (cpuid and xgetbv on x86, the auxiliary vector on aarch64) and the
// active ISA.
#include "engine/cpu/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string_view>

#include "support/error.h"

namespace kiln::cpu {
namespace {

#if defined(__x86_64__)
struct CpuidRegs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return {};
  return r;
}

bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

// XCR0: which register states the OS saves on a context switch.
uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

CpuFeatures detect() {
  CpuFeatures f;
  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = bit(l1.ecx, 27);
  if (!osxsave) return f;
  const uint64_t xcr = xcr0();
  const bool os_ymm = (xcr & 0x6) == 0x6;     // SSE and AVX state
  const bool os_zmm = (xcr & 0xe6) == 0xe6;   // + opmask, ZMM0-15 upper halves, ZMM16-31
  if (!os_ymm) return f;
  const CpuidRegs l7 = cpuid(7, 0);
  const CpuidRegs l7s1 = cpuid(7, 1);
  f.fma = bit(l1.ecx, 12) && bit(l1.ecx, 28);  // FMA3 and AVX
  f.avx2 = bit(l7.ebx, 5) && bit(l1.ecx, 28);
  f.f16c = bit(l1.ecx, 29) && bit(l1.ecx, 28);
  if (os_zmm) {
    f.avx512f = bit(l7.ebx, 16);
    f.avx512dq = f.avx512f && bit(l7.ebx, 17);
    f.avx512bw = f.avx512f && bit(l7.ebx, 30);
    f.avx512vl = f.avx512f && bit(l7.ebx, 31);
    f.avx512_vnni = f.avx512f && bit(l7.ecx, 11);
    f.avx512_bf16 = f.avx512f && bit(l7s1.eax, 5);
  }
  return f;
}

// The ISAs this binary has kernels for, narrowest first.
constexpr Isa kCompiledIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};
constexpr const char* kCapChoices = "scalar, avx2 or avx512";
#elif defined(__aarch64__)
// AdvSIMD is part of the aarch64 base architecture; the kernel still says whether it is there.
CpuFeatures detect() {
  CpuFeatures f;
  f.neon = (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
  return f;
}
constexpr Isa kCompiledIsas[] = {Isa::kScalar, Isa::kNeon};
constexpr const char* kCapChoices = "scalar or neon";
#else
CpuFeatures detect() { return {}; }
constexpr Isa kCompiledIsas[] = {Isa::kScalar};
constexpr const char* kCapChoices = "scalar";
#endif

Isa parse_isa_cap(const char* s) {
  const std::string_view v = s;
  for (Isa isa : kCompiledIsas)
    if (v == isa_name(isa)) return isa;
  fail(ErrorKind::kBadInput, "KILN_CPU_ISA='{}': expected {}", v, kCapChoices);
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kNeon: return "neon";
  }
  return "?";
}

bool isa_supported(Isa isa) {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512: return f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.fma && f.f16c;
    case Isa::kNeon: return f.neon;  // false off aarch64 (detect() leaves it so)
  }
  return false;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> v;
  for (Isa isa : kCompiledIsas)
    if (isa_supported(isa)) v.push_back(isa);
  return v;
}

Isa best_isa() {
  static const Isa best = [] {
    Isa widest = supported_isas().back();
    if (const char* cap = std::getenv("KILN_CPU_ISA"); cap && *cap) {
      const Isa c = parse_isa_cap(cap);
      if (c < widest) widest = c;
    }
    return widest;
  }();
  return best;
}

namespace {

// The first processor's fields of /proc/cpuinfo, by name.
std::map<std::string, std::string> first_cpuinfo_block() {
  std::map<std::string, std::string> fields;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (!fields.empty()) break;
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(name.find_last_not_of(" \t") + 1);
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    fields.emplace(name, start == std::string::npos ? "" : line.substr(start));
  }
  return fields;
}

}  // namespace

std::string cpu_identity() {
  static const std::string identity = [] {
    const auto f = first_cpuinfo_block();
    auto field = [&](const char* name) {
      const auto it = f.find(name);
      return it == f.end() ? std::string("?") : it->second;
    };
    const std::string name = f.contains("model name") ? field("model name") : "unknown";
    if (f.contains("cpu family"))
      return name + " (family " + field("cpu family") + ", model " + field("model") + ", stepping " +
             field("stepping") + ")";
    if (f.contains("CPU part"))
      return name + " (implementer " + field("CPU implementer") + ", part " + field("CPU part") + ")";
    return name;
  }();
  return identity;
}

}  // namespace kiln::cpu
