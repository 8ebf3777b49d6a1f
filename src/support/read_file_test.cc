#include "support/read_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/error.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("kiln_read_file_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                                   "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string error_of(const fs::path& p, int64_t max = kMaxReadFileBytes) {
  try {
    read_file(p, max);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    return e.what();
  }
  return "";
}

TEST(ReadFile, ReadsEveryByte) {
  const fs::path d = temp_dir();
  std::string bytes(100000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + (i >> 8));
  std::ofstream(d / "f", std::ios::binary) << bytes;
  std::ofstream(d / "empty", std::ios::binary).close();
  EXPECT_EQ(read_file(d / "f"), bytes);
  EXPECT_EQ(read_file(d / "f", 100000), bytes);  // the bound is inclusive
  EXPECT_EQ(read_file(d / "empty"), "");
  fs::remove_all(d);
}

TEST(ReadFile, RefusesWithOneLineNamingThePath) {
  const fs::path d = temp_dir();
  std::ofstream(d / "big", std::ios::binary) << std::string(1001, 'x');
  const std::string missing = error_of(d / "missing");
  EXPECT_NE(missing.find("cannot read '" + (d / "missing").string() + "'"), std::string::npos) << missing;
  const std::string folder = error_of(d);
  EXPECT_NE(folder.find("'" + d.string() + "' is not a regular file"), std::string::npos) << folder;
  const std::string big = error_of(d / "big", 1000);
  EXPECT_NE(big.find("'" + (d / "big").string() + "' is 1001 bytes, more than the 1000 read here"), std::string::npos)
      << big;
  for (const std::string& e : {missing, folder, big}) EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  fs::remove_all(d);
}

}  // namespace
}  // namespace kiln
