// buckets_test.cpp (GPU) — shape buckets end to end: the first call of a bucket tunes it once (on its largest M), every
// other M of the bucket runs the stored winner without tuning and computes the right result (persistent-TMA rows and
// skinny rows), the next bucket tunes again, exact keys (Options::m_buckets = false) tune each M, and a cached_only
// process never tunes: a missing bucket runs the heuristic choice, counted as a miss. In a bucket cuBLASLt is timed as
// its heuristic's first pick only (its ranks at each other M, with the bucket's winner where that is ours), and
// preload_model readies a model's buckets so that a new M of one takes no enumeration, database read or module load.
// The bucket's largest M runs the choice an exact tuning would pick there, its own timings' winner
// (tune::top_m_choice).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "choices/cublaslt.hpp"
#include "gpu/gpu_util.hpp"
#include "runtime/device.hpp"
#include "tune/benchmark.hpp"
#include "tune/buckets.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning_db.hpp"
#include "tmagemm/tuning.hpp"

namespace tmagemm::testing {
namespace {

class TuneBuckets : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    db_.emplace();
    tune::forget_in_memory();
  }
  void TearDown() override {
    tune::forget_in_memory();
    db_.reset();
  }

  // One call of M rows (a row-major, b column-major (K-major), out row-major; b and the first M rows of a shared by
  // every M), checked against the reference; returns the choice that ran.
  std::string call(int64_t m, const Options& o) {
    Matrix out = make_matrix(DType::bf16, m, n_, false, 8, rng_, false);
    TensorView va = a_->view();
    va.sizes[0] = m;
    mm(va, b_->view(), out.view(), o);
    cuda_ok(cudaDeviceSynchronize(), "mm");
    const std::vector<float> ref = reference_gemm(rows(m), *b_, m, n_, k_);
    const Check chk = compare(out, ref);
    EXPECT_EQ(chk.nan_count, 0) << "M " << m << ": " << chk.first_bad;
    EXPECT_LE(chk.rel_err, 1e-2) << "M " << m << ": " << chk.first_bad;
    return tune::choose(make_mm_problem(va, b_->view(), out.view()), o)->name();
  }
  // The bucket's largest M ran `ran` where the bucket's winner is `winner`: the same, or a choice the tuning timed
  // faster on that M and within the tie margin of the fastest there (tune::top_m_choice).
  void expect_top_rule(int64_t m, const Options& o, const std::string& ran, const std::string& winner) {
    Matrix out = make_matrix(DType::bf16, m, n_, false, 8, rng_, false);
    TensorView va = a_->view();
    va.sizes[0] = m;
    const GemmProblem p = make_mm_problem(va, b_->view(), out.view());
    // explain() says what runs (tune::stored_choice).
    const choices::ChoicePtr stored = tune::stored_choice(p, o, tune::enumerate(p, o));
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->name(), ran);
    if (ran == winner) return;
    const auto rec = tune::TuningDb(tune::TuningDb::default_path()).get(tune::database_key(p, o, runtime::device_info(0)));
    ASSERT_TRUE(rec.has_value());
    EXPECT_EQ(rec->winner, winner);
    double ran_ms = INFINITY, winner_ms = INFINITY, fastest = INFINITY;
    for (const tune::Timing& t : rec->timings) {
      if (t.choice == ran) ran_ms = t.ms;
      if (t.choice == winner) winner_ms = t.ms;
      fastest = std::min(fastest, t.ms);
    }
    EXPECT_LE(ran_ms, winner_ms) << ran << " at M " << m << " against " << winner;
    EXPECT_LE(ran_ms, fastest * (1.0 + tune::tie_margin(p))) << ran << " at M " << m;
  }
  // What explain says an M runs from the tuning database without tuning (tune::stored_choice); "" where nothing.
  std::string stored_at(int64_t m, const Options& o) {
    Matrix out = make_matrix(DType::bf16, m, n_, false, 8, rng_, false);
    TensorView va = a_->view();
    va.sizes[0] = m;
    const GemmProblem p = make_mm_problem(va, b_->view(), out.view());
    const choices::ChoicePtr stored = tune::stored_choice(p, o, tune::enumerate(p, o));
    return stored ? stored->name() : std::string();
  }
  // After M = 2800 of the bucket 2561..3072 ran `ran` from its per-M timing (library_ranks_per_m): the in-memory map, a
  // new process and explain take it again; switched off, or cached_only (M = 2700), the bucket's winner runs; nothing
  // more is timed or tuned since `since`.
  void expect_per_m_choice_kept(const Options& o, const std::string& ran, const std::string& bucket_winner,
                                const TuningStats& since) {
    EXPECT_EQ(call(2800, o), ran);  // the in-memory map
    tune::forget_in_memory();       // a new process: the stored choice
    EXPECT_EQ(call(2800, o), ran);
    EXPECT_EQ(stored_at(2800, o), ran);  // explain (stored_choice)
    Options off = o;
    off.library_ranks_per_m = false;
    EXPECT_EQ(call(2800, off), bucket_winner);
    Options cached = o;
    cached.tuning = Tuning::cached_only;
    EXPECT_EQ(call(2700, cached), bucket_winner);
    EXPECT_EQ(tuning_stats().rank_tunings, since.rank_tunings);
    EXPECT_EQ(tuning_stats().tuned, since.tuned);
  }
  // The first m rows of a as a matrix of its own (for the reference).
  Matrix rows(int64_t m) {
    Matrix r = make_matrix(DType::bf16, m, k_, false, 8, rng_, false);
    cuda_ok(cudaMemcpy(r.dev->ptr, a_->dev->ptr, static_cast<std::size_t>(m * k_) * 2, cudaMemcpyDeviceToDevice),
            "rows of a");
    return r;
  }
  void shape(int64_t max_m, int64_t n, int64_t k) {
    n_ = n;
    k_ = k;
    a_ = std::make_unique<Matrix>(make_matrix(DType::bf16, max_m, k, false, 8, rng_, true));
    b_ = std::make_unique<Matrix>(make_matrix(DType::bf16, k, n, true, 8, rng_, true));
  }

  std::optional<FreshTuningDb> db_;
  std::mt19937 rng_{22};
  int64_t n_ = 0, k_ = 0;
  std::unique_ptr<Matrix> a_, b_;
};

