// call_contract_test.cpp (GPU) — what every call promises besides its result: K = 0 writes zeros through any output
// strides (no unit stride included) and nothing else, and the caller's current device is the same after the call.
#include <gtest/gtest.h>

#include <random>

#include "gpu/gpu_util.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

class CallContract : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  std::mt19937 rng_{1234};
};

TEST_F(CallContract, KZeroWritesZerosThroughAnyOutputStrides) {
  const int64_t M = 37, N = 53;
  struct Strides {
    int64_t rs, cs;
  };
  // row-major padded, column-major, and two layouts with no unit stride (every other element; transposed too)
  for (const Strides st : {Strides{64, 1}, Strides{1, 40}, Strides{2 * 2 * N, 2}, Strides{3, 3 * M + 5}})
    for (const DType out_t : {DType::bf16, DType::f32}) {
      SCOPED_TRACE(fmt::format("strides ({}, {}) {}", st.rs, st.cs, to_string(out_t)));
      const int64_t span = (M - 1) * st.rs + (N - 1) * st.cs + 1;
      DeviceBuffer mem(static_cast<std::size_t>(span + 64) * itemsize(out_t));
      cuda_ok(cudaMemset(mem.ptr, 0xff, mem.bytes), "poison");
      DeviceBuffer in(64);
      const TensorView a = TensorView::strided(in.ptr, DType::bf16, {M, 0}, {8, 1});
      const TensorView b = TensorView::strided(in.ptr, DType::bf16, {0, N}, {8, 1});
      const TensorView out = TensorView::strided(mem.ptr, out_t, {M, N}, {st.rs, st.cs});
      mm(a, b, out, Options::defaults_only());
      cuda_ok(cudaDeviceSynchronize(), "mm");
      std::vector<uint8_t> host(mem.bytes);
      cuda_ok(cudaMemcpy(host.data(), mem.ptr, mem.bytes, cudaMemcpyDeviceToHost), "download");
      const std::size_t e = itemsize(out_t);
      std::vector<uint8_t> inside(host.size() / e, 0);
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) inside[r * st.rs + c * st.cs] = 1;
      int64_t wrong = 0, touched = 0;
      for (std::size_t i = 0; i < inside.size(); ++i) {
        bool zero = true, poison = true;
        for (std::size_t byte = 0; byte < e; ++byte) {
          zero = zero && host[i * e + byte] == 0;
          poison = poison && host[i * e + byte] == 0xff;
        }
        wrong += inside[i] && !zero;
        touched += !inside[i] && !poison;
      }
      EXPECT_EQ(wrong, 0);
      EXPECT_EQ(touched, 0);
    }
}

TEST_F(CallContract, CallerDeviceIsRestored) {
  const int devices = runtime::device_count();
  Matrix a = make_matrix(DType::bf16, 64, 64, false, 8, rng_, true);
  Matrix b = make_matrix(DType::bf16, 64, 64, false, 8, rng_, true);
  Matrix out = make_matrix(DType::bf16, 64, 64, false, 8, rng_, false);
  // The tensors live on device 0; the caller's current device is the last one (device 0 with one GPU).
  cuda_ok(cudaSetDevice(devices - 1), "cudaSetDevice");
  mm(a.view(), b.view(), out.view(), Options::defaults_only());
  int current = -1;
  cuda_ok(cudaGetDevice(&current), "cudaGetDevice");
  EXPECT_EQ(current, devices - 1);
  cuda_ok(cudaSetDevice(0), "cudaSetDevice");
  cuda_ok(cudaDeviceSynchronize(), "mm");
  const Check chk = compare(out, reference_gemm(a, b, 64, 64, 64));
  EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
  if (devices < 2) std::printf("[ note     ] one CUDA device: the restore was checked without a device switch\n");
}

}  // namespace
}  // namespace tmagemm::testing
