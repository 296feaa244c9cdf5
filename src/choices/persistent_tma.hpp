// persistent_tma.hpp — the persistent TMA + WGMMA backend (device side: kernels/gemm_persistent_tma.cuh).
#pragma once
#include <functional>
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "jit/jit.hpp"
#include "problem/problem.hpp"
#include "runtime/device.hpp"

namespace tmagemm::choices {

// grouped_mm: the groups one launch takes, and the static shared memory of their schedule (kernels/scheduler.cuh:
// kMaxGroups and GroupSchedule, 256 + 1 ints), rounded up. NOTE: the largest TMA-store configs leave 1,984 bytes
// beside their ring and staging blocks (232,448 per block on the H200); compile-check --verbose prints the static
// size ("bytes smem").
constexpr int64_t kMaxGroups = 256;
constexpr std::size_t kGroupScheduleBytes = 1152;


// One row of the config table. Becomes template arguments only in persistent_tma_spec().
struct TmaConfig {
  int bm, bn, bk, stages, consumers, group_m;
  int cluster_m = 1;       // CTAs per cluster along M sharing (multicasting) the B tile: 1 or 2
  int cluster_n = 1;       // CTAs per cluster along N sharing (multicasting) the A tile: 1 or 2
  bool store_tma = false;  // epilogue through shared memory + TMA stores (16-bit row-major TMA-able outputs)
  double weight = 1.0;     // relative full-tile throughput (measured): the heuristic's and the tuner's prescreen
  bool split_n = false;    // consumers share the rows and split the columns (else they split the rows)
  int staging_chunks = 2;  // TMA-store epilogue: [64][64] staging blocks per consumer (N / 64: no wait inside a tile)
  bool tuner_only = false; // never picked by the heuristic (persistent_tma_pick, heuristic mode), only benchmarked
  // A tile that exists to fill the last wave (128x224): the tuner's prescreen keeps it only where
  // persistent_tma_score ranks it first, instead of within the usual margin of the best.
  bool only_when_best = false;
  int in_bytes = 2;        // 2: bf16/f16 inputs (mm, addmm, bmm); 1: fp8 inputs (scaled_mm; K-major A and B)
  // fp8: two-level accumulation, the wgmma accumulators added into fp32 totals every `promote` K blocks
  // (scaled_mm's use_fast_accum = false needs it; 0: the whole K range in the wgmma accumulators).
  int promote = 0;
  // fp8 two-level with promote 1: the consumer's columns in groups of `promote_n` (0: all at once), each group's
  // accumulators waited out and added into the totals before the next group is issued (64 + 128 registers for a
  // 64x256 fragment instead of 2 x 128). With the TMA store the tile is then stored at once (no packed copy).
  int promote_n = 0;
  // Stream-K (kernels/scheduler.cuh, StreamKSchedule): the tiles of the last whole wave and the partial one are shared
  // out among the CTAs by K blocks, a split tile's partial sums added in a fixed order by its last unit (16-bit mm,
  // bmm and addmm, and grouped_mm where TMAGEMM_GROUPED_STREAM_K=1; a workspace of partial sums and counters).
  bool stream_k = false;
  // Ping-pong (kernels/gemm_persistent_tma.cuh kPingPong): each consumer computes whole tiles, the two taking the CTA's
  // tiles in turn with their K loops one after the other, so that one's MMAs cover the other's tile boundary (16-bit
  // mm, bmm and addmm; clusters along M only).
  bool ping_pong = false;
  // Cluster split-K (kernels/cluster_split_k.cuh): 2 puts two CTAs of a cluster on each tile, each computing half of its
  // K blocks, their sums added in distributed shared memory (16-bit mm, bmm and addmm; no multicast cluster, two
  // consumers splitting the rows; one more consumer's fragments of fp32 in shared memory). 1: off.
  int split_k = 1;

