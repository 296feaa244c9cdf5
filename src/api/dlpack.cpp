// dlpack.cpp — from_dlpack: a DLTensor (e.g. from torch.utils.dlpack) as a TensorView. Takes CUDA device
// tensors of rank 2 or 3 with dtype bf16/f16/f32 (and fp8 e4m3fn/e5m2 when the DLPack header has their codes,
// DLPack >= 1.1); folds byte_offset into data; NULL strides mean compact row-major.
#include "tmagemm/dlpack.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "tmagemm/error.hpp"

// DLPack 1.1 added the fp8 type codes; older headers (0.x) have neither the codes nor a minor version macro.
#if defined(DLPACK_MAJOR_VERSION) && defined(DLPACK_MINOR_VERSION) && \
    (DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 1))
#define TMAGEMM_DLPACK_HAS_FP8 1
#else
#define TMAGEMM_DLPACK_HAS_FP8 0
#endif

namespace tmagemm {

namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorCode::invalid_argument, message); }

std::string dtype_str(const DLDataType& t) {
  return fmt::format("code {}, bits {}, lanes {}", static_cast<int>(t.code), static_cast<int>(t.bits),
                     static_cast<int>(t.lanes));
}

DType convert_dtype(const DLDataType& t) {
  if (t.lanes != 1)
    invalid(fmt::format("from_dlpack: vector dtypes are not supported (lanes = {}; tmagemm takes lanes = 1)",
                        static_cast<int>(t.lanes)));
  if (t.code == kDLBfloat && t.bits == 16) return DType::bf16;
  if (t.code == kDLFloat && t.bits == 16) return DType::f16;
  if (t.code == kDLFloat && t.bits == 32) return DType::f32;
#if TMAGEMM_DLPACK_HAS_FP8
  if (t.code == kDLFloat8_e4m3fn && t.bits == 8) return DType::e4m3;
  if (t.code == kDLFloat8_e5m2 && t.bits == 8) return DType::e5m2;
  invalid(fmt::format("from_dlpack: dtype ({}) is not supported (tmagemm takes bfloat16, float16, float32, "
                      "float8_e4m3fn and float8_e5m2)",
                      dtype_str(t)));
#else
  if (t.bits == 8 && t.code != kDLInt && t.code != kDLUInt)
    invalid(fmt::format("from_dlpack: dtype ({}) is not supported: this build's DLPack header (version {}) has no "
                        "fp8 type codes (fp8 needs DLPack >= 1.1); tmagemm takes bfloat16, float16 and float32 here",
                        dtype_str(t), DLPACK_VERSION));
  invalid(fmt::format("from_dlpack: dtype ({}) is not supported (tmagemm takes bfloat16, float16 and float32; "
                      "fp8 needs a build with DLPack >= 1.1 headers)",
                      dtype_str(t)));
#endif
}

}  // namespace

TensorView from_dlpack(const DLTensor& tensor) {
  if (tensor.device.device_type != kDLCUDA)
    invalid(fmt::format("from_dlpack: tensor is on device type {}; tmagemm takes CUDA device tensors (kDLCUDA)",
                        static_cast<int>(tensor.device.device_type)));
  if (tensor.ndim != 2 && tensor.ndim != 3)
    invalid(fmt::format("from_dlpack: rank {} is not supported (tmagemm takes rank 2 or 3)", tensor.ndim));
  if (tensor.shape == nullptr) invalid("from_dlpack: shape is NULL");
  TensorView v;
  v.dtype = convert_dtype(tensor.dtype);
  v.rank = tensor.ndim;
  v.device = tensor.device.device_id;
  for (int d = 0; d < v.rank; ++d) {
    if (tensor.shape[d] < 0)
      invalid(fmt::format("from_dlpack: negative size {} in dim {}", tensor.shape[d], d));
    v.sizes[d] = tensor.shape[d];
  }
  if (tensor.strides == nullptr) {
    int64_t stride = 1;
    for (int d = v.rank - 1; d >= 0; --d) {
      v.strides[d] = stride;
      if (v.sizes[d] > 1 && __builtin_mul_overflow(stride, v.sizes[d], &stride))
        invalid("from_dlpack: compact strides of this shape overflow int64");
    }
  } else {
    for (int d = 0; d < v.rank; ++d) {
      if (tensor.strides[d] < 0)
        invalid(fmt::format("from_dlpack: negative strides are not supported (stride {} in dim {})",
                            tensor.strides[d], d));
      v.strides[d] = tensor.strides[d];
    }
  }
  if (tensor.data == nullptr && tensor.byte_offset != 0)
    invalid(fmt::format("from_dlpack: data is NULL with byte_offset {}", tensor.byte_offset));
  v.data = static_cast<char*>(tensor.data) + tensor.byte_offset;
  return v;
}

}  // namespace tmagemm
