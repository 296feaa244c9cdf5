// tuner_test.cpp — the tuner's GPU-free parts: enumeration over every backend, the shared-memory filter, the
// choice-name regex and backend flags, the no_valid_choice message, the heuristic pick (no GPU call), the
// cached_only path through the tuning database, the tuning key, and the choice a call runs in place of one that
// ran out of device memory (choose_instead), and what a failed choice's report forgets (report_failure).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "choices/persistent_tma.hpp"
#include "cpu/test_support.hpp"
#include "tmagemm/error.hpp"
#include "tune/benchmark.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::tune {
namespace {

runtime::DeviceInfo h200() { return test_support::fake_h200(); }

GemmProblem problem(int64_t m, int64_t n, int64_t k) { return test_support::fake_mm_problem(m, n, k); }

class Tuner : public ::testing::Test {
 protected:
  void SetUp() override {
    // A directory per test: the tuner keeps its database connection open by path, and a file removed and created
    // again under the same path would be another file to a new connection.
    static int serial = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("tmagemm-tuner-test-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ::setenv("TMAGEMM_CACHE_DIR", dir_.c_str(), 1);
    forget_in_memory();
  }
  void TearDown() override {
    ::unsetenv("TMAGEMM_CACHE_DIR");
    forget_in_memory();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

// Applicable, or set aside only by the tuner's prescreen (predicted far behind the best config).
bool kept_or_prescreened(const std::string& reason) {
  return reason.empty() || reason.rfind("set aside: predicted", 0) == 0;
}

std::size_t count_applicable(const std::vector<Candidate>& c) {
  std::size_t n = 0;
  for (const auto& x : c) n += x.reason.empty();
  return n;
}

TEST_F(Tuner, EnumeratesEveryBackend) {
  const auto cands = enumerate(problem(4096, 4096, 4096), Options::defaults_only(), h200());
  std::size_t tma = 0, lt = 0;
  for (const auto& c : cands) {
    if (std::string(c.choice->backend()) == "persistent_tma") ++tma;
    if (std::string(c.choice->backend()) == "cublaslt") ++lt;
  }
  EXPECT_EQ(tma, choices::persistent_tma_configs().size());
  EXPECT_GE(lt, 1u);
  // The fp8 configs are enumerated and refuse a bf16 mm with the reason.
  for (const auto& c : cands)
    if (const auto* cfg = choices::persistent_tma_config_of(*c.choice); cfg && cfg->in_bytes == 1)
      EXPECT_EQ(c.reason, "an fp8 config takes scaled_mm with fp8 inputs only") << c.choice->name();
  // Every persistent-TMA config fits an H200 and takes this aligned problem; the direct-store ones are set
  // aside as dominated by their TMA-store twins, and those predicted well behind the best by the prescreen.
  for (const auto& c : cands) {
    const auto* cfg = choices::persistent_tma_config_of(*c.choice);
    if (!cfg || cfg->in_bytes == 1) continue;
    bool has_twin = false;
    for (const auto& t : choices::persistent_tma_configs())
      has_twin |= !cfg->store_tma && t.store_tma && t.bm == cfg->bm && t.bn == cfg->bn && t.bk == cfg->bk &&
                  t.consumers == cfg->consumers && t.cluster_m == cfg->cluster_m && t.cluster_n == cfg->cluster_n &&
                  t.split_n == cfg->split_n && t.in_bytes == cfg->in_bytes && t.promote == cfg->promote;
    if (has_twin)
      EXPECT_NE(c.reason.find("dominated by"), std::string::npos) << c.choice->name() << ": " << c.reason;
    else
      EXPECT_TRUE(kept_or_prescreened(c.reason)) << c.choice->name() << ": " << c.reason;
  }
}

TEST_F(Tuner, PrescreenSetsAsideTilesPredictedFarBehind) {
  const Options o = Options::defaults_only();
  auto reason_of = [&](const GemmProblem& p, const std::string& name) {
    for (const auto& c : enumerate(p, o, h200()))
      if (c.choice->name() == name) return c.reason;
    return std::string("<absent>");
  };
  const std::string small = "persistent_tma_64x128x64_s8_c1_g8_tmastore";
  const std::string big = "persistent_tma_128x256x64_s4_c2_g8_tmastore";
  // 4096^3: a 64x128 tile is predicted at half the throughput of 128x256 (16 waves against 4): set aside.
  EXPECT_NE(reason_of(problem(4096, 4096, 4096), small).find("set aside: predicted 2.00x"), std::string::npos)
      << reason_of(problem(4096, 4096, 4096), small);
  EXPECT_EQ(reason_of(problem(4096, 4096, 4096), big), "");
  // 128 x 8192: 128x256 fills only 32 SMs, so the small tile is the best and the big one is set aside.
  EXPECT_EQ(reason_of(problem(128, 8192, 8192), small), "");
  EXPECT_NE(reason_of(problem(128, 8192, 8192), big).find("set aside: predicted"), std::string::npos);
  // 1000^3 (rows 16 bytes off a sector): the model ranks 128x128 2x1 first, but 64x128 2x1, measured best, stays.
  EXPECT_EQ(reason_of(problem(1000, 1000, 1000), "persistent_tma_64x128x64_s8_c1_g8_cm2_tmastore"), "");
  // The wave-fitting 128x224 tile is kept only where the rule ranks it first: 512 x 14336 (1.94 waves against
  // 128x256's 1.70), not 4096^3.
  const std::string fit = "persistent_tma_128x224x64_s4_c2_g8_tmastore";
  EXPECT_EQ(reason_of(problem(512, 14336, 4096), fit), "");
  EXPECT_NE(reason_of(problem(4096, 4096, 4096), fit).find("wave-fitting tile is kept only where it is predicted best"),
            std::string::npos)
      << reason_of(problem(4096, 4096, 4096), fit);
  // A regex that leaves only the small tile keeps it.
  Options only = o;
  only.choice_regex = "^" + small + "$";
  for (const auto& c : enumerate(problem(4096, 4096, 4096), only, h200()))
    if (c.choice->name() == small) EXPECT_EQ(c.reason, "");
}

TEST_F(Tuner, DatabaseKeyCarriesTheFilters) {
  // choose() stores and explain() reads winners under this key: a tuning restricted by flags or a regex must
  // never be reported (or reused) for a call with other filters.
  const GemmProblem p = problem(3000, 5000, 1000);
  Options o = Options::defaults_only();
  EXPECT_EQ(database_key(p, o, h200()), tuning_key(p, h200()));
  o.cublaslt = false;
  const std::string no_lt = database_key(p, o, h200());
  EXPECT_NE(no_lt, tuning_key(p, h200()));
  o.choice_regex = "cpasync";
  const std::string with_re = database_key(p, o, h200());
  EXPECT_NE(with_re, no_lt);
  EXPECT_NE(with_re.find("cpasync"), std::string::npos) << with_re;
}

TEST_F(Tuner, SharedMemoryFilter) {
  runtime::DeviceInfo small = h200();
  small.smem_per_block_optin = 200 * 1024;
  const auto cands = enumerate(problem(4096, 4096, 4096), Options::defaults_only(), small);
  std::size_t rejected = 0;
  for (const auto& c : cands) {
    const auto* cfg = choices::persistent_tma_config_of(*c.choice);
    if (!cfg || cfg->in_bytes == 1) continue;  // fp8 configs refuse a bf16 mm (Tuner.EnumeratesEveryBackend)
    if (cfg->smem_bytes() > small.smem_per_block_optin) {
      ++rejected;
      EXPECT_NE(c.reason.find("shared memory"), std::string::npos) << c.reason;
    } else {
      EXPECT_TRUE(kept_or_prescreened(c.reason)) << c.choice->name() << ": " << c.reason;
    }
  }
  EXPECT_GT(rejected, 0u);
}

TEST_F(Tuner, RegexAndFlags) {
  Options o = Options::defaults_only();
  o.choice_regex = "_tmastore$";
  for (const auto& c : enumerate(problem(4096, 4096, 4096), o, h200())) {
    const bool match = c.choice->name().find("_tmastore") != std::string::npos &&
                       c.choice->name().rfind("_tmastore") + 9 == c.choice->name().size();
    const bool fp8 = c.choice->name().rfind("persistent_tma_fp8_", 0) == 0;  // refuses a bf16 mm first
    const bool pad = std::string(c.choice->backend()) == "pad_tma";  // refuses an aligned problem first
    if (!match && !fp8 && std::string(c.choice->backend()) == "persistent_tma")
      EXPECT_NE(c.reason.find("choice_regex"), std::string::npos) << c.choice->name();
    if (match && !fp8 && !pad) EXPECT_TRUE(kept_or_prescreened(c.reason)) << c.choice->name() << ": " << c.reason;
  }
  o = Options::defaults_only();
  o.persistent_tma = false;
  for (const auto& c : enumerate(problem(4096, 4096, 4096), o, h200()))
    if (std::string(c.choice->backend()) == "persistent_tma")
      EXPECT_NE(c.reason.find("disabled"), std::string::npos) << c.reason;
}

TEST_F(Tuner, NoValidChoiceListsEveryReason) {
  Options o = Options::defaults_only();
  o.persistent_tma = false;
  o.cublaslt = false;
  o.fallback = false;
  o.tuning = Tuning::heuristic;
  try {
    choose(problem(256, 256, 256), o, h200());
    FAIL() << "expected no_valid_choice";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::no_valid_choice);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("persistent_tma_128x256x64_s4_c2_g8_tmastore: backend persistent_tma disabled"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("cublaslt"), std::string::npos) << msg;
  }
}

TEST_F(Tuner, FallbackTakesWhatTmaCannot) {
  // (21 x 11) @ (11 x 31) f16: rows of 22 and 62 bytes, not 16-byte multiples. With cuBLASLt off, the fallback
  // is the only applicable backend; the persistent-TMA choices say which operand breaks which rule.
  GemmProblem p = problem(21, 31, 11);
  for (Operand* o : {&p.a, &p.b, &p.out}) o->dtype = DType::f16;
  Options o = Options::defaults_only();
  o.cublaslt = false;
  o.tuning = Tuning::heuristic;
  const auto chosen = choose(p, o, h200());
  ASSERT_TRUE(chosen);
  EXPECT_STREQ(chosen->backend(), "fallback");
  bool tma_reason = false;
  for (const auto& c : enumerate(p, o, h200()))
    if (std::string(c.choice->backend()) == "persistent_tma") {
      EXPECT_FALSE(c.reason.empty()) << c.choice->name();
      tma_reason = tma_reason || (c.reason.find("a: ") != std::string::npos && c.reason.find("16") != std::string::npos);
    }
  EXPECT_TRUE(tma_reason);
}

TEST_F(Tuner, FallbackSetAsideOnLargeTmaProblemsOnly) {
  const Options o = Options::defaults_only();
  auto fallback_reasons = [&](const GemmProblem& p) {
    std::vector<std::string> r;
    for (const auto& c : enumerate(p, o, h200()))
      if (std::string(c.choice->backend()) == "fallback") r.push_back(c.reason);
    return r;
  };
  for (const auto& r : fallback_reasons(problem(4096, 4096, 4096))) EXPECT_NE(r.find("set aside"), std::string::npos) << r;
  for (const auto& r : fallback_reasons(problem(256, 256, 256))) EXPECT_EQ(r, "");
  GemmProblem odd = problem(4096, 4096, 4095);  // K odd: A's rows are not 16-byte multiples, TMA refuses
  for (const auto& r : fallback_reasons(odd)) EXPECT_EQ(r, "");
  Options no_tma = o;
  no_tma.persistent_tma = false;
  for (const auto& c : enumerate(problem(4096, 4096, 4096), no_tma, h200()))
    if (std::string(c.choice->backend()) == "fallback") EXPECT_EQ(c.reason, "");
}

TEST_F(Tuner, HeuristicSendsSectorMisalignedRowsToCublasLt) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  // Rows of 2000 and 624 bytes start 16 bytes off a 32-byte sector every other row: TMA loses ~1/3 there, so
  // the rule takes another backend's choice (cuBLASLt on a GPU; here, without one, the fallback: the problem is
  // under 512³, so it is not set aside).
  const auto off = choose(problem(200, 312, 1000), o, h200());
  ASSERT_TRUE(off);
  EXPECT_STRNE(off->backend(), "persistent_tma");
  // Rows of 2016 and 608 bytes: 32-byte aligned though not 128-byte; measured at 0.97 with TMA loads.
  const auto sector = choose(problem(200, 304, 1008), o, h200());
  ASSERT_TRUE(sector);
  EXPECT_STREQ(sector->backend(), "persistent_tma");
}

TEST_F(Tuner, HeuristicTakesClustersWhenBothOperandsAreSectorMisaligned) {
  // 3000x5000x1000: A and B rows (2000 and 10000 bytes) start 16 bytes off a sector every other row. A 2-CTA
  // cluster loads half of B per CTA, so its loads keep up (measured 0.94 of cuBLASLt against 0.77 unclustered).
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  o.cublaslt = false;
  o.fallback = false;
  const auto chosen = choose(problem(3000, 5000, 1000), o, h200());
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->name(), "persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore");
  // Aligned rows: the unclustered tile of the same size (first in the table on a tie).
  EXPECT_EQ(choose(problem(4096, 4096, 4096), o, h200())->name(), "persistent_tma_128x256x64_s4_c2_g8_tmastore");
}

TEST_F(Tuner, TuningKeySeparatesRowAlignmentClasses) {
  // 128-byte, 32-byte and 16-byte row alignment each get their own key (the same extents otherwise).
  GemmProblem p = problem(64, 64, 64);
  auto key_with_ld = [&](int64_t ld) {
    p.a.row_stride = ld;
    return tuning_key(p, h200());
  };
  const std::string k128 = key_with_ld(64), k32 = key_with_ld(80), k16 = key_with_ld(72);
  EXPECT_NE(k128, k32);
  EXPECT_NE(k32, k16);
  EXPECT_NE(k128, k16);
}

TEST_F(Tuner, HeuristicModePicksWithoutAGpu) {
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  const auto big = choose(problem(8192, 8192, 8192), o, h200());
  ASSERT_TRUE(big);
  EXPECT_EQ(big->name(), "persistent_tma_128x256x64_s4_c2_g8_tmastore");
  const auto skinny = choose(problem(128, 8192, 8192), o, h200());
  ASSERT_TRUE(skinny);
  EXPECT_EQ(skinny->name(), "persistent_tma_64x128x64_s8_c1_g8_tmastore");
  // Heuristic mode never writes the tuning database.
  TuningDb db(TuningDb::default_path());
  EXPECT_EQ(db.size(), 0u);
}

TEST_F(Tuner, CachedOnlyUsesTheDatabaseThenTheHeuristic) {
  const GemmProblem p = problem(4096, 4096, 4096);
  Options o = Options::defaults_only();
  o.tuning = Tuning::cached_only;
  EXPECT_EQ(choose(p, o, h200())->name(), "persistent_tma_128x256x64_s4_c2_g8_tmastore");  // heuristic
  {
    TuningDb db(TuningDb::default_path());
    db.put(tuning_key(p, h200()), TuningRecord{"persistent_tma_128x128x64_s6_c2_g8_tmastore",
                                               {{"persistent_tma_128x128x64_s6_c2_g8_tmastore", 1.0}},
                                               "2026-11-29T00:00:00Z"});
  }
  forget_in_memory();
  EXPECT_EQ(choose(p, o, h200())->name(), "persistent_tma_128x128x64_s6_c2_g8_tmastore");
}

TEST_F(Tuner, TheBucketsLargestMRunsItsOwnFastest) {
  // One record for the bucket 3585..4096 (tuned on M = 4096): its winner serves the bucket, but M = 4096 itself runs
  // the choice timed more than the margin faster there; M = 3600 runs the bucket's winner.
  const std::string pick = "persistent_tma_128x128x64_s6_c2_g8_tmastore";
  const std::string top = "persistent_tma_128x256x64_s4_c2_g8_tmastore";
  Options o = Options::defaults_only();
  o.tuning = Tuning::cached_only;
  {
    TuningDb db(TuningDb::default_path());
    db.put(tuning_key(problem(4096, 4096, 4096), h200()),
           TuningRecord{pick, {{top, 0.90}, {pick, 1.0}}, "2026-12-02T00:00:00Z"});
  }
  EXPECT_EQ(tuning_key(problem(3600, 4096, 4096), h200()), tuning_key(problem(4096, 4096, 4096), h200()));
  forget_in_memory();
  EXPECT_EQ(choose(problem(4096, 4096, 4096), o, h200())->name(), top);
  EXPECT_EQ(choose(problem(3600, 4096, 4096), o, h200())->name(), pick);  // held in memory since the call above
  forget_in_memory();
  EXPECT_EQ(choose(problem(3600, 4096, 4096), o, h200())->name(), pick);  // from the database
  EXPECT_EQ(choose(problem(4096, 4096, 4096), o, h200())->name(), top);   // held in memory
  // Whatever the gap: the largest M runs what an exact tuning of it would pick.
  {
    TuningDb db(TuningDb::default_path());
    db.put(tuning_key(problem(4096, 4096, 4096), h200()),
           TuningRecord{pick, {{top, 0.997}, {pick, 1.0}}, "2026-12-02T00:00:00Z"});
  }
  forget_in_memory();
  EXPECT_EQ(choose(problem(4096, 4096, 4096), o, h200())->name(), top);
  EXPECT_EQ(choose(problem(3600, 4096, 4096), o, h200())->name(), pick);
  // Exact keys hold one M each: the record's winner.
  Options exact = o;
  exact.m_buckets = false;
  {
    TuningDb db(TuningDb::default_path());
    db.put(database_key(problem(4096, 4096, 4096), exact, h200()),
           TuningRecord{pick, {{top, 0.90}, {pick, 1.0}}, "2026-12-02T00:00:00Z"});
  }
  forget_in_memory();
  EXPECT_EQ(choose(problem(4096, 4096, 4096), exact, h200())->name(), pick);
}

TEST_F(Tuner, KeyNamesDeviceShapeTypesLayoutsAndAlignment) {
  GemmProblem p = problem(4096, 14336, 4096);
  const std::string k1 = tuning_key(p, h200());
  EXPECT_NE(k1.find("NVIDIA H200|132sm|cc90"), std::string::npos) << k1;
  EXPECT_NE(k1.find("4096x14336x4096x1"), std::string::npos) << k1;
  EXPECT_NE(k1.find("bf16.bf16->bf16"), std::string::npos) << k1;
  p.a.data = reinterpret_cast<const void*>(0x7f0000000002);  // misaligned base: another alignment class
  EXPECT_NE(tuning_key(p, h200()), k1);
}

}  // namespace
}  // namespace tmagemm::tune

