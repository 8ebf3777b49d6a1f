#include "profile/optimize_report.h"

#include <algorithm>
#include <cctype>

namespace kiln {

nlohmann::json optimize_json(const OptimizeReport& r) {
  nlohmann::json j = {{"model", r.model},
                      {"output", r.output},
                      {"pipeline", r.pipeline},
                      {"load_ms", r.load_ms},
                      {"before", opt::to_json(r.before)},
                      {"after", opt::to_json(r.after)},
                      {"optimize", opt::to_json(r.result)}};
  if (r.verify) {
    j["verify"] = opt::to_json(r.verify->report);
    if (r.verify->bisect) j["bisect"] = opt::to_json(*r.verify->bisect);
  }
  return j;
}

bool is_html_path(const std::string& path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.ends_with(".html") || lower.ends_with(".htm");
}

}  // namespace kiln
