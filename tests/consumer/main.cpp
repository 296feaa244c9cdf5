// main.cpp — the find_package consumer test: includes the installed public headers, links the installed
// library and calls CPU-only functions (no GPU needed). Exits non-zero if something is off.
#include <tmagemm/tmagemm.hpp>

#include <cstdio>
#include <cstring>
#include <exception>

int main() {
  std::printf("tmagemm %s (header %s)\n", tmagemm::version(), TMAGEMM_VERSION_STRING);
  if (std::strcmp(tmagemm::version(), TMAGEMM_VERSION_STRING) != 0) {
    std::printf("FAIL: library version differs from the installed header\n");
    return 1;
  }
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) ++failures;
  };
  expect(tmagemm::itemsize(tmagemm::DType::bf16) == 2, "itemsize(bf16) == 2");
  expect(tmagemm::itemsize(tmagemm::DType::e4m3) == 1, "itemsize(e4m3) == 1");
  expect(std::strcmp(tmagemm::to_string(tmagemm::DType::f16), "f16") == 0, "to_string(f16)");

  // A transposed view of a 4x8 row-major matrix is 8x4 with strides (1, 8).
  const auto v = tmagemm::TensorView::contiguous(nullptr, tmagemm::DType::bf16, {4, 8}).t();
  expect(v.sizes[0] == 8 && v.sizes[1] == 4 && v.strides[0] == 1 && v.strides[1] == 8, "TensorView::t()");

  // Errors carry a code.
  try {
    tmagemm::TensorView::contiguous(nullptr, tmagemm::DType::bf16, {1, 2, 3, 4});
    expect(false, "rank-4 view throws Error(invalid_argument)");
  } catch (const tmagemm::Error& e) {
    expect(e.code() == tmagemm::ErrorCode::invalid_argument, "rank-4 view throws Error(invalid_argument)");
  }

  try {
    const tmagemm::Options opt = tmagemm::Options::defaults_only();
    expect(opt.tuning == tmagemm::Tuning::benchmark && opt.persistent_tma, "Options::defaults_only()");
  } catch (const std::exception& e) {
    std::printf("FAIL Options::defaults_only(): %s\n", e.what());
    ++failures;
  }
  std::printf("tmagemm_consumer: %s\n", failures == 0 ? "all checks passed" : "some checks FAILED");
  return failures == 0 ? 0 : 1;
}
