// pad_tma_test.cpp — the pad path on a GPU: every misaligned kind (K odd, N odd, A's base one element off, B's ld
// N + 1 with out's ld N + 3, an odd M x N x K, a column-major B with odd K) through every pad-path config that takes it
// (TMA-store configs store an out TMA cannot address with plain realigned stores), and every cuBLASLt algorithm on the
// copies ("pad_cublaslt_algo<rank>"), launched directly with its workspace; then through the public call with only the
// pad path enabled, tuned. An out misaligned alone is persistent
// TMA's (tests/gpu/choices/persistent_tma_test.cpp): the pad path refuses it here.
// Inputs random, outputs poisoned, nothing outside the output view may change, relative Frobenius error <= 1e-2
// against an fp32-accumulated reference of the views.
#include <gtest/gtest.h>

#include <random>

#include "choices/choice.hpp"
#include "jit/jit.hpp"
#include "jit/support_kernels.hpp"
#include "gpu/gpu_util.hpp"

namespace tmagemm::testing {
namespace {

class PadTma : public ::testing::Test {
 protected:
  void SetUp() override { TMAGEMM_REQUIRE_GPU(); }
  std::mt19937 rng{4095};
  // Dense row-major storage (exact ld) with random values or the NaN poison.
  Matrix storage(DType d, int64_t rows, int64_t cols, bool random) {
    return make_matrix(d, rows, cols, false, 1, rng, random);
  }
  // Every pad-path choice on the views; at least `min_run` of the persistent-TMA ones and `min_library` of the
  // cuBLASLt ones must take the problem.
  void check(const TensorView& a, const TensorView& b, Matrix& so, const TensorView& out, int min_run,
             int min_library = 1) {
    const GemmProblem p = make_mm_problem(a, b, out);
    std::vector<choices::ChoicePtr> kernels, library;
    for (const auto& c : choices::pad_tma_backend().enumerate(p, runtime::device_info(0), Options::defaults_only()))
      (c->name().rfind("pad_cublaslt_", 0) == 0 ? library : kernels).push_back(c);
    EXPECT_GE(check_choices_on_views(kernels, a, b, so, out, false), min_run);
    EXPECT_GE(check_choices_on_views(library, a, b, so, out, false), min_library);
  }
  // The relative Frobenius error of mm(a, b) in `so` (dense bf16 M x N, out's storage), downloaded; its host copy
  // (the poison) is kept, so that the next upload poisons the output again.
  double downloaded_rel_err(Matrix& so, const TensorView& a, const TensorView& b, int64_t M, int64_t N) {
    const auto poison = so.host;
    so.download();
    const auto ref = reference_views(a, b);
    double num = 0, den = 0;
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < N; ++c) {
        uint16_t h;
        std::memcpy(&h, so.host.data() + (r * N + c) * 2, 2);
        const double v = bf16_to_float(h), x = ref[r * N + c];
        num += (v - x) * (v - x);
        den += x * x;
      }
    so.host = poison;
    return std::sqrt(num / den);
  }
};

// kernels/repitch.cuh on its own: every source and destination misalignment (0..7 elements off 16 bytes), short and
// long rows, padded and exact pitches, each source and destination buffer exactly as large as its rows (so a read past a
// row's end would leave the allocation: run under memcheck too). Every destination element of the rows must be the
// source's, and nothing else of the destination may change.
TEST_F(PadTma, RowCopyKernelEveryAlignment) {
  CUfunction fn = jit::load(jit::repitch16_spec(), 0, 0);
  std::mt19937 gen(16);
  for (int64_t cols : {1, 7, 8, 9, 15, 16, 17, 31, 100, 1031})
    for (int s_off = 0; s_off < 8; ++s_off)
      for (int d_off = 0; d_off < 8; d_off += (cols > 100 ? 3 : 1)) {
        const int64_t rows = cols > 100 ? 5 : 3;
        const int64_t src_ld = cols + (s_off % 3), dst_ld = cols + ((d_off + 1) % 4) * 8;
        // Exactly the elements the view spans, after the offset: the last row ends at the allocation's end.
        const std::size_t src_elems = static_cast<std::size_t>(s_off + (rows - 1) * src_ld + cols);
        const std::size_t dst_elems = static_cast<std::size_t>(d_off + (rows - 1) * dst_ld + cols);
        std::vector<uint16_t> hs(src_elems), hd(dst_elems);
        for (auto& x : hs) x = static_cast<uint16_t>(gen());
        for (auto& x : hd) x = static_cast<uint16_t>(gen());
        DeviceBuffer ds(src_elems * 2), dd(dst_elems * 2);
        cuda_ok(cudaMemcpy(ds.ptr, hs.data(), src_elems * 2, cudaMemcpyHostToDevice), "upload");
        cuda_ok(cudaMemcpy(dd.ptr, hd.data(), dst_elems * 2, cudaMemcpyHostToDevice), "upload");
        void* d = static_cast<uint16_t*>(dd.ptr) + d_off;
        const void* sp = static_cast<const uint16_t*>(ds.ptr) + s_off;
        long long dld = dst_ld, sld = src_ld, r = rows, c = cols;
        void* params[] = {&d, &dld, &sp, &sld, &r, &c};
        CUlaunchConfig cfg{};
        cfg.gridDimX = 2;  // fewer CTAs than rows: the grid-stride loop too
        cfg.gridDimY = cfg.gridDimZ = 1;
        cfg.blockDimX = 256;
        cfg.blockDimY = cfg.blockDimZ = 1;
        runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "launch repitch16");
        cuda_ok(cudaDeviceSynchronize(), "repitch16");
        std::vector<uint16_t> got(dst_elems);
        cuda_ok(cudaMemcpy(got.data(), dd.ptr, dst_elems * 2, cudaMemcpyDeviceToHost), "download");
        std::vector<uint16_t> want = hd;
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) want[d_off + i * dst_ld + j] = hs[s_off + i * src_ld + j];
        ASSERT_EQ(got, want) << "cols " << cols << " src offset " << s_off << " dst offset " << d_off;
      }
}

