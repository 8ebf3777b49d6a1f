// Seeded random feeds for a model's inputs: what `kiln optimize --verify`, `kiln bench` and
// `kiln profile` run when the user gives no input files.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"

namespace kiln {

struct RandomInputOptions {
  uint64_t seed = 0;
  std::map<std::string, int64_t> dims;  // symbolic dim name -> value
  int64_t default_dim = 1;              // symbolic dims not in `dims`, and unknown dims
  bool masks_of_ones = false;           // integers that index nothing (attention masks): all 1
};

// One value per input, in order. Floats uniform in [-1, 1); bools 0/1; integers in [0, n) where
// n is the smallest axis they index (Gather, GatherElements, OneHot depth ...) or 2 when they
// index nothing (all 1 with masks_of_ones), so ids, masks and token types all stay valid. Fails
// (kBadInput) for an input of unknown rank or a type kiln cannot make up (strings, sequences).
std::vector<RtValue> random_inputs(const std::vector<const Value*>& inputs,
                                   const RandomInputOptions& opts = {});

// The concrete shape `random_inputs` gives a value of type t.
std::vector<int64_t> concrete_dims(const Value& v, const RandomInputOptions& opts);

}  // namespace kiln