namespace tmagemm::tune {
namespace {

// The accuracy bound (benchmark.hpp): mm's K term is negligible beside a 16-bit rounding; scaled_mm's fp8
// accumulation term grows with K under use_fast_accum and stays one run's worth with two-level accumulation.
TEST(AccuracyBound, Fp8AccumulationTerms) {
  GemmProblem mm = test_support::fake_mm_problem(256, 256, 16384);
  const double floor = 1.6e-3, samples = 2048;
  const double mm_bound = accuracy_bound(mm, floor, false, samples);
  EXPECT_NEAR(mm_bound, 1.2 * floor, 1e-4);
  GemmProblem fp8 = mm;
  fp8.op = Op::scaled_mm;
  fp8.a.dtype = fp8.b.dtype = DType::e4m3;
  fp8.fast_accum = false;
  const double slow = accuracy_bound(fp8, floor, false, samples);
  EXPECT_GT(slow, mm_bound);
  EXPECT_LT(slow, 1.15 * mm_bound);  // beside a bf16 rounding, one run's error adds little (1.12x)
  fp8.k = 1024;
  EXPECT_DOUBLE_EQ(accuracy_bound(fp8, floor, false, samples), slow);  // independent of K
  fp8.fast_accum = true;
  const double fast_1k = accuracy_bound(fp8, floor, false, samples);
  fp8.k = 16384;
  const double fast_16k = accuracy_bound(fp8, floor, false, samples);
  EXPECT_GT(fast_16k, 10 * fast_1k / 2);
  EXPECT_GT(fast_16k, slow);
}

}  // namespace
}  // namespace tmagemm::tune

