#include "engine/onednn/onednn_kernels.h"

namespace kiln::engine {

void register_onednn_kernels(KernelTable& t) {
  register_onednn_conv(t);
  register_onednn_deconv(t);
  register_onednn_matmul(t);
  register_onednn_pool(t);
  register_onednn_batch_norm(t);
  register_onednn_windows(t);
  register_onednn_attention(t);
}

}  // namespace kiln::engine
