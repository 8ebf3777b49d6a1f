#include "cli/input_options.h"

#include <iostream>

#include <fmt/format.h>

#include "cli/test_data.h"
#include "runtime/input_dims.h"
#include "support/error.h"

namespace kiln::cli {

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> out;
  for (const std::string& d : specs) {
    const size_t eq = d.find('=');
    KILN_CHECK(eq != std::string::npos && eq > 0, ErrorKind::kBadInput,
               "--dim '{}': expected NAME=VALUE", d);
    const std::string v = d.substr(eq + 1);
    KILN_CHECK(!v.empty() && v.size() < 16 && v.find_first_not_of("0123456789") == std::string::npos,
               ErrorKind::kBadInput, "--dim '{}': the value must be a non-negative integer", d);
    out[d.substr(0, eq)] = std::stoll(v);
  }
  return out;
}

std::vector<RtValue> input_feeds(const std::string& dir, const std::vector<const Value*>& inputs,
                                 const RandomInputOptions& random,
                                 const std::function<void(const std::vector<RtValue>&)>& try_run) {
  if (!dir.empty()) return read_values(dir, "input", inputs);
  check_dim_names(inputs, random.dims);
  if (open_input_dims(inputs, random).empty()) return random_inputs(inputs, random);
  // (bench: the plan for the chosen dims is made here, so its "first run" is a second one.)
  std::vector<RtValue> feeds;
  const DimSearch search = search_input_dims(inputs, random, [&](const RandomInputOptions& opts) {
    std::vector<RtValue> candidate = random_inputs(inputs, opts);
    try_run(candidate);
    feeds = std::move(candidate);
  });
  if (!search.chosen.empty())
    std::cerr << fmt::format("random inputs with dims {} ({}){}\n", search.describe(), search.hint(),
                             search.attempts > 1 ? "; with all 1: " + search.first_failure : "");
  return feeds;
}

}  // namespace kiln::cli
