// Implementation choice by measurement. Where the engine's order of preference between two
// implementations of a step is a guess that comes out differently on different CPUs (Winograd or
// direct for a 3x3 convolution: Winograd does fewer multiplications, but on a CPU whose direct
// kernels are brgemm ones, or at large images with few channels, direct can be faster), the
// candidates are timed on the step's real shapes and thread count, and the fastest is kept.
//
// A decision is keyed by what the step is (kind, shapes, threads) and kept in a ChoiceStore: the
// machine's store is a file in the cache folder ($XDG_CACHE_HOME/kiln/choices.json, else
// ~/.cache/kiln/choices.json), one section per CPU (model name, family, model, stepping),
// oneDNN version and ISA and kiln version, so a second session on the same machine times nothing.
// A compiled artifact carries the decisions its plans were made with (given choices), which come
// before the machine's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine_options.h"

namespace kiln::engine {

// One decision: the candidate picked and, when measured, each candidate's time.
struct Choice {
  std::string pick;
  std::vector<std::pair<std::string, double>> micros;  // per candidate, best of its runs; may be empty
};

// Decisions by key, safe to share between threads. The machine's store reads its file once and
// writes it back (merged with what other processes wrote meanwhile) after a plan measured
// something new.
class ChoiceStore {
 public:
  ChoiceStore() = default;
  std::optional<Choice> find(const std::string& key) const;
  void put(const std::string& key, Choice c);
  std::map<std::string, Choice> all() const;
  size_t size() const;

  // As JSON text ({"key": {"pick": ..., "micros": {...}}, ...}), the form artifacts store; parse
  // refuses (kBadInput) what is not that form.
  std::string to_json() const;
  static std::shared_ptr<ChoiceStore> parse(const std::string& json_text);

  // The store of this machine as oneDNN runs now (machine_identity), read from its file on first
  // use (empty where there is none, or it cannot be read); `save` writes the decisions of this
  // process into the file (a read-only or missing cache folder is not an error: the decisions
  // then last for this process).
  static ChoiceStore& machine();
  void save() const;
  // The file the machine's store reads and writes; nullopt when neither XDG_CACHE_HOME nor HOME
  // is set.
  static std::optional<std::filesystem::path> machine_file();
  // The machine's section name: CPU, oneDNN, kiln.
  static std::string machine_identity();

 private:
  mutable std::mutex mu_;
  std::map<std::string, Choice> choices_;
  std::optional<std::filesystem::path> file_;  // the machine's store only
  std::string identity_;                       // the machine's store: its section of the file
};

// One candidate: its name, and what makes one run of it on scratch buffers of the real shapes
// (null where the candidate turns out not to be available), called only when measuring; and how
// much faster than the pick so far it must measure to replace it (a negative margin: the
// Tuner's kMargin; a candidate that costs memory the others do not asks for more).
struct Candidate {
  std::string name;
  std::function<std::function<void()>()> make;
  double margin = -1;
};

// A decision as a plan made it, for `kiln profile --plan` and for artifacts.
struct PlanChoice {
  std::string key;
  Choice choice;
  enum class Source { kMeasured, kMachine, kGiven, kPreference } source = Source::kPreference;
};
const char* choice_source_name(PlanChoice::Source s);  // "measured", "cached", "artifact", "preference"

// TuneMode::kDefault resolved: KILN_TUNE (off, on, again) when set, else on.
TuneMode effective_tune_mode(TuneMode m);

// The decisions of one plan. Decisions already made (given by an artifact, then the machine's
// store) are taken as they are; under kOn and kAgain the rest are measured while the plan's
// budget lasts (EngineOptions::tune_budget_ms), after which the order of preference decides.
class Tuner {
 public:
  explicit Tuner(const EngineOptions& opts);
  // The name of the candidate to use for `key`. candidates[0] is the order of preference; a
  // candidate replaces it only when it measured at least its margin (kMargin unless it says)
  // faster (the first available one stands in for it when it is not). With one candidate, it is
  // returned untimed.
  std::string choose(const std::string& key, const std::vector<Candidate>& candidates);
  const std::vector<PlanChoice>& made() const { return made_; }
  bool measured_any() const { return measured_any_; }
  // After the plan: what it measured into the machine's cache, written to its file.
  void save() const;

  static constexpr double kMargin = 0.05;

 private:
  TuneMode mode_;
  double budget_left_ms_;
  std::shared_ptr<const ChoiceStore> given_;
  std::vector<PlanChoice> made_;
  ChoiceStore* machine_ = nullptr;  // the machine's store, once a choice reads it
  bool measured_any_ = false;
};

// The best time of `run` in microseconds: one run to warm it, then repeated runs until `runs`
// were timed or `max_ms` passed (at least two).
double best_micros(const std::function<void()>& run, int runs = 10, double max_ms = 25);

}  // namespace kiln::engine
