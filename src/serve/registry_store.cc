#include "serve/registry_store.h"

#include "support/error.h"

namespace kiln::serve {

const char* scope_name(TokenScope s) {
  switch (s) {
    case TokenScope::kRead: return "read";
    case TokenScope::kWrite: return "write";
    case TokenScope::kAdmin: return "admin";
  }
  return "read";
}

std::optional<TokenScope> parse_scope(const std::string& s) {
  if (s == "read") return TokenScope::kRead;
  if (s == "write") return TokenScope::kWrite;
  if (s == "admin") return TokenScope::kAdmin;
  return std::nullopt;
}

void check_model_name(const std::string& name) {
  const bool ok_size = !name.empty() && name.size() <= 128;
  bool ok_chars = ok_size && name[0] != '.';
  for (char c : name)
    ok_chars = ok_chars && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            c == '.' || c == '_' || c == '-');
  if (!ok_chars)
    fail(ErrorKind::kBadInput, "model name '{}': expected 1-128 of A-Z a-z 0-9 . _ - (not starting with '.')",
         name.size() > 140 ? name.substr(0, 140) + "..." : name);
}

void check_alias_name(const std::string& alias) {
  bool digits = !alias.empty();
  for (char c : alias) digits = digits && c >= '0' && c <= '9';
  if (digits) fail(ErrorKind::kBadInput, "alias '{}': a number is a version, not an alias", alias);
  try {
    check_model_name(alias);
  } catch (const Error&) {
    fail(ErrorKind::kBadInput, "alias '{}': expected 1-128 of A-Z a-z 0-9 . _ - (not starting with '.')",
         alias.size() > 140 ? alias.substr(0, 140) + "..." : alias);
  }
}

void check_sha256(const std::string& hex) {
  bool ok = hex.size() == 64;
  for (char c : hex) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!ok) fail(ErrorKind::kBadInput, "'{}' is not a sha256 (64 lowercase hex digits)", hex.substr(0, 80));
}

}  // namespace kiln::serve