// The bucket rule alone: a bucket's winner runs every M of it (library_ranks_per_m, which may time cuBLASLt's ranks
// at an M whose bucket it won, has a test of its own below).
Options benchmark() {
  Options o = Options::defaults_only();
  o.tuning = Tuning::benchmark;
  o.library_ranks_per_m = false;
  return o;
}

TEST_F(TuneBuckets, OneTuningServesEveryMOfTheBucket) {
  shape(3100, 1536, 512);  // a shape no other test tunes
  const Options o = benchmark();
  const TuningStats s0 = tuning_stats();
  const std::string winner = call(3000, o);  // bucket 2561..3072: tuned on M = 3072
  const TuningStats s1 = tuning_stats();
  EXPECT_EQ(s1.tuned - s0.tuned, 1u);
  {
    tune::TuningDb db(tune::TuningDb::default_path());
    EXPECT_EQ(db.size(), 1u);
    const auto entries = db.list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_NE(entries[0].first.find("|2561..3072x1536x512x1|"), std::string::npos) << entries[0].first;
    EXPECT_EQ(entries[0].second.winner, winner);
  }
  for (int64_t m : {2561, 2800}) EXPECT_EQ(call(m, o), winner) << "M " << m;
  expect_top_rule(3072, o, call(3072, o), winner);  // the bucket's largest M: its own timings' winner
  const TuningStats s2 = tuning_stats();
  EXPECT_EQ(s2.tuned, s1.tuned);  // no tuning for the other rows of the bucket
  // The bucket's winner is held in memory: the other rows neither enumerate nor read the database.
  EXPECT_EQ(s2.bucket_hits - s1.bucket_hits, 3u);
  EXPECT_EQ(s2.db_hits, s1.db_hits);
  call(3073, o);  // the next bucket, 3073..3584
  EXPECT_EQ(tuning_stats().tuned - s2.tuned, 1u);
  EXPECT_EQ(tune::TuningDb(tune::TuningDb::default_path()).size(), 2u);
}

