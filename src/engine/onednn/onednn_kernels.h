// The oneDNN-backed implementations, one family per file; dispatch_lists.cc says which ops they
// run and in what order.
#pragma once

#include "engine/kernel_table.h"

namespace kiln::engine {

extern const KernelImpl kOnednnConv;       // conv.cc
extern const KernelImpl kOnednnQuantConv;  // quant_conv.cc: Conv of the QDQ form, in int8
extern const KernelImpl kOnednnQLinearConv;
extern const KernelImpl kOnednnDeconv;     // deconv.cc
extern const KernelImpl kOnednnMatmul;     // matmul.cc: MatMul and Gemm
extern const KernelImpl kOnednnQuantMatmul;  // quant_matmul.cc: int8 MatMul, Gemm, MatMulInteger
extern const KernelImpl kOnednnPool;       // pool.cc
extern const KernelImpl kOnednnQuantMaxPool;  // DQ -> MaxPool -> Q of one set of parameters
extern const KernelImpl kOnednnBatchNorm;  // batch_norm.cc
extern const KernelImpl kOnednnSlice;      // windows.cc
extern const KernelImpl kOnednnConcat;
extern const KernelImpl kOnednnSplit;
extern const KernelImpl kOnednnAttention;  // attention.cc

}  // namespace kiln::engine
