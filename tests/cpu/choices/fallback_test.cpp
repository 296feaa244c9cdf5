// fallback_test.cpp (CPU) — the fallback backend's host side: how each operand will be read (mode), what it
// refuses and why, and the variant list compile-check compiles.
#include <gtest/gtest.h>

#include <set>

#include "choices/fallback.hpp"

namespace tmagemm::choices {
namespace {

Operand operand(uintptr_t addr, int64_t rows, int64_t cols, int64_t rs, int64_t cs, DType d = DType::bf16) {
  Operand o;
  o.data = reinterpret_cast<const void*>(addr);
  o.dtype = d;
  o.rows = rows;
  o.cols = cols;
  o.row_stride = rs;
  o.col_stride = cs;
  return o;
}

GemmProblem problem(const Operand& a, const Operand& b, const Operand& out) {
  GemmProblem p;
  p.m = a.rows;
  p.k = a.cols;
  p.n = b.cols;
  p.a = a;
  p.b = b;
  p.out = out;
  return p;
}

TEST(FallbackHost, OperandModes) {
  EXPECT_EQ(fallback_a_mode(operand(0x1000, 21, 11, 11, 1)), 0);  // K contiguous
  EXPECT_EQ(fallback_a_mode(operand(0x1000, 21, 11, 1, 21)), 1);  // M contiguous
  EXPECT_EQ(fallback_a_mode(operand(0x1000, 21, 11, 23, 2)), 2);  // neither
  EXPECT_EQ(fallback_b_mode(operand(0x1000, 11, 31, 1, 11)), 0);  // K contiguous (column-major B)
  EXPECT_EQ(fallback_b_mode(operand(0x1000, 11, 31, 31, 1)), 1);  // N contiguous
  EXPECT_EQ(fallback_b_mode(operand(0x1000, 11, 31, 3, 66)), 2);
}

TEST(FallbackHost, TakesMisalignedAndStridedOperands) {
  const auto p = problem(operand(0x1002, 21, 11, 11, 1, DType::f16), operand(0x2002, 11, 31, 3, 66, DType::f16),
                         operand(0x3002, 21, 31, 31, 1, DType::f16));
  for (const auto& c : fallback_configs()) EXPECT_EQ(fallback_can_implement(p, c), "") << c.name();
}

TEST(FallbackHost, RefusesWithReasons) {
  const auto& c = fallback_configs().front();
  auto p = problem(operand(0x1000, 8, 8, 8, 1, DType::f32), operand(0x2000, 8, 8, 8, 1, DType::f32),
                   operand(0x3000, 8, 8, 8, 1, DType::f32));
  EXPECT_NE(fallback_can_implement(p, c).find("both bf16 or both f16"), std::string::npos);
  p = problem(operand(0x1001, 8, 8, 8, 1), operand(0x2000, 8, 8, 8, 1), operand(0x3000, 8, 8, 8, 1));
  EXPECT_NE(fallback_can_implement(p, c).find("2-byte aligned"), std::string::npos);
  p = problem(operand(0x1000, 8, 8, 8, 1), operand(0x2000, 8, 8, 8, 1), operand(0x3000, 8, 8, 8, 1));
  p.op = Op::addmm;
  EXPECT_NE(fallback_can_implement(p, c).find("addmm"), std::string::npos);
}

TEST(FallbackHost, SharedMemoryFollowsTheOperandModes) {
  const FallbackConfig c{128, 128, 32, 2, 4};
  // Two buffers per operand; K-contiguous tiles [128][32 + 8], N-contiguous ones [32][128 + 8]; 2 bytes each.
  EXPECT_EQ(c.smem_bytes(0, 0), 2u * 2 * (128 * 40 + 128 * 40));
  EXPECT_EQ(c.smem_bytes(0, 1), 2u * 2 * (128 * 40 + 32 * 136));
  EXPECT_EQ(c.smem_bytes(2, 1), c.smem_bytes(0, 1));  // no unit stride: stored like K-contiguous
}

TEST(FallbackHost, EveryVariantOnceForCompileCheck) {
  const auto specs = fallback_all_specs();
  EXPECT_EQ(specs.size(), fallback_configs().size() * 2 /*dtype*/ * 3 /*out*/ * 3 /*a mode*/ * 3 /*b mode*/);
  std::set<std::string> names;
  for (const auto& s : specs) names.insert(s.name);
  EXPECT_EQ(names.size(), specs.size());
}

}  // namespace
}  // namespace tmagemm::choices
