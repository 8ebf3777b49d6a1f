// The dispatch table: per (op, element type) the implementations that can run a node, in order
// of preference, as dispatch_lists.cc states them. The first that accepts a node wins; the
// reference kernel (src/ops, through KernelContext) is always the last, so every model runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "engine/graph_facts.h"
#include "engine/group.h"
#include "ops/attrs.h"

namespace kiln::engine {

class Lowering;

// What an implementation sees when it decides whether it takes a node.
struct EngineOptions;

struct MatchContext {
  const GraphFacts& facts;
  const std::unordered_set<const Node*>& claimed;  // nodes already in a group
  bool standalone = false;                         // fuse nothing: the node alone
  const EngineOptions* options = nullptr;          // the engine's (null: the defaults)

  bool is_free(const Node* n) const { return !claimed.contains(n); }
};

// Whether n is the node `op` of the default (ONNX) domain; false for null.
inline bool is_op(const Node* n, std::string_view op) {
  return n && n->domain.empty() && n->op_type == op;
}

// The one node reading v, when there is exactly one, it is free and v is not a graph output.
inline const Node* sole_consumer(const Value* v, const MatchContext& ctx) {
  if (ctx.facts.is_graph_output(v)) return nullptr;
  const auto& c = ctx.facts.consumers(v);
  if (c.size() != 1 || !ctx.is_free(c[0])) return nullptr;
  return c[0];
}

// The dims of v when it is a float32 tensor of known, positive dims (what the concat copies and
// oneDNN's concat take); null otherwise.
inline const std::vector<int64_t>* usable(const Value* v, const GraphFacts& f) {
  if (!v || f.dtype(v) != DataType::kFloat) return nullptr;
  const auto* d = f.dims(v);
  if (!d || d->empty()) return nullptr;
  for (int64_t x : *d)
    if (x <= 0) return nullptr;
  return d;
}

// A Concat's axis in [0, rank), or nullopt when out of range.
inline std::optional<int> concat_axis(const Node& n, int rank) {
  const int64_t a = attr_int(n, "axis", 0);  // required since opset 4 (the checker sees to it)
  if (a < -rank || a >= rank) return std::nullopt;
  return static_cast<int>(a < 0 ? a + rank : a);
}

struct KernelImpl {
  std::string_view name;  // "onednn.conv", "cpu.softmax", "reference" ...
  // Whether this implementation runs n. It fills g (anchor set by the caller) and, unless
  // ctx.standalone, may widen it with free neighbours it fuses.
  bool (*match)(const Node& n, const MatchContext& ctx, Group& g) = nullptr;
  // Emits the steps of g at its place in the schedule. It may drop trailing epilogue units it
  // cannot fuse after all (they are lowered on their own after it). Returns false when it cannot
  // run g at all; then every member goes to the next implementation on its own.
  bool (*build)(Group& g, Lowering& lw) = nullptr;
};

// Grouping sweeps the graph three times, in node order each time; an entry of a list is tried in
// its sweep and every later one. Implementations that take the nodes making their inputs (a
// prologue the producer's implementation would otherwise take as its epilogue) go first, then
// those fusing what follows their result, so that a node another group would absorb is still free
// when its own turn comes; the last sweep tries every entry and gives the rest to the reference.
enum class Sweep { kProducers, kFusing, kAll };
std::string_view sweep_name(Sweep s);  // "producers", "fusing", "all"

struct DispatchEntry {
  const KernelImpl* impl = nullptr;
  Sweep sweep = Sweep::kAll;
};

// The implementations of ops (of the ONNX domain) for one element type, in order of preference.
// dtype kUndefined: any element type, tried after the list of the node's own type.
struct DispatchList {
  std::vector<std::string_view> ops;
  DataType dtype = DataType::kUndefined;
  std::vector<DispatchEntry> entries;
};

// The lists the engine runs with (dispatch_lists.cc).
const std::vector<DispatchList>& dispatch_lists();

class KernelTable {
 public:
  static const KernelTable& global();  // of dispatch_lists()
  // Each (op, dtype) may be in one list only.
  explicit KernelTable(const std::vector<DispatchList>& lists);
  // The entries for a node: keyed by its first input's element type (its first output's when it
  // has no inputs), then those for any type. The reference implementation is not among them.
  std::vector<DispatchEntry> find(const Node& n, const GraphFacts& facts) const;
  static const KernelImpl& reference();
  // The lists as text, one implementation a line in the order they are tried, per op (all ops
  // when op is empty) and element type, ending in the reference (`kiln inspect --impls`).
  std::string describe(std::string_view op = {}) const;

 private:
  std::map<std::pair<std::string, DataType>, std::vector<DispatchEntry>> table_;
};

}  // namespace kiln::engine
