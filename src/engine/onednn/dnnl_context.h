// The oneDNN CPU engine and stream kiln uses everywhere, and conversions between kiln's types and
// oneDNN's memory descriptors.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace kiln::engine {

const dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();

// The oneDNN data type of a kiln dtype, or nullopt when oneDNN has none.
std::optional<dnnl::memory::data_type> dnnl_dtype(DataType t);

// A row-major (plain) descriptor of dims; a rank-0 tensor is described as [1].
dnnl::memory::desc plain_md(const std::vector<int64_t>& dims, dnnl::memory::data_type dt);
// A descriptor of dims whose elements lie at the given strides (elements, not bytes).
dnnl::memory::desc strided_md(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                              dnnl::memory::data_type dt);
// Whether md places every element where the row-major layout of its dims does (axes of size 1
// may have any stride).
bool is_plain(const dnnl::memory::desc& md);
// Whether a and b place every element at the same offset (the same layout, axes of size 1 aside).
bool same_layout(const dnnl::memory::desc& a, const dnnl::memory::desc& b);
// Whether md has no padding: its buffer holds exactly the product of its dims elements, so an
// elementwise op may treat it as a flat array.
bool is_dense(const dnnl::memory::desc& md);

// A memory object for md with a zeroed buffer of its own (scratch operands of a timed run).
dnnl::memory zeroed_memory(const dnnl::memory::desc& md);

// A memory object for md with no buffer yet (set_data_handle gives it one at run time).
dnnl::memory unbound_memory(const dnnl::memory::desc& md);

// oneDNN's version, "2.6.3".
std::string onednn_version();
// oneDNN's version and the ISA its kernels use here ("oneDNN 2.6.3 avx512_core_amx"), capped by
// DNNL_MAX_CPU_ISA: what decides which implementations it has.
std::string onednn_identity();

// Whether an implementation (a primitive descriptor's impl_info_str()) is one of oneDNN's
// optimized ones (jit, brgemm), not its reference loops, simple_nchw pooling or im2col + gemm.
bool is_optimized(std::string_view impl);

}  // namespace kiln::engine
