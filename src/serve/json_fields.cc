#include "serve/json_fields.h"

#include "support/error.h"

namespace kiln::serve {

void check_known_fields(const nlohmann::json& j, const std::set<std::string>& known, std::string_view what,
                        std::string_view prefix) {
  for (const auto& [k, v] : j.items()) {
    if (known.contains(k)) continue;
    std::string list;
    for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
    fail(ErrorKind::kBadInput, "{}: unknown field '{}{}' (known: {})", what, prefix, k.substr(0, 100), list);
  }
}

}  // namespace kiln::serve
