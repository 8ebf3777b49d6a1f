// `kiln bench --vary NAME=LO..HI`: a stream of runs in which the symbolic dim NAME takes a new
// value for every run, as a model served with a different sequence length on each request sees.
// The values are drawn with splitmix64 from a seed, uniform over [LO, HI] (LO + x mod (HI-LO+1)),
// so tools/ort/bench.js --vary, which draws them the same way, feeds ONNX Runtime the same stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::cli {

struct VaryRange {
  std::string name;
  int64_t lo = 1, hi = 1;
};

// "seq=1..512"; fails (kBadInput) on another form, LO below 1 or LO above HI.
VaryRange parse_vary(const std::string& spec);

// Fails (kBadInput) when range.name is not a symbolic dim of `inputs`.
void check_vary_dim(const std::vector<const Value*>& inputs, const VaryRange& range);

// The first n values of the stream for this seed.
std::vector<int64_t> draw_stream(const VaryRange& range, uint64_t seed, size_t n);

}  // namespace kiln::cli
