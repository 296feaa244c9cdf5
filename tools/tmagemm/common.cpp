// common.cpp — implementation of the CLI's shared helpers (see common.hpp).
#include "common.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <utility>

#include "runtime/cuda_check.hpp"

namespace tmagemm::cli {

void cuda_check(cudaError_t status, const char* what) { runtime::check_cuda(status, what); }

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) cuda_check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

namespace {
std::uint32_t bits_of(float f) noexcept {
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}
float float_of(std::uint32_t x) noexcept {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
}  // namespace

std::uint16_t float_to_bf16(float f) noexcept {
  std::uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

float bf16_to_float(std::uint16_t h) noexcept { return float_of(static_cast<std::uint32_t>(h) << 16); }

std::uint16_t float_to_f16(float f) noexcept {
  const std::uint32_t x = bits_of(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
  if (mag >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (mag < 0x38800000u) {  // below 2^-14: subnormal half (step 2^-24) or zero
    const float scaled = float_of(mag) * 16777216.0f;  // exact: a power-of-two scale
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(scaled)));
  }
  std::uint32_t h = ((((mag >> 23) - 127u + 15u)) << 10) | ((mag & 0x7fffffu) >> 13);
  const std::uint32_t rest = mag & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float f16_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu;
  const std::uint32_t m = h & 0x3ffu;
  if (e == 0) {
    const float v = std::ldexp(static_cast<float>(m), -24);
    return sign ? -v : v;
  }
  if (e == 31) return float_of(sign | 0x7f800000u | (m << 13));
  return float_of(sign | ((e - 15u + 127u) << 23) | (m << 13));
}

std::uint16_t float_to_16bit(DType dtype, float f) {
  if (dtype == DType::bf16) return float_to_bf16(f);
  if (dtype == DType::f16) return float_to_f16(f);
  throw std::invalid_argument(std::string("not a 16-bit float type: ") + to_string(dtype));
}

float from_16bit(DType dtype, std::uint16_t h) {
  if (dtype == DType::bf16) return bf16_to_float(h);
  if (dtype == DType::f16) return f16_to_float(h);
  throw std::invalid_argument(std::string("not a 16-bit float type: ") + to_string(dtype));
}

DType parse_dtype16(const std::string& name) {
  if (name == "bf16") return DType::bf16;
  if (name == "f16") return DType::f16;
  throw std::invalid_argument("dtype must be bf16 or f16, got '" + name + "'");
}

std::string Layout::name() const { return std::string(1, a_col ? 'c' : 'r') + (b_col ? 'c' : 'r'); }

Layout parse_layout(const std::string& name) {
  auto letter = [&](char c) {
    if (c == 'r') return false;
    if (c == 'c') return true;
    throw std::invalid_argument("layout must be two letters r|c (A then B), e.g. rr or rc; got '" + name + "'");
  };
  if (name.size() != 2) letter('?');
  return Layout{letter(name[0]), letter(name[1])};
}

TensorView matrix_view(void* data, DType dtype, int64_t rows, int64_t cols, bool col_major, int device) {
  if (!col_major) return TensorView::contiguous(data, dtype, {rows, cols}, device);
  return TensorView::strided(data, dtype, {rows, cols}, {1, rows > 0 ? rows : 1}, device);
}

std::string slug(const std::string& text) {
  std::string out;
  bool dash = false;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      if (dash && !out.empty()) out += '-';
      out += static_cast<char>(std::tolower(c));
      dash = false;
    } else {
      dash = true;
    }
  }
  return out.empty() ? "unknown" : out;
}

std::string today() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace tmagemm::cli