namespace tmagemm::tune {
namespace {

// grouped_mm as the tuner sees it: a (total_M, K), G matrices of b, 64-row-aligned fake pointers.
GemmProblem grouped_problem(int64_t groups, int64_t total_m, int64_t n, int64_t k) {
  GemmProblem p = problem(total_m, n, k);
  p.op = Op::grouped_mm;
  p.batch = groups;
  p.b.batch_stride = k * n;
  p.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x7f3000000000});
  return p;
}

TEST_F(Tuner, GroupedKeyHoldsTheShapeClassNotTheRows) {
  // total M rounded up to a power of two: 3000..4096 share a key, 4097 is the next class; G, N, K stay exact.
  const std::string k4096 = tuning_key(grouped_problem(8, 4096, 512, 256), h200());
  EXPECT_EQ(tuning_key(grouped_problem(8, 3000, 512, 256), h200()), k4096);
  EXPECT_NE(tuning_key(grouped_problem(8, 4097, 512, 256), h200()), k4096);
  EXPECT_NE(tuning_key(grouped_problem(16, 4096, 512, 256), h200()), k4096);
  EXPECT_NE(tuning_key(grouped_problem(8, 4096, 512, 512), h200()), k4096);
  EXPECT_NE(k4096.find("grouped_mm"), std::string::npos) << k4096;
  // mm's rule is finer (quarter octaves above 64 rows): 3000 (2561..3072) and 4096 (3585..4096) are two buckets.
  EXPECT_NE(tuning_key(problem(3000, 512, 256), h200()), tuning_key(problem(4096, 512, 256), h200()));
}

