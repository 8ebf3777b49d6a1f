// SHA-256 (FIPS 180-4) of bytes, as 64 lowercase hex digits: model contents and token secrets.
#pragma once

#include <string>
#include <string_view>

namespace kiln::serve {

std::string sha256_hex(std::string_view bytes);

}  // namespace kiln::serve
