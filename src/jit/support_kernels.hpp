// support_kernels.hpp — the library's kernels that are not GEMM backends: the tuner's scratch inputs, accuracy
// check and read flush (kernels/tuner_check.cuh), the strided zero fill of K = 0 (kernels/fill.cuh) and the pad
// path's row copies (kernels/repitch.cuh). One builder per kernel, and the list of every variant for
// `tmagemm compile-check`.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "tmagemm/types.hpp"

namespace tmagemm::jit {

KernelSpec fill_random_spec(DType dtype);                             // bf16, f16, e4m3, e5m2, f32
// 16-bit in; bf16, f16 or f32 out; the epilogue as epilogue_only_spec takes it (empty: none).
KernelSpec reference_samples_spec(DType a_dtype, DType b_dtype, DType out_dtype, const std::string& epilogue_config = {},
                                  const std::string& epilogue_suffix = {});
KernelSpec gather_samples_spec(DType out_dtype);
KernelSpec zero_strided_spec(std::size_t element_bytes);              // 2 or 4
// The read flush of L2 (kernels/tuner_check.cuh): l2_flush_read(const uint4* p, unsigned long long n16, unsigned* sink).
KernelSpec l2_flush_read_spec();
// The pad path's row copies of 16-bit matrices at any 2-byte alignment (kernels/repitch.cuh).
KernelSpec repitch16_spec();
// addmm with K = 0: out = act(beta * bias); out_code 0 bf16, 1 f16, 2 f32; epilogue_config the rendered
// `using Epi = ...;` line and epilogue_suffix its name part (choices/epilogue_params.hpp, EpilogueSpec).
KernelSpec epilogue_only_spec(int out_code, const std::string& epilogue_config, const std::string& epilogue_suffix);

std::vector<KernelSpec> support_kernel_specs();

}  // namespace tmagemm::jit