TEST_F(Tuner, GroupedRunsOnPersistentConfigsOnly) {
  // grouped_mm runs on the 16-bit persistent TMA configs, TMA-store ones included (a fragment that crosses its group's
  // end is stored with plain stores); their direct-store twins are dominated, so the heuristic picks a TMA-store one.
  const auto cands = enumerate(grouped_problem(64, 8192, 2048, 1024), Options::defaults_only(), h200());
  std::size_t applicable = 0, tma_store = 0;
  for (const auto& c : cands) {
    const std::string& name = c.choice->name();
    if (!c.reason.empty()) continue;
    EXPECT_EQ(name.rfind("persistent_tma_", 0), 0u) << name << " took grouped_mm";
    EXPECT_EQ(name.find("fp8"), std::string::npos) << name;
    ++applicable;
    tma_store += name.find("tmastore") != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(applicable, 2u);
  EXPECT_GE(tma_store, 2u);
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  const auto chosen = choose(grouped_problem(64, 8192, 2048, 1024), o, h200());
  ASSERT_TRUE(chosen);
  EXPECT_NE(chosen->name().find("tmastore"), std::string::npos) << chosen->name();
  EXPECT_GT(count_applicable(cands), 0u);
  EXPECT_EQ(enumerate(grouped_problem(257, 8192, 2048, 1024), Options::defaults_only(), h200()).size(), cands.size());
  for (const auto& c : enumerate(grouped_problem(257, 8192, 2048, 1024), Options::defaults_only(), h200()))
    EXPECT_FALSE(c.reason.empty()) << c.choice->name() << " took 257 groups";
}

TEST_F(Tuner, GroupedStreamKIsTimedWhereTheLastWaveIsPartial) {
  // By default (TMAGEMM_GROUPED_STREAM_K unset) the prescreen times a stream-K config on grouped_mm where the
  // representative routing's tiles leave a partial last wave it is predicted to fill (8 x 4096 tokens x 4096 x 14336:
  // 4.2 waves of 128x256), as on mm; switched off ("0"), the stream-K configs are refused with the switch named.
  const std::string sk = "persistent_tma_128x256x64_s4_c2_g8_tmastore_sk";
  const auto reason_of = [&](const GemmProblem& p) {
    for (const auto& c : enumerate(p, Options::defaults_only(), h200()))
      if (c.choice->name() == sk) return c.reason;
    return std::string("not enumerated");
  };
  {
    test_support::EnvGuard off("TMAGEMM_GROUPED_STREAM_K", std::string("0"));
    EXPECT_NE(reason_of(grouped_problem(8, 4096, 4096, 14336)).find("TMAGEMM_GROUPED_STREAM_K"), std::string::npos);
  }
  test_support::EnvGuard by_default("TMAGEMM_GROUPED_STREAM_K", std::nullopt);
  EXPECT_EQ(reason_of(grouped_problem(8, 4096, 4096, 14336)), "");
}

TEST_F(Tuner, PrescreenKeepsTilesTheBytesRooflineRanksLevelOnMemoryBoundProblems) {
  // 64 experts x 512 decode tokens x 2048 x 7168 streams 1.8 GB of weights: 64x128 and 64x256 each stream it in
  // four rounds of 132 CTAs, level, where the compute model alone predicted 64x128 at 1.40x 64x256's time and set it
  // aside. 256x128 is set aside by both (its 256-row tiles of ~8 tokens compute longer than the weights stream).
  const auto reason_of = [&](const GemmProblem& p, const std::string& name) {
    for (const auto& c : enumerate(p, Options::defaults_only(), h200()))
      if (c.choice->name() == name) return c.reason;
    return std::string("not enumerated");
  };
  const GemmProblem decode = grouped_problem(64, 512, 2048, 7168);
  ASSERT_TRUE(memory_bound(decode));
  EXPECT_EQ(reason_of(decode, "persistent_tma_64x128x64_s8_c1_g8_tmastore"), "");
  EXPECT_EQ(reason_of(decode, "persistent_tma_64x256x64_s5_c1_g8_tmastore"), "");
  EXPECT_NE(reason_of(decode, "persistent_tma_256x128x64_s4_c2_g8_tmastore").find("by compute or by the bytes roofline"),
            std::string::npos)
      << reason_of(decode, "persistent_tma_256x128x64_s4_c2_g8_tmastore");
  // A stream-K config is timed where its roofline is ahead of every whole-tile config's: 64 x 4096 x 14336 is 32
  // tiles of 128x128, one short round that stream-K shares out over every SM while the weights stream.
  const std::string sk = "persistent_tma_128x128x64_s6_c2_g8_tmastore_sk";
  ASSERT_TRUE(memory_bound(problem(64, 4096, 14336)));
  EXPECT_EQ(reason_of(problem(64, 4096, 14336), sk), "");
  EXPECT_NE(reason_of(problem(4096, 4096, 4096), sk).find("stream-K is timed only where predicted ahead"),
            std::string::npos);
  // A memory-bound stream-K config whose launch shares out a short round is timed where its roofline is within the
  // prescreen's ratio of the best whole tile's: 16 x 28672 x 8192 is 112 tiles of 64x256 (a round on 112 of 132 SMs).
  // Where the tiles fill whole rounds (132 of them: 64 x 33792) it would run the whole-tile schedule: set aside.
  const std::string sk64 = "persistent_tma_64x256x64_s5_c1_g8_tmastore_sk";
  ASSERT_TRUE(memory_bound(problem(16, 28672, 8192)));
  EXPECT_EQ(reason_of(problem(16, 28672, 8192), sk64), "");
  ASSERT_TRUE(memory_bound(problem(64, 33792, 8192)));
  EXPECT_NE(reason_of(problem(64, 33792, 8192), sk64).find("stream-K is timed only where predicted ahead"),
            std::string::npos)
      << reason_of(problem(64, 33792, 8192), sk64);
  // A short last wave cut alike (stream_k_cut): 2304 x 2304 x 8192 on 128x256 is 162 tiles, 30 of them cut into 4
  // segments of 32 K blocks; forced on an H100 (forty-fourth session) its stream-K read 1.039 of cuBLASLt, whole tiles
  // 0.789. Both 128x256 stream-K configs are timed there. (On 4224^3 and 6144 x 1536 x 4096, also cut alike, the model
  // puts them 3-7 % behind the best whole tile, and they are set aside.)
  for (const char* name : {"persistent_tma_128x256x64_s4_c2_g8_tmastore_sk",
                           "persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk"})
    EXPECT_EQ(reason_of(problem(2304, 2304, 8192), name), "") << name;
  // Compute-bound problems keep the compute model alone: 64x128 on 4096^3 stays set aside.
  ASSERT_FALSE(memory_bound(problem(4096, 4096, 4096)));
  EXPECT_EQ(reason_of(problem(4096, 4096, 4096), "persistent_tma_64x128x64_s8_c1_g8_tmastore"),
            "set aside: predicted 2.00x the time of the best persistent-TMA config (the prescreen keeps those within "
            "1.33x)");
}

TEST_F(Tuner, ClusterSplitKIsTimedWhereTilesLeaveSmsIdle) {
  // The prescreen times the cluster split-K config only where it is predicted ahead of every whole-tile config:
  // 1000^3 (64 tiles of 128x128 on 132 SMs), not 4096^3, whose whole tiles fill the waves.
  const auto reason_of = [&](const GemmProblem& p, const std::string& name) {
    for (const auto& c : enumerate(p, Options::defaults_only(), h200()))
      if (c.choice->name() == name) return c.reason;
    return std::string("not enumerated");
  };
  const std::string ks128 = "persistent_tma_128x128x64_s4_c2_g8_tmastore_ks2";
  EXPECT_EQ(reason_of(problem(1000, 1000, 1000), ks128), "");
  EXPECT_NE(reason_of(problem(4096, 4096, 4096), ks128).find("cluster split-K is timed only where predicted ahead"),
            std::string::npos);
}

TEST_F(Tuner, GroupedStreamKSwitchIsPartOfTheDatabaseKey) {
  // A grouped shape tuned with the switch off (TMAGEMM_GROUPED_STREAM_K=0) never timed the stream-K configs: its
  // stored winner must not answer by default (nor one tuned by default answer with it off, where its winner would be
  // refused). The default keys are the plain tuning keys; mm's keys do not change (its stream-K configs are always
  // timed), nor grouped_mm's when persistent TMA is off.
  const GemmProblem g = grouped_problem(8, 4096, 4096, 14336), m = problem(4096, 4096, 4096);
  Options o = Options::defaults_only();
  Options no_tma = o;
  no_tma.persistent_tma = false;
  std::string g_on, m_on, g_on_no_tma;
  {
    test_support::EnvGuard by_default("TMAGEMM_GROUPED_STREAM_K", std::nullopt);
    g_on = database_key(g, o, h200());
    m_on = database_key(m, o, h200());
    g_on_no_tma = database_key(g, no_tma, h200());
  }
  EXPECT_EQ(g_on, tuning_key(g, h200()));
  test_support::EnvGuard off("TMAGEMM_GROUPED_STREAM_K", std::string("0"));
  const std::string g_off = database_key(g, o, h200());
  EXPECT_NE(g_off, g_on);
  EXPECT_NE(g_off.find("nogsk"), std::string::npos) << g_off;
  EXPECT_EQ(database_key(m, o, h200()), m_on);
  EXPECT_EQ(database_key(g, no_tma, h200()), g_on_no_tma);
}

}  // namespace
}  // namespace tmagemm::tune

