// The implementations running kiln's own kernels (src/engine/cpu) and the engine's views, one
// family per file; dispatch_lists.cc says which ops they run and in what order.
#pragma once

#include "engine/kernel_table.h"

namespace kiln::engine {

extern const KernelImpl kCpuElementwise;     // elementwise_chain.cc
extern const KernelImpl kCpuSoftmax;         // normalization_steps.cc: Softmax, LogSoftmax
extern const KernelImpl kCpuLayerNorm;
extern const KernelImpl kCpuTranspose;       // data_movement_steps.cc
extern const KernelImpl kCpuGather;
extern const KernelImpl kCpuConcat;
extern const KernelImpl kCpuConcatLaidOut;      // concat_layouts.cc
extern const KernelImpl kCpuConcatNormalizing;
extern const KernelImpl kCpuReduce;          // reduce_steps.cc
extern const KernelImpl kCpuChannelShuffle;  // channel_shuffle.cc
extern const KernelImpl kCpuConcatShuffle;
extern const KernelImpl kCpuResize;          // resize_step.cc: constant scales or sizes
extern const KernelImpl kCpuPatchDeconv;     // patch_deconv_step.cc
extern const KernelImpl kCpuDepthwiseConv;   // depthwise_conv_step.cc
extern const KernelImpl kCpuSmallMatmul;     // small_matmul_step.cc
extern const KernelImpl kCpuPool;            // pool_step.cc: MaxPool, AveragePool in channel blocks
extern const KernelImpl kEngineView;         // view_step.cc
extern const KernelImpl kCpuPad;             // pad_step.cc
extern const KernelImpl kCpuLstm;            // lstm_step.cc
extern const KernelImpl kCpuGru;             // gru_step.cc
extern const KernelImpl kCpuCast;            // cast_step.cc: float32 <-> float16 / bfloat16
// Kernels of the reference form (context_kernels.cc).
extern const KernelImpl kCpuNms;
extern const KernelImpl kCpuResizeContext;   // any Resize: it makes its own output
extern const KernelImpl kCpuNonZero;
extern const KernelImpl kCpuGatherNd;
extern const KernelImpl kCpuQuantizeLinear;  // quant_steps.cc: QuantizeLinear, DequantizeLinear
extern const KernelImpl kCpuQuantizedAdd;    // the residual Add of the QDQ form, in int8
extern const KernelImpl kCpuDynamicQuantize;  // DynamicQuantizeLinear

}  // namespace kiln::engine
