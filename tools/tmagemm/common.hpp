// common.hpp — pieces shared by the tmagemm CLI subcommands: how a subcommand registers itself, device
// buffers, host-side 16-bit float conversion, layouts and small formatting helpers.
#pragma once
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "tmagemm/types.hpp"

namespace tmagemm::cli {

// The work a subcommand chose while the command line was parsed; run after parsing. Returns the exit code.
using Action = std::function<int()>;

// Each subcommand lives in its own file and registers itself on `app`; its callback stores its work in
// `action` (only the subcommand that was given on the command line sets it).
void add_info(CLI::App& app, Action& action);            // info.cpp
void add_compile_check(CLI::App& app, Action& action);   // compile_check.cpp
void add_bench(CLI::App& app, Action& action);           // bench.cpp
void add_explain(CLI::App& app, Action& action);         // explain.cpp
void add_tune(CLI::App& app, Action& action);            // tune.cpp
void add_cache(CLI::App& app, Action& action);           // cache.cpp

// Throws tmagemm::Error(cuda_error) naming `what` unless status is cudaSuccess.
void cuda_check(cudaError_t status, const char* what);

// Device memory owned by the CLI (cudaMalloc / cudaFree), on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const noexcept { return ptr_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Host-side conversions (round to nearest even) for the 16-bit input types.
std::uint16_t float_to_bf16(float f) noexcept;
float bf16_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_f16(float f) noexcept;
float f16_to_float(std::uint16_t h) noexcept;
std::uint16_t float_to_16bit(DType dtype, float f);  // dtype bf16 or f16
float from_16bit(DType dtype, std::uint16_t h);

// "bf16" / "f16" -> DType (throws std::invalid_argument otherwise).
DType parse_dtype16(const std::string& name);

// Operand layouts of a GEMM as two letters: A then B, 'r' = row-major, 'c' = column-major ("rr", "rc", ...).
struct Layout {
  bool a_col = false;
  bool b_col = false;
  std::string name() const;
};
Layout parse_layout(const std::string& name);  // throws std::invalid_argument

// Views of a (rows x cols) matrix in `data`, row- or column-major with a compact leading dimension.
TensorView matrix_view(void* data, DType dtype, int64_t rows, int64_t cols, bool col_major, int device);

// "NVIDIA H200" -> "nvidia-h200": lower case, runs of other characters become one '-'.
std::string slug(const std::string& text);
// Today's local date as yyyy-mm-dd.
std::string today();

}  // namespace tmagemm::cli