  // e.g. "persistent_tma_128x256x64_s4_c2_g8" (+ "_sn", "_cm2", "_cn2", "_tmastore", "_st4", "_sk", "_pp", "_ks2"; fp8:
  // "persistent_tma_fp8_..." and "_p<promote>" + "n<promote_n>")
  std::string name() const;
  std::size_t smem_bytes() const;           // dynamic shared memory the kernel asks for
  int threads() const { return 128 * (consumers + 1); }
  int cluster_size() const { return cluster_m * cluster_n * split_k; }  // CTAs a cluster
};

const std::vector<TmaConfig>& persistent_tma_configs();

// Empty string when the backend can run `problem` with `config` on `device`; else the reason in words.
std::string persistent_tma_can_implement(const GemmProblem& problem, const TmaConfig& config,
                                         const runtime::DeviceInfo& device);
// The same checks that need no device (dtype, op, layouts, TMA rules, tile divisibility).
std::string persistent_tma_can_implement_problem(const GemmProblem& problem, const TmaConfig& config);

// The kernel instantiation for (problem's dtypes and layouts, config). Depends on no extent.
jit::KernelSpec persistent_tma_spec(const GemmProblem& problem, const TmaConfig& config);

// The operands a launch reads exactly once, loaded with an L2 evict_first policy (EpilogueParams::l2_stream: bit 0 A,
// bit 1 B): A where the cluster tile spans N, B where it spans M, unless the operand broadcasts over the batch.
// grouped_mm never (its tiles per group are routed on the device).
int l2_stream_bits(const GemmProblem& problem, const TmaConfig& config);

// Encodes the TMA descriptors and launches on `stream`. The problem must have passed can_implement.
// `workspace`: persistent_tma_workspace_bytes(problem, config) bytes of device memory (stream-K configs; may be null
// otherwise).
void persistent_tma_launch(const GemmProblem& problem, const TmaConfig& config, cudaStream_t stream,
                           int sm_carveout, void* workspace = nullptr);
// Device memory a launch needs beside the operands: 0, or for a stream-K config the split tiles' partial sums and
// counters for the largest of them any grid of the device could split.
std::size_t persistent_tma_workspace_bytes(const GemmProblem& problem, const TmaConfig& config);

// kernels/scheduler.cuh's StreamKSchedule on the host (the same integer arithmetic): how many of `tiles` cluster tiles
// of `k_blocks` K blocks a launch of `workers` clusters splits, and the most units one of them has (the segments of a
// workspace slot; StreamKSchedule::max_segments).
struct StreamKLayout {
  int64_t split_tiles = 0, max_segments = 1;
  int64_t per_worker = 0;  // K blocks a worker's shared-out range takes (kernels/scheduler.cuh stream_k_cut)
};
StreamKLayout stream_k_layout(int64_t tiles, int64_t k_blocks, int64_t workers);

// The clusters a launch runs on, given the most that fit at once: one a cluster tile at most, except that a stream-K
// config whose tiles are fewer than the clusters (and have two K blocks or more) shares them out over all of them,
// every tile split by K blocks — the schedule the tuner's models assume. (grouped_mm: the tile count bounds the one
// the group ends give on the device.) Until the forty-third session the grid was clamped to the tile count, so that
// such a launch ran whole tiles.
int64_t persistent_tma_workers(const GemmProblem& problem, const TmaConfig& config, int64_t max_clusters);

// A stream-K launch's workspace on `workers` clusters: the split tiles' partial sums ([slot][segment][cluster CTA]
// [BM x BN] floats, rounded up to 256 bytes), then their arrival counters ([slot][cluster CTA][consumer] unsigned).
// mm, bmm, addmm: the layout of the problem's tile count (seg_stride = its max_segments). grouped_mm: the tile count
// is read on the device, so the workspace holds the layout of any count: 3 x workers - 3 slot segments bound every
// split (r < w tiles of at most ceil(w / r) + 1 segments), w - 1 slots' counters; seg_stride 0, the kernel takes its
// own.
struct StreamKWorkspace {
  std::size_t partials_bytes = 0, counter_bytes = 0;
  int seg_stride = 0;
};
StreamKWorkspace stream_k_workspace(const GemmProblem& problem, const TmaConfig& config, int64_t workers);

// The stream-K configs take grouped_mm unless TMAGEMM_GROUPED_STREAM_K=0 (on since measured on the H200).
bool grouped_stream_k_enabled();

// TMAGEMM_STREAM_K_CLEAN_COUNTERS=1: a stream-K launch takes its arrival counters from a buffer of its (device, stream)
// that was zeroed once and that every stream-K kernel leaves at zero (kernels/stream_k_fixup.cuh), instead of zeroing
// them in the workspace by a memset before each launch (one operation less on the stream a call). Not on a captured
// stream nor on the per-thread default stream, which keep the memset. Off by default until measured on the H200.
bool stream_k_clean_counters_enabled();
// The clean counter buffer of (device, stream) — the stream by its process-unique id (cudaStreamGetId: a destroyed
// stream's handle value may come back for another) — allocated and zeroed (on `stream`) at its first use, of
// kCleanCounterBytes; nullptr where it cannot be had (device memory, or kCleanCounterStreams streams already hold one):
// the launch then zeroes counters in its workspace as without the switch.
inline constexpr std::size_t kCleanCounterBytes = 8 * 1024;
inline constexpr std::size_t kCleanCounterStreams = 64;
unsigned* stream_k_clean_counters(int device, cudaStream_t stream);
// How many stream-K launches of this process took their counters from a clean buffer (for tests).
std::uint64_t stream_k_clean_launches();

// A simple rule until the tuner exists: among configs that can run the problem, the one with the smallest
// predicted time = whole waves x tile area / measured tile throughput (TmaConfig::weight).
// Returns nullptr when none applies.
const TmaConfig* persistent_tma_pick(const GemmProblem& problem, const runtime::DeviceInfo& device, int sm_carveout);
// The rule's score of one config (higher is better); the problem must pass can_implement.
double persistent_tma_score(const GemmProblem& problem, const TmaConfig& config, const runtime::DeviceInfo& device,
                            int sm_carveout);

// The backend's prescreen (Backend::prune, persistent_tma.cpp): configs predicted slower than 1 / kPrescreenRatio of
// the best applicable one are not benchmarked.
inline constexpr double kPrescreenRatio = 0.75;

// The rates behind the models' seconds (H200). kGemmFlopsPerS: a tile of weight 1 (128x256) in a long 16-bit GEMM at
// the power cap (680-700 TFLOP/s measured). kStreamBytesPerS: the HBM reads of a streamed weight (decode and MoE
// decode rows: 4.0-4.3 TB/s measured).
inline constexpr double kGemmFlopsPerS = 700e12;
inline constexpr double kStreamBytesPerS = 4.2e12;
// What a stream's loads take, from issue to data in shared memory, with every SM streaming (kLoadLatencyS) and with
// few (kLoadLatencyIdleS); a round of clusters keeps at most (bytes in flight) / latency streaming, the latency taken
// linear in the share of the SMs streaming between the two. H200, a two-point fit of the sessions' measurements (Little's
// law), not a measured latency: the 64-token MoE decode row (64 x 64 x 2048 x 7168, 35 experts reached, 280 tiles of
// 64x256) ran 128x192 s4 and 128x128 s6, ~96 KB of B in flight a CTA, at 3.07 and 2.84 TB/s (0.335 / 0.363 ms: 4.1
// and 4.6 us), where 64x256 s5 and 64x128 s8 (164 and 131 KB) took 0.270 ms, so that 64x256's last round of 16 tiles
// (59 MB) took at most ~40 us beyond two rounds at 4.2 TB/s: <= ~1.75 us with 16 CTAs streaming (docs/perf-notes.md,
// fortieth session).
inline constexpr double kLoadLatencyS = 4e-6;
inline constexpr double kLoadLatencyIdleS = 1.5e-6;
// The roofline of a whole-tile or stream-K config, in seconds: over its rounds of one tile a cluster, each round the
// longer of one tile's compute (the score's tile throughput, in seconds) and the round's share of the problem's
// compulsory bytes (traffic) streamed at kStreamBytesPerS, or slower where the round's clusters keep too few bytes in
// flight (kLoadLatencyS); stream-K's short round shared out over every cluster, plus its partial sums. The prescreen's second chance on memory-bound problems
// (prune, persistent_tma.cpp): there a tile's compute throughput (its weight) says little about its time.
double persistent_tma_roofline_s(const GemmProblem& problem, const TmaConfig& config, const runtime::DeviceInfo& device,
                                 int sm_carveout);

class Choice;
// The config behind a persistent-TMA choice (nullptr for choices of other backends).
const TmaConfig* persistent_tma_config_of(const Choice& choice);

struct Candidate;
// A prune rule shared by persistent TMA and the pad path: on a 16-bit mm, bmm or addmm whose out rows are off 16
// bytes, where some ping-pong config is still a candidate, the other 16-bit TMA-store configs (their consumers store
// the realigned chunks between their own K blocks) are set aside with the reason. Measured on the H200 (thirty-third
// session, docs/perf-notes.md): out ld N + 3, each config against itself aligned, interleaved: ping-pong 0.964-0.976,
// deferred 0.901-0.903; tuned runs 0.958-1.000 against 0.852-0.887, while the tuner's own timings ranked them within
// 2 % either way. config_of: the candidate's config (nullptr: not this backend's).
void set_aside_deferred_plain(const GemmProblem& problem, std::vector<Candidate>& candidates,
                              const std::function<const TmaConfig*(const Candidate&)>& config_of);

// Every distinct kernel the table can produce (dtype x layouts x output type x config), for compile-check.
std::vector<jit::KernelSpec> persistent_tma_all_specs();

}  // namespace tmagemm::choices
