// kiln_options_*: what a session is created with (include/kiln/kiln.h).
#include <string>

#include "capi/handles.h"
#include "capi/status.h"

using kiln::capi::guarded;
using kiln::capi::refuse;
using kiln::capi::require;

extern "C" {

kiln_status kiln_options_create(kiln_options** out) {
  return guarded(__func__, [&] {
    require(out, "out");
    *out = nullptr;
    *out = new kiln_options();
  });
}

void kiln_options_destroy(kiln_options* options) { delete options; }

kiln_status kiln_options_set_threads(kiln_options* options, int threads) {
  return guarded(__func__, [&] {
    require(options, "options");
    if (threads < 0 || threads > 1024) refuse(KILN_ERROR_INVALID_ARGUMENT, "threads {}, expected 0..1024", threads);
    options->engine.threads = threads;
  });
}

kiln_status kiln_options_set_optimize_level(kiln_options* options, int level) {
  return guarded(__func__, [&] {
    require(options, "options");
    if (level < 0 || level > 3) refuse(KILN_ERROR_INVALID_ARGUMENT, "optimize level {}, expected 0..3", level);
    options->engine.optimize_level = level;
  });
}

kiln_status kiln_options_set_precision(kiln_options* options, kiln_precision precision) {
  return guarded(__func__, [&] {
    require(options, "options");
    if (precision != KILN_PRECISION_FP32 && precision != KILN_PRECISION_BF16)
      refuse(KILN_ERROR_INVALID_ARGUMENT, "precision {}, expected KILN_PRECISION_FP32 (0) or KILN_PRECISION_BF16 (1)",
             static_cast<int>(precision));
    options->engine.bf16 = precision == KILN_PRECISION_BF16;
  });
}

kiln_status kiln_options_set_allow_newer_opset(kiln_options* options, int allow) {
  return guarded(__func__, [&] {
    require(options, "options");
    options->engine.allow_newer_opset = allow != 0;
  });
}

kiln_status kiln_options_set_allocation_cap(kiln_options* options, int64_t bytes) {
  return guarded(__func__, [&] {
    require(options, "options");
    if (bytes <= 0) refuse(KILN_ERROR_INVALID_ARGUMENT, "allocation cap {} bytes, expected > 0", bytes);
    options->engine.allocation_cap = bytes;
  });
}

kiln_status kiln_options_set_dim(kiln_options* options, const char* name, int64_t value) {
  return guarded(__func__, [&] {
    require(options, "options");
    require(name, "name");
    if (*name == '\0') refuse(KILN_ERROR_INVALID_ARGUMENT, "an empty dim name");
    if (value < 1) refuse(KILN_ERROR_INVALID_ARGUMENT, "dim '{}' = {}, expected >= 1", name, value);
    for (auto& [n, v] : options->fixed_dims)
      if (n == name) {
        v = value;
        return;
      }
    options->fixed_dims.emplace_back(name, value);
  });
}

kiln_status kiln_options_set_external_data_dir(kiln_options* options, const char* dir) {
  return guarded(__func__, [&] {
    require(options, "options");
    require(dir, "dir");
    options->external_data_dir = dir;
  });
}

}  // extern "C"
