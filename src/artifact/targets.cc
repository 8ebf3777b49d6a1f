#include "artifact/targets.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "support/error.h"

namespace kiln::artifact {

namespace {

// What each level adds to the one below, in the names cpuid and /proc/cpuinfo use.
const std::vector<std::string> kV1 = {"sse2"};
const std::vector<std::string> kV3 = {"sse2", "avx", "avx2", "fma", "bmi2"};
const std::vector<std::string> kV4 = {"sse2", "avx", "avx2", "fma", "bmi2", "avx512f", "avx512bw",
                                      "avx512dq", "avx512vl"};
const std::vector<std::string> kStages = {"engine:dedicate-dequantize", "engine:lower",
                                          "engine:plan-profiles", "engine:prepack-weights"};

// The level oneDNN will run at, from the CPU's features and DNNL_MAX_CPU_ISA, without asking
// oneDNN: reading its effective ISA fixes it, after which set_max_cpu_isa fails.
int onednn_level() {
  const cpu::CpuFeatures& f = cpu::cpu_features();
  int level = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq ? 4 : f.avx2 && f.fma ? 3 : 1;
  if (const char* env = std::getenv("DNNL_MAX_CPU_ISA"); env && *env) {
    std::string v = env;
    for (char& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const int cap = v.rfind("AVX512", 0) == 0 ? 4 : v.rfind("AVX2", 0) == 0 ? 3 : v == "ALL" ? 4 : 1;
    level = std::min(level, cap);
  }
  return level;
}

[[maybe_unused]] int level_of_kiln(cpu::Isa isa) {  // unused off x86
  switch (isa) {
    case cpu::Isa::kAvx512: return 4;
    case cpu::Isa::kAvx2: return 3;
    case cpu::Isa::kScalar: return 1;
    case cpu::Isa::kNeon: return 0;  // aarch64: no x86 level
  }
  return 1;
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> t = {
      {"x86-64", "x86_64", 1, kV1, "scalar", "sse41", kStages,
       "baseline x86-64 (SSE2): any x86-64 CPU; kiln's plain C++ kernels, oneDNN up to SSE4.1"},
      {"x86-64-v3", "x86_64", 3, kV3, "avx2", "avx2", kStages,
       "AVX2 + FMA (Haswell, Zen 1 and later): kiln's AVX2 kernels, oneDNN up to AVX2"},
      {"x86-64-v4", "x86_64", 4, kV4, "avx512", "avx512_core_amx", kStages,
       "AVX-512 F/BW/DQ/VL (Skylake-SP, Zen 4 and later): kiln's AVX-512 kernels, oneDNN with "
       "AVX-512 (VNNI, BF16, AMX where the CPU has them)"},
      {"aarch64-linux", "aarch64", 0, {"neon"}, "neon", "none", kStages,
       "64-bit Arm Linux (NEON): kiln's NEON kernels, oneDNN as Debian's arm64 build has it; runs "
       "with the aarch64 runtime (kiln-run, `make aarch64`; scripts/run-aarch64.sh under qemu)"},
  };
  return t;
}

int host_level() {
#if defined(__x86_64__)
  return std::min(level_of_kiln(cpu::active_isa()), onednn_level());
#else
  return 0;
#endif
}

const Target& native_target() {
  const int level = host_level();
  for (auto it = targets().rbegin(); it != targets().rend(); ++it)
    if (it->arch == "x86_64" && it->level <= level) return *it;
  return targets().back();
}

const Target& find_target(std::string_view name) {
  if (name == "native") return native_target();
  for (const Target& t : targets())
    if (t.name == name) return t;
  std::string known;
  for (const Target& t : targets()) known += t.name + ", ";
  fail(ErrorKind::kBadInput, "unknown target '{}' (known: {}native)", name, known);
}

std::vector<std::string> target_pipeline(const Target& t, const std::vector<std::string>& passes) {
  std::vector<std::string> p = passes;
  p.insert(p.end(), t.stages.begin(), t.stages.end());
  return p;
}

std::string apply_isa_cap(const Target& t) {
  if (t.arch != "x86_64") return "";
  std::string problems;
  const cpu::Isa want = t.kernel_isa == "avx512" ? cpu::Isa::kAvx512
                        : t.kernel_isa == "avx2" ? cpu::Isa::kAvx2
                                                 : cpu::Isa::kScalar;
  if (cpu::active_isa() > want) cpu::set_active_isa(want);
  const dnnl::cpu_isa cap = t.onednn_isa == "avx512_core_amx" ? dnnl::cpu_isa::avx512_core_amx
                            : t.onednn_isa == "avx2"          ? dnnl::cpu_isa::avx2
                                                              : dnnl::cpu_isa::sse41;
  if (onednn_level() > t.level) {
    try {
      dnnl::set_max_cpu_isa(cap);
    } catch (const dnnl::error&) {
      problems = "oneDNN's ISA could not be capped (it had made primitives already)";
    }
  }
  return problems;
}

std::string describe_targets() {
  std::string out;
  for (const Target& t : targets()) {
    std::string features;
    for (const auto& f : t.features) features += (features.empty() ? "" : ",") + f;
    out += fmt::format("{:<14} needs {:<44} kernels {:<7} oneDNN {:<16} {}\n", t.name, features,
                       t.kernel_isa, t.onednn_isa, t.summary);
  }
  const Target& n = native_target();
  out += fmt::format("{:<14} this machine: {}\n", "native", n.name);
  return out;
}

}  // namespace kiln::artifact
