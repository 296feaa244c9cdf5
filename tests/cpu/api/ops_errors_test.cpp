// ops_errors_test.cpp — CPU tests of the errors the public ops throw: Options checked before anything else
// (a choice_regex that does not compile, a negative sm_carveout), only tmagemm::Error leaving the API (host
// out-of-memory, regex errors, any other exception mapped to an Error), scaled_mm's e5m2 x e5m2 rule, and CUDA's
// out-of-memory statuses as Error(out_of_memory). Device memory is faked with set_pointer_query: no GPU needed.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <new>
#include <regex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "problem/problem.hpp"
#include "runtime/cuda_check.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/ops.hpp"
#include "tmagemm/options.hpp"

namespace tmagemm {
namespace {

constexpr uintptr_t kDev0 = 0x7f0000000000;  // fake device 0 memory: [kDev0, kDev0 + 1 TB)
constexpr uintptr_t kSpan = uintptr_t{1} << 40;
constexpr uintptr_t MB = uintptr_t{1} << 20;

void* dev0(uintptr_t offset) { return reinterpret_cast<void*>(kDev0 + offset); }

std::atomic<int> g_queries{0};

PointerInfo fake_query(const void* p) {
  ++g_queries;
  const auto x = reinterpret_cast<uintptr_t>(p);
  if (x >= kDev0 && x < kDev0 + kSpan) return {true, 0};
  return {false, -1};
}

// Runs `call`, which must throw Error(code) whose message contains `substring`; returns the message.
std::string expect_error(const std::function<void()>& call, ErrorCode code, const std::string& substring) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << substring;
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "a std::exception that is not tmagemm::Error left the API: " << e.what();
    return {};
  } catch (...) {
    ADD_FAILURE() << "a non-std exception left the API";
    return {};
  }
  ADD_FAILURE() << "expected Error(" << to_string(code) << ") containing '" << substring << "'";
  return {};
}

class OpsErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    g_queries = 0;
    set_pointer_query(fake_query);
  }
  void TearDown() override { set_pointer_query({}); }

  // Views that pass validation: mm M=64, K=32, N=48 in bf16 (a row-major, b col-major, out row-major), an addmm
  // bias (1,N), bmm operands with batch 2, and scaled_mm's e4m3 operands with tensorwise scales.
  TensorView a = TensorView::contiguous(dev0(0), DType::bf16, {64, 32});
  TensorView b = TensorView::contiguous(dev0(1 * MB), DType::bf16, {48, 32}).t();
  TensorView out = TensorView::contiguous(dev0(2 * MB), DType::bf16, {64, 48});
  TensorView bias = TensorView::contiguous(dev0(3 * MB), DType::bf16, {1, 48});
  TensorView ba = TensorView::contiguous(dev0(4 * MB), DType::bf16, {2, 64, 32});
  TensorView bb = TensorView::contiguous(dev0(5 * MB), DType::bf16, {2, 32, 48});
  TensorView bout = TensorView::contiguous(dev0(6 * MB), DType::bf16, {2, 64, 48});
  TensorView fa = TensorView::contiguous(dev0(7 * MB), DType::e4m3, {64, 32});
  TensorView fb = TensorView::contiguous(dev0(8 * MB), DType::e4m3, {48, 32}).t();
  TensorView sa = TensorView::contiguous(dev0(9 * MB), DType::f32, {1, 1});
  TensorView sb = TensorView::contiguous(dev0(10 * MB), DType::f32, {1, 1});

  // Every public op and explain function with `o`.
  std::vector<std::pair<const char*, std::function<void()>>> every_op(const Options& o) {
    return {
        {"mm", [this, o] { mm(a, b, out, o); }},
        {"addmm", [this, o] { addmm(bias, a, b, out, 1.0f, 1.0f, Activation::none, o); }},
        {"scaled_mm", [this, o] { scaled_mm(fa, fb, sa, sb, nullptr, out, false, o); }},
        {"bmm", [this, o] { bmm(ba, bb, bout, o); }},
        {"explain_mm", [this, o] { explain_mm(a, b, out, o); }},
        {"explain_addmm", [this, o] { explain_addmm(bias, a, b, out, 1.0f, 1.0f, Activation::none, o); }},
        {"explain_bmm", [this, o] { explain_bmm(ba, bb, bout, o); }},
        {"explain_scaled_mm", [this, o] { explain_scaled_mm(fa, fb, sa, sb, nullptr, out, false, o); }},
    };
  }
};

// ---- options are checked before anything else ------------------------------------------------------------

TEST_F(OpsErrors, ChoiceRegexSyntaxErrorIsInvalidArgument) {
  Options o = Options::defaults_only();
  o.choice_regex = "(";
  for (const auto& [name, call] : every_op(o)) {
    SCOPED_TRACE(name);
    const std::string msg = expect_error(call, ErrorCode::invalid_argument, "choice_regex");
    EXPECT_NE(msg.find("is not a valid ECMAScript regular expression"), std::string::npos) << msg;
  }
  EXPECT_EQ(g_queries.load(), 0) << "the options are checked before any pointer is queried";
}

TEST_F(OpsErrors, NegativeSmCarveoutIsInvalidArgument) {
  Options o = Options::defaults_only();
  o.sm_carveout = -4;
  for (const auto& [name, call] : every_op(o)) {
    SCOPED_TRACE(name);
    expect_error(call, ErrorCode::invalid_argument, "Options::sm_carveout = -4");
  }
  EXPECT_EQ(g_queries.load(), 0);
}

