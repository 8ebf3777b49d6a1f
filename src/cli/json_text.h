// JSON text for the command line's outputs. Names in a model are bytes, not always UTF-8: invalid
// sequences become U+FFFD instead of an exception.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kiln::cli {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kiln::cli
