#include "serve/tokens.h"

#include <fstream>

#include "support/sha256.h"
#include "support/error.h"

namespace kiln::serve {

std::string create_token(RegistryStore& store, TokenScope scope) {
  unsigned char random[32];
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(random), sizeof random))
    fail(ErrorKind::kRuntime, "cannot read /dev/urandom for a token");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token = "kiln_";
  for (unsigned char b : random) {
    token += kHex[b >> 4];
    token += kHex[b & 0xf];
  }
  store.add_token(sha256_hex(token), scope);
  return token;
}

std::optional<TokenScope> scope_of_token(RegistryStore& store, const std::string& token) {
  return store.token_scope(sha256_hex(token));
}

}  // namespace kiln::serve
