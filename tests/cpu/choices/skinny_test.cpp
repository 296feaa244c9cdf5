// skinny_test.cpp (CPU) — the skinny backend's host side: what it takes and refuses (in words), the K split, the
// shared-memory size, the heuristic's split and choice, the choices offered, the variant list compile-check
// compiles, the heuristic mode picking a skinny choice for few rows without a GPU, and Options::sm_carveout: a
// choice whose grid exceeds the SMs left refuses (in words), and the heuristic does not pick one.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "choices/epilogue_params.hpp"
#include "choices/skinny.hpp"
#include "cpu/test_support.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::choices {
namespace {

Operand operand(uintptr_t addr, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  Operand o;
  o.data = reinterpret_cast<const void*>(addr);
  o.dtype = DType::bf16;
  o.rows = rows;
  o.cols = cols;
  o.row_stride = rs;
  o.col_stride = cs;
  return o;
}

// Row-major A (M x K), B (K x N) and out.
GemmProblem problem(int64_t m, int64_t n, int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = operand(0x7f0000000000, m, k, k, 1);
  p.b = operand(0x7f1000000000, k, n, n, 1);
  p.out = operand(0x7f2000000000, m, n, n, 1);
  return p;
}

const SkinnyConfig& config(int bn, int bk, int stages) {
  for (const auto& c : skinny_configs())
    if (c.bn == bn && c.bk == bk && c.stages == stages) return c;
  throw std::runtime_error("no such skinny config");
}

TEST(SkinnyHost, TakesDecodeShapesInEveryLayout) {
  for (int layout = 0; layout < 4; ++layout) {
    GemmProblem p = problem(16, 4096, 4096);
    if (layout & 1) p.a = operand(0x7f0000000000, 16, 4096, 1, 16);    // column-major A, ld 16
    if (layout & 2) p.b = operand(0x7f1000000000, 4096, 4096, 1, 4096);  // column-major B
    for (const auto& c : skinny_configs())
      for (int s : skinny_splits())
        for (int k : skinny_casts())
          if (s * k <= 8 && c.in_bytes == 2)
            EXPECT_EQ(skinny_can_implement(p, c, s, k), "") << c.name() << " split " << s << " cast " << k;
          else if (s * k <= 8)
            EXPECT_EQ(skinny_can_implement(p, c, s, k), "an fp8 config takes scaled_mm only") << c.name();
  }
}

TEST(SkinnyHost, RefusesWithReasons) {
  const SkinnyConfig& c = config(128, 64, 4);
  EXPECT_NE(skinny_can_implement(problem(65, 4096, 4096), c, 1).find("M = 65 is above 64"), std::string::npos);
  GemmProblem p = problem(16, 4096, 4096);
  p.op = Op::scaled_mm;  // the fp8 configs take it
  EXPECT_NE(skinny_can_implement(p, c, 1).find("not handled by the 16-bit skinny configs"), std::string::npos);
  p.op = Op::addmm;  // through the epilogue stage
  EXPECT_EQ(skinny_can_implement(p, c, 1), "");
  p = problem(16, 4096, 4096);
  p.b = operand(0x7f1000000002, 4096, 4096, 4096, 1);  // base off 16 bytes
  EXPECT_EQ(skinny_can_implement(p, c, 1).rfind("B: ", 0), 0u) << skinny_can_implement(p, c, 1);
  p = problem(16, 4096, 4100);
  p.a = operand(0x7f0000000000, 16, 4100, 4100, 1);  // rows of 8200 bytes: not a multiple of 16
  EXPECT_EQ(skinny_can_implement(p, c, 1).rfind("A: ", 0), 0u) << skinny_can_implement(p, c, 1);
  // 7 blocks of 64 cannot feed 4 CTAs two blocks each.
  EXPECT_NE(skinny_can_implement(problem(16, 4096, 448), c, 4).find("too few to split 4 ways"), std::string::npos);
  EXPECT_EQ(skinny_can_implement(problem(16, 4096, 448), c, 2), "");
  // Multicast groups: 1, 2 or 4 CTAs, a cluster of at most 8, whole groups of N tiles.
  EXPECT_NE(skinny_can_implement(problem(16, 4096, 4096), c, 1, 3).find("not 1, 2 or 4"), std::string::npos);
  EXPECT_NE(skinny_can_implement(problem(16, 4096, 4096), c, 4, 4).find("above 8"), std::string::npos);
  EXPECT_NE(skinny_can_implement(problem(16, 640, 4096), c, 1, 2).find("5 tiles of 128: not a multiple"),
            std::string::npos);
  EXPECT_EQ(skinny_can_implement(problem(16, 640, 4096), c, 1, 1), "");
  EXPECT_EQ(skinny_can_implement(problem(16, 1000, 4096), c, 2, 4), "");  // 8 tiles, the last ragged
}

TEST(SkinnyHost, KSplitIsWholeBlocksSharedOut) {
  const SkinnyConfig& c = config(128, 64, 4);
  EXPECT_EQ(skinny_k_split(4096, c, 1), 4096);
  EXPECT_EQ(skinny_k_split(4096, c, 4), 1024);
  EXPECT_EQ(skinny_k_split(568, c, 4), 192);  // 9 blocks: 3, 3, 3, 0
  EXPECT_EQ(skinny_k_split(1000, c, 2), 512);  // 16 blocks (the last partial): 8 each
}

TEST(SkinnyHost, SharedMemoryIsRingOrReductionTile) {
  const SkinnyConfig& c = config(128, 64, 4);
  // Ring: 4 x (B 128 x 64 + A 64 x 64) x 2 bytes; reduction 64 x (128 + 4) floats; + 1 KiB slack + 8 barriers.
  EXPECT_EQ(c.smem_bytes(64, true), 1024u + 4 * (128 * 64 + 64 * 64) * 2 + 8 * 8);
  EXPECT_EQ(c.smem_bytes(32, true), 1024u + 4 * (128 * 64 + 32 * 64) * 2 + 8 * 8);
  EXPECT_EQ(c.smem_bytes(32, false), c.smem_bytes(64, true));  // an M-major A is loaded 64 columns wide
  for (const auto& k : skinny_configs())  // (fp8 takes a K-major A only: an M-major one is never launched)
    EXPECT_LE(k.smem_bytes(64, k.in_bytes == 2 ? false : true), test_support::fake_h200().smem_per_block_optin)
        << k.name();
}

TEST(SkinnyHost, HeuristicSplitsCoverFourFifthsOfTheSms) {
  const SkinnyConfig& c = config(64, 64, 12);
  EXPECT_EQ(skinny_heuristic_splits(problem(16, 4096, 4096), c, 132), 2);  // 64 tiles x 2 >= 105.6
  EXPECT_EQ(skinny_heuristic_splits(problem(16, 8192, 4096), c, 132), 1);  // 128 tiles
  EXPECT_EQ(skinny_heuristic_splits(problem(1, 512, 8192), c, 132), 8);    // 8 tiles: the largest split
  EXPECT_EQ(skinny_heuristic_splits(problem(1, 512, 256), c, 132), 2);     // 4 blocks: 2 CTAs at most
}

TEST(SkinnyHost, HeuristicChoiceFollowsTheWidthOfN) {
  EXPECT_EQ(skinny_heuristic_choice(problem(16, 4096, 4096), 132), "skinny_64x64_st12_split2");
  EXPECT_EQ(skinny_heuristic_choice(problem(64, 4096, 14336), 132), "skinny_64x64_st12_split2");
  EXPECT_EQ(skinny_heuristic_choice(problem(1, 14336, 4096), 132), "skinny_128x128_st4_split1");  // 112 tiles
  EXPECT_EQ(skinny_heuristic_choice(problem(16, 28672, 8192), 132), "skinny_256x64_st5_split1");  // 112 tiles
  EXPECT_EQ(skinny_heuristic_choice(problem(64, 28672, 8192), 132), "");  // persistent TMA's
  EXPECT_EQ(skinny_heuristic_choice(problem(65, 4096, 4096), 132), "");
}

TEST(SkinnyHost, ChoicesAndVariantsAreUnique) {
  const auto choices = skinny_backend().enumerate(problem(16, 4096, 4096), test_support::fake_h200(),
                                                  Options::defaults_only());
  // Splits x casts with at most 8 CTAs a cluster: 1x{1,2,4}, 2x{1,2,4}, 4x{1,2}, 8x1.
  EXPECT_EQ(choices.size(), skinny_configs().size() * 9);
  std::set<std::string> names;
  for (const auto& c : choices) {
    names.insert(c->name());
    EXPECT_STREQ(c->backend(), "skinny");
    const bool fp8 = skinny_config_of(*c)->in_bytes == 1;
    EXPECT_EQ(c->can_implement(problem(16, 4096, 4096), test_support::fake_h200()),
              fp8 ? "an fp8 config takes scaled_mm only" : "")
        << c->name();
  }
  EXPECT_EQ(names.size(), choices.size());
  const auto specs = skinny_all_specs();
  std::size_t configs16 = 0, fp8_specs = 0;
  for (const auto& c : skinny_configs()) configs16 += c.in_bytes == 2;
  for (const auto& s : specs) fp8_specs += s.name.rfind("skinny_fp8_", 0) == 0;
  EXPECT_EQ(specs.size() - fp8_specs, configs16 * 2 /*mp*/ * 2 /*dtype*/ * 3 /*out*/ * 2 /*a*/ * 2 /*b*/ +
                                          epilogue_samples().size());
  // fp8: per config and padded M, 3 outputs fast + those two-level fits, 2 mixed pairs; the scaled_mm samples.
  EXPECT_GE(fp8_specs, (skinny_configs().size() - configs16) * 2 * 5 + scaled_mm_epilogue_samples().size());
  std::set<std::string> spec_names;
  for (const auto& s : specs) spec_names.insert(s.name);
  EXPECT_EQ(spec_names.size(), specs.size());
}

TEST(SkinnyHost, GridIsTilesTimesSplitsTimesBatch) {
  const SkinnyConfig& c = config(64, 64, 12);
  EXPECT_EQ(skinny_grid_ctas(problem(16, 14336, 4096), c, 1), 224);
  EXPECT_EQ(skinny_grid_ctas(problem(16, 14336, 4096), c, 4), 896);
  EXPECT_EQ(skinny_grid_ctas(problem(16, 1000, 4096), c, 2), 32);  // 16 tiles, the last ragged
  GemmProblem p = problem(16, 4096, 4096);
  p.batch = 3;
  EXPECT_EQ(skinny_grid_ctas(p, c, 2), 64 * 2 * 3);
}

TEST(SkinnyHost, CarveoutRefusesGridsAboveTheSmsLeft) {
  const SkinnyConfig& c = config(64, 64, 12);
  const GemmProblem p = problem(16, 14336, 4096);
  EXPECT_EQ(skinny_carveout_reason(p, c, 1, 132, 0), "");  // no carveout: any grid
  EXPECT_EQ(skinny_carveout_reason(p, c, 1, 132, -5), "");
  EXPECT_EQ(skinny_carveout_reason(p, c, 1, 132, 12), "grid of 224 CTAs exceeds the 120 SMs left by sm_carveout = 12");
  EXPECT_EQ(skinny_carveout_reason(problem(16, 4096, 4096), c, 1, 132, 12), "");  // 64 CTAs
  EXPECT_EQ(skinny_carveout_reason(problem(16, 7680, 4096), c, 1, 132, 12), "");  // 120 CTAs: exactly the SMs left
  EXPECT_NE(skinny_carveout_reason(problem(16, 4096, 4096), c, 2, 132, 12), "");  // 128 CTAs
  EXPECT_EQ(skinny_carveout_reason(problem(1, 64, 4096), c, 1, 132, 500), "");  // at least one SM is left
  EXPECT_EQ(skinny_carveout_reason(problem(1, 64, 4096), c, 2, 132, 500),
            "grid of 2 CTAs exceeds the 1 SMs left by sm_carveout = 500");

  // Through the backend: the choices of an enumeration under a carveout refuse with that reason.
  Options o = Options::defaults_only();
  o.sm_carveout = 12;
  int refused = 0, taken = 0;
  for (const auto& choice : skinny_backend().enumerate(p, test_support::fake_h200(), o)) {
    int splits = 0;
    const SkinnyConfig* cfg = skinny_config_of(*choice, &splits);
    ASSERT_NE(cfg, nullptr);
    if (cfg->in_bytes == 1) continue;  // fp8 configs refuse a bf16 mm
    const std::string reason = choice->can_implement(p, test_support::fake_h200());
    if (skinny_grid_ctas(p, *cfg, splits) > 120) {
      ++refused;
      EXPECT_NE(reason.find("exceeds the 120 SMs left by sm_carveout = 12"), std::string::npos) << choice->name();
    } else {
      ++taken;
      EXPECT_EQ(reason, "") << choice->name();
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(taken, 0);  // 256x64 unsplit: 56 CTAs
  for (const auto& choice : skinny_backend().enumerate(p, test_support::fake_h200(), Options::defaults_only()))
    if (skinny_config_of(*choice)->in_bytes == 2)
      EXPECT_EQ(choice->can_implement(p, test_support::fake_h200()), "") << choice->name();
}

TEST(SkinnyHost, HeuristicKeepsToTheSmsACarveoutLeaves) {
  const SkinnyConfig& narrow = config(64, 64, 12);
  EXPECT_EQ(skinny_heuristic_splits(problem(16, 4096, 4096), narrow, 132, 12), 1);  // split 2: 128 CTAs > 120
  EXPECT_EQ(skinny_heuristic_splits(problem(1, 512, 8192), narrow, 132, 100), 4);   // 32 CTAs cover 4/5 of 32
  EXPECT_EQ(skinny_heuristic_choice(problem(16, 4096, 4096), 132, 12), "skinny_64x64_st12_split1");
  EXPECT_EQ(skinny_heuristic_choice(problem(16, 4096, 4096), 132, 100), "skinny_128x128_st4_split1");  // 32 tiles
  EXPECT_EQ(skinny_heuristic_choice(problem(16, 28672, 8192), 132, 12), "skinny_256x64_st5_split1");  // 112 CTAs
  EXPECT_EQ(skinny_heuristic_choice(problem(16, 28672, 8192), 132, 30), "");  // 112 CTAs > 102: not skinny
  EXPECT_EQ(skinny_heuristic_choice(problem(16, 4096, 4096), 132, 0), "skinny_64x64_st12_split2");  // as without
}

TEST(SkinnyHost, HeuristicModeNeverTakesARefusedChoice) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  for (int carveout : {12, 100})
    for (int64_t n : {4096, 14336}) {
      o.sm_carveout = carveout;
      const GemmProblem p = problem(16, n, 4096);
      const auto chosen = tune::choose(p, o, test_support::fake_h200());
      SCOPED_TRACE(fmt::format("N = {}, carveout {}: {}", n, carveout, chosen->name()));
      EXPECT_EQ(chosen->can_implement(p, test_support::fake_h200()), "");
      int splits = 0;
      if (const SkinnyConfig* c = skinny_config_of(*chosen, &splits))
        EXPECT_LE(skinny_grid_ctas(p, *c, splits), 132 - carveout);
    }
}

TEST(SkinnyHost, HeuristicModePicksSkinnyForFewRowsOnly) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  EXPECT_EQ(tune::choose(problem(16, 4096, 4096), o, test_support::fake_h200())->name(), "skinny_64x64_st12_split2");
  EXPECT_STRNE(tune::choose(problem(128, 4096, 4096), o, test_support::fake_h200())->backend(), "skinny");
  o.skinny = false;
  EXPECT_STRNE(tune::choose(problem(16, 4096, 4096), o, test_support::fake_h200())->backend(), "skinny");
}

}  // namespace
}  // namespace tmagemm::choices
