// dlpack_test.cpp — CPU tests of from_dlpack: CUDA tensors with explicit or NULL strides, byte_offset folded
// into data, dtype mapping, and the invalid_argument errors for other devices, dtypes, lanes, ranks and strides.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tmagemm/dlpack.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm {
namespace {

#define EXPECT_DLPACK_ERROR(tensor, substring)                                                    \
  do {                                                                                            \
    try {                                                                                         \
      from_dlpack(tensor);                                                                        \
      ADD_FAILURE() << "expected Error(invalid_argument) containing '" << (substring) << "'";     \
    } catch (const Error& e) {                                                                    \
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();                               \
      EXPECT_NE(std::string(e.what()).find(substring), std::string::npos)                         \
          << "message: " << e.what() << "\nexpected to contain: " << (substring);                 \
    }                                                                                             \
  } while (0)

// A DLTensor over caller-owned shape/strides arrays.
struct Dl {
  int64_t shape[4] = {};
  int64_t strides[4] = {};
  DLTensor t{};
  Dl(std::initializer_list<int64_t> sizes, DLDataType dtype, bool with_strides = false,
     std::initializer_list<int64_t> st = {}) {
    int i = 0;
    for (int64_t s : sizes) shape[i++] = s;
    i = 0;
    for (int64_t s : st) strides[i++] = s;
    t.data = reinterpret_cast<void*>(uintptr_t{0x7f0000000000});
    t.device = DLDevice{kDLCUDA, 0};
    t.ndim = static_cast<int32_t>(sizes.size());
    t.dtype = dtype;
    t.shape = shape;
    t.strides = with_strides ? strides : nullptr;
    t.byte_offset = 0;
  }
};

const DLDataType kBf16{kDLBfloat, 16, 1};
const DLDataType kF16{kDLFloat, 16, 1};
const DLDataType kF32{kDLFloat, 32, 1};

TEST(FromDlpack, CudaTensorWithStrides) {
  Dl d({64, 32}, kBf16, true, {1, 64});  // a transposed (column-major) view
  d.t.device.device_id = 3;
  TensorView v = from_dlpack(d.t);
  EXPECT_EQ(v.data, d.t.data);
  EXPECT_EQ(v.dtype, DType::bf16);
  EXPECT_EQ(v.rank, 2);
  EXPECT_EQ(v.sizes[0], 64);
  EXPECT_EQ(v.sizes[1], 32);
  EXPECT_EQ(v.strides[0], 1);
  EXPECT_EQ(v.strides[1], 64);
  EXPECT_EQ(v.device, 3);
}

TEST(FromDlpack, NullStridesAreCompactRowMajor) {
  Dl d({3, 4, 5}, kF16);
  TensorView v = from_dlpack(d.t);
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.dtype, DType::f16);
  EXPECT_EQ(v.strides[0], 20);
  EXPECT_EQ(v.strides[1], 5);
  EXPECT_EQ(v.strides[2], 1);
}

TEST(FromDlpack, ByteOffsetFoldedIntoData) {
  Dl d({8, 8}, kF32);
  d.t.byte_offset = 256;
  TensorView v = from_dlpack(d.t);
  EXPECT_EQ(v.data, reinterpret_cast<void*>(uintptr_t{0x7f0000000000 + 256}));
  EXPECT_EQ(v.dtype, DType::f32);
}

TEST(FromDlpack, ZeroStridesAndEmptyShapesAccepted) {
  Dl d({4, 0}, kBf16, true, {0, 1});
  TensorView v = from_dlpack(d.t);
  EXPECT_EQ(v.sizes[1], 0);
  EXPECT_EQ(v.strides[0], 0);
}

TEST(FromDlpack, CpuDeviceRejected) {
  Dl d({8, 8}, kBf16);
  d.t.device = DLDevice{kDLCPU, 0};
  EXPECT_DLPACK_ERROR(d.t, "from_dlpack: tensor is on device type 1; tmagemm takes CUDA device tensors (kDLCUDA)");
  d.t.device = DLDevice{kDLCUDAHost, 0};
  EXPECT_DLPACK_ERROR(d.t, "tensor is on device type 3");
}

TEST(FromDlpack, BadDtypeRejected) {
  Dl i32({8, 8}, DLDataType{kDLInt, 32, 1});
  EXPECT_DLPACK_ERROR(i32.t, "from_dlpack: dtype (code 0, bits 32, lanes 1) is not supported");
  Dl f64({8, 8}, DLDataType{kDLFloat, 64, 1});
  EXPECT_DLPACK_ERROR(f64.t, "dtype (code 2, bits 64, lanes 1) is not supported");
}

TEST(FromDlpack, Fp8) {
  // DLPack 1.1 numbers the fp8 types kDLFloat8_e4m3fn = 10 and kDLFloat8_e5m2 = 12.
  Dl e4m3({16, 16}, DLDataType{10, 8, 1});
  Dl e5m2({16, 16}, DLDataType{12, 8, 1});
#if defined(DLPACK_MAJOR_VERSION) && defined(DLPACK_MINOR_VERSION) && \
    (DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 1))
  EXPECT_EQ(from_dlpack(e4m3.t).dtype, DType::e4m3);
  EXPECT_EQ(from_dlpack(e5m2.t).dtype, DType::e5m2);
#else
  EXPECT_DLPACK_ERROR(e4m3.t, "has no fp8 type codes (fp8 needs DLPack >= 1.1)");
  EXPECT_DLPACK_ERROR(e5m2.t, "has no fp8 type codes");
#endif
}

TEST(FromDlpack, VectorLanesRejected) {
  Dl d({8, 8}, DLDataType{kDLFloat, 32, 4});
  EXPECT_DLPACK_ERROR(d.t, "vector dtypes are not supported (lanes = 4");
}

TEST(FromDlpack, RankRejected) {
  Dl r1({8}, kBf16);
  EXPECT_DLPACK_ERROR(r1.t, "from_dlpack: rank 1 is not supported (tmagemm takes rank 2 or 3)");
  Dl r4({2, 2, 2, 2}, kBf16);
  EXPECT_DLPACK_ERROR(r4.t, "rank 4 is not supported");
}

TEST(FromDlpack, NegativeStridesRejected) {
  Dl d({8, 8}, kBf16, true, {-8, 1});
  EXPECT_DLPACK_ERROR(d.t, "from_dlpack: negative strides are not supported (stride -8 in dim 0)");
}

TEST(FromDlpack, NegativeShapeRejected) {
  Dl d({8, -2}, kBf16);
  EXPECT_DLPACK_ERROR(d.t, "negative size -2 in dim 1");
}

}  // namespace
}  // namespace tmagemm
