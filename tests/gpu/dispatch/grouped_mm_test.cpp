// grouped_mm_test.cpp (GPU) — grouped_mm (the MoE forward: a (total_M, K), b (G, K, N), int32 end rows in device
// memory, out (total_M, N)) through persistent TMA's grouped schedule: random group sizes with empty groups, groups of
// one row and sizes that are no multiple of any tile, both layouts of b, f16 and an f32 out, G from 1 to 256; each
// group's rows against the reference of that group alone, rows past the last group untouched; a CUDA graph
// captured once and replayed with new offsets; the tuned call, and a new routing of the same shape that does not tune
// again; the stream-K configs (TMAGEMM_GROUPED_STREAM_K=1) forced on partial waves, twice for the same bits, and in a
// graph replayed with routings of other tile counts, the worst split in a workspace of exactly its size, the counters
// from the stream's clean buffer (TMAGEMM_STREAM_K_CLEAN_COUNTERS=1); a model file's experts tuned offline and
// preloaded. Outputs are poisoned first.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "choices/persistent_tma.hpp"
#include "cpu/test_support.hpp"
#include "gpu/gpu_util.hpp"
#include "tune/benchmark.hpp"
#include "tune/model.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::testing {
namespace {

class GroupedMm : public ::testing::Test {
 protected:
  void SetUp() override {
    TMAGEMM_REQUIRE_GPU();
    tune::forget_in_memory();
  }
  void TearDown() override { tune::forget_in_memory(); }
  std::mt19937 rng{777};
};

// Group sizes summing to `rows`, uneven (random cuts), with group 1 empty and group 2 of one row when there are enough
// groups; returned as end rows.
std::vector<int32_t> random_ends(int64_t groups, int64_t rows, std::mt19937& rng) {
  std::vector<int64_t> cuts(static_cast<std::size_t>(groups - 1));
  std::uniform_int_distribution<int64_t> pick(0, rows);
  for (auto& c : cuts) c = pick(rng);
  std::sort(cuts.begin(), cuts.end());
  if (groups > 2) cuts[1] = cuts[0];
  if (groups > 3) cuts[2] = std::min(cuts[1] + 1, rows);
  std::sort(cuts.begin(), cuts.end());
  std::vector<int32_t> ends;
  for (int64_t c : cuts) ends.push_back(static_cast<int32_t>(c));
  ends.push_back(static_cast<int32_t>(rows));
  return ends;
}

struct Grouped {
  int64_t groups, total_m, n, k;
  bool b_col = false;  // b's matrices column-major (K contiguous: b given as (G, N, K) transposed)
  DType in = DType::bf16, out = DType::bf16;
};

struct Buffers {
  Matrix a, b, out;
  std::unique_ptr<DeviceBuffer> offs;
  TensorView vo;  // offs as a (G) int32 view
};

Buffers make_buffers(const Grouped& c, std::mt19937& rng) {
  Buffers x{make_matrix(c.in, c.total_m, c.k, false, 8, rng, true),
            make_matrix(c.in, c.k, c.n, c.b_col, 8, rng, true, c.groups, true),
            make_matrix(c.out, c.total_m, c.n, false, 8, rng, false),
            std::make_unique<DeviceBuffer>(static_cast<std::size_t>(c.groups) * 4),
            {}};
  x.vo = TensorView::contiguous(x.offs->ptr, DType::i32, {c.groups});
  return x;
}

void upload_ends(Buffers& x, const std::vector<int32_t>& ends) {
  cuda_ok(cudaMemcpy(x.offs->ptr, ends.data(), ends.size() * 4, cudaMemcpyHostToDevice), "upload offs");
}

// Each group's rows of out against that group's own product; rows past the last group must still hold the poison.
void check_groups(Buffers& x, const Grouped& c, const std::vector<int32_t>& ends) {
  x.out.download();
  const std::size_t es = x.a.elem();
  double num = 0, den = 0;
  int64_t nan = 0;
  for (int64_t g = 0; g < c.groups; ++g) {
    const int64_t start = g ? ends[g - 1] : 0, end = ends[g];
    if (end <= start) continue;
    TensorView va = x.a.view();
    va.data = static_cast<char*>(x.a.dev->ptr) + start * x.a.ld * static_cast<int64_t>(es);
    va.sizes[0] = end - start;
    TensorView vb = x.b.view();  // matrix g of b as a 2-D view
    vb.rank = 2;
    vb.data = static_cast<char*>(x.b.dev->ptr) + g * x.b.batch_stride * static_cast<int64_t>(es);
    vb.sizes[0] = c.k;
    vb.sizes[1] = c.n;
    vb.strides[0] = c.b_col ? 1 : x.b.ld;
    vb.strides[1] = c.b_col ? x.b.ld : 1;
    const std::vector<float> ref = reference_views(va, vb);
    for (int64_t r = start; r < end; ++r)
      for (int64_t col = 0; col < c.n; ++col) {
        const float v = x.out.get(0, r, col);
        const double e = ref[(r - start) * c.n + col];
        if (!std::isfinite(v)) {
          ++nan;
          continue;
        }
        num += (v - e) * (v - e);
        den += e * e;
      }
  }
  EXPECT_EQ(nan, 0);
  EXPECT_LE(std::sqrt(num / std::max(den, 1e-30)), 1e-2);
  int64_t touched = 0;
  for (int64_t r = ends.back(); r < c.total_m; ++r)
    for (int64_t col = 0; col < c.n; ++col) touched += std::isnan(x.out.get(0, r, col)) ? 0 : 1;
  EXPECT_EQ(touched, 0) << "rows past the last group were written";
}

void run_and_check(const Grouped& c, const std::vector<int32_t>& ends, const Options& o, std::mt19937& rng) {
  SCOPED_TRACE(fmt::format("G={} total_M={} N={} K={} b_col={} in={} out={}", c.groups, c.total_m, c.n, c.k, c.b_col,
                           to_string(c.in), to_string(c.out)));
  Buffers x = make_buffers(c, rng);
  upload_ends(x, ends);
  grouped_mm(x.a.view(), x.b.view(), x.vo, x.out.view(), o);
  cuda_ok(cudaDeviceSynchronize(), "grouped_mm");
  check_groups(x, c, ends);
}

TEST_F(GroupedMm, RandomGroupsEveryLayout) {
  for (const Grouped& c : {Grouped{8, 1000, 256, 192}, Grouped{8, 1000, 256, 192, true}, Grouped{4, 515, 136, 72},
                           Grouped{64, 3000, 384, 256}, Grouped{64, 3000, 384, 256, true},
                           Grouped{8, 777, 200, 136, false, DType::f16, DType::f16},
                           Grouped{8, 777, 200, 136, false, DType::bf16, DType::f32}, Grouped{1, 300, 128, 64},
                           Grouped{256, 4100, 128, 128}})
    run_and_check(c, random_ends(c.groups, c.total_m, rng), backend_only("persistent_tma"), rng);
}

TEST_F(GroupedMm, EveryConfig) {
  // Each grouped kernel the tuner may pick, launched through choice_regex, on one uneven routing (groups ending inside
  // a 64-row fragment: the TMA-store configs store those fragments with plain stores).
  const Grouped c{6, 1300, 320, 256};
  const std::vector<int32_t> ends = random_ends(c.groups, c.total_m, rng);
  Buffers probe = make_buffers(c, rng);
  upload_ends(probe, ends);
  int ran = 0, tma_store = 0;
  for (const ChoiceReport& r :
       explain_grouped_mm(probe.a.view(), probe.b.view(), probe.vo, probe.out.view(), backend_only("persistent_tma"))
           .choices) {
    if (!r.applicable) {
      EXPECT_FALSE(r.reason.empty()) << r.name;
      continue;
    }
    SCOPED_TRACE(r.name);
    Options o = backend_only("persistent_tma");
    o.choice_regex = "^" + r.name + "$";
    run_and_check(c, ends, o, rng);
    ++ran;
    tma_store += r.name.find("tmastore") != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(ran, 3);
  EXPECT_GE(tma_store, 3) << "the TMA-store configs take grouped_mm";
}

TEST_F(GroupedMm, OffsetsPastTheEndAndEmptyGroups) {
  const Grouped c{5, 640, 192, 128};
  run_and_check(c, {0, 0, 100, 100, 500}, backend_only("persistent_tma"), rng);  // rows 500.. belong to no group
  run_and_check(c, {0, 0, 0, 0, 0}, backend_only("persistent_tma"), rng);        // every group empty
}

// grouped_mm captured once in a CUDA graph on a stream of its own (options `o`; tune before, outside the capture),
// then replayed once per routing: the routing's end rows uploaded, out poisoned, the replay's groups checked.
void replay_routings(Buffers& x, const Grouped& c, Options o, const std::vector<std::vector<int32_t>>& routings) {
  cudaStream_t stream;
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  o.stream = stream;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
  grouped_mm(x.a.view(), x.b.view(), x.vo, x.out.view(), o);
  cuda_ok(cudaStreamEndCapture(stream, &graph), "end capture");
  cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  for (std::size_t round = 0; round < routings.size(); ++round) {
    SCOPED_TRACE(round);
    upload_ends(x, routings[round]);
    cuda_ok(cudaMemset(x.out.dev->ptr, 0xff, x.out.host.size()), "poison out");
    cuda_ok(cudaGraphLaunch(exec, stream), "replay");
    cuda_ok(cudaStreamSynchronize(stream), "replay sync");
    check_groups(x, c, routings[round]);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(GroupedMm, GraphReplayWithNewOffsets) {
  const Grouped c{8, 2048, 256, 256};
  Buffers x = make_buffers(c, rng);
  upload_ends(x, random_ends(c.groups, c.total_m, rng));
  const Options o = backend_only("persistent_tma", Tuning::benchmark);
  grouped_mm(x.a.view(), x.b.view(), x.vo, x.out.view(), o);  // tuned outside the capture
  cuda_ok(cudaDeviceSynchronize(), "grouped_mm");
  std::vector<std::vector<int32_t>> routings;
  for (int round = 0; round < 3; ++round) routings.push_back(random_ends(c.groups, c.total_m, rng));
  replay_routings(x, c, o, routings);
}

// Tunes class `first` (benchmark mode, `backend` alone or every backend for ""), then a call of `later` (the same
// class: a new routing, maybe a few more tokens) in cached_only mode: explain shows the selected choice with its tuned
// time, and the call is correct and finds the class's winner (no cached_only miss).
void tuned_once_for_the_class(const Grouped& first, const Grouped& later, const char* backend, std::mt19937& rng) {
  FreshTuningDb db;
  const Options o = backend_only(backend, Tuning::benchmark);
  run_and_check(first, random_ends(first.groups, first.total_m, rng), o, rng);
  Options cached = o;
  cached.tuning = Tuning::cached_only;
  Buffers x = make_buffers(later, rng);
  upload_ends(x, random_ends(later.groups, later.total_m, rng));
  bool tuned = false;
  for (const ChoiceReport& r : explain_grouped_mm(x.a.view(), x.b.view(), x.vo, x.out.view(), cached).choices)
    tuned = tuned || (r.selected && r.tuned_ms.has_value() && *r.tuned_ms > 0);
  EXPECT_TRUE(tuned) << "the shape class's winner is known from the first routing";
  const TuningStats before = tuning_stats();
  run_and_check(later, random_ends(later.groups, later.total_m, rng), cached, rng);
  EXPECT_EQ(tuning_stats().cached_only_misses, before.cached_only_misses) << "the class's winner was found";
}

TEST_F(GroupedMm, TunedOnceForTheShapeClass) {
  // A new routing of the same tokens, and a few more tokens (the same power-of-two class): no new tuning.
  tuned_once_for_the_class(Grouped{8, 4096, 512, 512}, Grouped{8, 4000, 512, 512}, "", rng);
}

// A sparse class (MoE decode: 64 tokens over 64 experts) is timed over several draws of the tuning router
// (tuning_group_routings); the call is right, its winner is recorded for the class, and a new routing of the class
// runs it without tuning again.
TEST_F(GroupedMm, SparseClassTunedOverSeveralRoutings) {
  tuned_once_for_the_class(Grouped{64, 64, 512, 1024}, Grouped{64, 64, 512, 1024}, "persistent_tma", rng);
}

// The tuner's benchmark of a sparse class checks and times every candidate on each of the class's routings (three
// draws of the tuning router for 64 tokens over 64 experts), and a dense class on its representative routing alone;
// every candidate it kept meets the accuracy bound on each.
TEST_F(GroupedMm, SparseClassCheckedAndTimedOnEveryRouting) {
  struct Case {
    Grouped shape;
    int routings;
  };
  for (const Case& k : {Case{Grouped{64, 64, 512, 1024}, 3}, Case{Grouped{8, 4096, 512, 512}, 1}}) {
    SCOPED_TRACE(::testing::Message() << k.shape.groups << " x " << k.shape.total_m);
    Buffers x = make_buffers(k.shape, rng);
    upload_ends(x, random_ends(k.shape.groups, k.shape.total_m, rng));
    const GemmProblem p = make_grouped_mm_problem(x.a.view(), x.b.view(), x.vo, x.out.view());
    ASSERT_EQ(tuning_group_routings(p.m, p.batch).size(), static_cast<std::size_t>(k.routings));
    const Options o = backend_only("persistent_tma", Tuning::benchmark);
    std::vector<choices::ChoicePtr> usable;
    for (const auto& c : tune::enumerate(p, o))
      if (c.reason.empty()) usable.push_back(c.choice);
    ASSERT_FALSE(usable.empty());
    const tune::Tuned t = tune::benchmark(p, o, usable);
    EXPECT_EQ(t.routings, k.routings);
    ASSERT_TRUE(t.winner);
    EXPECT_EQ(t.errors.size(), usable.size());  // every candidate checked (none failed to compile or run)
    for (const auto& [name, err] : t.errors) EXPECT_LE(err, t.error_bound) << name;
  }
}

TEST_F(GroupedMm, AModelFilesExpertsTuneOfflineAndPreload) {
  // `tmagemm tune --model`'s path for a grouped_mm weight (tune::model_jobs, tune_job: the bucket's largest token
  // count on the tuner's own routing), then a serving process (cached_only) that preloads the model, its warm run on
  // zeroed offsets (every group empty) included: a call of another routing in the class runs the stored winner, tunes
  // nothing, and is correct.
  FreshTuningDb db;
  const std::string text =
      R"({"m": [65, 128], "weights": [{"op": "grouped_mm", "groups": 8, "n": 256, "k": 192, "layout": "rr"}]})";
  const tune::Model model = tune::parse_model(text, "moe.json");
  const std::vector<tune::ModelJob> jobs = tune::model_jobs(model);
  ASSERT_EQ(jobs.size(), 1u);  // tokens 65..128, one power-of-two class
  const Options o = backend_only("", Tuning::benchmark);
  EXPECT_TRUE(tune::tune_job(model, jobs[0], 0, o).tuned);
  tune::forget_in_memory();  // a serving process starts
  Options cached = o;
  cached.tuning = Tuning::cached_only;
  const PreloadStats ps = preload_model_json(text, "moe.json", 0, cached, true);
  EXPECT_EQ(ps.buckets, 1u);
  EXPECT_EQ(ps.winners, 1u);
  EXPECT_EQ(ps.misses, 0u);
  EXPECT_GE(ps.warm_runs, 1u);
  const TuningStats before = tuning_stats();
  run_and_check(Grouped{8, 100, 256, 192}, random_ends(8, 100, rng), cached, rng);
  EXPECT_EQ(tuning_stats().cached_only_misses, before.cached_only_misses);
  EXPECT_EQ(tuning_stats().tuned, before.tuned);
}

// The stream-K configs, switched on for grouped_mm by TMAGEMM_GROUPED_STREAM_K=1 (persistent_tma.cpp): the tile count
// comes from the group ends on the device, the workspace is sized on the host for any count.
const char* kStreamKConfigs[] = {"persistent_tma_128x256x64_s4_c2_g8_tmastore_sk",
                                 "persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk",
                                 "persistent_tma_128x128x64_s6_c2_g8_tmastore_sk"};

// Options that run exactly `config` (heuristic mode), and a check that it is the one selected for the buffers.
Options forced(const char* config, Buffers& x) {
  Options o = backend_only("persistent_tma");
  o.choice_regex = fmt::format("^{}$", config);
  int selected = 0;
  for (const ChoiceReport& r : explain_grouped_mm(x.a.view(), x.b.view(), x.vo, x.out.view(), o).choices)
    if (r.selected) {
      EXPECT_EQ(r.name, config);
      ++selected;
    }
  EXPECT_EQ(selected, 1) << config << " is not selected";
  return o;
}

TEST_F(GroupedMm, StreamKSharesOutThePartialWave) {
  test_support::EnvGuard on("TMAGEMM_GROUPED_STREAM_K", std::string("1"));
  // One wave and a part of 128x256 tiles; fewer tiles than clusters (every tile split); many groups with empty ones;
  // one group (a wave and a part of each config's tiles on 132 SMs: 165 tiles of 128x256, 330 of 128x128, 83 pairs in
  // 2x1 clusters); K tails; both layouts of b; f16. (The stream-K configs store through TMA: 16-bit outputs only.)
  for (const char* config : kStreamKConfigs) {
    SCOPED_TRACE(config);
    for (const Grouped& c : {Grouped{8, 2500, 2048, 1000}, Grouped{8, 2500, 2048, 1000, true}, Grouped{4, 600, 512, 520},
                             Grouped{64, 3000, 384, 256}, Grouped{1, 4100, 1280, 2048},
                             Grouped{8, 777, 2200, 136, false, DType::f16, DType::f16}}) {
      Buffers probe = make_buffers(c, rng);
      const std::vector<int32_t> ends = random_ends(c.groups, c.total_m, rng);
      upload_ends(probe, ends);
      run_and_check(c, ends, forced(config, probe), rng);
    }
    // Every group empty: no tile at all.
    const Grouped empty{5, 640, 192, 128};
    Buffers probe = make_buffers(empty, rng);
    upload_ends(probe, {0, 0, 0, 0, 0});
    run_and_check(empty, {0, 0, 0, 0, 0}, forced(config, probe), rng);
  }
}

TEST_F(GroupedMm, StreamKWorstSplitInAWorkspaceOfExactlyItsSize) {
  // The split the workspace bound is tight for: 131 tiles of 128x256 on 132 CTAs (one group of 131 M blocks, one N
  // block) with 132 K blocks, so each split tile has 3 segments: 393 slot segments, 3 x 132 - 3. The choice is
  // launched in a buffer of exactly workspace_bytes (the library's per-stream buffer only grows, so an overrun there
  // could land in room a larger earlier call left): memcheck sees a byte past it. Needs all 132 SMs (an H200).
  test_support::EnvGuard on("TMAGEMM_GROUPED_STREAM_K", std::string("1"));
  if (runtime::device_info(0).sm_count != 132) GTEST_SKIP() << "sized for 132 SMs";
  const Grouped c{1, 131 * 128, 256, 132 * 64};
  const char* config = kStreamKConfigs[0];
  Buffers x = make_buffers(c, rng);
  const std::vector<int32_t> ends{static_cast<int32_t>(c.total_m)};
  upload_ends(x, ends);
  const Options o = forced(config, x);
  const GemmProblem p = make_grouped_mm_problem(x.a.view(), x.b.view(), x.vo, x.out.view());
  const choices::ChoicePtr choice = tune::choose(p, o);
  ASSERT_EQ(choice->name(), config);
  const std::size_t bytes = choice->workspace_bytes(p);
  EXPECT_EQ(bytes, std::size_t{393} * 128 * 256 * 4 + 131 * 2 * 4);
  DeviceBuffer workspace(bytes);
  choice->launch(p, nullptr, o, workspace.ptr);
  cuda_ok(cudaDeviceSynchronize(), "grouped_mm in its own workspace");
  check_groups(x, c, ends);
}

TEST_F(GroupedMm, StreamKGivesTheSameBitsTwice) {
  test_support::EnvGuard on("TMAGEMM_GROUPED_STREAM_K", std::string("1"));
  const Grouped c{8, 2500, 2048, 1000};
  for (const char* config : kStreamKConfigs) {
    SCOPED_TRACE(config);
    Buffers x = make_buffers(c, rng);
    upload_ends(x, random_ends(c.groups, c.total_m, rng));
    const Options o = forced(config, x);
    grouped_mm(x.a.view(), x.b.view(), x.vo, x.out.view(), o);
    cuda_ok(cudaDeviceSynchronize(), "grouped_mm");
    x.out.download();
    const std::vector<unsigned char> first = x.out.host;
    cuda_ok(cudaMemset(x.out.dev->ptr, 0xff, x.out.host.size()), "poison out");
    grouped_mm(x.a.view(), x.b.view(), x.vo, x.out.view(), o);
    cuda_ok(cudaDeviceSynchronize(), "grouped_mm");
    x.out.download();
    EXPECT_TRUE(first == x.out.host) << "two runs of the same routing differ";
  }
}

TEST_F(GroupedMm, StreamKGraphReplayWithRoutingsOfOtherTileCounts) {
  // The workspace is bound into the graph once; each replay's routing gives another tile count, so another split:
  // few rows (few tiles), every group holding rows, all rows in one group.
  test_support::EnvGuard on("TMAGEMM_GROUPED_STREAM_K", std::string("1"));
  const Grouped c{16, 3000, 1024, 1024};
  for (const char* config : {kStreamKConfigs[0], kStreamKConfigs[1]}) {
    SCOPED_TRACE(config);
    Buffers x = make_buffers(c, rng);
    upload_ends(x, random_ends(c.groups, c.total_m, rng));
    const Options o = forced(config, x);
    replay_routings(x, c, o,
                    {random_ends(c.groups, 300, rng), random_ends(c.groups, c.total_m, rng),
                     std::vector<int32_t>(static_cast<std::size_t>(c.groups), static_cast<int32_t>(c.total_m))});
  }
}

TEST_F(GroupedMm, StreamKWithCleanCounters) {
  // Grouped stream-K with TMAGEMM_STREAM_K_CLEAN_COUNTERS=1: routings of other tile counts one after another on the
  // null stream take their counters from its clean buffer (no memset), which each launch leaves at zero.
  test_support::EnvGuard sk("TMAGEMM_GROUPED_STREAM_K", std::string("1"));
  test_support::EnvGuard clean("TMAGEMM_STREAM_K_CLEAN_COUNTERS", std::string("1"));
  int device = 0;
  cuda_ok(cudaGetDevice(&device), "cudaGetDevice");
  const Grouped c{8, 4100, 1280, 1000};
  for (const char* config : kStreamKConfigs)
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE(fmt::format("{} round {}", config, round));
      Buffers x = make_buffers(c, rng);
      const std::vector<int32_t> ends = random_ends(c.groups, c.total_m, rng);
      upload_ends(x, ends);
      const std::uint64_t before = choices::stream_k_clean_launches();
      grouped_mm(x.a.view(), x.b.view(), x.vo, x.out.view(), forced(config, x));
      cuda_ok(cudaDeviceSynchronize(), "grouped_mm");
      EXPECT_EQ(choices::stream_k_clean_launches() - before, 1u);
      check_groups(x, c, ends);
      std::vector<unsigned> counters(choices::kCleanCounterBytes / sizeof(unsigned));
      unsigned* buffer = choices::stream_k_clean_counters(device, nullptr);
      ASSERT_NE(buffer, nullptr);
      cuda_ok(cudaMemcpy(counters.data(), buffer, choices::kCleanCounterBytes, cudaMemcpyDeviceToHost), "counters");
      EXPECT_EQ(std::count(counters.begin(), counters.end(), 0u), static_cast<std::ptrdiff_t>(counters.size()));
      if (HasFailure()) return;
    }
}

TEST_F(GroupedMm, BadInputIsNamed) {
  const Grouped c{4, 256, 128, 64};
  Buffers x = make_buffers(c, rng);
  TensorView wrong = x.vo;
  wrong.dtype = DType::f32;
  EXPECT_THROW(
      try { grouped_mm(x.a.view(), x.b.view(), wrong, x.out.view()); } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("offs must be int32"), std::string::npos) << e.what();
        throw;
      },
      Error);
  TensorView short_offs = x.vo;
  short_offs.sizes[0] = 3;
  EXPECT_THROW(grouped_mm(x.a.view(), x.b.view(), short_offs, x.out.view()), Error);
}

}  // namespace
}  // namespace tmagemm::testing
