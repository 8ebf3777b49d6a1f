// A/B serving by alias: `kiln serve --split NAME=ALIAS:WEIGHT,ALIAS:WEIGHT...` sends a request for
// NAME that names no version to one of the aliases, each with its share of the requests (e.g.
// mlp=prod:90,canary:10). A request with an "id" goes by the id's hash (FNV-1a), so the same id
// always gets the same alias; one without, at random. The aliases are resolved at each request,
// so moving an alias (a promotion) moves its share.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln::serve {

struct TrafficSplit {
  std::string model;
  std::vector<std::pair<std::string, int>> shares;  // alias, weight (> 0)
};

// Parses NAME=ALIAS:WEIGHT[,ALIAS:WEIGHT...]; fails (kBadInput) naming what is wrong.
TrafficSplit parse_traffic_split(const std::string& text);

// The alias a request gets: by `request_id`'s hash when it is not empty, else at random.
const std::string& pick_alias(const TrafficSplit& split, const std::string& request_id);

}  // namespace kiln::serve
