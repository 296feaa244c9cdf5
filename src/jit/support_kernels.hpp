// support_kernels.hpp — the library's kernels that are not GEMM backends: the tuner's scratch inputs and accuracy
// check (kernels/tuner_check.cuh) and the strided zero fill of K = 0 (kernels/fill.cuh). One builder per kernel, and
// the list of every variant for `tmagemm compile-check`.
#pragma once
#include <cstddef>
#include <vector>

#include "jit/jit.hpp"
#include "tmagemm/types.hpp"

namespace tmagemm::jit {

KernelSpec fill_random_spec(DType dtype);                             // 16-bit dtypes
KernelSpec reference_samples_spec(DType in_dtype, DType out_dtype);   // 16-bit in; bf16, f16 or f32 out
KernelSpec gather_samples_spec(DType out_dtype);
KernelSpec zero_strided_spec(std::size_t element_bytes);              // 2 or 4

std::vector<KernelSpec> support_kernel_specs();

}  // namespace tmagemm::jit
