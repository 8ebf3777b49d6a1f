// Registration of the oneDNN-backed implementations, one family per file.
#pragma once

#include "engine/kernel_table.h"

namespace kiln::engine {

void register_onednn_conv(KernelTable& t);
void register_onednn_deconv(KernelTable& t);
void register_onednn_matmul(KernelTable& t);
void register_onednn_pool(KernelTable& t);
void register_onednn_batch_norm(KernelTable& t);
void register_onednn_windows(KernelTable& t);
void register_onednn_attention(KernelTable& t);

}  // namespace kiln::engine
