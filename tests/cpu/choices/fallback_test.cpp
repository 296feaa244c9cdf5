// fallback_test.cpp (CPU) — the fallback backend's host side: how each operand will be read (mode), what it
// refuses and why, the variant list compile-check compiles, and the launch grid with and without
// Options::sm_carveout.
#include <gtest/gtest.h>

#include <set>

#include "choices/epilogue_params.hpp"
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
  p.op = Op::scaled_mm;
  EXPECT_NE(fallback_can_implement(p, c).find("scaled_mm"), std::string::npos);
  p.op = Op::addmm;  // through the epilogue stage
  EXPECT_EQ(fallback_can_implement(p, c), "");
  // The kernel counts (batch, tile) items in 32 bits: 2^13 x 2^13 tiles of 128x128 in each of 32 matrices is 2^31.
  p = problem(operand(0x1000, 1 << 20, 8, 8, 1), operand(0x2000, 8, 1 << 20, 1 << 20, 1),
              operand(0x3000, 1 << 20, 1 << 20, 1 << 20, 1));
  p.batch = 31;
  EXPECT_EQ(fallback_can_implement(p, c), "");
  p.batch = 32;
  EXPECT_NE(fallback_can_implement(p, c).find("2^31 or more tiles of 128x128 (all matrices of the batch)"),
            std::string::npos);
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
  EXPECT_EQ(specs.size(), fallback_configs().size() * 2 /*dtype*/ * 3 /*out*/ * 3 /*a mode*/ * 3 /*b mode*/ +
                              epilogue_samples().size());
  std::set<std::string> names;
  for (const auto& s : specs) names.insert(s.name);
  EXPECT_EQ(names.size(), specs.size());
}

TEST(FallbackHost, GridIsOneCtaPerTileWithoutACarveout) {
  const FallbackConfig c{128, 128, 32, 2, 4};
  auto p = problem(operand(0x1000, 1000, 263, 263, 1), operand(0x2000, 263, 776, 776, 1),
                   operand(0x3000, 1000, 776, 776, 1));
  auto grid = fallback_grid(p, c, 132, 0);  // 8 x 7 tiles
  EXPECT_EQ(grid.x, 56);
  EXPECT_EQ(grid.z, 1);
  p.batch = 3;
  grid = fallback_grid(p, c, 132, 0);
  EXPECT_EQ(grid.x, 56);
  EXPECT_EQ(grid.z, 3);
  grid = fallback_grid(p, c, 132, -4);  // not a carveout
  EXPECT_EQ(grid.x, 56);
  EXPECT_EQ(grid.z, 3);
}

TEST(FallbackHost, GridFitsTheSmsACarveoutLeaves) {
  const FallbackConfig c{64, 64, 32, 2, 2};
  auto p = problem(operand(0x1000, 1000, 263, 263, 1), operand(0x2000, 263, 776, 776, 1),
                   operand(0x3000, 1000, 776, 776, 1));
  auto grid = fallback_grid(p, c, 132, 12);  // 16 x 13 = 208 tiles on 120 SMs
  EXPECT_EQ(grid.x, 120);
  EXPECT_EQ(grid.z, 1);
  grid = fallback_grid(p, c, 132, 100);
  EXPECT_EQ(grid.x, 32);
  EXPECT_EQ(grid.z, 1);
  grid = fallback_grid(p, c, 132, 132);  // no SM left: one CTA still runs every tile
  EXPECT_EQ(grid.x, 1);
  EXPECT_EQ(grid.z, 1);
  p = problem(operand(0x1000, 100, 63, 63, 1), operand(0x2000, 63, 100, 100, 1), operand(0x3000, 100, 100, 100, 1));
  p.batch = 5;
  grid = fallback_grid(p, c, 132, 12);  // 4 tiles x 5 matrices: fewer CTAs than SMs, one item each
  EXPECT_EQ(grid.x, 20);
  EXPECT_EQ(grid.z, 1);
}

}  // namespace
}  // namespace tmagemm::choices
