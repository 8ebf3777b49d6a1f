#include "serve/tokens.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "support/sha256.h"
#include "serve/sqlite_store.h"

namespace kiln::serve {
namespace {

TEST(ServeTokens, StoredByHashWithTheirScope) {
  const auto dir = std::filesystem::temp_directory_path() / ("kiln_tokens_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto store = open_data_registry(dir);
  const std::string write = create_token(*store, TokenScope::kWrite);
  const std::string read = create_token(*store, TokenScope::kRead);
  EXPECT_EQ(write.size(), 5u + 64u);
  EXPECT_EQ(write.rfind("kiln_", 0), 0u);
  EXPECT_NE(write, read);
  EXPECT_EQ(scope_of_token(*store, write), TokenScope::kWrite);
  EXPECT_EQ(scope_of_token(*store, read), TokenScope::kRead);
  EXPECT_EQ(store->token_scope(sha256_hex(write)), TokenScope::kWrite);  // the hash is the key
  EXPECT_FALSE(scope_of_token(*store, "kiln_" + std::string(64, '0')));
  EXPECT_FALSE(store->token_scope(write.substr(5)));  // the secret itself is not stored
  EXPECT_TRUE(scope_allows(TokenScope::kAdmin, TokenScope::kWrite));
  EXPECT_TRUE(scope_allows(TokenScope::kWrite, TokenScope::kRead));
  EXPECT_FALSE(scope_allows(TokenScope::kRead, TokenScope::kWrite));
  store.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::serve
