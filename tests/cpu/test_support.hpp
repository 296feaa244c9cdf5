// test_support.hpp — small fixtures shared by the CPU tests (the GPU tests take the guard too): an environment-variable
// guard, a self-deleting temporary directory, the device description of an H200 and bf16 mm problems on fake addresses
// for tests that launch nothing.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

#include "problem/problem.hpp"
#include "runtime/device.hpp"

namespace tmagemm::test_support {

// The device facts of an H200 (sm_90, 132 SMs, 227 KiB of opt-in shared memory per block) for GPU-free tests.
inline runtime::DeviceInfo fake_h200() {
  runtime::DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.smem_per_block_optin = 232448;
  d.smem_per_sm = 233472;
  d.l2_bytes = 62914560;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  return d;
}

// A bf16 rows x cols operand at fake device address `addr` (1024-aligned in the problems below), row- or
// column-major with a packed leading dimension.
inline Operand fake_operand(uintptr_t addr, int64_t rows, int64_t cols, bool col_major = false) {
  Operand o;
  o.data = reinterpret_cast<const void*>(addr);
  o.dtype = DType::bf16;
  o.rows = rows;
  o.cols = cols;
  o.row_stride = col_major ? 1 : cols;
  o.col_stride = col_major ? rows : 1;
  return o;
}

// A bf16 mm problem M x N x K on fake addresses (nothing is launched): A and out row-major, B row-major or, with
// b_col_major, column-major (K-major).
inline GemmProblem fake_mm_problem(int64_t m, int64_t n, int64_t k, bool b_col_major = false) {
  GemmProblem p;
  p.op = Op::mm;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = fake_operand(0x7f0000000000, m, k);
  p.b = fake_operand(0x7f1000000000, k, n, b_col_major);
  p.out = fake_operand(0x7f2000000000, m, n);
  return p;
}

// Sets (or unsets, with nullopt) an environment variable for the life of the guard, then restores it.
class EnvGuard {
 public:
  EnvGuard(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~EnvGuard() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A fresh directory under the system temp dir (mkdtemp), removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "tmagemm-test") {
    std::string templ = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Whole-file read and overwrite (binary), for tests that inspect or damage cache/database files.
inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_all(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace tmagemm::test_support
