// The input options that kiln bench, profile and optimize --verify share: `--dim NAME=VALUE` for
// symbolic dims, and `--inputs DIR` or else seeded random feeds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "runtime/random_inputs.h"

namespace kiln::cli {

// "--dim batch=4" entries as a map; a malformed entry or a negative value fails (kBadInput).
std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs);

// The feeds for `inputs`: from dir's input_N.pb files when dir is given, else seeded random
// values (runtime/random_inputs.h). A --dim naming no dim of the inputs fails (kBadInput). The
// symbolic dims random.dims leaves open are chosen so that `try_run` accepts the feeds
// (runtime/input_dims.h: all 1 first); the chosen sizes are said on stderr.
std::vector<RtValue> input_feeds(const std::string& dir, const std::vector<const Value*>& inputs,
                                 const RandomInputOptions& random,
                                 const std::function<void(const std::vector<RtValue>&)>& try_run);

}  // namespace kiln::cli
