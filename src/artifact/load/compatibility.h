// Whether an artifact can run on this machine, decided from its manifest before anything else is
// read: optimal, runs-suboptimally (says why and what to recompile with) or unsupported (refused
// with one line saying what it needs and what to recompile with).
#pragma once

#include <string>

#include "artifact/format/manifest.h"
#include "engine/onednn/dnnl_context.h"

namespace kiln::artifact {

enum class Fit { kOptimal, kSuboptimal, kUnsupported };
const char* fit_name(Fit f);  // "optimal", "runs-suboptimally", "unsupported"

struct Compatibility {
  Fit fit = Fit::kOptimal;
  std::string message;  // one line; empty when optimal
};

// The CPU as kiln will use it: its features capped by KILN_CPU_ISA and DNNL_MAX_CPU_ISA.
Compatibility check_compatibility(const Manifest& m);

// "2.6.3": the oneDNN this kiln runs (pre-packed layouts are its).
using engine::onednn_version;

// Fails (kUnsupported, one line) when `c` is unsupported; `what` names the artifact.
void require_compatible(const Compatibility& c, const std::string& what);

}  // namespace kiln::artifact
