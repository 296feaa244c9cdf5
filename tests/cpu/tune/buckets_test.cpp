// buckets_test.cpp — shape buckets without a GPU: the rule (m_bucket) partitions M into contiguous buckets of the
// documented sizes, every M of a bucket maps to one tuning key, the layouts that keep M exact, the representative
// problem, that no bucket straddles an applicability boundary of any backend (the choices that can run the bucket's
// largest M run its smallest too, for llm and decode shapes, layouts, dtypes and ops), that a stored winner serves
// every M of its bucket (cached_only, also where the prescreen sets it aside), and that the tuner makes a choice that
// cannot run the whole bucket ineligible.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "cpu/test_support.hpp"
#include "tmagemm/tuning.hpp"
#include "tune/buckets.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning_db.hpp"

namespace tmagemm::tune {
namespace {

runtime::DeviceInfo h200() { return test_support::fake_h200(); }

TEST(MBucketRule, ExactUpTo16ThenSkinnyPaddingsThenQuarterOctaves) {
  for (int64_t m = 1; m <= 16; ++m) EXPECT_EQ(m_bucket(Op::mm, m), (MBucket{m, m})) << m;
  EXPECT_EQ(m_bucket(Op::mm, 17), (MBucket{17, 32}));
  EXPECT_EQ(m_bucket(Op::mm, 32), (MBucket{17, 32}));
  EXPECT_EQ(m_bucket(Op::mm, 33), (MBucket{33, 64}));
  EXPECT_EQ(m_bucket(Op::mm, 64), (MBucket{33, 64}));
  EXPECT_EQ(m_bucket(Op::mm, 65), (MBucket{65, 80}));
  EXPECT_EQ(m_bucket(Op::mm, 128), (MBucket{113, 128}));
  EXPECT_EQ(m_bucket(Op::mm, 129), (MBucket{129, 160}));
  EXPECT_EQ(m_bucket(Op::mm, 3000), (MBucket{2561, 3072}));
  EXPECT_EQ(m_bucket(Op::mm, 8192), (MBucket{7169, 8192}));
  EXPECT_EQ(m_bucket(Op::mm, 8193), (MBucket{8193, 10240}));
  // The same rule for addmm, scaled_mm and bmm; grouped_mm's power-of-two classes; M <= 0 exact.
  for (Op op : {Op::addmm, Op::scaled_mm, Op::bmm}) EXPECT_EQ(m_bucket(op, 3000), (MBucket{2561, 3072}));
  EXPECT_EQ(m_bucket(Op::grouped_mm, 3000), (MBucket{2049, 4096}));
  EXPECT_EQ(m_bucket(Op::grouped_mm, 1), (MBucket{1, 1}));
  EXPECT_EQ(m_bucket(Op::grouped_mm, 5), (MBucket{5, 8}));
  EXPECT_EQ(m_bucket(Op::mm, 0), (MBucket{0, 0}));
}

TEST(MBucketRule, BucketsTileEveryMAndStaySmall) {
  // Contiguous and disjoint from 1 to 2^20, each M in its own bucket; above 64 rows a step is a quarter of the octave
  // (at most a quarter of M), a multiple of 16 rows, of 64 from 256 up and of 128 from 512 up; no bucket crosses 32
  // or 64 (the skinny backend's paddings and limit).
  for (Op op : {Op::mm, Op::grouped_mm}) {
    int64_t next = 1;
    std::size_t count = 0;
    while (next <= (int64_t{1} << 20)) {
      const MBucket b = m_bucket(op, next);
      ASSERT_EQ(b.lo, next) << to_string(op);
      ASSERT_GE(b.hi, b.lo);
      for (int64_t m : {b.lo, (b.lo + b.hi) / 2, b.hi}) ASSERT_EQ(m_bucket(op, m), b) << m;
      if (op == Op::mm && b.lo > 64) {
        const int64_t step = b.hi - b.lo + 1;
        EXPECT_LE(4 * step, b.hi) << b.lo;
        EXPECT_EQ(step % 16, 0) << b.lo;
        if (b.lo > 256) EXPECT_EQ(step % 64, 0) << b.lo;
        if (b.lo > 512) EXPECT_EQ(step % 128, 0) << b.lo;
      }
      if (op == Op::mm) EXPECT_FALSE(b.lo <= 32 && b.hi > 32) << b.lo;
      if (op == Op::mm) EXPECT_FALSE(b.lo <= 64 && b.hi > 64) << b.lo;
      next = b.hi + 1;
      ++count;
    }
    // 1..8192: 16 exact + 2 + 4 per octave from 64 to 8192 (7 octaves) = 46 buckets for mm.
    if (op == Op::mm) {
      std::set<int64_t> his;
      for (int64_t m = 1; m <= 8192; ++m) his.insert(m_bucket(op, m).hi);
      EXPECT_EQ(his.size(), 46u);
    }
  }
}

TEST(MBucketKeys, EveryMOfABucketHasOneKey) {
  // mm with B column- and row-major; the key's rows read "lo..hi" (exact: the number); N and K stay exact.
  for (bool b_col : {false, true}) {
    std::string previous;
    for (int64_t m = 1; m <= 4200; ++m) {
      const MBucket b = m_bucket(Op::mm, m);
      const std::string key = tuning_key(test_support::fake_mm_problem(m, 4096, 14336, b_col), h200());
      EXPECT_EQ(key, tuning_key(test_support::fake_mm_problem(b.lo, 4096, 14336, b_col), h200())) << m;
      EXPECT_EQ(key, tuning_key(test_support::fake_mm_problem(b.hi, 4096, 14336, b_col), h200())) << m;
      if (m == b.lo) EXPECT_NE(key, previous) << m;  // a new bucket, a new key
      previous = key;
      EXPECT_NE(key.find(m_key(b) + "x4096x14336x1"), std::string::npos) << key;
      const Options o = Options::defaults_only();
      EXPECT_EQ(database_key(test_support::fake_mm_problem(m, 4096, 14336, b_col), o, h200()),
                database_key(test_support::fake_mm_problem(b.hi, 4096, 14336, b_col), o, h200()));
    }
  }
  const GemmProblem p = test_support::fake_mm_problem(3000, 4096, 4096);
  EXPECT_NE(tuning_key(p, h200()), tuning_key(test_support::fake_mm_problem(3000, 4096, 4104), h200()));
  EXPECT_NE(tuning_key(p, h200()), tuning_key(test_support::fake_mm_problem(3000, 4104, 4096), h200()));
  // Options::m_buckets = false keeps M exact in the key (and in the database key).
  EXPECT_NE(tuning_key(p, h200(), false), tuning_key(test_support::fake_mm_problem(3001, 4096, 4096), h200(), false));
  EXPECT_NE(tuning_key(p, h200(), false).find("|3000x4096x4096x1|"), std::string::npos) << tuning_key(p, h200(), false);
  Options exact = Options::defaults_only();
  exact.m_buckets = false;
  EXPECT_EQ(database_key(p, exact, h200()), tuning_key(p, h200(), false));
}

TEST(MBucketKeys, MStaysExactWhereItEntersAStride) {
  // A column-major A or out has M in its leading dimension (and so in its alignment class): exact M.
  GemmProblem p = test_support::fake_mm_problem(3000, 4096, 4096);
  EXPECT_EQ(m_bucket_refusal(p), "");
  GemmProblem col_a = p;
  col_a.a = test_support::fake_operand(0x7f0000000000, 3000, 4096, true);
  EXPECT_NE(m_bucket_refusal(col_a).find("a is not row-major"), std::string::npos);
  EXPECT_EQ(bucket_of(col_a, true), (MBucket{3000, 3000}));
  GemmProblem col_out = p;
  col_out.out = test_support::fake_operand(0x7f2000000000, 3000, 4096, true);
  EXPECT_NE(m_bucket_refusal(col_out).find("out is not row-major"), std::string::npos);
  EXPECT_NE(tuning_key(col_out, h200()).find("|3000x4096x4096x1|"), std::string::npos);
  // bmm: packed matrices (batch stride M x row stride) are bucketed, a padded batch stride is not.
  GemmProblem bmm = p;
  bmm.op = Op::bmm;
  bmm.batch = 4;
  bmm.a.batch_stride = 3000 * 4096;
  bmm.b.batch_stride = 4096 * 4096;
  bmm.out.batch_stride = 3000 * 4096;
  EXPECT_EQ(bucket_of(bmm, true), (MBucket{2561, 3072}));
  GemmProblem padded = bmm;
  padded.out.batch_stride = 3008 * 4096;
  EXPECT_NE(m_bucket_refusal(padded).find("out's matrices"), std::string::npos);
  GemmProblem broadcast_a = bmm;
  broadcast_a.a.batch_stride = 0;
  EXPECT_EQ(m_bucket_refusal(broadcast_a), "");
  EXPECT_EQ(bucket_of(p, false), (MBucket{3000, 3000}));
}

TEST(MBucketKeys, RepresentativeProblem) {
  GemmProblem bmm = test_support::fake_mm_problem(3000, 512, 256);
  bmm.op = Op::bmm;
  bmm.batch = 2;
  bmm.a.batch_stride = 3000 * 256;
  bmm.out.batch_stride = 3000 * 512;
  bmm.b.batch_stride = 0;
  const GemmProblem q = with_m(bmm, 3072);
  EXPECT_EQ(q.m, 3072);
  EXPECT_EQ(q.a.rows, 3072);
  EXPECT_EQ(q.out.rows, 3072);
  EXPECT_EQ(q.a.batch_stride, 3072 * 256);
  EXPECT_EQ(q.out.batch_stride, 3072 * 512);
  EXPECT_EQ(q.b.batch_stride, 0);
  EXPECT_EQ(q.a.row_stride, 256);
  EXPECT_EQ(q.a.data, bmm.a.data);  // the same offsets from 256 bytes: the same alignment class
  EXPECT_EQ(tuning_key(q, h200()), tuning_key(bmm, h200()));
}

// The names of the choices that can run `p` (applicable, or only set aside by a tuning rule).
std::set<std::string> runnable(const GemmProblem& p, const Options& o) {
  std::set<std::string> names;
  for (const auto& c : enumerate(p, o, h200()))
    if (c.reason.empty() || c.set_aside) names.insert(c.choice->name());
  return names;
}

// Problems of one op, dtype and layout for a given M (fake addresses, 1024-aligned, packed lds).
GemmProblem make(Op op, DType in, bool b_col, int64_t m, int64_t n, int64_t k, bool fast_accum) {
  GemmProblem p = test_support::fake_mm_problem(m, n, k, b_col);
  p.op = op;
  for (Operand* o : {&p.a, &p.b}) o->dtype = in;
  p.out.dtype = in == DType::e4m3 ? DType::bf16 : in;
  if (op == Op::addmm) {
    p.bias_kind = BiasKind::row_vector;
    p.bias = test_support::fake_operand(0x7f4000000000, 1, n);
    p.bias.row_stride = 0;
    p.bias.dtype = p.out.dtype;
    p.act = Activation::gelu_tanh;
  }
  if (op == Op::scaled_mm) {
    p.scale_kind = ScaleKind::rowwise;
    p.scale_a = reinterpret_cast<const float*>(uintptr_t{0x7f5000000000});
    p.scale_b = reinterpret_cast<const float*>(uintptr_t{0x7f6000000000});
    p.fast_accum = fast_accum;
  }
  return p;
}

TEST(MBucketApplicability, NoBucketStraddlesABackendBoundary) {
  // For every bucket from 17 to 16384 rows, llm and decode (N, K) pairs (and odd ones), both B layouts, both 16-bit
  // dtypes, mm and addmm, and fp8 scaled_mm with fast and two-level accumulation: the choices that can run the
  // bucket's largest M (the representative the tuner times) can run its smallest M, and the other way round. So any
  // winner of a bucket runs every M of it (applicability changes with M only at thresholds; see buckets.hpp).
  const Options o = Options::defaults_only();
  // The last two pairs are TMA-misaligned (odd K, odd N): the pad path and the fallback take them (16-bit only).
  const std::pair<int64_t, int64_t> nk[] = {{14336, 4096}, {4096, 14336}, {6144, 4096}, {28672, 8192}, {4096, 4096},
                                            {1000, 1000},  {5000, 1000},  {4104, 136},  {4096, 4095}, {4097, 4096}};
  std::vector<MBucket> buckets;
  for (int64_t m = 17; m <= 16384; m = m_bucket(Op::mm, m).hi + 1) buckets.push_back(m_bucket(Op::mm, m));
  std::size_t checked = 0;
  struct Kind {
    Op op;
    DType in;
    bool fast;
  };
  for (const Kind kind : {Kind{Op::mm, DType::bf16, false}, Kind{Op::mm, DType::f16, false},
                          Kind{Op::addmm, DType::bf16, false}, Kind{Op::scaled_mm, DType::e4m3, true},
                          Kind{Op::scaled_mm, DType::e4m3, false}})
    for (bool b_col : {false, true}) {
      if (kind.op == Op::scaled_mm && !b_col) continue;  // fp8 takes a K-major B only
      for (const auto& [n, k] : nk)
        for (const MBucket& b : buckets) {
          if (kind.op == Op::scaled_mm && (n % 16 != 0 || k % 16 != 0)) continue;  // validation refuses those
          const GemmProblem lo = make(kind.op, kind.in, b_col, b.lo, n, k, kind.fast);
          const GemmProblem hi = make(kind.op, kind.in, b_col, b.hi, n, k, kind.fast);
          ASSERT_EQ(tuning_key(lo, h200()), tuning_key(hi, h200()));
          const auto at_lo = runnable(lo, o), at_hi = runnable(hi, o);
          ASSERT_FALSE(at_hi.empty()) << lo.describe();
          EXPECT_EQ(at_lo, at_hi) << to_string(kind.op) << " " << to_string(kind.in) << (b_col ? " rc " : " rr ") << n
                                  << "x" << k << " bucket " << m_key(b);
          // What the tuner times for the bucket (from a call of its smallest M): each candidate can_implement both
          // ends, so whichever wins is applicable at every M of the bucket.
          const BucketTuning t = bucket_tuning(lo, o, h200());
          ASSERT_EQ(t.problem.m, b.hi);
          ASSERT_FALSE(t.candidates.empty());
          for (const auto& c : t.candidates) {
            EXPECT_EQ(c->can_implement(lo, h200()), "") << c->name() << " at M " << b.lo;
            EXPECT_EQ(c->can_implement(hi, h200()), "") << c->name() << " at M " << b.hi;
          }
          ++checked;
        }
    }
  EXPECT_GT(checked, 2000u);
}

class BucketTuner : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TMAGEMM_CACHE_DIR", dir_.path().c_str(), 1);
    forget_in_memory();
  }
  void TearDown() override {
    set_extra_choices_for_testing({});
    ::unsetenv("TMAGEMM_CACHE_DIR");
    forget_in_memory();
  }
  test_support::TempDir dir_{"tmagemm-buckets-test"};
};

