// The targets: the machines kiln compiles and places for. One row per target says what code for it
// needs (arch, x86-64 level, CPU features), which ISA kiln's kernels and oneDNN are capped at, the
// target's own stages after the portable passes, and its backends in order of preference.
// `kiln compile` records its row in every artifact, the artifact loader checks it against this
// machine, and `kiln analyze` partitions per row. `native` is the row this process runs best.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct Target {
  std::string name;                   // "x86-64-v3"
  std::string arch;                   // "x86_64" or "aarch64", as `uname -m` says
  int level = 0;                      // x86-64 psABI level (1, 3, 4); 0 on aarch64
  std::vector<std::string> features;  // CPU features code for it needs, in GCC's names ("avx2" ...)
  std::string kernel_isa;             // kiln's kernels (engine/cpu): "scalar", "avx2", "avx512", "neon"
  std::string onednn_isa;             // oneDNN's cap (dnnl::set_max_cpu_isa): "sse41", "avx2" ...
  std::vector<std::string> stages;    // the target's own stages after the portable passes
  std::vector<std::string> backends;  // default order of preference ("cpu", "xnnpack", "reference")
  std::string summary;
};

// Every target, the narrowest x86 level first, then aarch64.
const std::vector<Target>& targets();
// The row of `name`; "native" is this machine's. Fails (kBadInput) naming the known targets.
const Target& find_target(std::string_view name);
// This machine's row: on x86 the widest level both kiln's kernels and oneDNN run here, as capped
// by KILN_CPU_ISA and DNNL_MAX_CPU_ISA; on aarch64 aarch64-linux.
const Target& native_target();
// "x86_64" or "aarch64".
std::string_view host_arch();
// The x86 level this process runs: the lower of kiln's ISA (cap included) and oneDNN's; 0 off x86.
int host_level();
// What this machine lacks to run code for t: {"arch aarch64"} when the arch differs, else the
// features of t above this process's level; empty when it runs here.
std::vector<std::string> missing_on_host(const Target& t);
// The caps in force, as " (capped by KILN_CPU_ISA=avx2)", or empty: why the host runs below its CPU.
std::string isa_caps_in_force();

// The pipeline an artifact for t records: the portable passes given, then t's stages.
std::vector<std::string> target_pipeline(const Target& t, const std::vector<std::string>& passes);
// Caps kiln's kernels and oneDNN at t's ISA for this process (oneDNN only before its first
// primitive). Returns what could not be capped, empty when all was.
std::string apply_isa_cap(const Target& t);

// The table as text, one target a line, then which one native is (for --list-targets).
std::string describe_targets();

}  // namespace kiln
