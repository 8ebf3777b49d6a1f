// The graph IR: Model, Graph, Node, Value, Attribute, Function.
//
// A Graph owns its Values and Nodes. Nodes are kept in topological order. A subgraph (If/Loop/Scan
// body) has `parent` set and its nodes may use Values of enclosing graphs directly (outer-scope
// references). Values that hold constant data (initializers) carry it in `data`.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/shape.h"
#include "ir/tensor.h"

namespace kiln {

class Graph;
struct Node;

// Values equal ONNX's AttributeProto.AttributeType.
enum class AttrKind : int32_t {
  kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5, kFloats = 6,
  kInts = 7, kStrings = 8, kTensors = 9, kGraphs = 10, kSparseTensor = 11, kSparseTensors = 12,
  kTypeProto = 13, kTypeProtos = 14,
};
std::string_view attr_kind_name(AttrKind k);

struct SparseTensor {
  Tensor values;   // 1-D, nnz elements
  Tensor indices;  // int64 [nnz] (linear) or [nnz, rank]
  std::vector<int64_t> dims;
  Tensor to_dense() const;  // fails with kBadModel on an index out of range
};

struct Attribute {
  std::string name;
  AttrKind kind = AttrKind::kUndefined;
  std::string ref_attr_name;  // inside a function body: takes the caller's attribute of that name
  std::string doc_string;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  SparseTensor sparse;
  TypeInfo tp;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::vector<SparseTensor> sparse_tensors;
  std::vector<TypeInfo> tps;
};

struct Use {
  Node* node;
  int input_index;
};

struct Value {
  std::string name;
  TypeInfo type;
  Graph* owner = nullptr;
  Node* producer = nullptr;  // null for graph inputs, initializers and outer-scope values
  int producer_output = -1;
  Tensor data;               // defined for initializers (and constants found by passes)
  bool is_graph_input = false;
  bool has_declared_type = false;  // the file gave its type (input, output or value_info)
  std::string doc_string;
  std::vector<Use> uses;

  bool is_constant() const { return data.defined(); }
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  std::string overload;
  std::string doc_string;
  std::vector<Value*> inputs;   // nullptr for an omitted optional input
  std::vector<Value*> outputs;  // nullptr for an omitted optional output
  std::vector<Attribute> attrs;
  std::vector<std::pair<std::string, std::string>> metadata;
  int opset = 0;  // the version of `domain` the model imports
  Graph* owner = nullptr;

  const Attribute* attr(std::string_view n) const;
  Attribute* attr(std::string_view n);
  int num_inputs() const { return static_cast<int>(inputs.size()); }
  int num_outputs() const { return static_cast<int>(outputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs[i] != nullptr; }
  // "node 'conv_3' (Conv): " — the prefix of every error about this node.
  std::string where() const;
};

class Graph {
 public:
  explicit Graph(Graph* parent = nullptr) : parent_(parent) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::string name;
  std::string doc_string;
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
  std::vector<Value*> initializers;  // in file order; their data is in Value::data
  std::vector<std::string> sparse_initializers;  // names of initializers stored sparse in the file
  std::vector<Value*> value_infos;   // values the file declared a type for (kept on export)
  std::vector<std::pair<std::string, std::string>> metadata;

  Graph* parent() const { return parent_; }
  int depth() const;  // 0 for the main graph

  // The value named `n` in this graph only, or null.
  Value* find(const std::string& n) const;
  // The value named `n` here or in an enclosing graph, or null.
  Value* lookup(const std::string& n) const;
  // Creates a value; fails (kBadModel) when the name is already defined in this graph.
  Value* add_value(const std::string& n);
  // A fresh name not used in this graph or its parents: "prefix", "prefix_1" ...
  std::string unique_name(const std::string& prefix) const;

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  Node* add_node(std::string op_type, std::string domain = "");
  // Wires input i of node to v (null for omitted), keeping use lists right.
  void set_input(Node* node, int i, Value* v);
  void set_output(Node* node, int i, Value* v);
  void remove_node(Node* node);  // the node's outputs must have no uses left
  void rebuild_uses();           // recomputes every use list (this graph and its subgraphs)
  void reorder(std::vector<Node*> order);  // replaces node order (must be a permutation)
  // Orders nodes so each comes after what it reads (its subgraphs' outer reads included), keeping
  // the current order where it is already valid. Fails (kBadModel) naming a node on a cycle.
  void sort_topologically();

  // Subgraphs held by this graph's nodes' attributes.
  std::vector<Graph*> subgraphs() const;

 private:
  Graph* parent_;
  std::vector<std::unique_ptr<Value>> values_;
  std::unordered_map<std::string, Value*> by_name_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

// A model-local function (FunctionProto). Its body is a graph whose inputs/outputs are the
// function's formal parameters.
struct Function {
  std::string name;
  std::string domain;
  std::string overload;
  std::string doc_string;
  std::vector<std::string> attribute_names;    // attributes without defaults
  std::vector<Attribute> attribute_defaults;   // attributes with defaults
  std::map<std::string, int64_t> opsets;
  std::shared_ptr<Graph> body;
  std::vector<std::pair<std::string, std::string>> metadata;
};

struct Model {
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::unique_ptr<Graph> graph;
  std::vector<Function> functions;
  std::string preserved_fields;  // fields kiln does not model (training_info ...), serialized

  const Function* find_function(const std::string& domain, const std::string& name) const;
};

}  // namespace kiln
