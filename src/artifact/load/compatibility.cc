#include "artifact/load/compatibility.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "artifact/format/format.h"
#include "engine/cpu/cpu_features.h"
#include "support/error.h"
#include "target/target.h"

namespace kiln::artifact {

const char* fit_name(Fit f) {
  switch (f) {
    case Fit::kOptimal: return "optimal";
    case Fit::kSuboptimal: return "runs-suboptimally";
    case Fit::kUnsupported: return "unsupported";
  }
  return "?";
}

Compatibility check_compatibility(const Manifest& m) {
  const Target& native = native_target();
  auto unsupported = [&](std::string why) {
    return Compatibility{Fit::kUnsupported,
                         fmt::format("{}: recompile it with kiln {} (kiln compile MODEL --target {})",
                                     why, kiln_version(), native.name)};
  };
  if (m.kiln_version != kiln_version())
    return unsupported(fmt::format("compiled by kiln {}, this is kiln {}", m.kiln_version,
                                   kiln_version()));
  const std::string_view kArch = host_arch();
  if (m.target_arch != kArch)
    return unsupported(fmt::format(
        "compiled for {} ({}), this machine is {}{}", m.target, m.target_arch, kArch,
        m.target_arch == "aarch64"
            ? " (an aarch64 machine runs it with kiln-run, or this one under qemu with "
              "scripts/run-aarch64.sh)"
            : ""));
  const Target* t = nullptr;
  for (const Target& row : targets())
    if (row.name == m.target) t = &row;
  if (!t) return unsupported(fmt::format("compiled for target '{}', which this kiln does not know", m.target));
#if defined(__aarch64__)
  // One aarch64 target: NEON (part of the base architecture), no pre-packed weights (every
  // weight is reordered at load for whichever oneDNN runs it), so no oneDNN version to match.
  if (!cpu::isa_supported(cpu::Isa::kNeon))
    return unsupported(fmt::format("compiled for {}, which needs neon; this CPU has no AdvSIMD", t->name));
  if (cpu::active_isa() != cpu::Isa::kNeon)
    return {Fit::kSuboptimal, fmt::format("compiled for {}, kiln's kernels run {} here{}: its NEON "
                                          "kernels stay unused",
                                          t->name, cpu::isa_name(cpu::active_isa()), isa_caps_in_force())};
  return {};
#else
  const int host = host_level();
  if (t->level > host)
    return unsupported(fmt::format("compiled for {}, which needs {}; this CPU runs {}{}", t->name,
                                   fmt::join(missing_on_host(*t), ","), native.name, isa_caps_in_force()));
  if (t->level < host)
    return {Fit::kSuboptimal,
            fmt::format("compiled for {}, this CPU runs {}: its wider kernels stay unused; "
                        "recompile with --target {} (or native) for them",
                        t->name, native.name, native.name)};
  if (m.onednn_version != onednn_version())
    return {Fit::kSuboptimal,
            fmt::format("pre-packed for oneDNN {}, this kiln runs oneDNN {}: weights are repacked at "
                        "load; recompile to skip that",
                        m.onednn_version, onednn_version())};
#endif
  return {};
}

void require_compatible(const Compatibility& c, const std::string& what) {
  KILN_CHECK(c.fit != Fit::kUnsupported, ErrorKind::kUnsupported, "'{}': {}", what, c.message);
}

}  // namespace kiln::artifact
