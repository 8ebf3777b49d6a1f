// Cleanup: dead code, duplicate initializers, common subexpressions.
#include <algorithm>
#include <unordered_map>

#include "ops/op.h"
#include "opt/graph_edit.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

class Dce final : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  std::string_view summary() const override {
    return "removes nodes whose outputs nothing reads, unused initializers and stale value_info";
  }
  void run(Model& m, PassContext& ctx) const override {
    const auto returned = returned_values(m);
    auto live = [&](const Value* v) { return v && (!v->uses.empty() || returned.contains(v)); };
    for (Graph* g : graphs_inner_first(m)) {
      std::vector<std::string> removed;
      for (size_t i = g->nodes().size(); i-- > 0;) {
        Node* n = g->nodes()[i].get();
        if (std::any_of(n->outputs.begin(), n->outputs.end(), live)) continue;
        if (!ctx.allow()) return;
        removed.push_back(node_label(*n));
        g->remove_node(n);
      }
      if (!removed.empty())
        ctx.applied(fmt::format("{} dead nodes removed", removed.size()), std::move(removed), {});

      std::vector<std::string> dropped;
      std::vector<Value*> kept;
      for (Value* v : g->initializers) {
        if (live(v) || !ctx.allow()) {
          kept.push_back(v);
          continue;
        }
        dropped.push_back(v->name);
        v->data = Tensor();
        if (v->is_graph_input) std::erase(g->inputs, v);
      }
      if (!dropped.empty()) {
        g->initializers = std::move(kept);
        ctx.applied(fmt::format("{} unused initializers removed", dropped.size()),
                    std::move(dropped), {});
      }
      for (const Value* v : g->inputs)
        if (!live(v) && g == m.graph.get() && !v->is_constant())
          ctx.near_miss("input '" + v->name + "'",
                        "read by nothing; kept as part of the model's interface");
      // value_info of values no longer made by any node
      std::erase_if(g->value_infos, [](const Value* v) {
        return !v->producer && !v->is_constant() && !v->is_graph_input;
      });
    }
  }
};

class DedupeInitializers final : public Pass {
 public:
  std::string_view name() const override { return "dedupe-initializers"; }
  std::string_view summary() const override {
    return "merges initializers with the same type, shape and bytes";
  }
  void run(Model& m, PassContext& ctx) const override {
    for (Graph* g : graphs_inner_first(m)) {
      // Candidates grouped by type, shape and a hash of the bytes; bytes compared on a hash match.
      std::unordered_map<std::string, std::vector<Value*>> seen;
      for (Value* v : g->initializers) {
        if (v->is_graph_input || is_graph_output(*g, v) || v->uses.empty()) continue;
        const Tensor& t = v->data;
        if (t.dtype() == DataType::kString) continue;
        const std::string_view bytes(static_cast<const char*>(t.raw()), t.nbytes());
        auto& same = seen[fmt::format("{}{}#{}", static_cast<int>(t.dtype()),
                                      dims_to_string(t.dims()), std::hash<std::string_view>{}(bytes))];
        Value* first = nullptr;
        for (Value* c : same)
          if (std::string_view(static_cast<const char*>(c->data.raw()), c->data.nbytes()) == bytes)
            first = c;
        if (!first) {
          same.push_back(v);
          continue;
        }
        if (!ctx.allow()) return;
        replace_value(*g, v, first, nullptr);
        ctx.applied(fmt::format("initializer '{}' is a copy of '{}'", v->name, first->name), {}, {});
      }
    }
  }
};

class Cse final : public GraphPass {
 public:
  std::string_view name() const override { return "cse"; }
  std::string_view summary() const override {
    return "merges nodes that compute the same op on the same inputs";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    std::unordered_map<std::string, Node*> seen;
    std::vector<Node*> dead;
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      if (has_subgraph(*n) || n->outputs.empty()) continue;
      const OpSchema* schema = OpRegistry::global().find(n->domain, n->op_type);
      if (!schema || !schema->deterministic) continue;
      std::string key = n->domain + "|" + n->op_type + "|";
      for (const Value* v : n->inputs) key += fmt::format("{},", static_cast<const void*>(v));
      std::vector<std::string> attrs;
      for (const auto& a : n->attrs) attrs.push_back(attr_string(a));
      std::sort(attrs.begin(), attrs.end());
      for (const auto& a : attrs) key += "|" + a;
      auto [it, fresh] = seen.emplace(std::move(key), n);
      if (fresh) continue;
      Node* c = it->second;
      if (c->outputs.size() != n->outputs.size()) continue;
      std::string why;
      bool ok = true;
      for (size_t i = 0; i < n->outputs.size() && ok; ++i) {
        if (!n->outputs[i]) continue;
        if (!c->outputs[i]) ok = false, why = "the first copy does not make every output";
        else if (is_graph_output(g, n->outputs[i]) && is_graph_output(g, c->outputs[i]))
          ok = false, why = "both copies are graph outputs";
      }
      if (!ok) {
        ctx.near_miss(*n, "same as " + node_label(*c) + " but " + why);
        continue;
      }
      if (!ctx.allow()) return;
      for (size_t i = 0; i < n->outputs.size(); ++i)
        if (n->outputs[i]) replace_value(g, n->outputs[i], c->outputs[i], nullptr);
      ctx.applied(fmt::format("{} computes the same as {}", node_label(*n), node_label(*c)),
                  {node_label(*n)}, {});
      dead.push_back(n);
    }
    for (Node* n : dead) g.remove_node(n);
  }
};

}  // namespace

std::unique_ptr<Pass> make_dce() { return std::make_unique<Dce>(); }
std::unique_ptr<Pass> make_dedupe_initializers() { return std::make_unique<DedupeInitializers>(); }
std::unique_ptr<Pass> make_cse() { return std::make_unique<Cse>(); }

}  // namespace kiln::opt
