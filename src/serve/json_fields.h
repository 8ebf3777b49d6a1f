// The checks every JSON request kiln serve and kiln ci read shares: no field it does not know.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln::serve {

// Fails (kBadInput) on the first member of the object `j` that `known` does not hold:
// "{what}: unknown field '{prefix}{name}' (known: a, b, ...)". `prefix` names a nested object
// ("quantize.").
void check_known_fields(const nlohmann::json& j, const std::set<std::string>& known, std::string_view what,
                        std::string_view prefix = "");

}  // namespace kiln::serve
