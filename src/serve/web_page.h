// The web page kiln serve answers at `/`: its models, versions and aliases, and the recent compile
// jobs with their state, per-target metrics and reports. One HTML page with its script and style
// inside it (no external resources), kept in the binary; it reads the JSON API with the token the
// user gives it (the page's #token=... or its form, kept in the tab's sessionStorage), so the page
// itself needs none and shows nothing without one.
#pragma once

#include <string_view>

namespace kiln::serve {

std::string_view web_page_html();

}  // namespace kiln::serve