TEST_F(TuneBuckets, SkinnyRowsShareTheirBucket) {
  // 17..32 rows: the skinny backend pads them all to 32; the tuned winner runs M = 17 and 32 correctly.
  shape(32, 4096, 4096);
  const Options o = benchmark();
  const uint64_t tuned = tuning_stats().tuned;
  const std::string winner = call(24, o);
  EXPECT_EQ(call(17, o), winner);
  expect_top_rule(32, o, call(32, o), winner);
  EXPECT_EQ(tuning_stats().tuned - tuned, 1u);
}

TEST_F(TuneBuckets, ExactKeysTuneEachM) {
  shape(3000, 1024, 512);
  Options o = benchmark();
  o.m_buckets = false;
  const uint64_t tuned = tuning_stats().tuned;
  call(2900, o);
  call(3000, o);
  EXPECT_EQ(tuning_stats().tuned - tuned, 2u);
  const auto entries = tune::TuningDb(tune::TuningDb::default_path()).list();
  ASSERT_EQ(entries.size(), 2u);
  for (const auto& [key, record] : entries) EXPECT_EQ(key.find(".."), std::string::npos) << key;
}

TEST_F(TuneBuckets, CachedOnlyNeverTunes) {
  shape(768, 2048, 1024);  // rows for every M below (up to 760)
  Options cached = Options::defaults_only();
  cached.tuning = Tuning::cached_only;
  const TuningStats s0 = tuning_stats();
  call(700, cached);  // nothing stored: the heuristic choice, a counted miss
  const TuningStats s1 = tuning_stats();
  EXPECT_EQ(s1.tuned, s0.tuned);
  EXPECT_EQ(s1.cached_only_misses - s0.cached_only_misses, 1u);
  EXPECT_EQ(tune::TuningDb(tune::TuningDb::default_path()).size(), 0u);
  // Tuned by another call (another process would do the same through the database): cached_only then finds it for
  // another M of the bucket (641..768).
  const std::string winner = call(650, benchmark());
  tune::forget_in_memory();
  const TuningStats s2 = tuning_stats();
  EXPECT_EQ(call(760, cached), winner);
  const TuningStats s3 = tuning_stats();
  EXPECT_EQ(s3.db_hits - s2.db_hits, 1u);
  EXPECT_EQ(s3.cached_only_misses, s2.cached_only_misses);
  EXPECT_EQ(s3.tuned, s2.tuned);
}

TEST_F(TuneBuckets, CublasLtInABucketIsItsHeuristicsFirstPick) {
  // In a bucket (M not exact) cuBLASLt is timed as its heuristic's first pick only: a rank names another algorithm at
  // another M. Exact Ms keep the top 4.
  shape(3100, 2048, 1024);
  Options o = benchmark();
  o.choice_regex = "^cublaslt_algo";
  EXPECT_EQ(call(3000, o), "cublaslt_algo0");  // bucket 2561..3072
  const auto entries = tune::TuningDb(tune::TuningDb::default_path()).list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].second.winner, "cublaslt_algo0");
  // The other ranks were timed on the largest M, for that M alone (its own timings' winner).
  EXPECT_GE(entries[0].second.timings.size(), 1u);
  for (int64_t m : {2561, 2800}) EXPECT_EQ(call(m, o), "cublaslt_algo0") << "M " << m;
  expect_top_rule(3072, o, call(3072, o), "cublaslt_algo0");
  Options exact = o;
  exact.m_buckets = false;
  call(3000, exact);
  bool ranks_beyond_0 = false;
  for (const auto& [key, record] : tune::TuningDb(tune::TuningDb::default_path()).list())
    if (key.find("..") == std::string::npos)
      for (const tune::Timing& t : record.timings) ranks_beyond_0 |= t.choice != "cublaslt_algo0";
  EXPECT_TRUE(ranks_beyond_0) << "an exact M times the heuristic's other picks too";
}

