// Seeded random inputs for a model, for benchmarks and profiles without input files: symbolic
// dims take the given value (else 1); floats standard normal, integers in [0, 100), bools
// random; inputs named like "*mask*" are ones and "*type*" zeros (BERT-style token inputs), as
// tools/models/make_inputs.py makes them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"

namespace kiln::engine {

std::vector<RtValue> random_inputs(const std::vector<const Value*>& inputs, uint64_t seed = 0,
                                   const std::map<std::string, int64_t>& dims = {});

}  // namespace kiln::engine
