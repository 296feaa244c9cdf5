// benchmark_test.cpp — the tuner's winner rule (pick_winner, tie_margin in src/tune/benchmark.cpp): the fastest
// choice wins unless a cuBLASLt choice is within the margin of it; among cuBLASLt choices within the margin of the
// fastest choice, cuBLASLt's own first pick wins (never more than the margin behind the fastest); memory-bound problems get the wider margin; the AUTOTUNE table says
// why a pick that is not the fastest row won.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "choices/choice.hpp"
#include "problem/problem.hpp"
#include "tune/benchmark.hpp"

namespace tmagemm::tune {
namespace {

constexpr double m = kTieMarginComputeBound;

Entry ours(double ms) { return {ms, false, -1}; }
Entry lt(double ms, int rank) { return {ms, true, rank}; }

TEST(PickWinner, AnotherBackendWinsBeyondTheMargin) {
  EXPECT_EQ(pick_winner({ours(1.0), lt(1.0 * (1 + m) * 1.001, 0)}, m), 0u);
}

TEST(PickWinner, CublasLtWithinTheMarginTakesTheTie) {
  // The fastest cuBLASLt choice is within the margin of ours: it wins (it is cuBLASLt's first pick here).
  EXPECT_EQ(pick_winner({ours(1.0), ours(1.001), lt(1.0 * (1 + m) * 0.999, 0), lt(1.1, 1)}, m), 2u);
}

TEST(PickWinner, AmongCublasLtNearTiesItsOwnFirstPickWins) {
  // algo3 is fastest, algo0 within the margin of it: algo0. algo1 is faster than algo0 but ranked after it.
  EXPECT_EQ(pick_winner({lt(1.0, 3), lt(1.002, 1), lt(1.004, 0), lt(1.2, 2)}, m), 2u);
  // algo0 beyond the margin: the fastest within it (by rank) wins.
  EXPECT_EQ(pick_winner({lt(1.0, 3), lt(1.002, 1), lt(1.0 * (1 + m) * 1.01, 0)}, m), 1u);
  // The near-tie is judged against the fastest cuBLASLt choice, not chained along the list.
  EXPECT_EQ(pick_winner({lt(1.0, 2), lt(1.0 + 0.9 * m, 1), lt(1.0 + 1.8 * m, 0)}, m), 1u);
}

TEST(PickWinner, NeverMoreThanTheMarginBehindTheFastest) {
  // Ours fastest, cuBLASLt's rank 3 within the margin of it, its rank 0 within the margin of rank 3 but not of ours:
  // rank 3 (rank 0 would be two margins behind the fastest).
  EXPECT_EQ(pick_winner({ours(1.0), lt(1.0 + 0.5 * m, 3), lt(1.0 + 0.8 * m, 2), lt(1.0 + 1.2 * m, 0)}, m), 2u);
  EXPECT_EQ(pick_winner({ours(1.0), lt(1.0 + 0.5 * m, 3), lt(1.0 + 1.2 * m, 0)}, m), 1u);
  // Every rank within the margin of ours: the first pick.
  EXPECT_EQ(pick_winner({ours(1.0), lt(1.0 + 0.5 * m, 3), lt(1.0 + 0.9 * m, 0)}, m), 2u);
}

TEST(PickWinner, WithoutCublasLtTheFastestWins) {
  EXPECT_EQ(pick_winner({ours(1.0), ours(1.0)}, m), 0u);
  EXPECT_EQ(pick_winner({ours(1.0)}, m), 0u);
  EXPECT_EQ(pick_winner({ours(1.0), lt(std::numeric_limits<double>::infinity(), 0)}, m), 0u);
}

// The flush-hold rule (flush_ranked_ms): a choice more than kFlushHold behind the fastest cuBLASLt choice under either
// flush ranks behind cuBLASLt's near-tie band, however far ahead it is under the other; one that holds keeps its
// geometric mean.
TEST(FlushRankedMs, AChoiceBehindCublasLtUnderOneFlushRanksAfterIt) {
  const double mb = kTieMarginMemoryBound;
  // The forty-third session's 64 x 4096 x 14336: ours 10 % ahead after a write flush, 3.6 % behind after a read.
  const std::vector<FlushTimes> t = {{0.100, 1.036 * 0.110, false}, {0.110, 0.110, true}, {0.112, 0.111, true}};
  const std::vector<double> ms = flush_ranked_ms(t, mb);
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_NEAR(ms[1], 0.110, 1e-12);
  EXPECT_NEAR(ms[2], std::sqrt(0.112 * 0.111), 1e-12);
  EXPECT_NEAR(ms[0], 0.110 * (1 + 2 * mb), 1e-12);  // its geometric mean alone (0.1067) would win
  // Ranked that way, the winner is cuBLASLt's.
  std::vector<Entry> e = {lt(ms[1], 0), lt(ms[2], 1), ours(ms[0])};
  EXPECT_EQ(pick_winner(e, mb), 0u);
}

TEST(FlushRankedMs, AChoiceThatHoldsUnderBothKeepsItsMean) {
  const double mb = kTieMarginMemoryBound;
  // Within kFlushHold under the read flush, far ahead under the write flush: its geometric mean, and it wins.
  const double r = 0.110 * (1 + 0.9 * kFlushHold);
  const std::vector<double> ms = flush_ranked_ms({{0.090, r, false}, {0.110, 0.110, true}}, mb);
  EXPECT_NEAR(ms[0], std::sqrt(0.090 * r), 1e-12);
  EXPECT_EQ(pick_winner({ours(ms[0]), lt(ms[1], 0)}, mb), 0u);
}

TEST(FlushRankedMs, TheReferenceIsTheFastestCublasLtChoiceUnderEachFlush) {
  const double mb = kTieMarginMemoryBound;
  // Ours beats both cuBLASLt choices' means, but algo B is 5 % faster than ours after a read flush: ranked after B.
  const std::vector<double> ms =
      flush_ranked_ms({{0.100, 0.100, false}, {0.099, 0.120, true}, {0.120, 0.095, true}}, mb);
  EXPECT_NEAR(ms[0], std::sqrt(0.120 * 0.095) * (1 + 2 * mb), 1e-12);
  // 1 % behind algo A after a write flush only (within kFlushHold): its mean.
  const std::vector<double> near =
      flush_ranked_ms({{0.100, 0.100, false}, {0.099, 0.120, true}, {0.120, 0.100, true}}, mb);
  EXPECT_NEAR(near[0], 0.100, 1e-12);
}

// A choice that holds under both flushes and is more than the margin ahead under one ranks ahead of cuBLASLt's near-tie
// band, however close its geometric mean: the clear choices scaled alike, the fastest to the fastest cuBLASLt mean /
// (1 + 2 margin). The forty-ninth session's H200 tuning of 128 x 8192 x 8192 (rc): ours 6 % ahead after a write flush,
// 1.8 % behind after a read; its mean 2.2 % ahead (inside the 3 % band: cuBLASLt ran the row).
TEST(FlushRankedMs, AChoiceClearlyAheadUnderOneFlushRanksAheadOfTheNearTies) {
  const double mb = kTieMarginMemoryBound;
  const std::vector<FlushTimes> t = {{0.0436, 0.0390, false},  // ours
                                     {0.0464, 0.0383, true},   // cublaslt_algo0
                                     {0.0479, 0.0394, true},   // cublaslt_algo2
                                     {0.0440, 0.0389, false}};  // ours, also clear, slower than the first
  std::vector<Entry> plain = {ours(std::sqrt(0.0436 * 0.0390)), lt(std::sqrt(0.0464 * 0.0383), 0)};
  EXPECT_EQ(pick_winner(plain, mb), 1u) << "by the means alone, a near-tie: cuBLASLt's";
  const std::vector<double> ms = flush_ranked_ms(t, mb);
  const double lib_geo = std::sqrt(0.0464 * 0.0383);
  EXPECT_NEAR(ms[0], lib_geo / (1 + 2 * mb), 1e-12);
  EXPECT_NEAR(ms[1], lib_geo, 1e-12);
  EXPECT_NEAR(ms[3] / ms[0], std::sqrt(0.0440 * 0.0389) / std::sqrt(0.0436 * 0.0390), 1e-12) << "order kept";
  std::vector<Entry> e = {ours(ms[0]), ours(ms[3]), lt(ms[1], 0), lt(ms[2], 2)};
  EXPECT_EQ(pick_winner(e, mb), 0u);
  // Ahead by less than the margin under both flushes: its mean, and the near-tie stays cuBLASLt's.
  const std::vector<double> near = flush_ranked_ms({{0.0455, 0.0380, false}, {0.0464, 0.0383, true}}, mb);
  EXPECT_NEAR(near[0], std::sqrt(0.0455 * 0.0380), 1e-12);
  EXPECT_EQ(pick_winner({ours(near[0]), lt(near[1], 0)}, mb), 1u);
  // Clear under one flush but more than kFlushHold behind under the other: held, not clear.
  const std::vector<double> held = flush_ranked_ms({{0.0400, 0.0395, false}, {0.0464, 0.0383, true}}, mb);
  EXPECT_NEAR(held[0], lib_geo * (1 + 2 * mb), 1e-12);
}

TEST(FlushRankedMs, WithoutCublasLtTheMeansStand) {
  const std::vector<double> ms =
      flush_ranked_ms({{0.100, 0.200, false}, {0.150, 0.150, false}}, kTieMarginMemoryBound);
  EXPECT_NEAR(ms[0], std::sqrt(0.02), 1e-12);
  EXPECT_NEAR(ms[1], 0.150, 1e-12);
}

GemmProblem problem(int64_t mm, int64_t n, int64_t k) {
  GemmProblem p;
  p.m = mm;
  p.n = n;
  p.k = k;
  p.batch = 1;
  p.a.dtype = p.b.dtype = p.out.dtype = DType::bf16;
  return p;
}

TEST(TieMargin, MemoryBoundProblemsGetTheWiderMargin) {
  EXPECT_EQ(tie_margin(problem(16, 28672, 8192)), kTieMarginMemoryBound);  // decode: ~16 FLOP/byte
  EXPECT_EQ(tie_margin(problem(128, 8192, 8192)), kTieMarginMemoryBound);  // ~120 FLOP/byte
  EXPECT_EQ(tie_margin(problem(512, 14336, 4096)), kTieMarginComputeBound);
  EXPECT_EQ(tie_margin(problem(4096, 4096, 4096)), kTieMarginComputeBound);
  EXPECT_EQ(tie_margin(problem(1000, 1000, 1000)), kTieMarginComputeBound);
}

// The problems the tuner times after both kinds of L2 flush are the ones with the wider margin.
TEST(TieMargin, BothFlushesExactlyWhereMemoryBound) {
  for (const auto& [m, n, k] : {std::tuple{1, 4096, 4096}, {64, 28672, 8192}, {128, 8192, 8192}, {512, 14336, 4096},
                                {4096, 4096, 4096}})
    EXPECT_EQ(memory_bound(problem(m, n, k)), tie_margin(problem(m, n, k)) == kTieMarginMemoryBound) << m;
  EXPECT_TRUE(memory_bound(problem(1, 4096, 4096)));
  EXPECT_FALSE(memory_bound(problem(4096, 4096, 4096)));
}

// grouped_mm moves its total_M rows of A and out once and B's G matrices: MoE rows of few tokens an expert are
// memory-bound however many tokens in all (64 experts x 64 tokens each: 63 FLOP a byte), many tokens an expert are not
// (8 experts x 512 each: 441), and a large grouped problem that is compute-bound takes the sustained final like mm.
TEST(TieMargin, GroupedMmCountsBOnceAGroup) {
  auto grouped = [](int64_t groups, int64_t total_m, int64_t n, int64_t k) {
    GemmProblem p = problem(total_m, n, k);
    p.op = Op::grouped_mm;
    p.batch = groups;
    return p;
  };
  EXPECT_TRUE(memory_bound(grouped(64, 64, 2048, 7168)));      // MoE decode: 1 FLOP a byte
  EXPECT_TRUE(memory_bound(grouped(64, 512, 7168, 2048)));     // 8
  EXPECT_TRUE(memory_bound(grouped(64, 4096, 14336, 4096)));   // 63 (the G problems of total_M rows read 1,792)
  EXPECT_FALSE(memory_bound(grouped(8, 4096, 14336, 4096)));   // 441
  EXPECT_FALSE(memory_bound(grouped(64, 32768, 2048, 7168)));  // 388
  const std::size_t l2 = std::size_t{50} << 20;
  EXPECT_FALSE(sustained_eligible(grouped(64, 4096, 14336, 4096), l2));  // 7.5 GB of B, but memory-bound
  EXPECT_TRUE(sustained_eligible(grouped(8, 32768, 4096, 14336), l2));
  // The same problem as a bmm of G x total_M rows moves G times the A and out bytes: compute-bound.
  GemmProblem b = grouped(64, 4096, 14336, 4096);
  b.op = Op::bmm;
  b.a.batch_stride = 4096 * 4096;
  b.b.batch_stride = 4096 * 14336;
  EXPECT_FALSE(memory_bound(b));
}

// bmm reads an operand broadcast over the batch (batch stride 0) once: 64 x 16 rows against one 4096 x 4096 B is a
// 1024-row GEMM (compute-bound), against 64 different Bs 64 decode problems (memory-bound).
TEST(TieMargin, BmmCountsABroadcastOperandOnce) {
  GemmProblem p = problem(16, 4096, 4096);
  p.op = Op::bmm;
  p.batch = 64;
  p.a.batch_stride = 16 * 4096;
  p.b.batch_stride = 0;
  EXPECT_FALSE(memory_bound(p));
  p.b.batch_stride = 4096 * 4096;
  EXPECT_TRUE(memory_bound(p));
}

// The sustained final: compute-bound problems whose A + B + out exceed L2 (a loop of them cannot keep its operands
// there), never a memory-bound one however large.
TEST(SustainedFinal, ComputeBoundProblemsLargerThanL2) {
  const std::size_t l2 = std::size_t{50} << 20;
  EXPECT_TRUE(sustained_eligible(problem(4096, 4096, 4096), l2));      // 96 MB
  EXPECT_TRUE(sustained_eligible(problem(8192, 28672, 8192), l2));
  EXPECT_FALSE(sustained_eligible(problem(2048, 2048, 2048), l2));     // 24 MB: a loop keeps it in L2
  EXPECT_FALSE(sustained_eligible(problem(1000, 1000, 1000), l2));
  EXPECT_FALSE(sustained_eligible(problem(64, 28672, 8192), l2));      // 470 MB, but memory-bound
  EXPECT_FALSE(sustained_eligible(problem(128, 8192, 8192), l2));
  EXPECT_TRUE(sustained_eligible(problem(2048, 2048, 2048), std::size_t{16} << 20));  // a smaller L2
}

// A choice that only names itself and its library ("cuBLASLt" for cuBLASLt's, "" for ours).
class NamedChoice final : public choices::Choice {
 public:
  NamedChoice(std::string name, const char* library) : name_(std::move(name)), library_(library) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "fake"; }
  const char* library() const override { return library_; }
  std::string can_implement(const GemmProblem&, const runtime::DeviceInfo&) const override { return {}; }
  void precompile(const GemmProblem&, int) const override {}
  void launch(const GemmProblem&, cudaStream_t, const Options&, void*) const override {}

