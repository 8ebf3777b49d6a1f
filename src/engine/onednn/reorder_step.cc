#include "engine/onednn/reorder_step.h"

#include "engine/onednn/dnnl_context.h"
#include "engine/onednn/dnnl_step.h"
#include "engine/threads.h"

namespace kiln::engine {

std::unique_ptr<Step> make_reorder_step(const Node* for_node, const std::vector<int64_t>& dims,
                                        int src, const dnnl::memory::desc& src_md, int dst,
                                        const dnnl::memory::desc& dst_md) {
  const auto& eng = dnnl_engine();
  const int threads = threads_for_bytes(2.0 * static_cast<double>(dst_md.get_size()));
  ThreadScope scope(threads);
  dnnl::reorder::primitive_desc pd(eng, src_md, eng, dst_md);
  auto step = std::make_unique<DnnlStep>(dnnl::reorder(pd), for_node, "onednn.reorder");
  step->threads = threads;
  step->bind_input(DNNL_ARG_FROM, src, src_md, dims);
  step->bind_output(DNNL_ARG_TO, dst, dst_md, OutputMemory::kPlanned, -1);
  return step;
}

}  // namespace kiln::engine