TEST_F(TuneBuckets, LibraryRanksAreTimedOnceAtEachMOfABucketCublasLtWon) {
  // A bucket whose winner is cuBLASLt's first pick: another M of it times cuBLASLt's ranks at that M once (stored under
  // the exact M's key + "|ranks") and runs the fastest; the bucket's record and the largest M are untouched; a new
  // process reads the record, explain (stored_choice) names the same choice; switched off, or cached_only, the
  // bucket's winner runs without timing.
  shape(3100, 2048, 1024);
  Options o = benchmark();
  o.library_ranks_per_m = true;
  o.choice_regex = "^cublaslt_algo";
  const TuningStats s0 = tuning_stats();
  call(3072, o);  // the bucket 2561..3072, tuned on its largest M
  const TuningStats s1 = tuning_stats();
  EXPECT_EQ(s1.tuned - s0.tuned, 1u);
  EXPECT_EQ(s1.rank_tunings, s0.rank_tunings);  // the largest M runs its own timings' winner
  const std::string ran = call(2800, o);
  const TuningStats s2 = tuning_stats();
  EXPECT_EQ(s2.rank_tunings - s1.rank_tunings, 1u);
  EXPECT_EQ(s2.tuned, s1.tuned);
  EXPECT_EQ(ran.rfind("cublaslt_algo", 0), 0u) << ran;
  std::size_t bucket_records = 0, rank_records = 0;
  for (const auto& [key, record] : tune::TuningDb(tune::TuningDb::default_path()).list()) {
    if (key.size() > 6 && key.compare(key.size() - 6, 6, "|ranks") == 0) {
      ++rank_records;
      EXPECT_NE(key.find("|2800x2048x1024x1|"), std::string::npos) << key;
      EXPECT_EQ(record.winner, ran);
      EXPECT_GE(record.timings.size(), 2u) << "the ranks timed at M = 2800";
      EXPECT_TRUE(std::any_of(record.timings.begin(), record.timings.end(),
                              [](const tune::Timing& t) { return t.choice == "cublaslt_algo0"; }))
          << "cuBLASLt's first pick is one of the ranks timed";
    } else {
      ++bucket_records;
      EXPECT_EQ(record.winner, "cublaslt_algo0") << key;
    }
  }
  EXPECT_EQ(rank_records, 1u);
  EXPECT_EQ(bucket_records, 1u);
  expect_per_m_choice_kept(o, ran, "cublaslt_algo0", s2);
}

TEST_F(TuneBuckets, OurFastestIsTimedAtEachMOfABucketCublasLtWon) {
  // A bucket cuBLASLt won across its Ms: another M of it times cuBLASLt's ranks and our fastest choice at the bucket's
  // largest M (tune::fastest_of_ours), since the bucket's pick weighs every M it sampled and ours may be the faster at
  // this one; the record needs that choice to answer (an older record without it is timed again).
  shape(3100, 2048, 1024);
  const std::string ours = "persistent_tma_128x256x64_s4_c2_g8_tmastore";
  Options o = benchmark();
  o.library_ranks_per_m = true;
  o.choice_regex = "^" + ours + "$|^cublaslt_algo";
  call(3072, o);  // the bucket 2561..3072, tuned on its largest M; its record timed ours and cuBLASLt's first pick
  tune::TuningDb db(tune::TuningDb::default_path());
  auto records = db.list();
  ASSERT_EQ(records.size(), 1u);
  auto [bucket_key, bucket_record] = records.front();
  ASSERT_TRUE(std::any_of(bucket_record.timings.begin(), bucket_record.timings.end(),
                          [&](const tune::Timing& t) { return t.choice == ours; }));
  bucket_record.winner = "cublaslt_algo0";  // cuBLASLt the bucket's winner, whatever the timings at 3072 said
  db.put(bucket_key, bucket_record);
  tune::forget_in_memory();
  const TuningStats s1 = tuning_stats();
  const std::string ran = call(2800, o);
  EXPECT_EQ(tuning_stats().rank_tunings - s1.rank_tunings, 1u);
  EXPECT_EQ(tuning_stats().tuned, s1.tuned);
  EXPECT_TRUE(ran == ours || ran.rfind("cublaslt_algo", 0) == 0) << ran;
  std::string ranks_key;
  for (const auto& [key, record] : db.list())
    if (key.size() > 6 && key.compare(key.size() - 6, 6, "|ranks") == 0) {
      ranks_key = key;
      EXPECT_EQ(record.winner, ran);
      for (const std::string want : {ours, std::string("cublaslt_algo0")})
        EXPECT_TRUE(std::any_of(record.timings.begin(), record.timings.end(),
                                [&](const tune::Timing& t) { return t.choice == want; }))
            << want << " timed at M = 2800";
    }
  ASSERT_FALSE(ranks_key.empty());
  // A new process reads that record without timing; one without our choice in it (an older rule's) is timed again.
  tune::forget_in_memory();
  const TuningStats s2 = tuning_stats();
  EXPECT_EQ(call(2800, o), ran);
  EXPECT_EQ(tuning_stats().rank_tunings, s2.rank_tunings);
  auto old = db.get(ranks_key);
  ASSERT_TRUE(old.has_value());
  std::erase_if(old->timings, [&](const tune::Timing& t) { return t.choice == ours; });
  if (old->winner == ours) old->winner = "cublaslt_algo0";
  db.put(ranks_key, *old);
  tune::forget_in_memory();
  const TuningStats s3 = tuning_stats();
  call(2800, o);
  EXPECT_EQ(tuning_stats().rank_tunings - s3.rank_tunings, 1u);
  const auto again = db.get(ranks_key);
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(std::any_of(again->timings.begin(), again->timings.end(),
                          [&](const tune::Timing& t) { return t.choice == ours; }))
      << "the record timed again holds our choice";
}