TEST_F(BucketTuner, StoredWinnerServesEveryMOfItsBucket) {
  // A winner stored for the bucket 113..128 of 128 x 8192 x 8192 (tuned there on M = 128) is 128x256: at M = 113 too.
  // And one the prescreen sets aside at the bucket's small end (64x128 is predicted far behind at large M, kept at
  // few rows) is still taken at every M of its bucket: the tuner timed it on the representative.
  Options o = Options::defaults_only();
  o.tuning = Tuning::cached_only;
  const std::string big = "persistent_tma_128x256x64_s4_c2_g8_tmastore";
  const std::string small = "persistent_tma_64x128x64_s8_c1_g8_tmastore";
  const GemmProblem p113 = test_support::fake_mm_problem(113, 8192, 8192);
  {
    TuningDb db(TuningDb::default_path());
    db.put(tuning_key(p113, h200()), TuningRecord{big, {{big, 1.0}}, "2026-12-03T00:00:00Z"});
  }
  for (int64_t m : {113, 120, 128}) EXPECT_EQ(choose(test_support::fake_mm_problem(m, 8192, 8192), o, h200())->name(), big);
  const GemmProblem p4000 = test_support::fake_mm_problem(4000, 8192, 8192);
  bool set_aside = false;
  for (const auto& c : enumerate(test_support::fake_mm_problem(3585, 8192, 8192), o, h200()))
    if (c.choice->name() == small) set_aside = c.set_aside;
  ASSERT_TRUE(set_aside) << "the prescreen no longer sets " << small << " aside at 3585 x 8192 x 8192";
  {
    TuningDb db(TuningDb::default_path());
    db.put(tuning_key(p4000, h200()), TuningRecord{small, {{small, 1.0}}, "2026-12-03T00:00:00Z"});
  }
  for (int64_t m : {3585, 4000, 4096}) EXPECT_EQ(choose(test_support::fake_mm_problem(m, 8192, 8192), o, h200())->name(), small);
  // Counted as database hits; a shape of no stored bucket is a counted miss that runs the heuristic choice.
  const GemmProblem p5000 = test_support::fake_mm_problem(5000, 8192, 8192);
  const std::string heuristic = heuristic_choice(p5000, enumerate(p5000, o, h200()), h200())->name();
  const TuningStats before = tuning_stats();
  EXPECT_EQ(choose(p5000, o, h200())->name(), heuristic);
  EXPECT_EQ(choose(p5000, o, h200())->name(), heuristic);  // remembered: an in-memory hit
  const TuningStats after = tuning_stats();
  EXPECT_EQ(after.db_misses - before.db_misses, 1u);
  EXPECT_EQ(after.cached_only_misses - before.cached_only_misses, 1u);
  EXPECT_EQ(after.heuristic - before.heuristic, 1u);
  EXPECT_EQ(after.memo_hits - before.memo_hits, 1u);
  EXPECT_EQ(after.db_hits, before.db_hits);
  EXPECT_EQ(after.tuned, before.tuned);
}

