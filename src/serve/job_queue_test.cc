#include "serve/job_queue.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include "serve/compile_request.h"
#include "serve/job_worker.h"
#include "serve/sqlite_job_queue.h"
#include "support/error.h"

namespace kiln::serve {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct TempQueue {
  fs::path dir = fs::temp_directory_path() / ("kiln_jobs_" + std::to_string(getpid()));
  TempQueue() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempQueue() { fs::remove_all(dir); }
  std::unique_ptr<JobQueue> open() const { return open_sqlite_job_queue(dir / "registry.sqlite3"); }
};

JobSpec spec(int n) {
  return {.model = "m", .version = n, .model_sha256 = std::string(64, 'a'), .request = {{"targets", {"x86-64"}}}};
}

TEST(ServeJobQueue, ClaimsOldestFirstAndOnlyOnce) {
  TempQueue t;
  auto q = t.open();
  const int64_t a = q->enqueue(spec(1)), b = q->enqueue(spec(2));
  auto c1 = q->claim("w1", 30);
  auto c2 = q->claim("w2", 30);
  ASSERT_TRUE(c1 && c2);
  EXPECT_EQ(c1->first.id, a);
  EXPECT_EQ(c2->first.id, b);
  EXPECT_EQ(c1->second.attempt, 1);
  EXPECT_EQ(c1->first.state, JobState::kRunning);
  EXPECT_FALSE(q->claim("w3", 30));  // nothing queued, no lease expired
  EXPECT_TRUE(q->heartbeat(c1->second, 30));
  EXPECT_TRUE(q->finish(c1->second, JobState::kSucceeded, {{"targets", json::array()}}, "done\n"));
  const Job j = *q->job(a);
  EXPECT_EQ(j.state, JobState::kSucceeded);
  EXPECT_NE(j.log.find("attempt 1 claimed by w1"), std::string::npos);
  EXPECT_NE(j.log.find("done"), std::string::npos);
  // A finished job takes no heartbeat nor a second finish.
  EXPECT_FALSE(q->heartbeat(c1->second, 30));
  EXPECT_FALSE(q->finish(c1->second, JobState::kFailed, json::object(), ""));
  EXPECT_EQ(q->job(a)->state, JobState::kSucceeded);
  EXPECT_FALSE(q->job(999));
}

TEST(ServeJobQueue, AnExpiredLeaseIsTakenOverAndTheOldHolderIsFenced) {
  TempQueue t;
  auto q = t.open();
  const int64_t id = q->enqueue(spec(1));
  auto first = q->claim("dead", 1);
  ASSERT_TRUE(first);
  EXPECT_FALSE(q->claim("other", 1));  // the lease holds for a second
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto second = q->claim("other", 30);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->first.id, id);
  EXPECT_EQ(second->second.attempt, 2);
  // The first holder, back from the dead, can neither extend nor commit.
  EXPECT_FALSE(q->heartbeat(first->second, 30));
  EXPECT_FALSE(q->finish(first->second, JobState::kSucceeded, {{"by", "dead"}}, ""));
  EXPECT_TRUE(q->finish(second->second, JobState::kSucceeded, {{"by", "other"}}, ""));
  const Job j = *q->job(id);
  EXPECT_EQ(j.results, (json{{"by", "other"}}));
  EXPECT_EQ(j.worker, "other");
  EXPECT_NE(j.log.find("attempt 1 (dead) lost its lease"), std::string::npos) << j.log;
}

TEST(ServeJobQueue, AJobThatLosesKMaxAttemptsLeasesFails) {
  TempQueue t;
  auto q = t.open();
  const int64_t id = q->enqueue(spec(1));
  for (int i = 0; i < kMaxAttempts; ++i) {
    auto c = q->claim("crashing", 1);
    ASSERT_TRUE(c) << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  }
  EXPECT_FALSE(q->claim("next", 30));
  const Job j = *q->job(id);
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_EQ(j.attempt, kMaxAttempts);
  EXPECT_NE(j.log.find("stopped without finishing"), std::string::npos);
}

TEST(ServeJobQueue, ConcurrentClaimersTakeEachJobOnce) {
  TempQueue t;
  {
    auto q = t.open();
    for (int i = 0; i < 40; ++i) q->enqueue(spec(i));
  }
  std::vector<std::vector<int64_t>> taken(4);
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w)
    threads.emplace_back([&, w] {
      auto q = t.open();  // a connection each, as processes have
      while (auto c = q->claim("w" + std::to_string(w), 30)) {
        taken[w].push_back(c->first.id);
        EXPECT_TRUE(q->finish(c->second, JobState::kSucceeded, json::object(), ""));
      }
    });
  for (auto& th : threads) th.join();
  std::set<int64_t> all;
  size_t n = 0;
  for (const auto& v : taken) {
    n += v.size();
    all.insert(v.begin(), v.end());
  }
  EXPECT_EQ(n, 40u);
  EXPECT_EQ(all.size(), 40u);
}

TEST(ServeCompileRequest, ChecksTargetsAndOptions) {
  const CompileRequest r = parse_compile_request(json::parse(R"({"targets": ["x86-64-v3", "x86-64"], "runs": 0,
                                                                  "shapes": ["batch=1..4"]})"));
  EXPECT_EQ(r.targets, (std::vector<std::string>{"x86-64-v3", "x86-64"}));
  EXPECT_EQ(r.runs, 0);
  EXPECT_EQ(parse_compile_request(compile_request_json(r)).shapes, r.shapes);
  auto refused = [](const char* body) {
    try {
      parse_compile_request(json::parse(body));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << body;
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused(R"({})").find("targets"), std::string::npos);
  EXPECT_NE(refused(R"({"targets": []})").find("targets"), std::string::npos);
  EXPECT_NE(refused(R"({"targets": ["z80"]})").find("z80"), std::string::npos);
  EXPECT_NE(refused(R"({"targets": ["x86-64", "x86-64"]})").find("twice"), std::string::npos);
  EXPECT_NE(refused(R"({"targets": ["x86-64"], "level": 7})").find("level"), std::string::npos);
  EXPECT_NE(refused(R"({"targets": ["x86-64"], "runs": "ten"})").find("runs"), std::string::npos);
  EXPECT_NE(refused(R"({"targets": ["x86-64"], "colour": 1})").find("colour"), std::string::npos);
  EXPECT_NE(refused(R"({"targets": ["x86-64"], "shapes": ["batch"]})"), "accepted");
  EXPECT_EQ(refused(R"([1])").find("accepted"), std::string::npos);
}

TEST(ServeJobState, FromTheTargets) {
  EXPECT_EQ(job_state_of(json::parse(R"([{"state": "succeeded"}, {"state": "succeeded"}])")), JobState::kSucceeded);
  EXPECT_EQ(job_state_of(json::parse(R"([{"state": "succeeded"}, {"state": "fell-back"}])")), JobState::kFellBack);
  EXPECT_EQ(job_state_of(json::parse(R"([{"state": "fell-back"}, {"state": "failed"}])")), JobState::kFailed);
}

}  // namespace
}  // namespace kiln::serve