namespace tmagemm::tune {
namespace {

// A bucket's per-M record ("|ranks") answers only where it timed every choice the M's timing takes besides the ranks.
TEST(RanksRecordCurrent, OnlyWhereItTimedWhatTheMTimesBesidesTheRanks) {
  const TuningRecord rec{"cublaslt_algo1",
                         {{"cublaslt_algo1", 0.010}, {"persistent_tma_a", 0.011}, {"cublaslt_algo0", 0.012}},
                         "2026-12-06T00:00:00Z"};
  EXPECT_TRUE(ranks_record_current(rec, {"persistent_tma_a"}));
  // The bucket was tuned again since, with another tile: the record never timed it.
  EXPECT_FALSE(ranks_record_current(rec, {"persistent_tma_b"}));
  EXPECT_FALSE(ranks_record_current(rec, {"persistent_tma_a", "persistent_tma_b"}));
  // Nothing besides the ranks (a bucket cuBLASLt won, none of ours in its record): every record holds.
  EXPECT_TRUE(ranks_record_current(rec, {}));
  EXPECT_TRUE(ranks_record_current(TuningRecord{"cublaslt_algo2", {}, ""}, {}));
  EXPECT_FALSE(ranks_record_current(TuningRecord{"cublaslt_algo2", {}, ""}, {"persistent_tma_a"}));
}

// A choice with a name, a backend, a library rank and whether it is fitted to one M (nothing else is used here).
class RankedChoice final : public choices::Choice {
 public:
  RankedChoice(std::string name, const char* backend, int rank, bool fitted)
      : name_(std::move(name)), backend_(backend), rank_(rank), fitted_(fitted) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return backend_; }
  int library_rank() const override { return rank_; }
  bool fitted_to_m() const override { return fitted_; }
  std::string can_implement(const GemmProblem&, const runtime::DeviceInfo&) const override { return {}; }
  void precompile(const GemmProblem&, int) const override {}
  void launch(const GemmProblem&, cudaStream_t, const Options&, void*) const override {}