TEST_F(TuneBuckets, ARequiredChoiceThatFailsAtAnMIsRecordedThereUntimed) {
  // Our fastest choice of a bucket cuBLASLt won fails its check at M = 2800 (here: a choice that writes a pattern,
  // placed in the bucket's record as the fastest at 3072). The per-M record keeps it, with no time, so that it
  // answers for it: a later process reads the record and times nothing, where it would otherwise time M = 2800 again
  // in every process.
  struct Clear {
    ~Clear() { tune::set_extra_choices_for_testing({}); }
  } clear;
  tune::set_extra_choices_for_testing({std::make_shared<BrokenChoice>()});
  shape(3100, 2048, 1024);
  const std::string wrong = "test_broken_memset";
  Options o = benchmark();
  o.library_ranks_per_m = true;
  o.choice_regex = "^cublaslt_algo|^" + wrong + "$";
  call(3072, o);  // the bucket 2561..3072: the pattern fails its check there, cuBLASLt wins
  tune::TuningDb db(tune::TuningDb::default_path());
  auto records = db.list();
  ASSERT_EQ(records.size(), 1u);
  auto [bucket_key, bucket_record] = records.front();
  EXPECT_EQ(bucket_record.winner, "cublaslt_algo0");
  bucket_record.winner = "cublaslt_algo0";
  bucket_record.timings.push_back({wrong, 1e-6});  // as if it had been the fastest at 3072
  db.put(bucket_key, bucket_record);
  tune::forget_in_memory();
  const TuningStats s1 = tuning_stats();
  const std::string ran = call(2800, o);  // checked against the reference in call()
  EXPECT_EQ(tuning_stats().rank_tunings - s1.rank_tunings, 1u);
  EXPECT_EQ(ran.rfind("cublaslt_algo", 0), 0u) << ran;
  bool found = false;
  for (const auto& [key, record] : db.list())
    if (key.size() > 6 && key.compare(key.size() - 6, 6, "|ranks") == 0)
      for (const tune::Timing& t : record.timings)
        if (t.choice == wrong) {
          found = true;
          EXPECT_FALSE(std::isfinite(t.ms)) << "kept untimed";
        }
  EXPECT_TRUE(found) << "the failed choice is in M = 2800's record";
  tune::forget_in_memory();
  const TuningStats s2 = tuning_stats();
  EXPECT_EQ(call(2800, o), ran);
  EXPECT_EQ(tuning_stats().rank_tunings, s2.rank_tunings) << "a later process reads the record";
}

