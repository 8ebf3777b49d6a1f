// Access tokens of `kiln serve`: made from /dev/urandom, stored only as their sha256 with a scope,
// presented as `Authorization: Bearer TOKEN`.
#pragma once

#include <optional>
#include <string>

#include "serve/registry_store.h"

namespace kiln::serve {

// A new token, "kiln_" and 64 hex digits (256 random bits); `store` keeps its sha256 and scope.
std::string create_token(RegistryStore& store, TokenScope scope);
// The scope of a presented token, or nullopt when the store does not know it.
std::optional<TokenScope> scope_of_token(RegistryStore& store, const std::string& token);
// Whether a token of scope `have` may do what needs `need` (admin > write > read).
inline bool scope_allows(TokenScope have, TokenScope need) { return static_cast<int>(have) >= static_cast<int>(need); }

}  // namespace kiln::serve