 private:
  std::string name_;
  const char* backend_;
  int rank_;
  bool fitted_;
};

// Where cuBLASLt won a bucket, each other M times our fastest choice of the bucket's record besides its ranks: not
// cuBLASLt's (ranked or not), not a configuration fitted to one M, one that can run the problem (a choice set aside
// by a prune can), and a timed one.
TEST(FastestOfOurs, TheFastestRunnableChoiceOfAnotherBackendInTheBucketsRecord) {
  auto make = [](const char* name, const char* backend, int rank, bool fitted) {
    return std::make_shared<RankedChoice>(name, backend, rank, fitted);
  };
  const std::vector<Candidate> cands{
      {make("cublaslt_algo0", "cublaslt", 0, false), "", false},
      {make("cublaslt_a66_t128x336_o5_c1x1", "cublaslt", -1, true), "", false},
      {make("cublaslt_unranked", "cublaslt", -1, false), "", false},
      {make("ranked_elsewhere", "other_library", 2, false), "", false},
      {make("fitted_elsewhere", "persistent_tma", -1, true), "", false},
      {make("persistent_tma_refused", "persistent_tma", -1, false), "needs aligned rows", false},
      {make("persistent_tma_set_aside", "persistent_tma", -1, false), "set aside by the prescreen", true},
      {make("persistent_tma_b", "persistent_tma", -1, false), "", false},
      {make("skinny_c", "skinny", -1, false), "", false}};
  // Every excluded kind faster than ours, in no particular order; a name no candidate has fastest of all.
  TuningRecord bucket{"cublaslt_algo0",
                      {{"skinny_c", 0.0110}, {"cublaslt_algo0", 0.0090}, {"cublaslt_a66_t128x336_o5_c1x1", 0.0080},
                       {"cublaslt_unranked", 0.0085}, {"ranked_elsewhere", 0.0086}, {"fitted_elsewhere", 0.0087},
                       {"persistent_tma_refused", 0.0088}, {"persistent_tma_gone", 0.0010},
                       {"persistent_tma_b", 0.0105}},
                      ""};
  choices::ChoicePtr got = fastest_of_ours(bucket, cands, "cublaslt");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->name(), "persistent_tma_b");
  // A set-aside choice can run the problem: it counts. An untimed one (null in the record) does not.
  bucket.timings.push_back({"persistent_tma_set_aside", 0.0100});
  bucket.timings.push_back({"skinny_untimed", INFINITY});
  got = fastest_of_ours(bucket, cands, "cublaslt");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->name(), "persistent_tma_set_aside");
  bucket.timings = {{"cublaslt_algo0", 0.0100}, {"persistent_tma_gone", 0.0090}, {"skinny_c", INFINITY}};
  EXPECT_FALSE(fastest_of_ours(bucket, cands, "cublaslt"));
}

