// persistent_tma_test.cpp (CPU) — the persistent-TMA backend's host side: what a wave-fitting tile takes, the wave
// model that ranks tiles, and the kernel list compile-check compiles.
#include <gtest/gtest.h>

#include <string>

#include "choices/persistent_tma.hpp"
#include "cpu/test_support.hpp"

namespace tmagemm::choices {
namespace {

runtime::DeviceInfo hopper() { return test_support::fake_h200(); }

// bf16 M x N x K with row-major A and out, B row-major (N-major) or column-major (K-major), 1024-aligned bases.
GemmProblem problem(int64_t m, int64_t n, int64_t k, bool b_col) {
  auto op = [](uintptr_t addr, int64_t rows, int64_t cols, bool col_major) {
    Operand o;
    o.data = reinterpret_cast<const void*>(addr);
    o.dtype = DType::bf16;
    o.rows = rows;
    o.cols = cols;
    o.row_stride = col_major ? 1 : cols;
    o.col_stride = col_major ? rows : 1;
    return o;
  };
  GemmProblem p;
  p.op = Op::mm;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = op(0x7f0000000000, m, k, false);
  p.b = op(0x7f1000000000, k, n, b_col);
  p.out = op(0x7f2000000000, m, n, false);
  return p;
}

const TmaConfig& config(const std::string& name) {
  for (const auto& c : persistent_tma_configs())
    if (c.name() == name) return c;
  throw std::runtime_error("no config " + name);
}

TEST(PersistentTmaHost, WaveFittingTileTakesBothBLayouts) {
  const auto& c = config("persistent_tma_128x224x64_s4_c2_g8_tmastore");
  EXPECT_EQ(persistent_tma_can_implement(problem(512, 14336, 4096, true), c, hopper()), "");
  EXPECT_EQ(persistent_tma_can_implement(problem(512, 14336, 4096, false), c, hopper()), "");
  // Sized for an N-major B's four whole 64-column chunks per stage.
  EXPECT_GE(c.smem_bytes(), std::size_t{4} * (128 + 256) * 64 * 2);
}

TEST(PersistentTmaHost, WaveModelPrefersTheTileThatFillsTheLastWave) {
  const auto& c224 = config("persistent_tma_128x224x64_s4_c2_g8_tmastore");
  const auto& c256 = config("persistent_tma_128x256x64_s4_c2_g8_tmastore");
  // 512 x 14336: 224 tiles of 128x256 (1.70 waves of 132 -> two rounds) against 256 of 128x224 (1.94): two rounds
  // each, of smaller tiles.
  const GemmProblem p = problem(512, 14336, 4096, true);
  EXPECT_NEAR(persistent_tma_score(p, c224, hopper(), 0) / persistent_tma_score(p, c256, hopper(), 0),
              (256.0 / 224.0) * (c224.weight / c256.weight), 1e-9);
  ASSERT_NE(persistent_tma_pick(p, hopper(), 0), nullptr);
  EXPECT_EQ(persistent_tma_pick(p, hopper(), 0)->name(), c224.name());
  // 4096 x 14336 fills its waves with either (14 rounds of 128x256, 16 of 128x224), and the bigger tile's
  // measured weight decides.
  const GemmProblem q = problem(4096, 14336, 4096, true);
  EXPECT_LT(persistent_tma_score(q, c224, hopper(), 0), persistent_tma_score(q, c256, hopper(), 0));
  ASSERT_NE(persistent_tma_pick(q, hopper(), 0), nullptr);
  EXPECT_NE(persistent_tma_pick(q, hopper(), 0)->name(), c224.name());
}

TEST(PersistentTmaHost, EveryTableRowFitsSharedMemoryAndCompilesForEveryLayout) {
  for (const auto& c : persistent_tma_configs())
    EXPECT_LE(c.smem_bytes(), std::size_t{232448}) << c.name();
  int n224 = 0;
  for (const auto& s : persistent_tma_all_specs()) n224 += s.name.find("x224x") != std::string::npos;
  EXPECT_EQ(n224, 2 * 4 * 2);  // {bf16, f16} x four layouts x {bf16, f16} out
}

}  // namespace
}  // namespace tmagemm::choices
