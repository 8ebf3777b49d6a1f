// The dispatch table: per (op, element type) the implementations that can run a node, in order
// of preference. The first that accepts a node wins; the reference kernel (src/ops, through
// KernelContext) is always the last, so every model runs.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "engine/graph_facts.h"
#include "engine/group.h"

namespace kiln::engine {

class Lowering;

// What an implementation sees when it decides whether it takes a node.
struct MatchContext {
  const GraphFacts& facts;
  const std::unordered_set<const Node*>& claimed;  // nodes already in a group
  bool standalone = false;                         // fuse nothing: the node alone

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

struct KernelImpl {
  std::string_view name;  // "onednn.conv", "cpu.softmax", "reference" ...
  bool fuses = false;      // match may take neighbours: tried first, for nodes in graph order
  // match may take the nodes making its inputs (a prologue the producer's implementation would
  // otherwise take as its epilogue): tried before all others.
  bool fuses_producers = false;
  // Whether this implementation runs n. It fills g (anchor set by the caller) and, unless
  // ctx.standalone, may widen it with free neighbours it fuses.
  bool (*match)(const Node& n, const MatchContext& ctx, Group& g) = nullptr;
  // Emits the steps of g at its place in the schedule. It may drop trailing epilogue units it
  // cannot fuse after all (they are lowered on their own after it). Returns false when it cannot
  // run g at all; then every member goes to the next implementation on its own.
  bool (*build)(Group& g, Lowering& lw) = nullptr;
};

class KernelTable {
 public:
  static const KernelTable& global();
  // Appends impl to the list of (domain, op, dtype): earlier additions are preferred. dtype
  // kUndefined: any element type (tried after the lists of a specific type).
  void add(std::string_view domain, std::string_view op, DataType dtype, KernelImpl impl);
  // The implementations for a node: keyed by its first input's element type (its first
  // output's when it has no inputs). The reference implementation is not among them.
  std::vector<const KernelImpl*> find(const Node& n, const GraphFacts& facts) const;
  static const KernelImpl& reference();

 private:
  std::map<std::tuple<std::string, std::string, DataType>, std::vector<KernelImpl>> table_;
};

// Registration of the implementation families (each in its own file).
void register_onednn_kernels(KernelTable& t);
void register_native_kernels(KernelTable& t);
void register_layout_kernels(KernelTable& t);
void register_context_kernels(KernelTable& t);
void register_recurrent_kernels(KernelTable& t);

}  // namespace kiln::engine
