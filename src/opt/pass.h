// A graph pass: a named rewrite of the IR that keeps the model's meaning. Passes keep no state
// between runs, never fail on a graph they cannot handle (they leave it alone and say why), and
// report every rewrite they apply and every near miss to the PassContext.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/graph.h"
#include "ops/infer.h"

namespace kiln::opt {

struct PassOptions {
  int64_t fold_max_bytes = int64_t{1} << 30;  // a folded constant may outgrow its inputs up to this
  int target_opset = 0;              // ai.onnx opset to raise the model to (0: keep)
};

// One change a pass made, for the rewrite record.
// "conv1" or, for an unnamed node, "Conv producing 'x'": how the record names a node.
std::string node_label(const Node& n);

struct Rewrite {
  std::string pass;
  std::string what;                  // "BatchNormalization folded into Conv"
  std::vector<std::string> removed;  // node labels
  std::vector<std::string> added;
};

// A pattern that matched in part and why the rest did not ("Conv output has 2 consumers").
struct NearMiss {
  std::string pass;
  std::string node;
  std::string reason;
};

class PassContext {
 public:
  PassContext(const PassOptions& options, int64_t rewrite_budget)
      : options_(options), budget_(rewrite_budget) {}

  const PassOptions& options() const { return options_; }
  // What inference knows about the current graph (refreshed before each pass).
  const InferFacts& facts() const { return facts_; }
  InferFacts& mutable_facts() { return facts_; }
  void set_pass(std::string name) { pass_ = std::move(name); }

  // Asked before applying a rewrite. False once the rewrite budget is spent (bisection runs the
  // pipeline with a budget): the pass must then leave the graph as it is.
  bool allow() {
    if (budget_ >= 0 && applied_ >= budget_) return false;
    return true;
  }
  // Records an applied rewrite (after allow() said yes).
  void applied(std::string what, std::vector<std::string> removed, std::vector<std::string> added);
  void near_miss(const Node& n, std::string reason) { near_miss(node_label(n), std::move(reason)); }
  void near_miss(std::string what, std::string reason);

  void clear_near_misses() { near_misses_.clear(); }
  int64_t rewrites_applied() const { return applied_; }
  const std::vector<Rewrite>& rewrites() const { return rewrites_; }
  const std::vector<NearMiss>& near_misses() const { return near_misses_; }

 private:
  const PassOptions& options_;
  int64_t budget_;  // -1: unlimited
  int64_t applied_ = 0;
  std::string pass_;
  InferFacts facts_;
  std::vector<Rewrite> rewrites_;
  std::vector<NearMiss> near_misses_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  // Rewrites the model; every rewrite goes through ctx.allow() and ctx.applied().
  virtual void run(Model& m, PassContext& ctx) const = 0;
};

// A pass that works on each graph on its own: the main graph and every subgraph, inner first.
class GraphPass : public Pass {
 public:
  void run(Model& m, PassContext& ctx) const final;

 protected:
  virtual void run_graph(Graph& g, const Model& m, PassContext& ctx) const = 0;
};

}  // namespace kiln::opt
