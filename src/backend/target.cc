#include "backend/target.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/error.h"

namespace kiln::backend {

namespace {

bool host_has(const std::string& f) {
#if defined(__x86_64__)
  // __builtin_cpu_supports takes a literal: one case per feature of the table.
  if (f == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (f == "popcnt") return __builtin_cpu_supports("popcnt");
  if (f == "avx") return __builtin_cpu_supports("avx");
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "bmi") return __builtin_cpu_supports("bmi");
  if (f == "bmi2") return __builtin_cpu_supports("bmi2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (f == "avx512cd") return __builtin_cpu_supports("avx512cd");
  if (f == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
#endif
  return false;
}

std::string host_arch() {
#if defined(__x86_64__)
  return "x86-64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

}  // namespace

const std::vector<Target>& targets() {
  // x86-64 levels as the psABI defines them (the features kiln's kernels and oneDNN's use).
  // kiln's engine is first on x86 (its oneDNN convolutions and own kernels are the tuned path);
  // on aarch64 XNNPACK's NEON kernels are, as kiln's NEON table is not built yet.
  static const std::vector<Target> table = {
      {"x86-64", "x86-64", "baseline x86-64 (SSE2)", {}, {"cpu", "xnnpack", "reference"}},
      {"x86-64-v3", "x86-64", "AVX2 + FMA (Haswell, Zen 1 and later)",
       {"sse4.2", "popcnt", "avx", "avx2", "bmi", "bmi2", "fma"}, {"cpu", "xnnpack", "reference"}},
      {"x86-64-v4", "x86-64", "AVX-512 F/BW/CD/DQ/VL (Skylake-SP, Zen 4 and later)",
       {"sse4.2", "popcnt", "avx", "avx2", "bmi", "bmi2", "fma", "avx512f", "avx512bw", "avx512cd",
        "avx512dq", "avx512vl"},
       {"cpu", "xnnpack", "reference"}},
      {"aarch64-linux", "aarch64", "64-bit ARM Linux (NEON)", {}, {"xnnpack", "cpu", "reference"}},
  };
  return table;
}

Target native_target() {
  Target t{"native", host_arch(), "this machine", {}, {"cpu", "xnnpack", "reference"}};
  for (const Target& row : targets())
    if (row.arch == t.arch)
      for (const std::string& f : row.features)
        if (host_has(f) && std::find(t.features.begin(), t.features.end(), f) == t.features.end())
          t.features.push_back(f);
  return t;
}

Target find_target(const std::string& name) {
  if (name == "native") return native_target();
  std::string known = "native";
  for (const Target& t : targets()) {
    if (t.name == name) return t;
    known += ", " + t.name;
  }
  fail(ErrorKind::kBadInput, "unknown target '{}' (known: {})", name, known);
}

std::vector<std::string> missing_on_host(const Target& t) {
  if (t.arch != host_arch()) return {"arch " + t.arch};
  std::vector<std::string> missing;
  for (const std::string& f : t.features)
    if (!host_has(f)) missing.push_back(f);
  return missing;
}

}  // namespace kiln::backend