// A choice that can run only M >= min_m (and any N, K): a boundary inside a bucket, which no real backend has.
class RowsAtLeast final : public choices::Choice {
 public:
  explicit RowsAtLeast(int64_t min_m) : min_m_(min_m), name_("rows_at_least_" + std::to_string(min_m)) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "test"; }
  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo&) const override {
    return p.m >= min_m_ ? "" : "M below " + std::to_string(min_m_);
  }
  void precompile(const GemmProblem&, int) const override {}
  void launch(const GemmProblem&, cudaStream_t, const Options&, void*) const override {}

 private:
  int64_t min_m_;
  std::string name_;
};

TEST_F(BucketTuner, ChoicesThatCannotRunTheWholeBucketAreIneligible) {
  // Bucket 97..112: a choice that takes M >= 100 runs the representative (112) but not 97; one that takes M >= 50 runs
  // all of it. The tuner times the bucket on M = 112 with the second only (and the persistent-TMA choices).
  set_extra_choices_for_testing({std::make_shared<RowsAtLeast>(100), std::make_shared<RowsAtLeast>(50)});
  const Options o = Options::defaults_only();
  const BucketTuning t = bucket_tuning(test_support::fake_mm_problem(105, 4096, 4096), o, h200());
  EXPECT_EQ(t.bucket, (MBucket{97, 112}));
  EXPECT_EQ(t.problem.m, 112);
  EXPECT_EQ(t.problem.out.rows, 112);
  std::set<std::string> names;
  for (const auto& c : t.candidates) names.insert(c->name());
  EXPECT_TRUE(names.count("rows_at_least_50"));
  EXPECT_FALSE(names.count("rows_at_least_100"));
  EXPECT_TRUE(names.count("persistent_tma_128x128x64_s6_c2_g8_tmastore") ||
              names.count("persistent_tma_64x128x64_s8_c1_g8_tmastore"))
      << names.size();
  // Every candidate can run both ends of the bucket.
  for (const auto& c : t.candidates) {
    EXPECT_EQ(c->can_implement(test_support::fake_mm_problem(97, 4096, 4096), h200()), "") << c->name();
    EXPECT_EQ(c->can_implement(test_support::fake_mm_problem(112, 4096, 4096), h200()), "") << c->name();
  }
  // With exact keys the problem's own M is timed, with every applicable choice.
  Options exact = o;
  exact.m_buckets = false;
  const BucketTuning e = bucket_tuning(test_support::fake_mm_problem(105, 4096, 4096), exact, h200());
  EXPECT_TRUE(e.bucket.exact());
  EXPECT_EQ(e.problem.m, 105);
  names.clear();
  for (const auto& c : e.candidates) names.insert(c->name());
  EXPECT_TRUE(names.count("rows_at_least_100"));
}

}  // namespace
}  // namespace tmagemm::tune
