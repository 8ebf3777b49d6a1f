#include "target/target.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "engine/cpu/cpu_features.h"
#include "support/error.h"

namespace kiln {

namespace {

// The x86-64 psABI levels, each with what the one below has (GCC's feature names).
const std::vector<std::string> kV1 = {"sse2"};
const std::vector<std::string> kV3 = {"sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx",
                                      "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe"};
std::vector<std::string> v4_features() {
  std::vector<std::string> f = kV3;
  for (const char* x : {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}) f.push_back(x);
  return f;
}

const std::vector<std::string> kStages = {"engine:dedicate-dequantize", "engine:lower",
                                          "engine:plan-profiles", "engine:prepack-weights"};

// kiln's engine first: on x86 its oneDNN convolutions and own kernels are the tuned path, XNNPACK
// takes what it does not. On aarch64 too, as kiln's aarch64 runtime is its engine (NEON kernels and
// oneDNN's aarch64 build) and the XNNPACK plugin is not cross-built (--backends xnnpack,cpu asks
// for it where it is).
const std::vector<std::string> kBackends = {"cpu", "xnnpack", "reference"};

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
      {"x86-64", "x86_64", 1, kV1, "scalar", "sse41", kStages, kBackends,
       "baseline x86-64 (SSE2): any x86-64 CPU; kiln's plain C++ kernels, oneDNN up to SSE4.1"},
      {"x86-64-v3", "x86_64", 3, kV3, "avx2", "avx2", kStages, kBackends,
       "AVX2 + FMA (Haswell, Zen 1 and later): kiln's AVX2 kernels, oneDNN up to AVX2"},
      {"x86-64-v4", "x86_64", 4, v4_features(), "avx512", "avx512_core_amx", kStages, kBackends,
       "AVX-512 F/BW/CD/DQ/VL (Skylake-SP, Zen 4 and later): kiln's AVX-512 kernels, oneDNN with "
       "AVX-512 (VNNI, BF16, AMX where the CPU has them)"},
      {"aarch64-linux", "aarch64", 0, {"neon"}, "neon", "default", kStages, kBackends,
       "64-bit Arm Linux (NEON): kiln's NEON kernels, oneDNN as Debian's arm64 build has it; runs "
       "with the aarch64 runtime (kiln-run, `make aarch64`; scripts/run-aarch64.sh under qemu)"},
  };
  return t;
}

std::string_view host_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
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
  const Target* best = nullptr;
  for (const Target& t : targets())
    if (t.arch == host_arch() && t.level <= level && (!best || t.level > best->level)) best = &t;
  KILN_CHECK(best != nullptr, ErrorKind::kUnsupported, "this machine ({}) is none of kiln's targets",
             host_arch());
  return *best;
}

const Target& find_target(std::string_view name) {
  if (name == "native") return native_target();
  for (const Target& t : targets())
    if (t.name == name) return t;
  std::string known;
  for (const Target& t : targets()) known += t.name + ", ";
  fail(ErrorKind::kBadInput, "unknown target '{}' (known: {}native)", name, known);
}

std::vector<std::string> missing_on_host(const Target& t) {
  if (t.arch != host_arch()) return {"arch " + t.arch};
  if (t.level <= host_level()) return {};
  const std::vector<std::string>& have = native_target().features;
  std::vector<std::string> missing;
  for (const std::string& f : t.features)
    if (std::find(have.begin(), have.end(), f) == have.end()) missing.push_back(f);
  return missing;
}

std::string isa_caps_in_force() {
  std::string caps;
  for (const char* env : {"KILN_CPU_ISA", "DNNL_MAX_CPU_ISA"})
    if (const char* v = std::getenv(env); v && *v)
      caps += fmt::format("{}{}={}", caps.empty() ? "" : ", ", env, v);
  return caps.empty() ? "" : " (capped by " + caps + ")";
}

std::vector<std::string> target_pipeline(const Target& t, const std::vector<std::string>& passes) {
  std::vector<std::string> p = passes;
  p.insert(p.end(), t.stages.begin(), t.stages.end());
  return p;
}

std::string apply_isa_cap(const Target& t) {
  if (t.arch != "x86_64" || host_arch() != "x86_64") return "";
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
    const std::string features = fmt::format("{}", fmt::join(t.features, ","));
    out += fmt::format("{:<14} kernels {:<7} oneDNN {:<16} backends {:<22} {}\n               needs {}\n",
                       t.name, t.kernel_isa, t.onednn_isa, fmt::format("{}", fmt::join(t.backends, ",")),
                       t.summary, features);
  }
  const Target& n = native_target();
  out += fmt::format("{:<14} this machine: {}{}\n", "native", n.name, isa_caps_in_force());
  return out;
}

}  // namespace kiln