TEST_F(PadTma, OddK) {
  const int64_t M = 300, N = 520, K = 333;
  Matrix sa = storage(DType::bf16, M, K, true), sb = storage(DType::bf16, K, N, true);
  Matrix so = storage(DType::bf16, M, N, false);
  // Out is TMA-aligned: the TMA-store configs take it too.
  check(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, N, 1), so, view_of(so, 0, M, N, N, 1), 10);
}

TEST_F(PadTma, OddKColumnMajorBAndF16) {
  const int64_t M = 200, N = 264, K = 1001;
  Matrix sa = storage(DType::f16, M, K, true), sb = storage(DType::f16, N, K, true);  // B (K x N) column-major
  Matrix so = storage(DType::f16, M, N, false);
  check(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, 1, K), so, view_of(so, 0, M, N, N, 1), 10);
}

TEST_F(PadTma, OddNDirectAndPlainStores) {
  const int64_t M = 257, N = 391, K = 256;
  Matrix sa = storage(DType::bf16, M, K, true), sb = storage(DType::bf16, K, N, true);
  Matrix so = storage(DType::bf16, M, N, false);
  // (Out's rows are off 16 bytes too: cuBLASLt on the copies stands aside.)
  check(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, N, 1), so, view_of(so, 0, M, N, N, 1), 5, 0);
}

TEST_F(PadTma, ABaseOneElementOff) {
  const int64_t M = 384, N = 512, K = 320;
  Matrix sa = storage(DType::bf16, M, K + 8, true), sb = storage(DType::bf16, K, N, true);
  Matrix so = storage(DType::bf16, M, N, false);
  check(view_of(sa, 1, M, K, K + 8, 1), view_of(sb, 0, K, N, N, 1), so, view_of(so, 0, M, N, N, 1), 10);
}

TEST_F(PadTma, BLdNPlusOneOutLdNPlusThree) {
  const int64_t M = 130, N = 256, K = 192;
  Matrix sa = storage(DType::bf16, M, K, true), sb = storage(DType::bf16, K, N + 1, true);
  Matrix so = storage(DType::bf16, M, N + 3, false);  // the TMA-store configs store it with plain realigned stores
  check(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, N + 1, 1), so, view_of(so, 0, M, N, N + 3, 1), 10, 0);
  // Out aligned: cuBLASLt on the copy of B as well.
  Matrix so2 = storage(DType::bf16, M, N, false);
  check(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, N + 1, 1), so2, view_of(so2, 0, M, N, N, 1), 10, 1);
}