TEST_F(TuneBuckets, SearchConfigurationsOfOneMAreTimedThereNeverForTheBucket) {
  // The cuBLASLt search's configurations of one M only (Choice::m_only) are no candidates of the bucket's tuning (its
  // winner must run every M of the bucket); another M of the bucket times its fitted configurations (at 2200 rows the
  // wave model's best tiles, 128x320 and 128x328, are none of the bucket's) with cuBLASLt's ranks, its first pick
  // included, and runs the fastest.
  if (!choices::cublaslt_search_enabled()) GTEST_SKIP() << "TMAGEMM_CUBLASLT_SEARCH=0 in this environment";
  shape(2560, 2304, 512);
  Options o = benchmark();
  o.library_ranks_per_m = true;
  o.choice_regex = "^cublaslt_";
  auto offered = [&](int64_t m, bool (choices::Choice::*flag)() const) {
    Matrix out = make_matrix(DType::bf16, m, n_, false, 8, rng_, false);
    TensorView va = a_->view();
    va.sizes[0] = m;
    std::set<std::string> names;
    for (const auto& c : tune::enumerate(make_mm_problem(va, b_->view(), out.view()), o))
      if (c.reason.empty() && ((*c.choice).*flag)()) names.insert(c.choice->name());
    return names;
  };
  const std::set<std::string> fitted = offered(2200, &choices::Choice::fitted_to_m);
  std::set<std::string> m_only = offered(2200, &choices::Choice::m_only);
  ASSERT_FALSE(m_only.empty()) << "no configuration of M = 2200 only";
  for (const auto& n : offered(2560, &choices::Choice::m_only)) m_only.insert(n);
  for (const auto& n : offered(2049, &choices::Choice::m_only)) m_only.insert(n);
  call(2560, o);  // the bucket 2049..2560, tuned on its largest M
  const std::string ran = call(2200, o);
  std::size_t rank_records = 0;
  for (const auto& [key, record] : tune::TuningDb(tune::TuningDb::default_path()).list()) {
    std::set<std::string> timed;
    for (const tune::Timing& t : record.timings) timed.insert(t.choice);
    if (key.size() > 6 && key.compare(key.size() - 6, 6, "|ranks") == 0) {
      ++rank_records;
      EXPECT_EQ(record.winner, ran);
      EXPECT_TRUE(timed.count("cublaslt_algo0")) << "cuBLASLt's first pick is timed at M = 2200";
      for (const auto& n : fitted) EXPECT_TRUE(timed.count(n)) << n << " fitted to M = 2200 but not timed there";
    } else {
      EXPECT_FALSE(m_only.count(record.winner)) << record.winner;
      for (const auto& n : timed) EXPECT_FALSE(m_only.count(n)) << n << " (of one M only) timed for the bucket";
    }
  }
  EXPECT_EQ(rank_records, 1u);
}