 private:
  std::string name_;
  const char* library_;
};

std::string autotune_table(const Tuned& t) {
  testing::internal::CaptureStderr();
  print_autotune(problem(64, 4096, 4096), t, t.timings.size());
  return testing::internal::GetCapturedStderr();
}

// The AUTOTUNE table shows a sustained finalist's own time beside its (scaled) timing.
TEST(SustainedFinal, AutotuneTableShowsTheSustainedTimes) {
  Tuned t;
  t.timings = {{"persistent_tma_a", 0.5000}, {"persistent_tma_b", 0.5350}};
  t.sustained_ms = {{"persistent_tma_a", 0.5400}, {"persistent_tma_b", 0.5778}};
  t.winner = std::make_shared<NamedChoice>("persistent_tma_a", "");
  testing::internal::CaptureStderr();
  print_autotune(problem(4096, 4096, 4096), t, 2);
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("(sustained 0.5400)"), std::string::npos) << out;
  EXPECT_NE(out.find("(sustained 0.5778)"), std::string::npos) << out;
}

// A shape bucket's pick across its Ms (tuner.cpp confirm_across_bucket) is not a near-tie of cuBLASLt's ranking.
TEST(AutotuneTable, SaysWhyASlowerRowWon) {
  Tuned t;
  t.timings = {{"cublaslt_algo0", 0.0147}, {"skinny_64x64_st12_split2", 0.0152}};
  t.margin = kTieMarginMemoryBound;
  t.winner = std::make_shared<NamedChoice>("skinny_64x64_st12_split2", "");
  t.bucket_pick = true;
  std::string out = autotune_table(t);
  EXPECT_NE(out.find("skinny_64x64_st12_split2"), std::string::npos) << out;
  EXPECT_NE(out.find("<- picked (the best across the bucket's Ms)"), std::string::npos) << out;
  EXPECT_EQ(out.find("near-ties"), std::string::npos) << out;

  t.timings = {{"skinny_64x64_st12_split2", 0.0147}, {"cublaslt_algo0", 0.0150}};
  t.winner = std::make_shared<NamedChoice>("cublaslt_algo0", "cuBLASLt");
  t.bucket_pick = false;
  out = autotune_table(t);
  EXPECT_NE(out.find("<- picked (near-ties, within 3.0 %, go to cuBLASLt's ranking)"), std::string::npos) << out;

  t.timings = {{"cublaslt_algo0", 0.0147}, {"skinny_64x64_st12_split2", 0.0152}};  // the fastest row: no label
  out = autotune_table(t);
  EXPECT_EQ(out.find("<- picked"), std::string::npos) << out;
}

}  // namespace
}  // namespace tmagemm::tune
