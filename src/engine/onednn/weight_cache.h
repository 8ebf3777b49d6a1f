// Constants (weights, biases) in the layouts oneDNN primitives asked for, reordered once and
// shared by every plan of a model.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace kiln {
struct Value;
}  // namespace kiln

namespace kiln::engine {

// A memory descriptor's bytes (oneDNN 2.x's dnnl_memory_desc_t is plain data): how an artifact
// records the layouts of pre-packed weights, and how they are matched at load.
std::string desc_bytes(const dnnl::memory::desc& d);

class WeightCache {
 public:
  // t's bytes read as layout `from`, in layout `to`: reordered once into memory of the cache's
  // (and t's pages handed back when t is a view into a mapped file), or, when `from` is `to`, t's
  // own bytes (no copy; the cache keeps t).
  dnnl::memory get(const Tensor& t, const dnnl::memory::desc& from, const dnnl::memory::desc& to);
  size_t bytes() const { return bytes_; }  // the copies'

  // A packing of t in a form of kiln's own kernels (not a oneDNN layout), named by `kind` (which
  // also says what else went into it, e.g. transposed): made by `make` on the first call, shared
  // by every plan after. T has `size_t bytes() const` (what it holds, counted in bytes()) and
  // `void unpack(void* plain) const` (t's bytes made again, exactly, so that drop_source may let
  // go of t).
  template <class T>
  std::shared_ptr<const T> native(const Tensor& t, const std::string& kind,
                                  const std::function<std::shared_ptr<const T>()>& make) {
    return std::static_pointer_cast<const T>(native_entry(t, kind, [&]() -> NativeMade {
      std::shared_ptr<const T> p = make();
      return {p, [p](void* plain) { p->unpack(plain); }, p->bytes()};
    }));
  }

  // A value computed from a weight that every plan reads alike (an int8 matrix's column sums),
  // named by `kind`: made by `make` on the first call for (w, kind), kept while the model lives.
  // Keyed by the initializer's graph value, not its bytes, so a weight let go of finds it without
  // being brought back. Not a packing: it gives no bytes back (drop_source counts none).
  template <class T>
  std::shared_ptr<const T> derived(const Value* w, const std::string& kind,
                                   const std::function<std::shared_ptr<const T>()>& make) {
    return std::static_pointer_cast<const T>(
        derived_entry(w, kind, [&]() -> std::shared_ptr<const void> { return make(); }));
  }

  // Lets go of the plain tensor t, whose packed copies stay: its entries are then known by `tag`
  // (get() no longer matches them) until restore_source. Refused (false, nothing changed) when an
  // entry uses t's own bytes or no packed entry gives them back exactly (a blocked layout of t's
  // type, each element once: not Winograd's transformed weights, not a bf16 copy).
  bool drop_source(const Tensor& t, const void* tag);
  // The packed copy in layout `to`, read as `from`, of the plain tensor dropped under `tag`, when
  // there is one: a new plan finds it without the plain bytes brought back.
  std::optional<dnnl::memory> find_dropped(const void* tag, const dnnl::memory::desc& from,
                                           const dnnl::memory::desc& to) const;
  // The plain tensor dropped under `tag` made again (dtype, dims: its own), reordered back from a
  // packed copy; its entries are keyed by the new tensor, as if it had been packed.
  Tensor restore_source(const void* tag, DataType dtype, const std::vector<int64_t>& dims);

  // Large sources no one but the cache holds any more (a plan's folded constants: a weight's
  // DequantizeLinear on a CPU whose convs stay float, once its GraphFacts is gone) are let go of;
  // their packed copies stay, known by a fingerprint of the bytes, so the next plan's fold of the
  // same values finds them instead of packing (and holding) them again. Call after each plan.
  void let_go_of_unshared_sources();

  // Pre-packed weights (a compiled artifact's): the bytes of `source` already reordered into
  // the layout whose oneDNN descriptor bytes are `to_desc`, from the one of `from_desc`. They are
  // taken by get() only when a primitive asks for exactly these descriptors (compared byte for
  // byte, never handed to oneDNN as they are: they come from a file) and the size matches; any
  // other request reorders as usual. `owner` keeps `packed` alive.
  void preload(const Tensor& source, std::string from_desc, std::string to_desc,
               std::span<const uint8_t> packed, std::shared_ptr<void> owner);
  struct Packed {
    const void* source;  // the source tensor's data
    std::string from_desc, to_desc;
    std::span<const uint8_t> bytes;
  };
  // What was reordered (or taken pre-packed) so far; not the tensors used as they are.
  std::vector<Packed> packed() const;
  int preloaded_taken() const { return taken_; }   // preloaded entries get() used
  int reordered() const { return reordered_; }     // reorders get() ran
  int restored() const { return restored_; }       // sources restore_source made again

 private:
  struct Entry {
    Tensor source;  // kept, so that its address stays a valid key
    dnnl::memory::desc from, to;
    dnnl::memory mem;
    bool packed;  // mem is the cache's copy (else it views source's bytes)
    const void* dropped = nullptr;  // drop_source's tag while source is let go
    // let_go_of_unshared_sources let source go: the fingerprint of its bytes (and `from`, which
    // says its dtype and dims) then match it.
    std::optional<std::array<uint64_t, 2>> fingerprint;
  };
  struct NativeMade {
    std::shared_ptr<const void> data;
    std::function<void(void*)> unpack;
    size_t bytes = 0;
  };
  std::shared_ptr<const void> native_entry(const Tensor& t, const std::string& kind,
                                           const std::function<NativeMade()>& make);
  struct Native {
    Tensor source;  // kept, as Entry::source
    std::string kind;
    NativeMade made;
    const void* dropped = nullptr;  // as Entry::dropped
  };
  std::vector<Native> natives_;
  std::shared_ptr<const void> derived_entry(const Value* w, const std::string& kind,
                                            const std::function<std::shared_ptr<const void>()>& make);
  std::map<std::pair<const Value*, std::string>, std::shared_ptr<const void>> derived_;
  struct Pending {
    Tensor source;
    std::string from, to;
    std::span<const uint8_t> bytes;
    std::shared_ptr<void> owner;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  std::vector<Pending> pending_;
  std::vector<std::shared_ptr<void>> owners_;
  size_t bytes_ = 0;
  int taken_ = 0, reordered_ = 0, restored_ = 0;
};

}  // namespace kiln::engine
