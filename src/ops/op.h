// An operator: its schema (inputs, outputs, attributes, opsets), shape inference and reference kernel.
//
// Ops are normalized at import (src/spec/normalize.cc) so one schema describes each op in its newest
// form; a kernel that must behave differently for an older opset reads ctx.opset().
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "ops/attrs.h"

namespace kiln {

class InferContext;
class KernelContext;
using InferFn = std::function<void(InferContext&)>;
using KernelFn = std::function<void(KernelContext&)>;

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool required = false;
  // ONNX's default for an optional attribute (an Attribute of `kind`), when the spec gives one:
  // what the typed readers of ops/attrs.h (attr_int(node, name) ...) return for an absent one,
  // so that kernels, inference and passes do not each write it again.
  std::optional<Attribute> default_value;
};

struct OpSchema {
  std::string domain;  // "" = ai.onnx
  std::string name;
  int since = 1;    // first opset version of the domain that has the op
  int removed = 0;  // first version without it (0: still there)
  int min_inputs = 0, max_inputs = 0;    // max -1: variadic
  int min_outputs = 1, max_outputs = 1;  // max -1: variadic
  std::vector<AttrSpec> attrs;
  InferFn infer;
  KernelFn kernel;
  bool deterministic = true;  // false for random ops: never folded into constants
  std::string file;           // the source file that registers it ("ops/nms.cc"): docs/ops.md's index

  // Fluent setters, so a registration reads as one statement.
  OpSchema& versions(int first, int gone = 0) { since = first; removed = gone; return *this; }
  OpSchema& inputs(int lo, int hi) { min_inputs = lo; max_inputs = hi; return *this; }
  OpSchema& outputs(int lo, int hi) { min_outputs = lo; max_outputs = hi; return *this; }
  OpSchema& attr(std::string n, AttrKind k, bool req = false) {
    attrs.push_back({std::move(n), k, req, std::nullopt});
    return *this;
  }
  // An optional attribute with ONNX's default: .attr("alpha", AttrKind::kFloat, 0.01f).
  template <typename T>
    requires(!std::is_same_v<T, bool>)
  OpSchema& attr(std::string n, AttrKind k, T dflt) {
    attrs.push_back({std::move(n), k, false, default_attribute(k, std::move(dflt))});
    return *this;
  }
  const AttrSpec* find_attr(std::string_view n) const;
  OpSchema& shape(InferFn f) { infer = std::move(f); return *this; }
  OpSchema& run(KernelFn f) { kernel = std::move(f); return *this; }
  OpSchema& nondeterministic() { deterministic = false; return *this; }

 private:
  template <typename T>
  static Attribute default_attribute(AttrKind k, T v) {
    Attribute a;
    a.kind = k;
    if constexpr (std::is_arithmetic_v<T>) {
      if (k == AttrKind::kFloat) a.f = static_cast<float>(v);
      else a.i = static_cast<int64_t>(v);
    } else if constexpr (std::is_convertible_v<T, std::string>) {
      a.s = std::string(std::move(v));
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      a.ints = std::move(v);
    } else if constexpr (std::is_same_v<T, std::vector<float>>) {
      a.floats = std::move(v);
    } else {
      static_assert(sizeof(T) == 0, "no attribute default of this type");
    }
    return a;
  }
};

class OpRegistry {
 public:
  static OpRegistry& global();  // every family registered (ops/op_families.cc)
  // `file` defaults to the caller's source file. (__builtin_FILE, not std::source_location: clang
  // 14, the fuzz build's compiler, has no std::source_location with libstdc++.)
  OpSchema& add(std::string domain, std::string name, const char* file = __builtin_FILE());
  const OpSchema* find(std::string_view domain, std::string_view name) const;
  const std::vector<std::unique_ptr<OpSchema>>& all() const { return ops_; }

 private:
  std::vector<std::unique_ptr<OpSchema>> ops_;
  // The schemas of each op name (one per domain that has it): find() runs for every attribute a
  // typed reader takes a default for, so it is a hash lookup, not a scan of ~400 schemas.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::vector<const OpSchema*>, NameHash, std::equal_to<>> by_name_;
};