TEST_F(PadTma, OnlyOutLdNPlusThreeIsRefused) {
  // A and B aligned: nothing to copy; persistent TMA takes it as it is (its TMA-store configs with plain stores).
  const int64_t M = 192, N = 384, K = 128;
  Matrix sa = storage(DType::bf16, M, K, true), sb = storage(DType::bf16, K, N, true);
  Matrix so = storage(DType::bf16, M, N + 3, false);
  check(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, N, 1), so, view_of(so, 0, M, N, N + 3, 1), 0, 0);
  const GemmProblem p = make_mm_problem(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, N, 1),
                                        view_of(so, 0, M, N, N + 3, 1));
  for (const auto& c : choices::pad_tma_backend().enumerate(p, runtime::device_info(0), Options::defaults_only()))
    EXPECT_EQ(c->can_implement(p, runtime::device_info(0)),
              "a and b are TMA-aligned already (persistent TMA takes the problem as it is)");
}

TEST_F(PadTma, OddMNK) {
  const int64_t M = 409, N = 411, K = 413;
  Matrix sa = storage(DType::bf16, M, K, true), sb = storage(DType::bf16, K, N, true);
  Matrix so = storage(DType::f32, M, N, false);  // f32: direct stores only
  // (f32 rows of 411 elements are off 16 bytes: cuBLASLt on the copies stands aside.)
  check(view_of(sa, 0, M, K, K, 1), view_of(sb, 0, K, N, N, 1), so, view_of(so, 0, M, N, N, 1), 5, 0);
}

// cuBLASLt on the copies through tmagemm::mm (the pad path and cuBLASLt on, the regex keeping pad_cublaslt_algo0):
// tuned outside a capture, then captured in a CUDA graph and replayed twice with new inputs (the copies and
// cuBLASLt's workspace come from dispatch's stream-ordered memory inside the capture).
TEST_F(PadTma, CuBlasLtOnTheCopiesInACapturedGraph) {
  FreshTuningDb db;
  const int64_t M = 264, N = 392, K = 136;
  Matrix sa = storage(DType::bf16, M, K, true), sb = storage(DType::bf16, K, N + 1, true);
  Matrix so = storage(DType::bf16, M, N, false);
  const TensorView a = view_of(sa, 0, M, K, K, 1), b = view_of(sb, 0, K, N, N + 1, 1), out = view_of(so, 0, M, N, N, 1);
  Options o = Options::defaults_only();
  o.persistent_tma = o.fallback = o.skinny = false;
  o.choice_regex = "^pad_cublaslt_algo0$";
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  o.stream = stream;
  mm(a, b, out, o);  // tunes, outside the capture
  cuda_ok(cudaStreamSynchronize(stream), "tuning call");
  std::string selected;
  for (const auto& c : explain_mm(a, b, out, o).choices)
    if (c.selected) selected = c.name;
  EXPECT_EQ(selected, "pad_cublaslt_algo0");
  cudaGraph_t graph = nullptr;
  cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  mm(a, b, out, o);
  cuda_ok(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  for (int replay = 0; replay < 2; ++replay) {
    sa.host = storage(DType::bf16, M, K, true).host;
    sb.host = storage(DType::bf16, K, N + 1, true).host;
    sa.upload();
    sb.upload();
    so.upload();  // the poison
    cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    cuda_ok(cudaStreamSynchronize(stream), "replay");
    EXPECT_LE(downloaded_rel_err(so, a, b, M, N), 1e-2) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// Through tmagemm::mm with only the pad path on: tuned (the workspace comes from dispatch), the winner is a pad
// choice, and the result is right; a second call reuses the winner.
TEST_F(PadTma, TunedCallThroughDispatch) {
  FreshTuningDb db;
  const int64_t M = 1000, N = 1000, K = 999;
  Matrix sa = storage(DType::bf16, M, K, true), sb = storage(DType::bf16, K, N, true);
  Matrix so = storage(DType::bf16, M, N, false);
  const TensorView a = view_of(sa, 0, M, K, K, 1), b = view_of(sb, 0, K, N, N, 1), out = view_of(so, 0, M, N, N, 1);
  Options o = Options::defaults_only();
  o.persistent_tma = o.cublaslt = o.fallback = o.skinny = false;
  for (int call = 0; call < 2; ++call) {
    so.upload();  // the poison (downloaded_rel_err keeps it in the host copy)
    mm(a, b, out, o);
    cuda_ok(cudaDeviceSynchronize(), "mm");
    EXPECT_LE(downloaded_rel_err(so, a, b, M, N), 1e-2) << "call " << call;
  }
  bool selected = false;
  for (const auto& c : explain_mm(a, b, out, o).choices)
    if (c.selected) {
      selected = true;
      EXPECT_EQ(c.backend, "pad_tma") << c.name;
    }
  EXPECT_TRUE(selected);
}

}  // namespace
}  // namespace tmagemm::testing
