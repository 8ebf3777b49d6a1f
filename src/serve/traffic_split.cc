#include "serve/traffic_split.h"

#include <cstdint>
#include <random>

#include "serve/registry_store.h"
#include "support/error.h"

namespace kiln::serve {

TrafficSplit parse_traffic_split(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    fail(ErrorKind::kBadInput, "--split '{}': expected NAME=ALIAS:WEIGHT[,ALIAS:WEIGHT...]", text);
  TrafficSplit s;
  s.model = text.substr(0, eq);
  check_model_name(s.model);
  size_t at = eq + 1;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(at, end - at);
    const auto colon = part.rfind(':');
    if (colon == std::string::npos || colon == 0)
      fail(ErrorKind::kBadInput, "--split '{}': '{}' is not ALIAS:WEIGHT", text, part);
    const std::string alias = part.substr(0, colon), weight = part.substr(colon + 1);
    check_alias_name(alias);
    if (weight.empty() || weight.size() > 6 || weight.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(weight) == 0)
      fail(ErrorKind::kBadInput, "--split '{}': the weight of '{}' must be a whole number 1-999999", text, alias);
    s.shares.emplace_back(alias, std::stoi(weight));
    at = end + 1;
  }
  return s;
}

const std::string& pick_alias(const TrafficSplit& split, const std::string& request_id) {
  int64_t total = 0;
  for (const auto& [alias, w] : split.shares) total += w;
  uint64_t h;
  if (!request_id.empty()) {
    h = 1469598103934665603ull;  // FNV-1a, 64 bits
    for (unsigned char c : request_id) h = (h ^ c) * 1099511628211ull;
  } else {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    h = rng();
  }
  int64_t point = static_cast<int64_t>(h % static_cast<uint64_t>(total));
  for (const auto& [alias, w] : split.shares) {
    if (point < w) return alias;
    point -= w;
  }
  return split.shares.back().first;
}

}  // namespace kiln::serve