TEST_F(TuneBuckets, LibraryRanksAreTimedAgainstABucketWinnerOfOurs) {
  // A bucket won by one of our choices (cuBLASLt's first pick kept out by the regex; its other ranks take part at the
  // largest M only): another M of it times that winner and cuBLASLt's ranks at that M once (the exact M's key +
  // "|ranks") and runs the fastest; the bucket's record is untouched; a new process and explain (stored_choice) take
  // the stored choice; switched off, or cached_only, the bucket's winner runs without timing.
  shape(3100, 2048, 1024);
  const std::string ours = "persistent_tma_128x256x64_s4_c2_g8_tmastore";
  Options o = benchmark();
  o.library_ranks_per_m = true;
  o.choice_regex = "^" + ours + "$|^cublaslt_algo[1-3]$";
  const TuningStats s0 = tuning_stats();
  call(3072, o);  // the bucket 2561..3072, tuned on its largest M
  const TuningStats s1 = tuning_stats();
  EXPECT_EQ(s1.tuned - s0.tuned, 1u);
  EXPECT_EQ(s1.rank_tunings, s0.rank_tunings);
  const std::string ran = call(2800, o);
  const TuningStats s2 = tuning_stats();
  EXPECT_EQ(s2.rank_tunings - s1.rank_tunings, 1u);
  EXPECT_EQ(s2.tuned, s1.tuned);
  EXPECT_TRUE(ran == ours || ran.rfind("cublaslt_algo", 0) == 0) << ran;
  std::size_t bucket_records = 0, rank_records = 0;
  for (const auto& [key, record] : tune::TuningDb(tune::TuningDb::default_path()).list()) {
    if (key.size() > 6 && key.compare(key.size() - 6, 6, "|ranks") == 0) {
      ++rank_records;
      EXPECT_NE(key.find("|2800x2048x1024x1|"), std::string::npos) << key;
      EXPECT_EQ(record.winner, ran);
      bool timed_ours = false, timed_library = false;
      for (const tune::Timing& t : record.timings) {
        timed_ours |= t.choice == ours;
        timed_library |= t.choice.rfind("cublaslt_algo", 0) == 0;
      }
      EXPECT_TRUE(timed_ours && timed_library) << "the bucket's winner and cuBLASLt's ranks timed at M = 2800";
    } else {
      ++bucket_records;
      EXPECT_EQ(record.winner, ours) << key;
    }
  }
  EXPECT_EQ(rank_records, 1u);
  EXPECT_EQ(bucket_records, 1u);
  expect_per_m_choice_kept(o, ran, ours, s2);
}

TEST_F(TuneBuckets, ARanksRecordOfAnEarlierBucketWinnerIsTimedAgain) {
  // M = 2800's per-M record ("|ranks") timed cuBLASLt's ranks against the bucket's winner of that time. When the
  // bucket's record names another of our choices since (a remote cache, an import), the record says nothing about it:
  // the next call at 2800 times the ranks again, now with the present winner, and a later process reads that record
  // (tune::ranks_record_current). Before, the old record's library pick kept running without the present winner timed.
  shape(3100, 2048, 1024);
  const std::string ours1 = "persistent_tma_128x256x64_s4_c2_g8_tmastore";
  const std::string ours2 = "persistent_tma_128x128x64_s6_c2_g8_tmastore";
  Options o = benchmark();
  o.library_ranks_per_m = true;
  o.choice_regex = "^(" + ours1 + "|" + ours2 + ")$|^cublaslt_algo[1-3]$";
  call(3072, o);  // the bucket 2561..3072, tuned on its largest M: one of ours wins (ranks past the first never do)
  const TuningStats s1 = tuning_stats();
  call(2800, o);
  EXPECT_EQ(tuning_stats().rank_tunings - s1.rank_tunings, 1u);
  auto is_ranks = [](const std::string& key) { return key.size() > 6 && key.compare(key.size() - 6, 6, "|ranks") == 0; };
  tune::TuningDb db(tune::TuningDb::default_path());
  std::string bucket_key, ranks_key;
  tune::TuningRecord bucket_record;
  for (const auto& [key, record] : db.list()) {
    if (is_ranks(key)) {
      ranks_key = key;
    } else {
      bucket_key = key;
      bucket_record = record;
    }
  }
  ASSERT_FALSE(bucket_key.empty());
  ASSERT_FALSE(ranks_key.empty());
  const std::string first = bucket_record.winner;
  ASSERT_TRUE(first == ours1 || first == ours2) << first;
  const std::string second = first == ours1 ? ours2 : ours1;
  auto timed_in = [&](const std::string& choice) {
    const auto rec = db.get(ranks_key);
    return rec && std::any_of(rec->timings.begin(), rec->timings.end(),
                              [&](const tune::Timing& t) { return t.choice == choice; });
  };
  EXPECT_TRUE(timed_in(first));
  EXPECT_FALSE(timed_in(second));
  // The bucket's record now names the other tile (as a record of the fleet's cache might).
  bucket_record.winner = second;
  db.put(bucket_key, bucket_record);
  tune::forget_in_memory();
  const TuningStats s2 = tuning_stats();
  const std::string ran = call(2800, o);
  EXPECT_EQ(tuning_stats().rank_tunings - s2.rank_tunings, 1u) << "the record of " << first << " held for " << second;
  EXPECT_EQ(tuning_stats().tuned, s2.tuned);
  EXPECT_TRUE(timed_in(second));
  EXPECT_TRUE(ran == second || ran.rfind("cublaslt_algo", 0) == 0) << ran;
  // That record is current: a new process reads it without timing.
  tune::forget_in_memory();
  const TuningStats s3 = tuning_stats();
  EXPECT_EQ(call(2800, o), ran);
  EXPECT_EQ(tuning_stats().rank_tunings, s3.rank_tunings);
}

