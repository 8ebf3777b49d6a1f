// Implementation choice by measurement: the stores of decisions and the per-plan tuner.
#include "engine/tuning.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/cache_folder.h"
#include "engine/cpu/cpu_features.h"
#include "engine/onednn/dnnl_context.h"
#include "support/error.h"

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "unknown"
#endif

namespace kiln::engine {

namespace {

using nlohmann::json;

// Bumped when a decision's key or its candidates change meaning: older sections are ignored.
constexpr int kFileVersion = 1;

json choice_json(const Choice& c) {
  json j{{"pick", c.pick}};
  if (!c.micros.empty()) {
    json m = json::object();
    for (const auto& [name, us] : c.micros) m[name] = us;
    j["micros"] = std::move(m);
  }
  return j;
}

std::optional<Choice> choice_from(const json& j) {
  if (!j.is_object() || !j.contains("pick") || !j["pick"].is_string()) return std::nullopt;
  Choice c{j["pick"].get<std::string>(), {}};
  if (c.pick.empty()) return std::nullopt;
  if (j.contains("micros")) {
    if (!j["micros"].is_object()) return std::nullopt;
    for (const auto& [name, us] : j["micros"].items()) {
      if (!us.is_number()) return std::nullopt;
      c.micros.emplace_back(name, us.get<double>());
    }
  }
  return c;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::optional<Choice> ChoiceStore::find(const std::string& key) const {
  std::lock_guard lock(mu_);
  const auto it = choices_.find(key);
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

void ChoiceStore::put(const std::string& key, Choice c) {
  std::lock_guard lock(mu_);
  choices_[key] = std::move(c);
}

std::map<std::string, Choice> ChoiceStore::all() const {
  std::lock_guard lock(mu_);
  return choices_;
}

size_t ChoiceStore::size() const {
  std::lock_guard lock(mu_);
  return choices_.size();
}

std::string ChoiceStore::to_json() const {
  json j = json::object();
  for (const auto& [key, c] : all()) j[key] = choice_json(c);
  return j.dump();
}

std::shared_ptr<ChoiceStore> ChoiceStore::parse(const std::string& json_text) {
  const json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  KILN_CHECK(j.is_object(), ErrorKind::kBadInput, "implementation choices: not a JSON object");
  auto store = std::make_shared<ChoiceStore>();
  for (const auto& [key, value] : j.items()) {
    auto c = choice_from(value);
    KILN_CHECK(c.has_value(), ErrorKind::kBadInput,
               "implementation choices: '{}' is not a {{\"pick\": ..., \"micros\": {{...}}}} object", key);
    store->put(key, std::move(*c));
  }
  return store;
}

std::optional<std::filesystem::path> ChoiceStore::machine_file() {
  const auto folder = cache_folder();
  if (!folder) return std::nullopt;
  return *folder / "choices.json";
}

std::string ChoiceStore::machine_identity() {
  return fmt::format("{} | {} | kiln {}", cpu::cpu_identity(), onednn_identity(), KILN_VERSION_STRING);
}

ChoiceStore& ChoiceStore::machine() {
  // One store per file and identity: a process that caps oneDNN's ISA (kiln compile for an older
  // target) decides for that ISA apart, and a test pointing XDG_CACHE_HOME elsewhere reads anew.
  static std::mutex mu;
  static auto* stores = new std::map<std::string, std::unique_ptr<ChoiceStore>>;  // never freed:
  // plans of any thread read them until the process ends
  const auto file = machine_file();
  const std::string id = machine_identity();
  std::lock_guard lock(mu);
  auto& store = (*stores)[(file ? file->string() : "") + "\n" + id];
  if (store) return *store;
  store = std::make_unique<ChoiceStore>();
  store->file_ = file;
  store->identity_ = id;
  if (!file) return *store;
  const json j = read_machine_sections(*file, kFileVersion);
  if (j.contains("machines") && j["machines"].contains(id) && j["machines"][id].is_object())
    for (const auto& [key, value] : j["machines"][id].items())
      if (auto c = choice_from(value)) store->choices_[key] = std::move(*c);
  return *store;
}

void ChoiceStore::save() const {
  if (!file_) return;
  // Merged with what other processes wrote meanwhile; a cache that cannot be written leaves the
  // decisions to this process.
  json j = read_machine_sections(*file_, kFileVersion);
  json& mine = j["machines"][identity_];
  if (!mine.is_object()) mine = json::object();
  for (const auto& [key, c] : all()) mine[key] = choice_json(c);
  write_machine_sections(*file_, std::move(j), kFileVersion);
}

const char* choice_source_name(PlanChoice::Source s) {
  switch (s) {
    case PlanChoice::Source::kMeasured: return "measured";
    case PlanChoice::Source::kMachine: return "cached";
    case PlanChoice::Source::kGiven: return "artifact";
    case PlanChoice::Source::kPreference: return "preference";
  }
  return "?";
}

TuneMode effective_tune_mode(TuneMode m) {
  if (m != TuneMode::kDefault) return m;
  const char* env = std::getenv("KILN_TUNE");
  if (!env || !*env) return TuneMode::kOn;
  const std::string_view v(env);
  if (v == "off") return TuneMode::kOff;
  if (v == "again") return TuneMode::kAgain;
  return TuneMode::kOn;
}

Tuner::Tuner(const EngineOptions& opts)
    : mode_(effective_tune_mode(opts.tune)),
      budget_left_ms_(opts.tune_budget_ms),
      given_(opts.given_choices) {}

std::string Tuner::choose(const std::string& key, const std::vector<Candidate>& candidates) {
  KILN_ASSERT(!candidates.empty(), "a choice of no candidates");
  auto known = [&](const std::string& name) {
    return std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& c) { return c.name == name; });
  };
  auto decide = [&](Choice c, PlanChoice::Source source) {
    made_.push_back({key, c, source});
    return c.pick;
  };
  if (candidates.size() == 1) return candidates[0].name;
  // Decided already in this plan (another step of the same shapes): the same way, said once.
  for (const PlanChoice& p : made_)
    if (p.key == key && known(p.choice.pick)) return p.choice.pick;
  // An artifact's decisions hold even with tuning off: its packed weights were made for them.
  if (given_)
    if (auto c = given_->find(key); c && known(c->pick)) return decide(*c, PlanChoice::Source::kGiven);
  if (mode_ == TuneMode::kOff) return candidates[0].name;
  if (!machine_) machine_ = &ChoiceStore::machine();
  ChoiceStore& machine = *machine_;
  if (mode_ == TuneMode::kOn)
    if (auto c = machine.find(key); c && known(c->pick)) return decide(*c, PlanChoice::Source::kMachine);
  if (budget_left_ms_ <= 0) return decide({candidates[0].name, {}}, PlanChoice::Source::kPreference);
  const double start = now_ms();
  Choice c{candidates[0].name, {}};
  double best = 0;
  for (const Candidate& candidate : candidates) {
    const auto run = candidate.make();
    if (!run) continue;
    const double us = best_micros(run);
    if (c.micros.empty()) c.pick = candidate.name, best = us;
    else if (us < best * (1 - (candidate.margin < 0 ? kMargin : candidate.margin))) c.pick = candidate.name, best = us;
    c.micros.emplace_back(candidate.name, us);
  }
  budget_left_ms_ -= now_ms() - start;
  measured_any_ = true;
  machine.put(key, c);
  return decide(std::move(c), PlanChoice::Source::kMeasured);
}

void Tuner::save() const {
  if (measured_any_) machine_->save();
}

double best_micros(const std::function<void()>& run, int runs, double max_ms) {
  run();  // warm: caches, pages, the first-run costs of a primitive
  double best = 1e300;
  const double start = now_ms();
  for (int i = 0; i < runs; ++i) {
    const double t0 = now_ms();
    run();
    best = std::min(best, (now_ms() - t0) * 1000);
    if (i >= 1 && now_ms() - start > max_ms) break;
  }
  return best;
}

}  // namespace kiln::engine