// A bucket's largest M runs what an exact tuning of it would pick (pick_winner on its timings).
TEST(TopMChoice, TheLargestMRunsItsOwnTimingsWinner) {
  // 64x4096x4096 on the H200 (perf-notes): the bucket 33..64 kept the skinny grid that serves M = 33 and 48, cuBLASLt's
  // first pick was 2.6-3.3 % faster at M = 64 itself.
  const std::vector<Timing> timings{{"skinny_64x64", 0.01550}, {"cublaslt_algo0", 0.01500}, {"persistent", 0.0300}};
  const std::vector<Entry> entries{{0.01550, false, -1}, {0.01500, true, 0}, {0.0300, false, -1}};
  EXPECT_EQ(top_m_choice(timings, entries, "skinny_64x64", 0.03), "cublaslt_algo0");
  // Another backend within the margin of cuBLASLt: near-ties go to cuBLASLt, as in an exact tuning.
  const std::vector<Entry> close{{0.01490, false, -1}, {0.01500, true, 0}, {0.0300, false, -1}};
  EXPECT_EQ(top_m_choice(timings, close, "skinny_64x64", 0.03), "cublaslt_algo0");
  // Beyond it the faster one wins, the bucket's winner or not.
  const std::vector<Entry> clear{{0.01400, false, -1}, {0.01500, true, 0}, {0.0300, false, -1}};
  EXPECT_EQ(top_m_choice(timings, clear, "skinny_64x64", 0.03), "skinny_64x64");
  // The winner's rule is pick_winner's: a cuBLASLt near-tie of the fastest wins over a faster other backend.
  const std::vector<Timing> three{{"skinny_a", 0.0150}, {"cublaslt_algo0", 0.0100}, {"persistent", 0.0099}};
  const std::vector<Entry> tie{{0.0150, false, -1}, {0.0100, true, 0}, {0.0099, false, -1}};
  EXPECT_EQ(top_m_choice(three, tie, "skinny_a", 0.03), "cublaslt_algo0");
  // A choice that cannot run the call (ms +inf in its entry) never wins; nor does anything where none can run.
  const std::vector<Entry> cannot{{0.0150, false, -1}, {INFINITY, true, 0}, {INFINITY, false, -1}};
  EXPECT_EQ(top_m_choice(three, cannot, "skinny_a", 0.03), "skinny_a");
  const std::vector<Entry> none{{INFINITY, false, -1}, {INFINITY, true, 0}, {INFINITY, false, -1}};
  EXPECT_EQ(top_m_choice(three, none, "skinny_a", 0.03), "skinny_a");
  // The bucket's winner need not be among the timings (a record of another version).
  EXPECT_EQ(top_m_choice(three, tie, "fallback", 0.03), "cublaslt_algo0");
  // Mismatched arguments are refused.
  EXPECT_THROW(top_m_choice(three, {{0.01, false, -1}}, "skinny_a", 0.03), Error);
}

