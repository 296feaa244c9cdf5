// tmagemm/dlpack.hpp — import a DLPack tensor (e.g. from torch.utils.dlpack) as a TensorView.
#pragma once
#include <dlpack/dlpack.h>

#include "tmagemm/types.hpp"

namespace tmagemm {

// Accepts CUDA device tensors (kDLCUDA) of rank 2 or 3 with dtype bf16/f16/f32/fp8 (e4m3fn, e5m2).
// byte_offset is folded into data; NULL strides mean compact row-major. Anything else throws
// Error(invalid_argument) naming the rule.
TensorView from_dlpack(const DLTensor& tensor);

}  // namespace tmagemm
