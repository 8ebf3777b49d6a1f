// The compile targets: name, the CPU features an artifact for it needs, the ISA caps of kiln's
// kernels and of oneDNN, and its pipeline (the -O level's portable passes, then the target's own
// engine stages). `kiln compile --list-targets` prints it; every artifact records its row.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/cpu/cpu_features.h"

namespace kiln::artifact {

struct Target {
  std::string name;                   // "x86-64-v3"
  std::string arch;                   // "x86_64" or "aarch64"
  int level = 0;                      // x86-64 microarchitecture level (1, 3, 4); 0 on aarch64
  std::vector<std::string> features;  // CPU features it requires: "avx2", "fma", "avx512f" ...
  std::string kernel_isa;             // kiln's kernels (engine/cpu): "scalar", "avx2", "avx512", "neon"
  std::string onednn_isa;             // oneDNN's cap (dnnl::set_max_cpu_isa): "sse41", "avx2" ...
  std::vector<std::string> stages;    // the target's own stages after the portable passes
  std::string summary;
};

// Every target, narrowest x86 level first, then aarch64.
const std::vector<Target>& targets();
// The row of `name`; "native" is this machine's best (as capped by KILN_CPU_ISA and
// DNNL_MAX_CPU_ISA). Fails (kBadInput) naming the known targets.
const Target& find_target(std::string_view name);
// The x86 level this process's kernels can run: kiln's ISA (cap included) and oneDNN's effective
// ISA, the lower of the two; 0 off x86.
int host_level();
// "x86-64-v4" for the host's level.
const Target& native_target();
// The pipeline an artifact for `t` at -O `level` (or with `passes`) records: portable passes
// first, then the target's stages.
std::vector<std::string> target_pipeline(const Target& t, const std::vector<std::string>& passes);

// Caps kiln's kernels and oneDNN at t's ISA for this process (oneDNN only before its first
// primitive). Returns what could not be capped, empty when all was.
std::string apply_isa_cap(const Target& t);

// The table as text, one target a line (for --list-targets).
std::string describe_targets();

}  // namespace kiln::artifact
