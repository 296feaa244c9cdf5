// types.cpp — DType/Activation names and TensorView helpers.
#include "tmagemm/error.hpp"
#include "tmagemm/types.hpp"
#include "tmagemm/version.hpp"

#include <utility>

namespace tmagemm {

const char* version() noexcept { return TMAGEMM_VERSION_STRING; }

std::size_t itemsize(DType dtype) noexcept {
  switch (dtype) {
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32: return 4;
    case DType::e4m3:
    case DType::e5m2: return 1;
    case DType::i32: return 4;
  }
  return 0;
}

const char* to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::e4m3: return "e4m3";
    case DType::e5m2: return "e5m2";
    case DType::i32: return "i32";
  }
  return "?";
}

const char* to_string(Activation act) noexcept {
  switch (act) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::silu: return "silu";
    case Activation::sigmoid: return "sigmoid";
  }
  return "?";
}

namespace {
void check_rank(std::size_t n, const char* what) {
  if (n < 1 || n > 3)
    throw Error(ErrorCode::invalid_argument,
                std::string(what) + ": rank must be 1, 2 or 3, got " + std::to_string(n));
}

// A view of `sizes` (rank checked, named `what` in the error), strides left for the caller.
TensorView shaped(void* data, DType dtype, std::initializer_list<int64_t> sizes, int device, const char* what) {
  check_rank(sizes.size(), what);
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.rank = static_cast<int>(sizes.size());
  v.device = device;
  int i = 0;
  for (int64_t s : sizes) v.sizes[i++] = s;
  return v;
}
}  // namespace

TensorView TensorView::contiguous(void* data, DType dtype, std::initializer_list<int64_t> sizes, int device) {
  TensorView v = shaped(data, dtype, sizes, device, "TensorView::contiguous sizes");
  int64_t stride = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= v.sizes[d] > 0 ? v.sizes[d] : 1;
  }
  return v;
}

TensorView TensorView::strided(void* data, DType dtype, std::initializer_list<int64_t> sizes,
                               std::initializer_list<int64_t> strides, int device) {
  TensorView v = shaped(data, dtype, sizes, device, "TensorView::strided sizes");
  if (strides.size() != sizes.size())
    throw Error(ErrorCode::invalid_argument, "TensorView::strided: sizes and strides must have the same length");
  int i = 0;
  for (int64_t s : strides) v.strides[i++] = s;
  return v;
}

TensorView TensorView::t() const {
  TensorView v = *this;
  std::swap(v.sizes[rank - 2], v.sizes[rank - 1]);
  std::swap(v.strides[rank - 2], v.strides[rank - 1]);
  return v;
}

int64_t TensorView::numel() const noexcept {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= sizes[d];
  return n;
}

}  // namespace tmagemm
