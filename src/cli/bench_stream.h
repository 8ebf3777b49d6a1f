// kiln bench --vary NAME=LO..HI: the model run on a stream of inputs whose symbolic dim NAME is
// drawn anew for every run (cli/vary_stream.h), as under real traffic; latency percentiles over
// the stream and what the plan cache did (plans made and reused, the time spent making them).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "cli/vary_stream.h"
#include "engine/runner.h"

namespace kiln::cli {

struct StreamOptions {
  VaryRange range;
  std::map<std::string, int64_t> dims;  // the other symbolic dims (--dim; default 1)
  uint64_t seed = 0;
  int iterations = 50, warmup = 5;      // warmup runs take the first draws of the stream
  bool json = false;
  std::string label;                    // the model, as printed
  int threads = 0;
  double load_ms = 0;
  int check = 0;                        // runs (the first ones) whose outputs `reference` checks
};

// Times the stream on `runner` and prints the result (text or one JSON object). With o.check,
// the first o.check runs' outputs are compared (untimed) with `reference`'s on the same feeds
// (rtol 1e-3, atol 1e-4, bench/run.sh's tolerance): 0 when they agree, else 1 with the first
// difference on stderr.
int bench_stream(engine::ModelRunner& runner, const StreamOptions& o,
                 engine::ModelRunner* reference = nullptr);

}  // namespace kiln::cli
