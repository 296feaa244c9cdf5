// gpu_util.hpp — helpers for GPU tests: skip without a GPU, device buffers, random 16-bit matrices with any
// layout and padding, NaN poisoning, and the reference GEMM (kernels/reference.cuh) launched through the JIT.
#pragma once
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "choices/choice.hpp"
#include "jit/jit.hpp"
#include "problem/problem.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "tmagemm/tmagemm.hpp"

#define TMAGEMM_REQUIRE_GPU()                                                          \
  do {                                                                                 \
    if (tmagemm::runtime::device_count() == 0)                                         \
      GTEST_SKIP() << "no CUDA device: GPU test skipped (run on a machine with a GPU)"; \
  } while (0)

namespace tmagemm::testing {

inline void cuda_ok(cudaError_t e, const char* what) { runtime::check_cuda(e, what); }

// A choice that writes a constant pattern instead of computing: fast, and wrong. It fails the tuner's check wherever
// it is timed (tests of how the tuner drops and records a failed choice; tune::set_extra_choices_for_testing).
class BrokenChoice final : public choices::Choice {
 public:
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "test_broken"; }
  std::string can_implement(const GemmProblem&, const runtime::DeviceInfo&) const override { return {}; }
  void precompile(const GemmProblem&, int) const override {}
  void launch(const GemmProblem& p, cudaStream_t stream, const Options&, void*) const override {
    const std::size_t bytes =
        static_cast<std::size_t>((p.out.rows - 1) * p.out.row_stride + (p.out.cols - 1) * p.out.col_stride + 1) *
        itemsize(p.out.dtype);
    cuda_ok(cudaMemsetAsync(const_cast<void*>(p.out.data), 0x3c, bytes, stream), "broken choice");
  }

 private:
  std::string name_ = "test_broken_memset";
};

struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t n) : bytes(n) { cuda_ok(cudaMalloc(&ptr, n ? n : 1), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_to_float(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t float_to_f16(float f) {
  // Round-to-nearest-even conversion for the normal/subnormal range our random data uses.
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000;
  const int32_t exp = static_cast<int32_t>((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffff;
  if (((u >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}
inline float f16_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      u = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000 | (mant << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A rows x cols matrix (x batch) in device memory. col_major: the row index has unit stride.
// ld_multiple pads the leading dimension up to a multiple of that many elements; extra_ld adds more.
struct Matrix {
  DType dtype;
  int64_t batch, rows, cols, ld, batch_stride;
  bool col_major;
  std::vector<uint8_t> host;  // the whole allocation, as bytes
  std::unique_ptr<DeviceBuffer> dev;

  std::size_t elem() const { return itemsize(dtype); }
  int64_t offset(int64_t b, int64_t r, int64_t c) const {
    return b * batch_stride + (col_major ? r + c * ld : r * ld + c);
  }
  TensorView view() const {
    TensorView v;
    v.data = dev->ptr;
    v.dtype = dtype;
    v.device = 0;
    if (batch_stride > 0 && batch > 0 && rank3) {
      v.rank = 3;
      v.sizes[0] = batch;
      v.sizes[1] = rows;
      v.sizes[2] = cols;
      v.strides[0] = batch_stride;
      v.strides[1] = col_major ? 1 : ld;
      v.strides[2] = col_major ? ld : 1;
    } else {
      v.rank = 2;
      v.sizes[0] = rows;
      v.sizes[1] = cols;
      v.strides[0] = col_major ? 1 : ld;
      v.strides[1] = col_major ? ld : 1;
    }
    return v;
  }
  bool rank3 = false;
  float get(int64_t b, int64_t r, int64_t c) const {
    const int64_t o = offset(b, r, c);
    if (dtype == DType::f32) {
      float f;
      std::memcpy(&f, host.data() + o * 4, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, host.data() + o * 2, 2);
    return dtype == DType::bf16 ? bf16_to_float(h) : f16_to_float(h);
  }
  void upload() { cuda_ok(cudaMemcpy(dev->ptr, host.data(), host.size(), cudaMemcpyHostToDevice), "upload"); }
  void download() { cuda_ok(cudaMemcpy(host.data(), dev->ptr, host.size(), cudaMemcpyDeviceToHost), "download"); }
  // The device allocation's bytes, leaving `host` (the poison the next upload writes) as it is.
  std::vector<uint8_t> device_bytes() const {
    std::vector<uint8_t> bytes(host.size());
    cuda_ok(cudaMemcpy(bytes.data(), dev->ptr, bytes.size(), cudaMemcpyDeviceToHost), "download");
    return bytes;
  }
};

// The output bytes of `runs` calls of `call`, out poisoned again before each and the device waited for after it:
// a deterministic choice gives equal vectors. out keeps the last run's output on the device.
template <class Call>
std::vector<std::vector<uint8_t>> outputs_of_runs(Matrix& out, int runs, Call call) {
  std::vector<std::vector<uint8_t>> outputs;
  for (int r = 0; r < runs; ++r) {
    out.upload();
    cuda_ok(cudaDeviceSynchronize(), "poison");  // a call on a non-blocking stream must not overtake the upload
    call();
    cuda_ok(cudaDeviceSynchronize(), "run");
    outputs.push_back(out.device_bytes());
  }
  return outputs;
}

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// fill: "random" (normal, mean 0, sd 1) or "nan" (poison: every byte pattern of the allocation is a NaN).
inline Matrix make_matrix(DType dtype, int64_t rows, int64_t cols, bool col_major, int64_t ld_multiple,
                          std::mt19937& rng, bool random, int64_t batch = 1, bool rank3 = false) {
  Matrix m{dtype, batch, rows, cols, 0, 0, col_major, {}, nullptr};
  m.rank3 = rank3;
  const int64_t inner = col_major ? rows : cols, outer = col_major ? cols : rows;
  m.ld = round_up(std::max<int64_t>(inner, 1), std::max<int64_t>(ld_multiple, 1));
  m.batch_stride = round_up(m.ld * std::max<int64_t>(outer, 1), 64);
  const int64_t elems = m.batch_stride * std::max<int64_t>(batch, 1);
  m.host.resize(static_cast<std::size_t>(elems) * m.elem());
  // Poison everything first (padding included), then write random values into the matrix proper.
  if (dtype == DType::f32) {
    const uint32_t nan = 0x7fc00001u;
    for (int64_t i = 0; i < elems; ++i) std::memcpy(m.host.data() + i * 4, &nan, 4);
  } else {
    const uint16_t nan = dtype == DType::bf16 ? 0x7fc1 : 0x7e01;
    for (int64_t i = 0; i < elems; ++i) std::memcpy(m.host.data() + i * 2, &nan, 2);
  }
  if (random) {
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const float v = dist(rng);
          const int64_t o = m.offset(b, r, c);
          if (dtype == DType::f32) {
            std::memcpy(m.host.data() + o * 4, &v, 4);
          } else {
            const uint16_t h = dtype == DType::bf16 ? float_to_bf16(v) : float_to_f16(v);
            std::memcpy(m.host.data() + o * 2, &h, 2);
          }
        }
  }
  m.dev = std::make_unique<DeviceBuffer>(m.host.size());
  m.upload();
  return m;
}

// fp32 reference out[b][m][n] (dense) computed on the GPU by kernels/reference.cuh.
inline std::vector<float> reference_gemm(const Matrix& a, const Matrix& b, int64_t M, int64_t N, int64_t K,
                                         int64_t batch = 1, bool broadcast_a = false, bool broadcast_b = false) {
  const int in_type = a.dtype == DType::bf16 ? 0 : 1;
  jit::KernelSpec spec;
  spec.name = fmt::format("reference_gemm_{}", in_type);
  spec.header = "reference.cuh";
  spec.kernel = fmt::format("tmagemm::kernels::reference_gemm<{}>", in_type);
  CUfunction fn = jit::load(spec, 0, 0);
  const int64_t total = M * N * batch;
  DeviceBuffer out(static_cast<std::size_t>(std::max<int64_t>(total, 1)) * 4);
  const void* pa = a.dev->ptr;
  const void* pb = b.dev->ptr;
  void* po = out.ptr;
  int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K), bt = static_cast<int>(batch);
  long long a_rs = a.col_major ? 1 : a.ld, a_cs = a.col_major ? a.ld : 1, a_bs = broadcast_a ? 0 : a.batch_stride;
  long long b_rs = b.col_major ? 1 : b.ld, b_cs = b.col_major ? b.ld : 1, b_bs = broadcast_b ? 0 : b.batch_stride;
  void* params[] = {&pa, &pb, &po, &m, &n, &k, &bt, &a_rs, &a_cs, &a_bs, &b_rs, &b_cs, &b_bs};
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>((total + 255) / 256);
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 256;
  cfg.blockDimY = cfg.blockDimZ = 1;
  if (total > 0) runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "reference launch");
  cuda_ok(cudaDeviceSynchronize(), "reference sync");
  std::vector<float> host(static_cast<std::size_t>(total));
  if (total > 0) cuda_ok(cudaMemcpy(host.data(), out.ptr, total * 4, cudaMemcpyDeviceToHost), "reference download");
  return host;
}

struct Check {
  double rel_err = 0;
  int64_t nan_count = 0;        // NaN/inf inside the output matrix
  int64_t padding_touched = 0;  // elements outside the matrix that are no longer the poison pattern
  std::string first_bad;        // location of the first element with |out-ref| > 0.05*(1+|ref|), if any
};

// Compares `out` (downloaded) with the dense reference; checks that padding still holds the poison.
inline Check compare(Matrix& out, const std::vector<float>& ref, int64_t batch = 1) {
  out.download();
  Check c;
  double num = 0, den = 0;
  std::vector<uint8_t> inside(out.host.size() / out.elem(), 0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < out.rows; ++r)
      for (int64_t col = 0; col < out.cols; ++col) {
        inside[out.offset(b, r, col)] = 1;
        const float v = out.get(b, r, col);
        const double x = ref[(b * out.rows + r) * out.cols + col];
        if (!std::isfinite(v)) {
          ++c.nan_count;
          if (c.first_bad.empty()) c.first_bad = fmt::format("({}, {}, {}) = {} (ref {})", b, r, col, v, x);
          continue;
        }
        num += (v - x) * (v - x);
        den += x * x;
        if (c.first_bad.empty() && std::fabs(v - x) > 0.05 * (1.0 + std::fabs(x)))
          c.first_bad = fmt::format("({}, {}, {}) = {} (ref {})", b, r, col, v, x);
      }
  c.rel_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  for (std::size_t i = 0; i < inside.size(); ++i) {
    if (inside[i]) continue;
    bool poison;
    if (out.dtype == DType::f32) {
      uint32_t u;
      std::memcpy(&u, out.host.data() + i * 4, 4);
      poison = u == 0x7fc00001u;
    } else {
      uint16_t h;
      std::memcpy(&h, out.host.data() + i * 2, 2);
      poison = h == (out.dtype == DType::bf16 ? 0x7fc1 : 0x7e01);
    }
    if (!poison) ++c.padding_touched;
  }
  return c;
}

// Options that let exactly one backend run ("persistent_tma", "skinny", "fallback", "pad_tma", "cublaslt"; "" for
// all of them), in heuristic mode (its one heuristic config, untimed) unless `tuning` says otherwise.
inline Options backend_only(const std::string& backend, Tuning tuning = Tuning::heuristic) {
  Options o = Options::defaults_only();
  o.tuning = tuning;
  if (backend.empty()) return o;
  o.persistent_tma = backend == "persistent_tma";
  o.skinny = backend == "skinny";
  o.fallback = backend == "fallback";
  o.pad_tma = backend == "pad_tma";
  o.cublaslt = backend == "cublaslt";
  return o;
}

// A fresh TMAGEMM_CACHE_DIR for one test, so benchmark mode tunes (and launches every candidate) rather than read a
// winner stored by an earlier run; its kernels/ links to the usual cubin cache, so kernels are not compiled again.
class FreshTuningDb {
 public:
  FreshTuningDb() {
    namespace fs = std::filesystem;
    static std::atomic<int> serial{0};
    const fs::path kernels = fs::path(jit::cache_dir()) / "kernels";
    if (const char* v = std::getenv("TMAGEMM_CACHE_DIR")) previous_ = v;
    dir_ = fs::temp_directory_path() / fmt::format("tmagemm-test-db-{}-{}", ::getpid(), serial++);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::error_code ec;
    fs::create_directories(kernels, ec);
    fs::create_directory_symlink(kernels, dir_ / "kernels", ec);  // without it the kernels are compiled again
    ::setenv("TMAGEMM_CACHE_DIR", dir_.c_str(), 1);
  }
  ~FreshTuningDb() {
    if (previous_)
      ::setenv("TMAGEMM_CACHE_DIR", previous_->c_str(), 1);
    else
      ::unsetenv("TMAGEMM_CACHE_DIR");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);  // removes the link, not the cubin cache it points to
  }
  FreshTuningDb(const FreshTuningDb&) = delete;
  FreshTuningDb& operator=(const FreshTuningDb&) = delete;

 private:
  std::filesystem::path dir_;
  std::optional<std::string> previous_;
};

// A view into `storage` (a dense row-major buffer of 16-bit or f32 elements) starting `offset` elements in.
inline TensorView view_of(const Matrix& storage, int64_t offset, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  TensorView v;
  v.data = static_cast<char*>(storage.dev->ptr) + offset * static_cast<int64_t>(storage.elem());
  v.dtype = storage.dtype;
  v.rank = 2;
  v.sizes[0] = rows;
  v.sizes[1] = cols;
  v.strides[0] = rs;
  v.strides[1] = cs;
  return v;
}

// Reference (fp32 accumulation) for arbitrary 2-D views.
inline std::vector<float> reference_views(const TensorView& a, const TensorView& b) {
  const int64_t M = a.sizes[0], K = a.sizes[1], N = b.sizes[1];
  const int in = a.dtype == DType::bf16 ? 0 : 1;
  jit::KernelSpec spec;
  spec.name = fmt::format("reference_gemm_{}", in);
  spec.header = "reference.cuh";
  spec.kernel = fmt::format("tmagemm::kernels::reference_gemm<{}>", in);
  CUfunction fn = jit::load(spec, 0, 0);
  DeviceBuffer out(static_cast<std::size_t>(std::max<int64_t>(M * N, 1)) * 4);
  const void* pa = a.data;
  const void* pb = b.data;
  void* po = out.ptr;
  int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K), bt = 1;
  long long ars = a.strides[0], acs = a.strides[1], abs_ = 0, brs = b.strides[0], bcs = b.strides[1], bbs = 0;
  void* params[] = {&pa, &pb, &po, &m, &n, &k, &bt, &ars, &acs, &abs_, &brs, &bcs, &bbs};
  CUlaunchConfig cfg{};
  cfg.gridDimX = static_cast<unsigned>((M * N + 255) / 256);
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 256;
  cfg.blockDimY = cfg.blockDimZ = 1;
  runtime::check_cu(runtime::driver().launch_kernel_ex(&cfg, fn, params, nullptr), "reference launch");
  std::vector<float> host(static_cast<std::size_t>(M * N));
  cuda_ok(cudaMemcpy(host.data(), out.ptr, host.size() * 4, cudaMemcpyDeviceToHost), "reference download");
  return host;
}

// Launches each of `choices` that can run mm(a, b) -> out directly (with its workspace), and checks the values
// against reference_views (relative Frobenius error <= 1e-2), NaNs, and that nothing outside the `out` view of
// `out_storage` (made with random = false: the poison) changed. all_must_apply: a choice that cannot run the
// problem fails the test (else it is skipped). Returns the number of choices run.
inline int check_choices_on_views(const std::vector<choices::ChoicePtr>& choices, const TensorView& a,
                                  const TensorView& b, Matrix& out_storage, const TensorView& out,
                                  bool all_must_apply) {
  const GemmProblem p = make_mm_problem(a, b, out);
  const auto ref = reference_views(a, b);
  const auto& dev = runtime::device_info(0);
  int ran = 0;
  for (const auto& choice : choices) {
    SCOPED_TRACE(choice->name());
    const std::string why = choice->can_implement(p, dev);
    if (all_must_apply) EXPECT_EQ(why, "");
    if (!why.empty()) continue;
    ++ran;
    out_storage.upload();  // poison (the storage was made with random = false)
    DeviceBuffer workspace(std::max<std::size_t>(choice->workspace_bytes(p), 1));
    choice->launch(p, nullptr, Options::defaults_only(), workspace.ptr);
    cuda_ok(cudaDeviceSynchronize(), choice->name().c_str());
    const std::vector<uint8_t> host = out_storage.device_bytes();
    const std::size_t es = out_storage.elem();
    const auto base = static_cast<const char*>(out.data) - static_cast<const char*>(out_storage.dev->ptr);
    std::vector<uint8_t> inside(host.size() / es, 0);
    double num = 0, den = 0;
    int64_t bad = 0;
    for (int64_t r = 0; r < out.sizes[0]; ++r)
      for (int64_t c = 0; c < out.sizes[1]; ++c) {
        const int64_t e = base / static_cast<int64_t>(es) + r * out.strides[0] + c * out.strides[1];
        inside[e] = 1;
        float v;
        if (out.dtype == DType::f32) {
          std::memcpy(&v, host.data() + e * 4, 4);
        } else {
          uint16_t h;
          std::memcpy(&h, host.data() + e * 2, 2);
          v = out.dtype == DType::bf16 ? bf16_to_float(h) : f16_to_float(h);
        }
        const double x = ref[r * out.sizes[1] + c];
        if (!std::isfinite(v)) {
          ++bad;
          continue;
        }
        num += (v - x) * (v - x);
        den += x * x;
      }
    EXPECT_EQ(bad, 0);
    EXPECT_LE(std::sqrt(num / std::max(den, 1e-30)), 1e-2);
    int64_t touched = 0;
    for (std::size_t i = 0; i < inside.size(); ++i)
      if (!inside[i] && std::memcmp(host.data() + i * es, out_storage.host.data() + i * es, es) != 0) ++touched;
    EXPECT_EQ(touched, 0) << "elements outside the output view changed";
  }
  return ran;
}

}  // namespace tmagemm::testing
