// The model registry of `kiln serve` (issue 18): models by name and version, deduplicated by the
// sha256 of their bytes, and access tokens by the hash of their secret. An interface, so that a
// PostgreSQL store (many workers) can stand beside the embedded SQLite one (sqlite_store.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::serve {

struct ModelVersion {
  std::string name;
  int64_t version = 0;  // 1, 2, ... per name
  std::string sha256;   // of the .onnx bytes, 64 lowercase hex digits
  int64_t bytes = 0;
  int64_t created = 0;  // seconds since the epoch
};

enum class TokenScope { kRead, kWrite, kAdmin };  // each includes the ones before it
const char* scope_name(TokenScope s);               // "read", "write", "admin"
std::optional<TokenScope> parse_scope(const std::string& s);

// Model names are what URLs carry (/v1/models/{name}): 1-128 of [A-Za-z0-9._-], not starting with
// '.'. Fails (kBadInput) naming the name otherwise. The store never makes a file path of one.
void check_model_name(const std::string& name);
// Alias names follow the same rule as model names, and are not all digits (a version number).
void check_alias_name(const std::string& alias);
// Fails (kBadInput) unless `hex` is 64 lowercase hex digits.
void check_sha256(const std::string& hex);

class RegistryStore {
 public:
  virtual ~RegistryStore() = default;

  // The version of `name` holding bytes of this sha256: the existing one if that name has it
  // already (`*created` false), else a new one, numbered after the name's last.
  virtual ModelVersion add_version(const std::string& name, const std::string& sha256, int64_t bytes,
                                   bool* created) = 0;
  virtual std::vector<std::string> model_names() = 0;               // sorted
  virtual std::vector<ModelVersion> versions(const std::string& name) = 0;  // oldest first
  virtual std::optional<ModelVersion> version(const std::string& name, int64_t version) = 0;

  // Aliases name a version of a model ("prod" -> 3): set (made or moved) and read back.
  virtual void set_alias(const std::string& name, const std::string& alias, int64_t version) = 0;
  virtual std::map<std::string, int64_t> aliases(const std::string& name) = 0;
  // An alias's policy: the least strict thresholds a gate moving it may use, as the JSON text of
  // serve/gate.h's thresholds (the store keeps the text; empty text removes the policy). It may
  // be set before the alias points at any version.
  virtual void set_alias_policy(const std::string& name, const std::string& alias, const std::string& policy) = 0;
  virtual std::map<std::string, std::string> alias_policies(const std::string& name) = 0;

  // Tokens are stored as the sha256 of their secret, never the secret.
  virtual void add_token(const std::string& token_sha256, TokenScope scope) = 0;
  virtual std::optional<TokenScope> token_scope(const std::string& token_sha256) = 0;
};

}  // namespace kiln::serve
