#include "serve/sqlite_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support/error.h"

namespace kiln::serve {
namespace {

namespace fs = std::filesystem;

struct TempRegistry {
  fs::path dir = fs::temp_directory_path() / ("kiln_registry_" + std::to_string(getpid()));
  TempRegistry() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempRegistry() { fs::remove_all(dir); }
  fs::path file() const { return dir / "registry.sqlite3"; }
};

const std::string kA(64, 'a'), kB(64, 'b');

TEST(ServeSqliteStore, VersionsAreNumberedAndDeduplicatedBySha256) {
  TempRegistry t;
  auto store = open_sqlite_store(t.file());
  bool created = false;
  ModelVersion v1 = store->add_version("mlp", kA, 100, &created);
  EXPECT_TRUE(created);
  EXPECT_EQ(v1.version, 1);
  ModelVersion again = store->add_version("mlp", kA, 100, &created);
  EXPECT_FALSE(created);
  EXPECT_EQ(again.version, 1);
  ModelVersion v2 = store->add_version("mlp", kB, 200, &created);
  EXPECT_TRUE(created);
  EXPECT_EQ(v2.version, 2);
  store->add_version("bert", kA, 100, &created);  // the same bytes under another name: its own
  EXPECT_TRUE(created);
  EXPECT_EQ(store->model_names(), (std::vector<std::string>{"bert", "mlp"}));
  const auto vs = store->versions("mlp");
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[1].sha256, kB);
  EXPECT_EQ(vs[1].bytes, 200);
  ASSERT_TRUE(store->version("mlp", 2));
  EXPECT_FALSE(store->version("mlp", 3));
  EXPECT_TRUE(store->versions("none").empty());
  // The file keeps it all.
  store.reset();
  auto reopened = open_sqlite_store(t.file());
  EXPECT_EQ(reopened->versions("mlp").size(), 2u);
}

TEST(ServeSqliteStore, NamesAndHashesAreChecked) {
  TempRegistry t;
  auto store = open_sqlite_store(t.file());
  for (const char* bad : {"", "../etc", ".hidden", "a/b", "x y", "name?"}) {
    try {
      store->add_version(bad, kA, 1, nullptr);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    }
  }
  EXPECT_THROW(store->add_version("ok", "ABC", 1, nullptr), Error);
  EXPECT_NO_THROW(store->add_version("resnet-50_v1.5", kA, 1, nullptr));
}

TEST(ServeSqliteStore, AliasPoliciesAreSetReplacedAndRemoved) {
  TempRegistry t;
  auto store = open_sqlite_store(t.file());
  EXPECT_TRUE(store->alias_policies("m").empty());
  store->set_alias_policy("m", "production", R"({"latency_regression":0.1})");
  store->set_alias_policy("m", "staging", R"({"tolerance":{"max_abs":1}})");
  store->set_alias_policy("m", "production", R"({"latency_regression":0.05})");
  EXPECT_EQ(store->alias_policies("m"), (std::map<std::string, std::string>{
                                            {"production", R"({"latency_regression":0.05})"},
                                            {"staging", R"({"tolerance":{"max_abs":1}})"}}));
  store->set_alias_policy("m", "staging", "");
  EXPECT_EQ(store->alias_policies("m").size(), 1u);
  EXPECT_TRUE(store->alias_policies("other").empty());
  EXPECT_THROW(store->set_alias_policy("m", "12", "{}"), Error);  // an alias is not a version number
}

TEST(ServeSqliteStore, TokensByHashWithScopes) {
  TempRegistry t;
  auto store = open_sqlite_store(t.file());
  EXPECT_FALSE(store->token_scope(kA));
  store->add_token(kA, TokenScope::kWrite);
  ASSERT_TRUE(store->token_scope(kA));
  EXPECT_EQ(*store->token_scope(kA), TokenScope::kWrite);
  EXPECT_EQ(parse_scope("admin"), TokenScope::kAdmin);
  EXPECT_FALSE(parse_scope("root"));
  EXPECT_STREQ(scope_name(TokenScope::kRead), "read");
}

TEST(ServeSqliteStore, AFileThatIsNotARegistryIsBadInput) {
  TempRegistry t;
  std::ofstream(t.file()) << "not sqlite at all, but long enough to have a header of sorts..........";
  try {
    open_sqlite_store(t.file());
    FAIL() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("registry.sqlite3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(open_sqlite_store(t.dir / "missing" / "registry.sqlite3"), Error);
}

TEST(ServeSqliteStore, ConcurrentAddsGetDistinctVersions) {
  TempRegistry t;
  auto store = open_sqlite_store(t.file());
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int r = 0; r < 10; ++r) {
        char hex[65];
        std::snprintf(hex, sizeof hex, "%064x", k * 100 + r);
        store->add_version("m", hex, r, nullptr);
      }
    });
  for (auto& th : threads) th.join();
  const auto vs = store->versions("m");
  ASSERT_EQ(vs.size(), 40u);
  for (size_t i = 0; i < vs.size(); ++i) EXPECT_EQ(vs[i].version, static_cast<int64_t>(i + 1));
}

}  // namespace
}  // namespace kiln::serve
