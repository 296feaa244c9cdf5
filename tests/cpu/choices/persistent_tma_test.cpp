// persistent_tma_test.cpp (CPU) — the persistent-TMA backend's host side: what a wave-fitting tile takes, the wave
// model that ranks tiles, the kernel list compile-check compiles, and the stream-K workspace (grouped_mm's for every
// routing).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "choices/persistent_tma.hpp"
#include "cpu/test_support.hpp"

namespace tmagemm::choices {
namespace {

runtime::DeviceInfo hopper() { return test_support::fake_h200(); }

// bf16 M x N x K with row-major A and out, B row-major (N-major) or column-major (K-major), 1024-aligned bases.
GemmProblem problem(int64_t m, int64_t n, int64_t k, bool b_col) { return test_support::fake_mm_problem(m, n, k, b_col); }

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

TEST(PersistentTmaHost, PingPongConfigsTakeWholeTilesOnTwoConsumers) {
  int pp = 0;
  for (const auto& c : persistent_tma_configs()) {
    if (!c.ping_pong) continue;
    ++pp;
    EXPECT_TRUE(c.tuner_only) << c.name();
    EXPECT_NE(c.name().find("_pp"), std::string::npos) << c.name();
    // A consumer holds every row of its tile: at most 128 fp32 accumulator registers.
    EXPECT_LE((c.bm / 64) * (c.bn / 2), 128) << c.name();
    EXPECT_EQ(persistent_tma_can_implement(problem(4096, 4096, 4096, true), c, hopper()), "") << c.name();
    EXPECT_EQ(persistent_tma_can_implement(problem(4096, 4096, 4096, false), c, hopper()), "") << c.name();
    GemmProblem g = problem(4096, 4096, 4096, false);
    g.op = Op::grouped_mm;
    EXPECT_NE(persistent_tma_can_implement(g, c, hopper()).find("ping-pong configs take"), std::string::npos);
  }
  EXPECT_EQ(pp, 3);
  // A 128x256 tile per consumer would need 256 accumulator registers.
  TmaConfig wide = config("persistent_tma_128x256x64_s4_c2_g8_tmastore");
  wide.ping_pong = true;
  EXPECT_NE(persistent_tma_can_implement(problem(4096, 4096, 4096, true), wide, hopper()).find("at most 128"),
            std::string::npos);
  // compile-check: bf16 in each of the four layouts, no grouped variant.
  int specs = 0;
  for (const auto& s : persistent_tma_all_specs())
    specs += s.name.find("_pp_") != std::string::npos && s.name.find("_plain") == std::string::npos;
  EXPECT_EQ(specs, 3 * 4);
}

TEST(PersistentTmaHost, OperandsReadOnceAreStreamed) {
  const auto& c256 = config("persistent_tma_128x256x64_s4_c2_g8_tmastore");
  const auto& c2x1 = config("persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore");
  // One block of rows: B is read once (bit 1); one block of columns: A (bit 0); both, or neither.
  EXPECT_EQ(l2_stream_bits(problem(128, 8192, 8192, false), c256), 2);
  EXPECT_EQ(l2_stream_bits(problem(129, 8192, 8192, false), c256), 0);
  EXPECT_EQ(l2_stream_bits(problem(129, 8192, 8192, false), c2x1), 2);  // a 2x1 cluster tile spans 256 rows
  EXPECT_EQ(l2_stream_bits(problem(2048, 256, 2048, true), c256), 1);
  EXPECT_EQ(l2_stream_bits(problem(2048, 257, 2048, true), c256), 0);
  EXPECT_EQ(l2_stream_bits(problem(64, 200, 4096, false), c256), 3);
  EXPECT_EQ(l2_stream_bits(problem(4096, 4096, 4096, false), c256), 0);
  // bmm: an operand broadcast over the batch (batch stride 0) is read again by every batch.
  GemmProblem b = problem(128, 8192, 8192, false);
  b.op = Op::bmm;
  b.batch = 16;
  b.a.batch_stride = 128 * 8192;
  b.b.batch_stride = int64_t{8192} * 8192;
  b.out.batch_stride = 128 * 8192;
  EXPECT_EQ(l2_stream_bits(b, c256), 2);
  b.b.batch_stride = 0;
  EXPECT_EQ(l2_stream_bits(b, c256), 0);
  // grouped_mm: a group's B is read by as many tiles as its routed rows make (not known on the host).
  GemmProblem g = problem(128, 8192, 8192, false);
  g.op = Op::grouped_mm;
  EXPECT_EQ(l2_stream_bits(g, c256), 0);
}

TEST(PersistentTmaHost, EveryTableRowFitsSharedMemoryAndCompilesForEveryLayout) {
  for (const auto& c : persistent_tma_configs())
    EXPECT_LE(c.smem_bytes(), std::size_t{232448}) << c.name();
  int n224 = 0;
  for (const auto& s : persistent_tma_all_specs())
    n224 += s.name.find("x224x") != std::string::npos && s.name.find("_grouped") == std::string::npos &&
            s.name.find("_plain") == std::string::npos;
  EXPECT_EQ(n224, 2 * 4 * 2);  // {bf16, f16} x four layouts x {bf16, f16} out
  // Outputs TMA cannot address (kOutPlain): every 16-bit TMA-store config but stream-K once, and f16 in the four
  // layouts on the first; stream-K configs refuse them.
  int plain = 0, tma_store16 = 0;
  for (const auto& s : persistent_tma_all_specs()) plain += s.name.find("_plain") != std::string::npos;
  for (const auto& c : persistent_tma_configs()) tma_store16 += c.in_bytes == 2 && c.store_tma && !c.stream_k;
  EXPECT_EQ(plain, tma_store16 + 4);
  GemmProblem odd_ld = problem(4096, 4096, 4096, false);
  odd_ld.out.row_stride = 4099;
  for (const auto& c : persistent_tma_configs())
    if (c.stream_k)
      EXPECT_EQ(persistent_tma_can_implement(odd_ld, c, hopper()),
                "stream-K configs need an output TMA can address (rows and base on 16 bytes)");
  // grouped_mm: every 16-bit config but the ping-pong and cluster split-K ones once, stream-K too (and two more variants on the first
  // direct-store and TMA-store configs).
  int grouped = 0, configs16 = 0, grouped_sk = 0, configs_sk = 0;
  for (const auto& s : persistent_tma_all_specs()) {
    grouped += s.name.find("_grouped") != std::string::npos;
    grouped_sk += s.name.find("_grouped") != std::string::npos && s.name.find("_sk") != std::string::npos;
  }
  for (const auto& c : persistent_tma_configs()) {
    configs16 += c.in_bytes == 2 && !c.ping_pong && c.split_k == 1;
    configs_sk += c.stream_k;
  }
  EXPECT_EQ(grouped, configs16 + 4);
  EXPECT_GE(configs_sk, 3);
  EXPECT_EQ(grouped_sk, configs_sk);  // one grouped variant of each stream-K config
}

// grouped_mm problems: `groups` matrices of B (K x N, N-major), A and out of total_m rows.
GemmProblem grouped_problem(int64_t groups, int64_t total_m, int64_t n, int64_t k) {
  GemmProblem p = problem(total_m, n, k, false);
  p.op = Op::grouped_mm;
  p.batch = groups;
  p.b.batch_stride = k * n;
  return p;
}

// The tile count a grouped kernel reads on the device (kernels/scheduler.cuh load_group_schedule): each group's M
// blocks of sched_m rows times the N blocks; in pairs, each group's count made even, then halved.
int64_t device_tiles(const std::vector<int64_t>& rows, int64_t sched_m, int64_t n_blocks, bool pairs) {
  int64_t t = 0;
  for (int64_t r : rows) {
    int64_t g = (r + sched_m - 1) / sched_m * n_blocks;
    if (pairs) g += g & 1;
    t += g;
  }
  return pairs ? t / 2 : t;
}

TEST(PersistentTmaHost, CleanCounterBufferHoldsEveryStreamKLaunchsCounters) {
  // TMAGEMM_STREAM_K_CLEAN_COUNTERS: "1" only; and the clean buffer (kCleanCounterBytes) holds the counters of any
  // stream-K launch on a 132-SM H200 (the largest: grouped_mm's w - 1 slots of a 2x1 cluster's CTAs and consumers), so
  // the switch never falls back to the memset for want of room there.
  {
    test_support::EnvGuard off("TMAGEMM_STREAM_K_CLEAN_COUNTERS", std::nullopt);
    EXPECT_FALSE(stream_k_clean_counters_enabled());
  }
  {
    test_support::EnvGuard other("TMAGEMM_STREAM_K_CLEAN_COUNTERS", std::string("yes"));
    EXPECT_FALSE(stream_k_clean_counters_enabled());
  }
  test_support::EnvGuard on("TMAGEMM_STREAM_K_CLEAN_COUNTERS", std::string("1"));
  EXPECT_TRUE(stream_k_clean_counters_enabled());
  std::size_t most = 0;
  for (const TmaConfig& c : persistent_tma_configs()) {
    if (!c.stream_k) continue;
    for (const GemmProblem& p : {grouped_problem(64, 32768, 2048, 7168), grouped_problem(8, 4096, 4096, 14336)})
      for (int64_t w = 1; w <= 132; ++w) most = std::max(most, stream_k_workspace(p, c, w).counter_bytes);
  }
  EXPECT_GT(most, 0u);
  EXPECT_LE(most, kCleanCounterBytes);
}

TEST(PersistentTmaHost, GroupedStreamKIsSwitchedAndItsWorkspaceHoldsEveryRouting) {
  const GemmProblem g = grouped_problem(8, 4096, 4096, 14336);
  const auto& sk = config("persistent_tma_128x256x64_s4_c2_g8_tmastore_sk");
  {
    test_support::EnvGuard off("TMAGEMM_GROUPED_STREAM_K", std::string("0"));
    EXPECT_FALSE(grouped_stream_k_enabled());
    EXPECT_NE(persistent_tma_can_implement(g, sk, hopper()).find("TMAGEMM_GROUPED_STREAM_K=0"), std::string::npos);
  }
  for (const std::optional<std::string> on : {std::optional<std::string>(), std::optional<std::string>("1")}) {
    test_support::EnvGuard sw("TMAGEMM_GROUPED_STREAM_K", on);  // on by default
    EXPECT_TRUE(grouped_stream_k_enabled());
    EXPECT_EQ(persistent_tma_can_implement(g, sk, hopper()), "");
  }

  // Every stream-K config, routings of every tile count a grid of w clusters could split: the workspace of w holds
  // the exact layout of each count (partial sums and counters), and stays within 3 w slot segments.
  std::mt19937 rng(5);
  for (const GemmProblem& p : {g, grouped_problem(64, 3000, 384, 256), grouped_problem(3, 700, 2048, 1000),
                               grouped_problem(1, 5000, 512, 64)})
    for (const auto& c : persistent_tma_configs()) {
      if (!c.stream_k) continue;
      SCOPED_TRACE(c.name() + " G=" + std::to_string(p.batch) + " M=" + std::to_string(p.m));
      const bool pairs = c.cluster_m == 2 && c.cluster_n == 1;
      const int64_t sched_m = pairs ? c.bm : c.bm * c.cluster_m, n_blocks = (p.n + c.bn * c.cluster_n - 1) / (c.bn * c.cluster_n);
      const int64_t k_blocks = (p.k + c.bk - 1) / c.bk;
      const std::size_t unit = std::size_t{4} * c.bm * c.bn * c.cluster_m * c.cluster_n;
      // The most tiles a routing gives: every group with a partial block (the host's bound must not be below).
      int64_t most_tiles = 0;
      for (int trial = 0; trial < 200; ++trial) {
        std::vector<int64_t> cuts{0, p.m};
        std::uniform_int_distribution<int64_t> pick(0, p.m);
        for (int64_t i = 1; i < p.batch; ++i) cuts.push_back(trial == 0 ? p.m : pick(rng));
        std::sort(cuts.begin(), cuts.end());
        std::vector<int64_t> rows;
        for (std::size_t i = 1; i < cuts.size(); ++i) rows.push_back(cuts[i] - cuts[i - 1]);
        most_tiles = std::max(most_tiles, device_tiles(rows, sched_m, n_blocks, pairs));
      }
      const int64_t bound = pairs ? (((p.m + c.bm - 1) / c.bm + p.batch) * n_blocks + p.batch + 1) / 2
                                  : ((p.m + sched_m - 1) / sched_m + p.batch) * n_blocks;
      EXPECT_LE(most_tiles, bound);
      for (int64_t w : {1, 2, 3, 7, 31, 65, 66, 131, 132}) {  // w above the bound too: a stream-K grid takes every SM
        const StreamKWorkspace ws = stream_k_workspace(p, c, w);
        EXPECT_EQ(ws.seg_stride, 0);
        EXPECT_LE(ws.partials_bytes, std::size_t(3 * w) * unit + 256);
        for (int64_t t = 0; t <= bound; ++t) {
          const StreamKLayout l = stream_k_layout(t, k_blocks, w);
          ASSERT_LE(std::size_t(l.split_tiles * l.max_segments) * unit, ws.partials_bytes) << "w=" << w << " T=" << t;
          ASSERT_LE(std::size_t(l.split_tiles) * c.cluster_m * c.cluster_n * c.consumers * 4, ws.counter_bytes)
              << "w=" << w << " T=" << t;
        }
      }
    }
  // mm: the problem's own layout, with the host's segment stride.
  const StreamKWorkspace mm = stream_k_workspace(problem(4096, 4096, 4096, false), sk, 132);
  const StreamKLayout l = stream_k_layout(16 * 32, 64, 132);
  EXPECT_EQ(mm.seg_stride, l.max_segments);
  EXPECT_EQ(mm.counter_bytes, std::size_t(l.split_tiles) * 2 * 4);
}

TEST(PersistentTmaHost, StreamKGridTakesEveryClusterWhereTilesAreFewer) {
  // 16 x 28672 x 8192 on 64x256: one round of 112 tiles. A stream-K config shares it out over all 132 SMs (each tile
  // split by K blocks); whole tiles run one a CTA. Where tiles outnumber the clusters, or a tile has one K block
  // (nothing to split), the grid is the smaller of the two.
  const GemmProblem decode = problem(16, 28672, 8192, false);
  EXPECT_EQ(persistent_tma_workers(decode, config("persistent_tma_64x256x64_s5_c1_g8_tmastore_sk"), 132), 132);
  EXPECT_EQ(persistent_tma_workers(decode, config("persistent_tma_64x256x64_s5_c1_g8_tmastore"), 132), 112);
  const auto& sk = config("persistent_tma_128x256x64_s4_c2_g8_tmastore_sk");
  EXPECT_EQ(persistent_tma_workers(problem(4096, 4096, 4096, false), sk, 132), 132);  // 512 tiles
  EXPECT_EQ(persistent_tma_workers(problem(1000, 1000, 64, false), sk, 132), 32);     // one K block
  EXPECT_EQ(persistent_tma_workers(problem(1000, 1000, 1000, false), sk, 132), 132);  // 32 tiles of 16 K blocks
  EXPECT_EQ(persistent_tma_workers(problem(1000, 1000, 1000, false), sk, 66), 66);    // an SM carveout's grid
  // That grid's workspace holds every tile's segments (persistent_tma_workspace_bytes takes the most over grids of
  // 1 to every SM's clusters).
  const StreamKLayout l = stream_k_layout(112, 128, 132);
  EXPECT_EQ(l.split_tiles, 112);
  const StreamKWorkspace ws = stream_k_workspace(decode, config("persistent_tma_64x256x64_s5_c1_g8_tmastore_sk"), 132);
  EXPECT_EQ(ws.seg_stride, l.max_segments);
  EXPECT_GE(ws.partials_bytes, std::size_t(l.split_tiles * l.max_segments) * 64 * 256 * 4);
}

TEST(PersistentTmaHost, StreamKCutsTilesAlikeWhereASegmentFitsEachWorker) {
  // 2304 x 2304 x 8192 on 128x256: 162 tiles of 128 K blocks on 132 workers, 30 shared out. Cut alike: 4 segments of
  // 32 K blocks a tile (120 workers), against the even cut's 30 a worker running across tiles.
  StreamKLayout l = stream_k_layout(162, 128, 132);
  EXPECT_EQ(l.split_tiles, 30);
  EXPECT_EQ(l.per_worker, 32);
  EXPECT_EQ(l.max_segments, 5);
  // 4224^3: 561 tiles of 66, 33 shared out: 4 segments of 17 (the even cut's own length).
  l = stream_k_layout(561, 66, 132);
  EXPECT_EQ(l.split_tiles, 33);
  EXPECT_EQ(l.per_worker, 17);
  // 2560^3: 200 tiles of 40, 68 shared out: two segments a tile need 136 workers, so the even cut (21).
  l = stream_k_layout(200, 40, 132);
  EXPECT_EQ(l.split_tiles, 68);
  EXPECT_EQ(l.per_worker, 21);
  // 6144 x 1536 x 4096: 288 tiles of 64, 24 shared out: 5 segments of 13 (even 12: within 6/5).
  l = stream_k_layout(288, 64, 132);
  EXPECT_EQ(l.per_worker, 13);
  // The decode rows' 112 tiles on 132: one segment a worker is all that fits; the even cut.
  EXPECT_EQ(stream_k_layout(112, 128, 132).per_worker, 109);
}

// scaled_mm problems: fp8 A (M x K row-major) and B (K x N column-major), bf16 out, tensorwise scales.
GemmProblem fp8_problem(int64_t m, int64_t n, int64_t k, bool fast_accum) {
  GemmProblem p = problem(m, n, k, true);
  p.op = Op::scaled_mm;
  p.a.dtype = p.b.dtype = DType::e4m3;
  p.a.row_stride = k;
  p.b.col_stride = k;
  p.scale_kind = ScaleKind::tensorwise;
  p.fast_accum = fast_accum;
  return p;
}

TEST(PersistentTmaHost, Fp8ConfigsTakeScaledMmAndTwoLevelAccumulationNeedsPromotion) {
  int fp8 = 0, two_level = 0;
  for (const auto& c : persistent_tma_configs()) {
    const std::string fast = persistent_tma_can_implement(fp8_problem(4096, 4096, 4096, true), c, hopper());
    const std::string slow = persistent_tma_can_implement(fp8_problem(4096, 4096, 4096, false), c, hopper());
    const std::string mm = persistent_tma_can_implement(problem(4096, 4096, 4096, true), c, hopper());
    if (c.in_bytes == 2) {
      EXPECT_EQ(fast, "scaled_mm takes the fp8 configs") << c.name();
      EXPECT_EQ(mm, "") << c.name();
      continue;
    }
    ++fp8;
    EXPECT_EQ(c.name().rfind("persistent_tma_fp8_", 0), 0u) << c.name();
    EXPECT_EQ(mm, "an fp8 config takes scaled_mm with fp8 inputs only") << c.name();
    EXPECT_EQ(fast, "") << c.name();  // any fp8 config may run fast accumulation
    if (c.promote > 0) {
      ++two_level;
      EXPECT_EQ(slow, "") << c.name();
      EXPECT_NE(c.name().find("_p"), std::string::npos) << c.name();
    } else {
      EXPECT_EQ(slow, "use_fast_accum = false needs two-level accumulation (a config with promote > 0)") << c.name();
    }
  }
  EXPECT_GE(fp8, 4);
  EXPECT_GE(two_level, 2);
  // Two-level on the 128x256 tile: column groups of 128; the group rule is checked.
  const TmaConfig* grouped = nullptr;
  for (const auto& c : persistent_tma_configs())
    if (c.promote_n == 128 && c.store_tma && c.cluster_m == 1) grouped = &c;
  ASSERT_NE(grouped, nullptr);
  EXPECT_EQ(grouped->name(), "persistent_tma_fp8_128x256x128_s4_c2_g8_tmastore_p1n128");
  EXPECT_EQ(persistent_tma_can_implement(fp8_problem(4096, 4096, 4096, false), *grouped, hopper()), "");
  TmaConfig uneven = *grouped;
  uneven.promote_n = 96;
  EXPECT_EQ(persistent_tma_can_implement(fp8_problem(4096, 4096, 4096, false), uneven, hopper()),
            "promotion column groups need promote 1, rows split between consumers and groups of whole 8-column "
            "blocks dividing block N (64-column chunks with the TMA store)");
  // The fp8 variants compile K-major only and name their input types.
  int e4m3 = 0;
  for (const auto& s : persistent_tma_all_specs())
    if (s.name.find("_e4m3_rc_") != std::string::npos) ++e4m3;
  EXPECT_GE(e4m3, fp8);
}

TEST(PersistentTmaHost, ClusterSplitKTakesWholeTilesOfTwoKBlocksOrMore) {
  // The cluster split-K configs (two CTAs on a tile, each over half of its K blocks): named _ks2, launched in clusters
  // of two, with one consumer's rows of fp32 sums beside the ring; refused with the rule named where a half would have
  // no K block, for grouped_mm, and on a table row that asks for multicast with it.
  int found = 0;
  for (const auto& c : persistent_tma_configs()) {
    if (c.split_k == 1) continue;
    ++found;
    EXPECT_NE(c.name().find("_ks2"), std::string::npos) << c.name();
    EXPECT_EQ(c.cluster_size(), 2) << c.name();
    TmaConfig twin = c;
    twin.split_k = 1;
    EXPECT_EQ(c.smem_bytes() - twin.smem_bytes(), std::size_t(c.bm / c.consumers) * c.bn * 4) << c.name();
    EXPECT_LE(c.smem_bytes(), std::size_t{232448}) << c.name();
    EXPECT_EQ(persistent_tma_can_implement(problem(1536, 1536, 1536, false), c, hopper()), "") << c.name();
    EXPECT_EQ(persistent_tma_can_implement(problem(1536, 1536, 64, false), c, hopper()),
              "cluster split-K needs K of two K blocks or more (K > 64)");
    EXPECT_EQ(persistent_tma_can_implement(problem(1536, 1536, 72, false), c, hopper()), "") << c.name();
    GemmProblem g = problem(1536, 1536, 1536, false);
    g.op = Op::grouped_mm;
    g.batch = 4;
    g.b.batch_stride = 1536 * 1536;
    EXPECT_EQ(persistent_tma_can_implement(g, c, hopper()), "cluster split-K configs take 16-bit mm, bmm and addmm");
    TmaConfig multicast = c;
    multicast.cluster_m = 2;
    EXPECT_NE(persistent_tma_can_implement(problem(1536, 1536, 1536, false), multicast, hopper()).find("no multicast"),
              std::string::npos);
  }
  EXPECT_EQ(found, 1);
  // Kernels: every layout, dtype and output like any TMA-store config, once with plain stores, never grouped.
  int specs = 0;
  for (const auto& s : persistent_tma_all_specs())
    if (s.name.find("_ks2") != std::string::npos) {
      ++specs;
      EXPECT_EQ(s.name.find("_grouped"), std::string::npos) << s.name;
      EXPECT_NE(s.extra_source.find("kClusterK = 2;"), std::string::npos) << s.name;  // the kernel splits K
    }
  EXPECT_EQ(specs, 2 * 4 * 2 + 1);
}

TEST(PersistentTmaHost, ClusterSplitKScoresHalfARoundWhereTilesLeaveSmsIdle) {
  // 1000^3 is 64 tiles of 128x128: one round on 64 of 132 SMs whole, one round of half the K blocks on 128 split
  // (plus the exchange). 1536^3 is 144 tiles: three rounds of halves on 66 clusters against two whole rounds.
  // (Against every whole-tile config, the prescreen: Tuner.ClusterSplitKIsTimedWhereTilesLeaveSmsIdle.)
  const auto config = [](int split_k) {
    for (const auto& c : persistent_tma_configs())
      if (c.bm == 128 && c.bn == 128 && c.bk == 64 && c.split_k == split_k && c.store_tma && c.cluster_m == 1 &&
          !c.stream_k && !c.ping_pong)
        return &c;
    return static_cast<const TmaConfig*>(nullptr);
  };
  const TmaConfig* ks = config(2);
  const TmaConfig* whole = config(1);
  ASSERT_NE(ks, nullptr);
  ASSERT_NE(whole, nullptr);
  const auto ratio = [&](const GemmProblem& p) {
    return persistent_tma_score(p, *ks, hopper(), 0) / persistent_tma_score(p, *whole, hopper(), 0);
  };
  EXPECT_GT(ratio(problem(1000, 1000, 1000, false)), 1.5);
  EXPECT_LT(ratio(problem(1000, 1000, 1000, false)), 1.9);
  EXPECT_GT(ratio(problem(1536, 1536, 1536, false)), 1.0);
  EXPECT_LT(ratio(problem(1536, 1536, 1536, false)), 1.3);
}

TEST(PersistentTmaHost, RooflineIsTheLongerOfComputeAndStreamedBytes) {
  const runtime::DeviceInfo d = hopper();
  const TmaConfig& big = config("persistent_tma_128x256x64_s4_c2_g8_tmastore");
  const TmaConfig& small = config("persistent_tma_64x128x64_s8_c1_g8_tmastore");
  // 4096^3 is compute-bound: 512 tiles of 128x256 are four rounds on 132 SMs, each tile 2 x 128 x 256 x 4096 FLOP
  // at the tile's weight of kGemmFlopsPerS / 132 (its operands hit L2: no latency bound).
  const double tile_s = 2.0 * 128 * 256 * 4096 / (big.weight * kGemmFlopsPerS / 132);
  EXPECT_NEAR(persistent_tma_roofline_s(problem(4096, 4096, 4096, false), big, d, 0), 4 * tile_s, 1e-3 * tile_s);
  // A memory-bound round streams at the card's rate, or at its clusters' bytes in flight over the loads' latency
  // where that is less (the ring holds `stages` K blocks, each bk / K of a tile's bytes; the latency from
  // kLoadLatencyIdleS to kLoadLatencyS as the share of SMs streaming grows).
  const auto stream_s = [](double round_bytes, double ctas, double in_flight) {
    const double latency = kLoadLatencyIdleS + (kLoadLatencyS - kLoadLatencyIdleS) * std::min(1.0, ctas / 132);
    return round_bytes / std::min(kStreamBytesPerS, ctas * in_flight / latency);
  };
  const auto bytes = [](int64_t m, int64_t n, int64_t k) { return 2.0 * (m * k + k * n + m * n); };
  // 1 x 28672 x 8192 streams B: 224 tiles of 64x128 (8 stages of 64 of the 8192 K: 131 KB in flight a CTA), a full
  // round of 132 at the card's rate (132 x 131 KB over 4 us is more), then a round of 92: the longer of a tile's
  // compute (a weight of 0.5) and its share streamed at 92 x 131 KB over 3.2 us.
  const double small_tile_s = 2.0 * 64 * 128 * 8192 / (small.weight * kGemmFlopsPerS / 132);
  const double tile_bytes = bytes(1, 28672, 8192) / 224, small_in_flight = 8 * 64.0 / 8192 * tile_bytes;
  const double round_bytes_s = 132 * tile_bytes / kStreamBytesPerS;
  ASSERT_GT(132 * small_in_flight / kLoadLatencyS, kStreamBytesPerS);  // the card's rate binds the full round
  ASSERT_GT(round_bytes_s, small_tile_s);
  EXPECT_NEAR(persistent_tma_roofline_s(problem(1, 28672, 8192, false), small, d, 0),
              round_bytes_s + std::max(small_tile_s, stream_s(92 * tile_bytes, 92, small_in_flight)),
              1e-6 * round_bytes_s);
  // 1 x 4096 x 4096 on 128x256: one round of 16 tiles, which takes one tile's compute (its 128 rows, one of them
  // real), longer than the 32 MB take to stream on 16 CTAs.
  const double short_tile_s = 2.0 * 128 * 256 * 4096 / (big.weight * kGemmFlopsPerS / 132);
  const double short_in_flight = 4 * 64.0 / 4096 * bytes(1, 4096, 4096) / 16;
  ASSERT_GT(short_tile_s, stream_s(bytes(1, 4096, 4096), 16, short_in_flight));
  EXPECT_NEAR(persistent_tma_roofline_s(problem(1, 4096, 4096, false), big, d, 0), short_tile_s, 1e-3 * short_tile_s);
  // Stream-K: 1 x 4096 x 14336 on 128x128 is 32 tiles, one short round, which stream-K shares out over 128 of the 132
  // SMs (each tile cut alike into 4 segments of 56 of its 224 K blocks; the even cut's 55 is within 6/5) while the
  // 117 MB stream on all of them (98 KB in flight each: under the card's rate); then the split tiles' fp32 partial
  // sums (32 x 224 / 56 + 32 units of 128 x 128, written and read at 3 TB/s).
  const TmaConfig& sk = config("persistent_tma_128x128x64_s6_c2_g8_tmastore_sk");
  const double sk_tile_s = 2.0 * 128 * 128 * 14336 / (sk.weight * kGemmFlopsPerS / 132);
  const double sk_in_flight = 6 * 64.0 / 14336 * bytes(1, 4096, 14336) / 32;
  ASSERT_LT(132 * sk_in_flight / kLoadLatencyS, kStreamBytesPerS);
  const double sk_share_s = std::max(sk_tile_s * 56 / 224, stream_s(bytes(1, 4096, 14336), 132, sk_in_flight));
  const double sk_partials_s = (32.0 * 224 / 56 + 32) * 128 * 128 * 8 / 3e12;
  EXPECT_NEAR(persistent_tma_roofline_s(problem(1, 4096, 14336, false), sk, d, 0), sk_share_s + sk_partials_s,
              1e-6 * sk_share_s);
  // ... where the same tile whole computes for all of K.
  const TmaConfig& whole = config("persistent_tma_128x128x64_s6_c2_g8_tmastore");
  EXPECT_NEAR(persistent_tma_roofline_s(problem(1, 4096, 14336, false), whole, d, 0),
              2.0 * 128 * 128 * 14336 / (whole.weight * kGemmFlopsPerS / 132), 1e-6 * sk_tile_s);
  // grouped_mm (64 experts, 64 decode tokens, 2048 x 7168): B of the experts the representative routing reaches
  // only (fewer than the 64), 16 tiles of 64x128 each: full rounds that stream their share, and a last short one.
  GemmProblem g = problem(64, 2048, 7168, false);
  g.op = Op::grouped_mm;
  g.batch = 64;
  g.b.batch_stride = int64_t{7168} * 2048;
  int64_t start = 0, reached = 0;
  for (int32_t end : tuning_group_ends(64, 64)) {
    reached += end > start;
    start = end;
  }
  ASSERT_LT(reached, 64);
  const double g_bytes = 2.0 * (64.0 * 7168 + reached * 7168.0 * 2048 + 64.0 * 2048);
  const double g_tiles = 16.0 * reached, g_full = std::floor(g_tiles / 132), g_rest = g_tiles - 132 * g_full;
  const double g_tile_s = 2.0 * 64 * 128 * 7168 / (small.weight * kGemmFlopsPerS / 132);
  const double g_in_flight = 8 * 64.0 / 7168 * g_bytes / g_tiles;
  const double g_round_s = stream_s(g_bytes * 132 / g_tiles, 132, g_in_flight);
  ASSERT_GT(g_round_s, g_tile_s);
  EXPECT_NEAR(persistent_tma_roofline_s(g, small, d, 0),
              g_full * g_round_s + std::max(g_tile_s, stream_s(g_bytes * g_rest / g_tiles, g_rest, g_in_flight)),
              1e-6 * g_round_s);
}

}  // namespace
}  // namespace tmagemm::choices
