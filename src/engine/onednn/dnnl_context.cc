#include "engine/onednn/dnnl_context.h"

#include <cstring>

#include "support/error.h"

namespace kiln::engine {

const dnnl::engine& dnnl_engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& dnnl_stream() {
  static dnnl::stream s(dnnl_engine());
  return s;
}

std::optional<dnnl::memory::data_type> dnnl_dtype(DataType t) {
  using dt = dnnl::memory::data_type;
  switch (t) {
    case DataType::kFloat: return dt::f32;
    case DataType::kFloat16: return dt::f16;
    case DataType::kBFloat16: return dt::bf16;
    case DataType::kInt32: return dt::s32;
    case DataType::kInt8: return dt::s8;
    case DataType::kUInt8: return dt::u8;
    default: return std::nullopt;
  }
}

dnnl::memory::desc plain_md(const std::vector<int64_t>& dims, dnnl::memory::data_type dt) {
  if (dims.empty()) return dnnl::memory::desc({1}, dt, dnnl::memory::dims{1});
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * std::max<int64_t>(dims[i + 1], 1);
  return dnnl::memory::desc(dims, dt, strides);
}

dnnl::memory::desc strided_md(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                              dnnl::memory::data_type dt) {
  return dnnl::memory::desc(dims, dt, strides);
}

bool same_layout(const dnnl::memory::desc& a, const dnnl::memory::desc& b) {
  if (a == b) return true;
  const auto &x = a.data, &y = b.data;
  if (x.format_kind != dnnl_blocked || y.format_kind != dnnl_blocked || x.ndims != y.ndims ||
      x.data_type != y.data_type || x.offset0 != y.offset0 || x.extra.flags != y.extra.flags ||
      x.format_desc.blocking.inner_nblks != 0 || y.format_desc.blocking.inner_nblks != 0)
    return false;
  for (int i = 0; i < x.ndims; ++i) {
    if (x.dims[i] != y.dims[i] || x.padded_dims[i] != y.padded_dims[i]) return false;
    if (x.dims[i] != 1 && x.format_desc.blocking.strides[i] != y.format_desc.blocking.strides[i])
      return false;
  }
  return true;
}

bool is_plain(const dnnl::memory::desc& md) {
  if (md.data.format_kind != dnnl_blocked) return false;
  const int nd = md.data.ndims;
  return same_layout(md, plain_md(std::vector<int64_t>(md.data.dims, md.data.dims + nd), md.data_type()));
}

bool is_dense(const dnnl::memory::desc& md) {
  if (md.data.format_kind != dnnl_blocked) return false;
  size_t n = dnnl::memory::data_type_size(md.data_type());
  for (int i = 0; i < md.data.ndims; ++i) n *= static_cast<size_t>(md.data.dims[i]);
  return md.get_size() == n;
}

std::string onednn_identity() {
  const char* isa = "?";
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::all: isa = "all"; break;
    case dnnl::cpu_isa::sse41: isa = "sse41"; break;
    case dnnl::cpu_isa::avx: isa = "avx"; break;
    case dnnl::cpu_isa::avx2: isa = "avx2"; break;
    case dnnl::cpu_isa::avx2_vnni: isa = "avx2_vnni"; break;
    case dnnl::cpu_isa::avx512_mic: isa = "avx512_mic"; break;
    case dnnl::cpu_isa::avx512_mic_4ops: isa = "avx512_mic_4ops"; break;
    case dnnl::cpu_isa::avx512_core: isa = "avx512_core"; break;
    case dnnl::cpu_isa::avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl::cpu_isa::avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl::cpu_isa::avx512_core_amx: isa = "avx512_core_amx"; break;
  }
  return "oneDNN " + onednn_version() + " " + isa;
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

bool is_optimized(std::string_view impl) {
  return impl.rfind("brg", 0) == 0 || impl.rfind("jit", 0) == 0;
}

dnnl::memory zeroed_memory(const dnnl::memory::desc& md) {
  dnnl::memory m(md, dnnl_engine());
  if (md.get_size()) std::memset(m.get_data_handle(), 0, md.get_size());
  return m;
}

dnnl::memory unbound_memory(const dnnl::memory::desc& md) {
  return dnnl::memory(md, dnnl_engine(), DNNL_MEMORY_NONE);
}

}  // namespace kiln::engine
