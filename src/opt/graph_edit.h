// The small edits every pass makes: finding consumers, replacing values, adding nodes and
// initializers, removing what is dead.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "ir/walk.h"
#include "ops/attrs.h"
#include "ops/infer.h"

namespace kiln::opt {

bool is_graph_output(const Graph& g, const Value* v);
int model_opset(const Model& m, const std::string& domain = "");  // 0 when not imported
// Values every graph of the model returns: a subgraph may return a value of an outer graph, so
// these stay alive even without a node reading them.
std::unordered_set<const Value*> returned_values(const Model& m);

// Every graph of the model, the innermost subgraphs first and the main graph last.
std::vector<Graph*> graphs_inner_first(Model& m);

// The other input of a two-input node, given one of them (null when v is not an input).
Value* other_input(const Node& n, const Value* v);

// The single node reading v (counting subgraph reads), or null when v has other or no readers or
// is an output of its graph.
Node* single_consumer(const Graph& g, const Value* v);

// Replaces every read of `old` by `repl`. When `old` is an output of its graph, the node making
// `repl` is made to produce `old` instead (so the output keeps its name) and repl's readers read
// old; the node that made old is then left reading old and must be erased by the caller. When
// that is impossible (repl is a graph input, an initializer or also an output) nothing changes
// and `why` says so.
bool replace_value(Graph& g, Value* old, Value* repl, std::string* why);

// The constant held by v: an initializer's data or a value inference computed. Null otherwise.
const Tensor* constant_of(const Value* v, const InferFacts& facts);
// The constant as float values when it has `numel` elements or is a scalar broadcast to them.
std::optional<std::vector<double>> constant_values(const Value* v, const InferFacts& facts);

Value* add_initializer(Graph& g, const std::string& base_name, Tensor t);
// A new node named `name`, reading `inputs`, with `num_outputs` fresh values named after it. It
// is appended: the pass manager sorts the graph again after each pass.
Node* add_node(Graph& g, const std::string& op_type, const std::string& name,
               const std::vector<Value*>& inputs, int num_outputs, int opset,
               const std::string& domain = "");

// Removes a node whose outputs (those it still produces) no node reads.
void erase_node(Graph& g, Node* n);

// Sets (adding when missing) an attribute of n.
void set_attr_int(Node& n, const std::string& name, int64_t v);
void set_attr_float(Node& n, const std::string& name, float v);
void set_attr_string(Node& n, const std::string& name, std::string v);
void set_attr_ints(Node& n, const std::string& name, std::vector<int64_t> v);

std::string attr_string(const Attribute& a);  // a canonical text form, for comparisons
bool same_attrs(const Node& a, const Node& b);

// Shape of v when every dim is known.
std::optional<std::vector<int64_t>> static_dims(const Value* v);

}  // namespace kiln::opt
