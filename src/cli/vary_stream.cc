#include "cli/vary_stream.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/input_dims.h"
#include "support/error.h"

namespace kiln::cli {

namespace {

bool parse_count(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 15 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out = std::stoll(s);
  return true;
}

// splitmix64 (Steele, Lea and Flood): one 64-bit step per draw, simple to write the same in JS.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

VaryRange parse_vary(const std::string& spec) {
  const size_t eq = spec.find('=');
  const size_t dots = spec.find("..", eq == std::string::npos ? 0 : eq);
  VaryRange r;
  KILN_CHECK(eq != std::string::npos && eq > 0 && dots != std::string::npos &&
                 parse_count(spec.substr(eq + 1, dots - eq - 1), r.lo) &&
                 parse_count(spec.substr(dots + 2), r.hi),
             ErrorKind::kBadInput, "--vary '{}': expected NAME=LO..HI (e.g. seq=1..512)", spec);
  r.name = spec.substr(0, eq);
  KILN_CHECK(r.lo >= 1 && r.lo <= r.hi, ErrorKind::kBadInput,
             "--vary '{}': the range must have 1 <= LO <= HI", spec);
  return r;
}

void check_vary_dim(const std::vector<const Value*>& inputs, const VaryRange& range) {
  const std::vector<std::string> names = symbolic_input_dims(inputs);
  if (std::find(names.begin(), names.end(), range.name) != names.end()) return;
  if (names.empty())
    fail(ErrorKind::kBadInput, "--vary {}={}..{}: the model's inputs have no symbolic dims",
         range.name, range.lo, range.hi);
  fail(ErrorKind::kBadInput, "--vary {}={}..{}: no input has a dim '{}'; the model's symbolic dims: {}",
       range.name, range.lo, range.hi, range.name, fmt::join(names, ", "));
}

std::vector<int64_t> draw_stream(const VaryRange& range, uint64_t seed, size_t n) {
  const uint64_t span = static_cast<uint64_t>(range.hi - range.lo) + 1;
  uint64_t state = seed;
  std::vector<int64_t> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(range.lo + static_cast<int64_t>(splitmix64(state) % span));
  return out;
}

}  // namespace kiln::cli
