#include "tools/input_options.h"

#include "support/error.h"
#include "tools/test_data.h"

namespace kiln::tools {

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
                                 const RandomInputOptions& random) {
  if (!dir.empty()) return read_values(dir, "input", inputs);
  return random_inputs(inputs, random);
}

}  // namespace kiln::tools