TEST_F(OpsErrors, ScaledMmE5m2TimesE5m2IsInvalidArgument) {
  fa.dtype = fb.dtype = DType::e5m2;
  expect_error([&] { scaled_mm(fa, fb, sa, sb, nullptr, out, false, Options::defaults_only()); },
               ErrorCode::invalid_argument, "scaled_mm: a and b cannot both be e5m2");
}

// ---- only tmagemm::Error leaves the API --------------------------------------------------------------------
// The pointer query runs inside validation, so a query that throws stands in for any failure under an op.

TEST_F(OpsErrors, HostOutOfMemoryBecomesCudaError) {
  set_pointer_query([](const void*) -> PointerInfo { throw std::bad_alloc(); });
  for (const auto& [name, call] : every_op(Options::defaults_only())) {
    SCOPED_TRACE(name);
    const std::string msg = expect_error(call, ErrorCode::cuda_error, "out of memory (host allocation failed)");
    EXPECT_NE(msg.find(std::string(name) + ": "), std::string::npos) << msg;
  }
}

TEST_F(OpsErrors, RegexErrorBecomesInvalidArgumentNamingChoiceRegex) {
  set_pointer_query([](const void*) -> PointerInfo { throw std::regex_error(std::regex_constants::error_paren); });
  expect_error([&] { mm(a, b, out, Options::defaults_only()); }, ErrorCode::invalid_argument, "choice_regex");
}

TEST_F(OpsErrors, OtherStdExceptionBecomesInternalError) {
  set_pointer_query([](const void*) -> PointerInfo { throw std::out_of_range("map::at"); });
  const std::string msg =
      expect_error([&] { bmm(ba, bb, bout, Options::defaults_only()); }, ErrorCode::cuda_error, "internal error: ");
  EXPECT_NE(msg.find("bmm: map::at"), std::string::npos) << msg;
}

TEST_F(OpsErrors, NonStdExceptionBecomesInternalError) {
  set_pointer_query([](const void*) -> PointerInfo { throw 42; });
  expect_error([&] { explain_mm(a, b, out, Options::defaults_only()); }, ErrorCode::cuda_error,
               "internal error: explain_mm");
}

TEST_F(OpsErrors, TmagemmErrorPassesThroughUnchanged) {
  set_pointer_query([](const void*) -> PointerInfo { throw Error(ErrorCode::unsupported, "as thrown"); });
  const std::string msg = expect_error([&] { mm(a, b, out, Options::defaults_only()); }, ErrorCode::unsupported,
                                       "as thrown");
  EXPECT_EQ(msg, Error(ErrorCode::unsupported, "as thrown").what());
}

TEST(OpsExplanation, ToString) {
  Explanation e;
  e.problem = "mm(64x32 row, 32x48 col) bf16->bf16";
  ChoiceReport yes;
  yes.name = "cublaslt_algo0";
  yes.backend = "cublaslt";
  yes.applicable = true;
  yes.selected = true;
  ChoiceReport no;
  no.name = "skinny_x";
  no.backend = "skinny";
  no.reason = "M > 64";
  e.choices = {yes, no};
  const std::string s = e.to_string();
  EXPECT_NE(s.find("explain mm(64x32 row, 32x48 col) bf16->bf16"), std::string::npos) << s;
  EXPECT_NE(s.find("* cublaslt_algo0"), std::string::npos) << s;
  EXPECT_NE(s.find("not applicable: M > 64"), std::string::npos) << s;
}

// ---- CUDA's out-of-memory status ---------------------------------------------------------------------------

TEST(CudaCheck, DeviceOutOfMemoryIsOutOfMemorySayingSo) {
  // cudaGetErrorString(cudaErrorMemoryAllocation) is "out of memory"; check_cuda keeps it in the message, under the
  // code of a failure of the moment (the dispatcher runs another choice for the call).
  try {
    runtime::check_cuda(cudaErrorMemoryAllocation, "cudaMalloc(x)");
    ADD_FAILURE() << "check_cuda did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::out_of_memory);
    EXPECT_TRUE(runtime::is_out_of_memory(e));
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of memory"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cudaMalloc(x)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cudaErrorMemoryAllocation"), std::string::npos) << msg;
  }
  EXPECT_NO_THROW(runtime::check_cuda(cudaSuccess, "cudaMalloc(x)"));
  // The driver's out-of-memory status too; any other status stays a cuda_error.
  try {
    runtime::check_cu(CUDA_ERROR_OUT_OF_MEMORY, "cuModuleLoadData(x)");
    ADD_FAILURE() << "check_cu did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::out_of_memory) << e.what();
    EXPECT_NE(std::string(e.what()).find("cuModuleLoadData(x)"), std::string::npos) << e.what();
  }
  try {
    runtime::check_cuda(cudaErrorInvalidValue, "cudaMemsetAsync(x)");
    ADD_FAILURE() << "check_cuda did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::cuda_error);
    EXPECT_FALSE(runtime::is_out_of_memory(e));
  }
  EXPECT_FALSE(runtime::is_out_of_memory(std::runtime_error("out of memory")));
  EXPECT_STREQ(to_string(ErrorCode::out_of_memory), "out_of_memory");
}

}  // namespace
}  // namespace tmagemm
