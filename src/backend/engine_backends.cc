// The engine's own backends: `cpu` claims what the fast engine's dispatch table runs natively
// (oneDNN and kiln's kernels), `reference` claims every op with a reference kernel. Both are
// lowered by the engine's plan, so neither compiles partitions here.
#include <fmt/format.h>

#include <unordered_set>

#include "backend/backend.h"
#include "engine/kernel_table.h"
#include "ops/op.h"
#include "support/error.h"

namespace kiln::backend {

namespace {

NodeClaim cpu_claim(const Node& n, const engine::GraphFacts& facts) {
  const std::unordered_set<const Node*> none;
  const engine::MatchContext ctx{facts, none, true};
  const auto entries = engine::KernelTable::global().find(n, facts);
  std::string tried;
  for (const engine::DispatchEntry& e : entries) {
    engine::Group g{.impl = e.impl, .anchor = &n};
    bool ok = false;
    try {
      ok = e.impl->match(n, ctx, g);
    } catch (const Error&) {
      ok = false;
    }
    if (ok) return {true, std::string(e.impl->name)};
    tried += (tried.empty() ? "" : ", ") + std::string(e.impl->name);
  }
  const DataType dt = n.has_input(0) ? facts.dtype(n.inputs[0])
                      : n.num_outputs() > 0 && n.outputs[0] ? facts.dtype(n.outputs[0])
                                                            : DataType::kUndefined;
  if (entries.empty())
    return {false, fmt::format("no native kernel for {} ({})", n.op_type, dtype_name(dt))};
  return {false, fmt::format("its native kernels ({}) do not take this node", tried)};
}

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string version() const override { return "kiln engine (oneDNN + kiln kernels)"; }
  bool in_engine() const override { return true; }
  std::vector<NodeClaim> claim(const engine::GraphFacts& facts, const Target&) override {
    std::vector<NodeClaim> out;
    for (const auto& n : facts.graph().nodes()) out.push_back(cpu_claim(*n, facts));
    return out;
  }
  std::unique_ptr<CompiledPartition> compile(const PartitionSpec&, std::string& why_not) override {
    why_not = "the engine lowers cpu partitions itself";
    return nullptr;
  }
};

class ReferenceBackend : public Backend {
 public:
  std::string name() const override { return "reference"; }
  std::string version() const override { return "kiln reference kernels"; }
  bool in_engine() const override { return true; }
  std::vector<NodeClaim> claim(const engine::GraphFacts& facts, const Target&) override {
    std::vector<NodeClaim> out;
    for (const auto& n : facts.graph().nodes()) {
      const OpSchema* s = OpRegistry::global().find(n->domain, n->op_type);
      if (s && s->kernel) out.push_back({true, "reference"});
      else out.push_back({false, "no reference kernel for this op"});
    }
    return out;
  }
  std::unique_ptr<CompiledPartition> compile(const PartitionSpec&, std::string& why_not) override {
    why_not = "the engine lowers reference partitions itself";
    return nullptr;
  }
};

}  // namespace

std::shared_ptr<Backend> make_cpu_backend() { return std::make_shared<CpuBackend>(); }
std::shared_ptr<Backend> make_reference_backend() { return std::make_shared<ReferenceBackend>(); }

}  // namespace kiln::backend