TEST_F(Tuner, ChooseInsteadTakesTheNextFastestInTheRecordThenTheHeuristic) {
  const GemmProblem p = problem(4096, 4096, 4096);
  Options o = Options::defaults_only();
  o.tuning = Tuning::heuristic;
  // Heuristic mode: the heuristic's pick among the choices not excluded; none left: null.
  const choices::ChoicePtr picked = choose(p, o, h200());
  const choices::ChoicePtr instead = choose_instead(p, o, h200(), {picked->name()});
  ASSERT_TRUE(instead);
  EXPECT_NE(instead->name(), picked->name());
  std::vector<std::string> every;
  for (const auto& c : enumerate(p, o, h200()))
    if (c.reason.empty()) every.push_back(c.choice->name());
  EXPECT_NE(std::find(every.begin(), every.end(), instead->name()), every.end()) << instead->name();
  EXPECT_FALSE(choose_instead(p, o, h200(), every));
  // With a tuning record: its timings, fastest first, skipping the excluded; the call's own choice is untouched.
  ASSERT_GE(every.size(), 3u);
  o.tuning = Tuning::cached_only;
  {
    TuningDb db(TuningDb::default_path());
    db.put(tuning_key(p, h200()),
           TuningRecord{every[2], {{every[2], 1.0}, {every[0], 1.1}, {every[1], 1.2}}, "2026-12-03T00:00:00Z"});
  }
  forget_in_memory();
  EXPECT_EQ(choose(p, o, h200())->name(), every[2]);
  EXPECT_EQ(choose_instead(p, o, h200(), {every[2]})->name(), every[0]);
  EXPECT_EQ(choose_instead(p, o, h200(), {every[2], every[0]})->name(), every[1]);
  EXPECT_EQ(choose(p, o, h200())->name(), every[2]);  // nothing was remembered or stored in its place
}

// A call whose choice ran out of memory runs another (choose_instead); when that one fails for good, the call's own
// choice stays remembered. The failing choice itself is forgotten and skipped.
TEST_F(Tuner, AFailedReplacementLeavesTheRememberedChoice) {
  // A shape of this test's own: failures are kept for the life of the process (forget_in_memory keeps them).
  const GemmProblem p = problem(4096, 4096, 4160);
  Options o = Options::defaults_only();
  const auto cands = enumerate(p, o, h200());
  std::vector<choices::ChoicePtr> every;
  for (const auto& c : cands)
    if (c.reason.empty()) every.push_back(c.choice);
  ASSERT_GE(every.size(), 3u);
  o.tuning = Tuning::cached_only;
  o.m_buckets = false;  // exact M: no bucket's winner held in memory beside the call's own
  const std::string key = tuning_key(p, h200(), false);
  const auto record = [&](const choices::ChoicePtr& winner) {
    TuningDb db(TuningDb::default_path());
    db.put(key, TuningRecord{winner->name(), {{winner->name(), 1.0}}, "2026-12-03T00:00:00Z"});
  };
  record(every[0]);
  EXPECT_EQ(choose(p, o, h200())->name(), every[0]->name());  // remembered from here on
  record(every[1]);  // what a call reads where nothing is remembered
  report_failure(p, o, h200(), *every[2], "a launch failed");
  EXPECT_EQ(choose(p, o, h200())->name(), every[0]->name());
  for (const auto& c : enumerate(p, o, h200()))
    if (c.choice->name() == every[2]->name()) EXPECT_NE(c.reason.find("a launch failed"), std::string::npos) << c.reason;
  // The remembered choice failing is forgotten: the record's winner runs next.
  report_failure(p, o, h200(), *every[0], "a launch failed");
  EXPECT_EQ(choose(p, o, h200())->name(), every[1]->name());
}

}  // namespace
}  // namespace tmagemm::tune