// ---------------------------------------------------------------------------------------------
// Shape and type inference of one node.
class InferContext {
 public:
  struct Input {
    const TypeInfo* type = nullptr;                 // null: input omitted
    const Tensor* constant = nullptr;               // known value (initializer or folded)
    const std::vector<Dim>* dims_value = nullptr;   // known (maybe symbolic) value of an int tensor
  };
  // Infers a subgraph's output types from its input types (outer scope visible).
  using SubgraphInferFn =
      std::function<std::vector<TypeInfo>(const Graph&, const std::vector<TypeInfo>&)>;

  InferContext(const Node& node, std::vector<Input> inputs, SubgraphInferFn subgraph);

  const Node& node() const { return node_; }
  int opset() const { return node_.opset; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return node_.num_outputs(); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i].type != nullptr; }
  bool has_output(int i) const { return i < num_outputs() && node_.outputs[i] != nullptr; }
  const TypeInfo& input_type(int i) const;  // fails when the input is omitted
  DataType input_dtype(int i) const { return input_type(i).elem; }
  const std::optional<Shape>& input_shape(int i) const { return input_type(i).shape; }
  int input_rank(int i) const;  // -1 when unknown
  const Tensor* input_constant(int i) const { return has_input(i) ? inputs_[i].constant : nullptr; }
  // The value of a small integer input as dims, when known: from a constant or from shape
  // propagation (Shape -> Gather -> Concat ...). Elements may be symbolic.
  std::optional<std::vector<Dim>> input_dims_value(int i) const;

  void set_output(int i, TypeInfo t);
  void set_output(int i, DataType dtype, std::optional<Shape> shape) {
    set_output(i, TypeInfo::tensor(dtype, std::move(shape)));
  }
  void set_output_dims_value(int i, std::vector<Dim> v);
  std::vector<TypeInfo> infer_subgraph(const Graph& g, const std::vector<TypeInfo>& inputs) const {
    return subgraph_(g, inputs);
  }

  const std::vector<std::optional<TypeInfo>>& outputs() const { return outputs_; }
  const std::vector<std::optional<std::vector<Dim>>>& output_values() const { return values_; }

  [[noreturn]] void fail_here(const std::string& msg) const;
  // Something inference found wrong that need not stop the model (a branch that fails with these
  // shapes may never be taken): reported to the caller of infer_shapes, when it listens.
  using WarnFn = std::function<void(const Node&, std::string)>;
  void set_warn(WarnFn f) { warn_ = std::move(f); }
  void warn(std::string msg) const {
    if (warn_) warn_(node_, std::move(msg));
  }

 private:
  const Node& node_;
  std::vector<Input> inputs_;
  SubgraphInferFn subgraph_;
  WarnFn warn_;
  std::vector<std::optional<TypeInfo>> outputs_;
  std::vector<std::optional<std::vector<Dim>>> values_;
};

// ---------------------------------------------------------------------------------------------
// Running one node on concrete values.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  // Runs g with the given inputs; outer-scope values are those of the calling node's frame.
  virtual std::vector<RtValue> run(const Graph& g, std::vector<RtValue> inputs) = 0;
};

class KernelContext {
 public:
  KernelContext(const Node& node, std::span<const RtValue* const> inputs,
                std::vector<RtValue>& outputs, SubgraphRunner* runner);

  const Node& node() const { return node_; }
  int opset() const { return node_.opset; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return node_.num_outputs(); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i] && !inputs_[i]->is_none(); }
  // Outputs the graph uses; a kernel may skip computing the others.
  bool wants_output(int i) const { return i < num_outputs() && node_.outputs[i] != nullptr; }
  const Tensor& input(int i) const;  // a tensor input; fails when omitted or not a tensor
  const RtValue& input_value(int i) const;
  void set_output(int i, Tensor t);
  void set_output(int i, RtValue v);
  std::vector<RtValue> run_subgraph(const Graph& g, std::vector<RtValue> inputs);

  [[noreturn]] void fail_here(const std::string& msg) const;  // kRuntime error naming the node

 private:
  const Node& node_;
  std::span<const RtValue* const> inputs_;
  std::vector<RtValue>& outputs_;
  SubgraphRunner* runner_;
};

}  // namespace kiln