TEST_F(TuneBuckets, LibraryRanksWaitForACallOutsideACapture) {
  // Inside a graph capture nothing is timed: the call runs the bucket's winner and does not remember it, so that the
  // first call of that M outside a capture times cuBLASLt's ranks.
  shape(3100, 2048, 1024);
  Options o = benchmark();
  o.library_ranks_per_m = true;
  o.choice_regex = "^cublaslt_algo";
  call(3072, o);  // the bucket 2561..3072
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  Options captured = o;
  captured.stream = stream;
  Matrix out = make_matrix(DType::bf16, 2900, n_, false, 8, rng_, false);
  TensorView va = a_->view();
  va.sizes[0] = 2900;
  const uint64_t before = tuning_stats().rank_tunings;
  cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  std::string error;
  try {
    mm(va, b_->view(), out.view(), captured);
  } catch (const std::exception& e) {
    error = e.what();
  }
  cudaGraph_t graph = nullptr;
  cuda_ok(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  if (graph) cudaGraphDestroy(graph);
  cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  EXPECT_EQ(error, "");
  EXPECT_EQ(tuning_stats().rank_tunings, before);  // nothing timed inside the capture
  const std::string ran = call(2900, o);
  EXPECT_EQ(tuning_stats().rank_tunings - before, 1u) << ran;
}

TEST_F(TuneBuckets, PreloadReadiesEveryBucket) {
  shape(320, 1536, 768);
  const std::string model = (std::filesystem::path(tune::TuningDb::default_path()).parent_path() / "model.json").string();
  {
    std::ofstream f(model);
    f << R"({"m": [257, 320], "weights": [{"op": "mm", "n": 1536, "k": 768, "dtype": "bf16", "layout": "rc"}]})";
  }
  const std::string winner = call(300, benchmark());  // the one bucket, 257..320, tuned as offline tuning would
  tune::forget_in_memory();                           // a serving process starts
  Options cached = Options::defaults_only();
  cached.tuning = Tuning::cached_only;
  const PreloadStats ps = preload_model(model, 0, cached);
  EXPECT_GE(ps.warm_runs, 1u);
  EXPECT_EQ(ps.buckets, 1u);
  EXPECT_EQ(ps.winners, 1u);
  EXPECT_EQ(ps.misses, 0u);
  // A new M of the bucket: the winner held in memory, nothing enumerated, read or loaded.
  Matrix out = make_matrix(DType::bf16, 270, n_, false, 8, rng_, false);
  TensorView va = a_->view();
  va.sizes[0] = 270;
  const TuningStats s0 = tuning_stats();
  mm(va, b_->view(), out.view(), cached);
  const TuningStats s1 = tuning_stats();
  cuda_ok(cudaDeviceSynchronize(), "mm");
  EXPECT_EQ(s1.bucket_hits - s0.bucket_hits, 1u);
  EXPECT_EQ(s1.db_hits, s0.db_hits);
  EXPECT_EQ(s1.modules_loaded, s0.modules_loaded);
  EXPECT_EQ(s1.cached_only_misses, s0.cached_only_misses);
  const Check chk = compare(out, reference_gemm(rows(270), *b_, 270, n_, k_));
  EXPECT_EQ(chk.nan_count, 0) << chk.first_bad;
  EXPECT_LE(chk.rel_err, 1e-2) << chk.first_bad;
  EXPECT_EQ(tune::choose(make_mm_problem(va, b_->view(), out.view()), cached)->name(), winner);
  EXPECT_THROW(preload_model(model + ".missing", 0, cached), Error);
}

}  // namespace
}  // namespace tmagemm::testing
