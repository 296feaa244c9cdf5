// tmagemm/types.hpp — element types and the non-owning tensor view every op takes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace tmagemm {

enum class DType { f16, bf16, f32, e4m3, e5m2, i32 };  // i32: grouped_mm's offsets

std::size_t itemsize(DType dtype) noexcept;
const char* to_string(DType dtype) noexcept;

// A rank-2 or rank-3 view of device memory (rank 1: a bias vector (N)). Sizes and strides count elements (not
// bytes), like torch.
// Strides may be any non-negative value (0 broadcasts); negative strides are rejected by validation.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::bf16;
  int rank = 2;
  int64_t sizes[3] = {0, 0, 0};
  int64_t strides[3] = {0, 0, 0};
  int device = 0;

  // Contiguous row-major view of the given sizes (rank = sizes.size()).
  static TensorView contiguous(void* data, DType dtype, std::initializer_list<int64_t> sizes, int device = 0);
  // View with explicit sizes and strides (in elements).
  static TensorView strided(void* data, DType dtype, std::initializer_list<int64_t> sizes,
                            std::initializer_list<int64_t> strides, int device = 0);
  // The last two dims swapped (a transposed view of the same memory, like torch's .t()/.mT).
  TensorView t() const;
  int64_t numel() const noexcept;
};

enum class Activation { none, relu, gelu, gelu_tanh, silu, sigmoid };
const char* to_string(Activation act) noexcept;

}  // namespace tmagemm
