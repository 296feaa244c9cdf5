// persistent_tma.cpp — host side of the persistent TMA + WGMMA backend: config table, can_implement,
// KernelSpec rendering, TMA descriptor encoding and launch, the heuristic's score, and the backend's tuning rules
// (the TMA-store twin domination and the prescreen: its Backend::prune).
#include "choices/persistent_tma.hpp"

#include <functional>

#include "choices/choice.hpp"
#include "choices/epilogue_params.hpp"
#include "choices/kernel_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"
#include "runtime/tensor_map.hpp"
#include "tmagemm/error.hpp"

namespace tmagemm::choices {

namespace {

constexpr std::size_t kBarrierBytes = 8;

bool is_16bit_float(DType d) { return d == DType::bf16 || d == DType::f16; }
bool is_fp8(DType d) { return d == DType::e4m3 || d == DType::e5m2; }
// The kernel's kFp8A / kFp8B: 0 a 16-bit type, 1 e4m3, 2 e5m2.
// make_spec's input codes.
int in_code(DType d) { return d == DType::f16 ? 1 : d == DType::e4m3 ? 2 : d == DType::e5m2 ? 3 : 0; }

int out_code(DType d) {
  switch (d) {
    case DType::bf16: return 0;
    case DType::f16: return 1;
    case DType::f32: return 2;
    default: return -1;
  }
}

}  // namespace

std::string TmaConfig::name() const {
  return fmt::format("persistent_tma_{}{}x{}x{}_s{}_c{}{}_g{}{}{}{}{}{}{}{}{}{}", in_bytes == 1 ? "fp8_" : "", bm, bn, bk,
                     stages, consumers,
                     split_n ? "_sn" : "", group_m,
                     cluster_m > 1 ? fmt::format("_cm{}", cluster_m) : std::string(),
                     cluster_n > 1 ? fmt::format("_cn{}", cluster_n) : std::string(), store_tma ? "_tmastore" : "",
                     store_tma && staging_chunks != 2 ? fmt::format("_st{}", staging_chunks) : std::string(),
                     stream_k ? "_sk" : "", ping_pong ? "_pp" : "",
                     promote > 0 ? fmt::format("_p{}", promote) : std::string(),
                     promote_n > 0 ? fmt::format("n{}", promote_n) : std::string(),
                     split_k > 1 ? fmt::format("_ks{}", split_k) : std::string());
}

std::size_t TmaConfig::smem_bytes() const {
  // An N-major B is loaded in whole 64-column chunks (a 224-column tile takes 256 columns of B); sized for that.
  // (fp8 operands are K-major: B takes exactly bn rows.)
  const std::size_t b_rows = in_bytes == 1 ? bn : (bn + 63) / 64 * 64;
  const std::size_t stage = static_cast<std::size_t>(bm + b_rows) * bk * in_bytes;
  const std::size_t staging = store_tma ? static_cast<std::size_t>(consumers) * staging_chunks * 64 * 64 * 2 : 0;
  // Cluster split-K: the peer's fp32 sums for one consumer's rows (kernels/cluster_split_k.cuh).
  const std::size_t received = split_k > 1 ? static_cast<std::size_t>(bm / consumers) * bn * 4 : 0;
  return stage * stages + staging + received + 2 * stages * kBarrierBytes + 1024;  // + 1 KiB to round the base up
}

const std::vector<TmaConfig>& persistent_tma_configs() {
  // bm, bn, bk, stages, consumers, group_m, cluster_m, cluster_n, store_tma, weight, split_n, staging_chunks,
  // tuner_only, only_when_best. The weight is the relative throughput of a full tile measured on an H200
  // (docs/perf-notes.md); persistent_tma_score uses it (the heuristic's pick and the tuner's prescreen).
  static const std::vector<TmaConfig> table = {
      // Direct (masked) stores: any output layout, alignment and dtype.
      {128, 256, 64, 4, 2, 8, 1, 1, false, 0.93},
      {128, 192, 64, 5, 2, 8, 1, 1, false, 0.90},
      {256, 128, 64, 4, 2, 8, 1, 1, false, 0.92},
      {128, 128, 64, 6, 2, 8, 1, 1, false, 0.85},
      {64, 256, 64, 5, 1, 8, 1, 1, false, 0.65},
      {64, 128, 64, 8, 1, 8, 1, 1, false, 0.45},
      {128, 128, 128, 3, 2, 8, 1, 1, false, 0.80},
      // TMA-store epilogue: 16-bit row-major outputs that TMA can address.
      {128, 256, 64, 4, 2, 8, 1, 1, true, 1.00},
      {256, 128, 64, 4, 2, 8, 1, 1, true, 1.00},
      {128, 192, 64, 4, 2, 8, 1, 1, true, 0.97},
      {128, 128, 64, 6, 2, 8, 1, 1, true, 0.93},
      {64, 256, 64, 5, 1, 8, 1, 1, true, 0.70},
      {64, 128, 64, 8, 1, 8, 1, 1, true, 0.50},
      // 2-CTA clusters along M; each CTA loads half of the B tile and multicasts it to both (docs/perf-notes.md).
      // (A 128x128 2x1 config was dropped: it won no shape in the last two sessions' runs, and each config costs
      // ~0.4-0.8 s of a cold tune: 4096^3 tuned in 4.23 s without it against 5.07-5.42 s with it.)
      {128, 256, 64, 4, 2, 8, 2, 1, true, 1.00},
      {256, 128, 64, 4, 2, 8, 2, 1, true, 0.98},
      {64, 128, 64, 8, 1, 8, 2, 1, true, 0.50},
      // A cluster along N (each CTA loads half of the A tile) and a 2x2 cluster (half of A and half of B); the
      // configs below are left to the tuner. Measured (docs/perf-notes.md, v7): 256x128 along N ties 128x256
      // along M on 4096-8192 shapes; 2x2 wins where both operands' rows are misaligned (3000x5000x1000 0.990
      // against 0.972) and loses 10-20 % on aligned shapes; a 64x128 2x2 lost everywhere (0.72-0.75).
      {256, 128, 64, 4, 2, 8, 1, 2, true, 1.00, false, 2, true},
      {128, 256, 64, 4, 2, 8, 2, 2, true, 0.90, false, 2, true},
      // (A 128x256 config in 1x2 clusters, for grouped_mm's groups of a few hundred rows, was timed by the tuner on
      // every grouped shape and lost everywhere: 8.29 against 7.08 ms for the 2x1 cluster at G = 64 x 32768 x 4096 x
      // 14336; the B traffic of 128-row tiles costs more than the idle rows of 256-row cluster tiles. Dropped.)
      // Consumers that split the columns instead of the rows: a 64-row tile with two m64n64 consumers (cuBLASLt
      // runs 1000^3 on a 64x128 2x1 kernel with two consumer warpgroups). 1024^3 0.982 against 0.971 with one
      // consumer; 1000^3 level. (128x256 split this way measured level with 128x256 on 4096-8192 shapes: not kept.)
      {64, 128, 64, 8, 2, 8, 2, 1, true, 0.50, true, 2, true},
      // One stage fewer buys a staging buffer for a whole 64x256 fragment per consumer: the epilogue then never
      // waits for its own stores to read shared memory (1,400-1,900 cycles a tile with two blocks). Measured
      // 1.002-1.008 where 128x256 2x1 read 1.000-1.004 (4096-sized shapes), 0.941 against 0.968 on 3000x5000x1000.
      {128, 256, 64, 3, 2, 8, 2, 1, true, 1.00, false, 4, true},
      // A wave-fitting tile: 512x14336 is 224 tiles of 128x256 (1.70 waves of 132, so two full rounds) but 256
      // tiles of 128x224 (1.94 waves). The fragment's last 32 columns are stored directly; an N-major B is loaded
      // in four 64-column chunks, the last half of which is not read.
      // Measured on 512x14336x4096: rc 1.049-1.054 and rr 1.084-1.088 of cuBLASLt, against 0.943-0.992 for 256x128
      // and 128x256 2x1 (a 2x1 cluster of 128x224: rc 1.039, not kept); 0.979 on 4096x14336x4096 rc, where 128x256
      // fills its waves.
      {128, 224, 64, 4, 2, 8, 1, 1, true, 0.98, false, 2, false, true},
      // Block K 128 for the single-wave 64x128 clustered kernel: half the barrier round trips per K. Measured on
      // 1000^3 (rows 16 bytes off a sector): 0.934 / 0.944 (rr / rc) against 0.911 / 0.920 with block K 64.
      {64, 128, 128, 4, 1, 8, 2, 1, true, 0.50, false, 2, true},
      // Stream-K (kernels/scheduler.cuh): the last whole wave and the partial one shared out by K blocks, a split
      // tile's partial sums added in a fixed order by its last unit. Left to the tuner, which times them against the
      // whole-tile configs (persistent_tma_score counts their waves unrounded).
      {.bm = 128, .bn = 256, .bk = 64, .stages = 4, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.98,
       .tuner_only = true, .stream_k = true},
      {.bm = 128, .bn = 256, .bk = 64, .stages = 4, .consumers = 2, .group_m = 8, .cluster_m = 2, .store_tma = true,
       .weight = 0.98, .tuner_only = true, .stream_k = true},
      {.bm = 128, .bn = 128, .bk = 64, .stages = 6, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.91,
       .tuner_only = true, .stream_k = true},
      // 64-row stream-K for the memory-bound few-row problems (decode, MoE decode): where the tiles are fewer than the
      // SMs (28672 / 256 = 112) every tile is shared out, so that all 132 SMs stream the weight in contiguous K ranges.
      // Streaming 28672 x 8192 (rr) so: 106.9 us against 111.1 on one CTA a tile under the read flush, 119.7 against
      // 123.3 under the write flush (lab/probes/tile_stream.cu grid, H200, forty-second session; on an H100 level).
      // Forced on the decode rows (H200, forty-third session; until then the launch clamped the grid to the tile
      // count, so that the forty-second session's runs of these configs ran whole tiles): behind 64x256 whole tiles
      // by 5-8 % on the 28672 x 8192 rows (read flush 0.875-0.966 of cuBLASLt against 0.951-1.018), ahead of them only
      // where whole tiles leave most SMs idle (4096 x 14336: 16 tiles; 0.70-0.79 against 0.41-0.43) and there behind
      // the skinny kernel. The timelines say why: the loads end when whole tiles' do, and a split tile's fixup (the
      // partial sums written, fenced and counted, then read back by the last unit) adds 9-12k cycles after a unit's
      // last MMA (lab/2026-12-05-session43). Left to the tuner (timed where the prescreen's roofline rule below keeps
      // them; never picked so far).
      {.bm = 64, .bn = 256, .bk = 64, .stages = 5, .consumers = 1, .group_m = 8, .store_tma = true, .weight = 0.70,
       .tuner_only = true, .stream_k = true},
      {.bm = 64, .bn = 128, .bk = 64, .stages = 8, .consumers = 1, .group_m = 8, .store_tma = true, .weight = 0.50,
       .tuner_only = true, .stream_k = true},
      // Cluster split-K (kernels/cluster_split_k.cuh): two CTAs on each tile, each over half of its K blocks, the sums
      // added in distributed shared memory (no workspace, no counter). For shapes whose tiles leave SMs idle (1000^3 is
      // 64 tiles of 128x128, one round on 64 SMs). Two stages fewer than the whole-tile twin make room for the
      // received sums. Left to the tuner, timed where predicted ahead (persistent_tma_score). (A 128x192 one, 3
      // stages, lost to this one and to whole tiles on every shape forced, 0.60-0.78 of cuBLASLt: dropped.)
      {.bm = 128, .bn = 128, .bk = 64, .stages = 4, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.91,
       .tuner_only = true, .split_k = 2},
      // Ping-pong: each consumer on whole tiles, the two taking turns (kernels/gemm_persistent_tma.cuh kPingPong); a
      // consumer holds a 64x256 or 128x128 fragment set. Left to the tuner.
      {.bm = 128, .bn = 128, .bk = 64, .stages = 6, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.95,
       .tuner_only = true, .ping_pong = true},
      {.bm = 128, .bn = 128, .bk = 64, .stages = 6, .consumers = 2, .group_m = 8, .cluster_m = 2, .store_tma = true,
       .weight = 0.97, .tuner_only = true, .ping_pong = true},
      {.bm = 64, .bn = 256, .bk = 64, .stages = 4, .consumers = 2, .group_m = 8, .cluster_m = 2, .store_tma = true,
       .weight = 0.95, .tuner_only = true, .ping_pong = true},
      // FP8 (scaled_mm): K-major e4m3/e5m2 tiles of 128-element rows, block K 128 (one 128-byte swizzle slab).
      // Weights are first guesses from the 16-bit table until measured.
      {.bm = 128, .bn = 256, .bk = 128, .stages = 4, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 1.00,
       .in_bytes = 1},
      {.bm = 128, .bn = 256, .bk = 128, .stages = 4, .consumers = 2, .group_m = 8, .cluster_m = 2, .store_tma = true,
       .weight = 1.00, .in_bytes = 1},
      {.bm = 256, .bn = 128, .bk = 128, .stages = 4, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.98,
       .in_bytes = 1},
      {.bm = 128, .bn = 128, .bk = 128, .stages = 6, .consumers = 2, .group_m = 8, .cluster_m = 2, .store_tma = true,
       .weight = 0.90, .in_bytes = 1},
      {.bm = 64, .bn = 256, .bk = 128, .stages = 5, .consumers = 1, .group_m = 8, .store_tma = true, .weight = 0.65,
       .in_bytes = 1},
      {.bm = 128, .bn = 256, .bk = 128, .stages = 4, .consumers = 2, .group_m = 8, .weight = 0.93, .in_bytes = 1},
      {.bm = 128, .bn = 128, .bk = 128, .stages = 6, .consumers = 2, .group_m = 8, .weight = 0.85, .in_bytes = 1},
      // A narrow tile for few rows: 128 x 8192 is 64 tiles of 128x128 (half the SMs idle) but 128 tiles of 128x64.
      {.bm = 128, .bn = 64, .bk = 128, .stages = 8, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.60,
       .in_bytes = 1},
      // FP8 with two-level accumulation (use_fast_accum = false): the fp32 totals double the accumulator registers,
      // so a consumer holds at most a 64x192 fragment (96 + 96 registers; with the TMA store's packed copy of the
      // previous tile, 64x128).
      {.bm = 128, .bn = 128, .bk = 128, .stages = 6, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.85,
       .in_bytes = 1, .promote = 1},
      {.bm = 128, .bn = 128, .bk = 128, .stages = 6, .consumers = 2, .group_m = 8, .cluster_m = 2, .store_tma = true,
       .weight = 0.88, .in_bytes = 1, .promote = 1},
      {.bm = 128, .bn = 192, .bk = 128, .stages = 5, .consumers = 2, .group_m = 8, .weight = 0.90, .in_bytes = 1,
       .promote = 1},
      {.bm = 128, .bn = 128, .bk = 128, .stages = 6, .consumers = 2, .group_m = 8, .weight = 0.80, .in_bytes = 1,
       .promote = 1},
      {.bm = 128, .bn = 64, .bk = 128, .stages = 8, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.55,
       .in_bytes = 1, .promote = 1},
      // Two-level on the 128x256 tile: each consumer's 256 columns in two wgmma groups of 128 (64 accumulator
      // registers for the group in flight + 128 of totals), the tile stored at once through the staging blocks.
      // Measured on 8192^3 tensorwise: 1170 TFLOP/s against 1097 for 128x128 (docs/perf-notes.md, FP8 v2).
      {.bm = 128, .bn = 256, .bk = 128, .stages = 4, .consumers = 2, .group_m = 8, .store_tma = true, .weight = 0.95,
       .in_bytes = 1, .promote = 1, .promote_n = 128},
      {.bm = 128, .bn = 256, .bk = 128, .stages = 4, .consumers = 2, .group_m = 8, .cluster_m = 2, .store_tma = true,
       .weight = 0.96, .in_bytes = 1, .promote = 1, .promote_n = 128},
      {.bm = 128, .bn = 256, .bk = 128, .stages = 4, .consumers = 2, .group_m = 8, .weight = 0.85, .in_bytes = 1,
       .promote = 1, .promote_n = 128},
  };
  return table;
}

void set_aside_deferred_plain(const GemmProblem& p, std::vector<Candidate>& out,
                              const std::function<const TmaConfig*(const Candidate&)>& config_of) {
  if (p.op != Op::mm && p.op != Op::bmm && p.op != Op::addmm) return;
  // Out's rows (base, row pitch, batch pitch) off 16 bytes: every row stored plain, not only an odd N's last chunk.
  if (p.out.major() != Major::row || row_alignment_bytes(p.out) >= 16) return;
  bool ping_pong = false;
  for (const auto& c : out)
    if (const TmaConfig* cfg = config_of(c); cfg && cfg->ping_pong && c.reason.empty()) ping_pong = true;
  if (!ping_pong) return;
  for (auto& c : out)
    if (const TmaConfig* cfg = config_of(c);
        cfg && c.reason.empty() && cfg->store_tma && !cfg->ping_pong && cfg->in_bytes == 2)
      c.reason =
          "set aside: out's rows are off 16 bytes, and a config storing its realigned chunks between its own K blocks "
          "measured 0.85-0.90 of aligned where ping-pong read 0.96-1.00 (the ping-pong configs are timed instead)";
}

namespace {

// Whether a TMA-store config stores `p`'s output with plain realigned stores (kOutPlain) instead of TMA boxes.
bool out_plain(const GemmProblem& p, const TmaConfig& c) {
  if (!c.store_tma) return false;
  // NOTE: measured on H200: a TMA store clips the inner dimension only at 16-byte granularity (N = 130 bf16 wrote
  // columns 130..135 too), so the TMA box needs rows of a whole number of 16-byte chunks.
  return !can_use_tma(p.out).ok || (p.n * static_cast<int64_t>(itemsize(p.out.dtype))) % 16 != 0;
}

}  // namespace

std::string persistent_tma_can_implement_problem(const GemmProblem& p, const TmaConfig& c) {
  if (p.op != Op::mm && p.op != Op::bmm && p.op != Op::addmm && p.op != Op::scaled_mm && p.op != Op::grouped_mm)
    return fmt::format("op {} is not handled by this template yet", to_string(p.op));
  if (p.op == Op::grouped_mm) {
    if (c.in_bytes == 1) return "grouped_mm takes 16-bit inputs";
    // NOTE: a TMA store writes whole 64-row boxes, clipped only at the tensor's edge: past a group's last row it would
    // write the next group's rows. The kernel stores a fragment that crosses its group's end with plain stores.
    if (c.store_tma && c.promote_n > 0) return "grouped_mm's TMA-store configs take no promotion column groups";
    if (p.batch > kMaxGroups) return fmt::format("grouped_mm takes at most {} groups (got {})", kMaxGroups, p.batch);
  }
  if (c.stream_k && (c.in_bytes == 1 || c.promote > 0)) return "stream-K configs take 16-bit inputs";
  if (c.stream_k && p.op == Op::grouped_mm && !grouped_stream_k_enabled())
    return "stream-K over grouped_mm's tiles is switched off (TMAGEMM_GROUPED_STREAM_K=0)";
  if (c.split_k != 1 && c.split_k != 2) return "cluster split-K takes 1 or 2 CTAs a tile";
  if (c.split_k == 2) {
    if (p.op == Op::grouped_mm || c.in_bytes == 1 || c.promote > 0)
      return "cluster split-K configs take 16-bit mm, bmm and addmm";
    if (c.cluster_m != 1 || c.cluster_n != 1 || c.consumers != 2 || c.split_n || c.ping_pong || c.stream_k)
      return "cluster split-K needs a cluster of its two K halves only (no multicast), two consumers splitting the "
             "rows, whole tiles";
  }
  if (c.ping_pong && (p.op == Op::grouped_mm || c.in_bytes == 1 || c.promote > 0 || c.stream_k || c.split_n ||
                      c.consumers != 2 || c.cluster_n != 1))
    return "ping-pong configs take 16-bit mm, bmm and addmm on two consumers, clusters along M only";
  if (c.in_bytes == 1) {
    if (p.op != Op::scaled_mm || !is_fp8(p.a.dtype) || !is_fp8(p.b.dtype))
      return "an fp8 config takes scaled_mm with fp8 inputs only";
    // NOTE: fp8 wgmma reads both operands K-major (validation enforces torch's layout rule for scaled_mm).
    if (p.a.major() != Major::row || p.b.major() != Major::col)
      return "fp8 operands must be K-major (a row-major, b column-major)";
    if (!p.fast_accum && c.promote == 0)
      return "use_fast_accum = false needs two-level accumulation (a config with promote > 0)";
  } else {
    if (p.op == Op::scaled_mm) return "scaled_mm takes the fp8 configs";
    if (!is_16bit_float(p.a.dtype) || p.a.dtype != p.b.dtype)
      return fmt::format("inputs must be both bf16 or both f16 (got {} and {})", to_string(p.a.dtype),
                         to_string(p.b.dtype));
  }
  if (out_code(p.out.dtype) < 0) return fmt::format("output dtype {} is not bf16, f16 or f32", to_string(p.out.dtype));
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return "empty problem (M, N or K is 0) needs no GEMM kernel";
  // NOTE: each CTA of a cluster split-K pair computes at least one K block (its wgmmas then write every accumulator).
  if (c.split_k == 2 && p.k <= c.bk) return fmt::format("cluster split-K needs K of two K blocks or more (K > {})", c.bk);
  if (c.bk * c.in_bytes != 128 && c.bk * c.in_bytes != 256)
    return "block K must be one or two 128-byte swizzle slabs (64 or 128 16-bit elements, 128 or 256 fp8)";
  if (!c.split_n && !c.ping_pong && c.bm % (64 * c.consumers) != 0)
    return "block M must be a multiple of 64 per consumer warpgroup";
  if (c.ping_pong && (c.bm % 64 != 0 || (c.bm / 64) * (c.bn / 2) > 128))
    return "a ping-pong consumer holds whole 64-row fragments of at most 128 accumulator registers";
  if (c.split_n && (c.bm % 64 != 0 || c.bn % (64 * c.consumers) != 0))
    return "consumers that split the columns need block M a multiple of 64 and 64 columns or more each";
  if (c.bn % 32 != 0 || c.bn > 256) return "block N must be a multiple of 32, at most 256";
  if (c.promote_n > 0 && (c.promote != 1 || c.split_n || c.bn % c.promote_n != 0 || c.promote_n % 8 != 0 ||
                          (c.store_tma && c.bn % 64 != 0)))
    return "promotion column groups need promote 1, rows split between consumers and groups of whole 8-column "
           "blocks dividing block N (64-column chunks with the TMA store)";
  const bool b_kmajor = p.b.major() == Major::col;  // column-major K x N: K contiguous
  if (c.cluster_m != 1 && c.cluster_m != 2) return "a cluster has 1 or 2 CTAs along M";
  if (c.cluster_m == 2 && (b_kmajor ? (c.bn / 2) % 8 != 0 : ((c.bn + 63) / 64) % 2 != 0))
    return b_kmajor ? "a cluster of 2 along M needs block N to split into two multicast halves of whole 8-row atoms"
                    : "a cluster of 2 along M needs block N to split into two multicast halves of 64-column chunks";
  if (c.cluster_n != 1 && c.cluster_n != 2) return "a cluster has 1 or 2 CTAs along N";
  if (c.store_tma) {
    if (c.staging_chunks < 1) return "the TMA-store epilogue needs at least one staging block";
    if (p.out.dtype != DType::bf16 && p.out.dtype != DType::f16) return "TMA-store epilogue needs a bf16 or f16 output";
    if (p.out.major() != Major::row) return "TMA-store epilogue needs a row-major output";
    // An output TMA cannot address is stored from the staging blocks with plain realigned stores (kOutPlain);
    // grouped_mm's outputs keep the TMA store.
    if (p.op == Op::grouped_mm && out_plain(p, c))
      return "grouped_mm's TMA-store epilogue needs an output TMA can address (rows and base on 16 bytes)";
    // (The 128x256 stream-K kernels spill 120-128 bytes of registers with the plain stores' loop.)
    if (c.stream_k && out_plain(p, c))
      return "stream-K configs need an output TMA can address (rows and base on 16 bytes)";
  }
  if (p.a.major() == Major::strided) return "a has no unit stride (TMA needs one contiguous dimension)";
  if (p.b.major() == Major::strided) return "b has no unit stride (TMA needs one contiguous dimension)";
  if (auto t = can_use_tma(p.a); !t.ok) return "a: " + t.reason;
  if (auto t = can_use_tma(p.b); !t.ok) return "b: " + t.reason;
  const int64_t limit = int64_t{1} << 31;
  if (p.m >= limit || p.n >= limit || p.k >= limit || p.batch >= limit)
    return "an extent is 2^31 or more (the kernel indexes tiles with 32-bit integers)";
  return {};
}

std::string persistent_tma_can_implement(const GemmProblem& p, const TmaConfig& c, const runtime::DeviceInfo& d) {
  if (d.cc_major != 9 || d.cc_minor != 0)
    return fmt::format("needs an sm_90 (Hopper) GPU; {} is sm_{}{}", d.name, d.cc_major, d.cc_minor);
  if (std::string why = persistent_tma_can_implement_problem(p, c); !why.empty()) return why;
  const std::size_t smem = c.smem_bytes() + (p.op == Op::grouped_mm ? kGroupScheduleBytes : 0);
  if (smem > d.smem_per_block_optin)
    return fmt::format("needs {} bytes of shared memory; the device allows {} per block", smem, d.smem_per_block_optin);
  return {};
}

namespace {

// in_a / in_b: the kernel's input codes, 0 bf16, 1 f16 (both the same), 2 e4m3, 3 e5m2 (fp8 configs).
// grouped: the grouped_mm kernel (kernels/scheduler.cuh's GroupedTileScheduler).
// out_plain: a TMA-store config's output TMA cannot address, stored with plain realigned stores (kOutPlain).
jit::KernelSpec make_spec(const TmaConfig& c, int in_a, int in_b, bool a_kmajor, bool b_kmajor, int out,
                          const EpilogueSpec& epi = {}, bool grouped = false, bool out_plain = false) {
  static const char* in_names[] = {"bf16", "f16", "e4m3", "e5m2"};
  const bool f16 = in_a == 1;
  const int fp8_a = in_a >= 2 ? in_a - 1 : 0, fp8_b = in_b >= 2 ? in_b - 1 : 0;
  const std::string in_name = in_a == in_b ? in_names[in_a] : fmt::format("{}{}", in_names[in_a], in_names[in_b]);
  if (c.store_tma && out == 2) out = 0;  // never instantiated: TMA store takes 16-bit outputs only
  static const char* out_names[] = {"bf16", "f16", "f32"};
  const bool trace = !trace_path().empty();
  const bool realloc = c.consumers >= 2;  // NOTE: setmaxnreg needs a known entry register count (<= 168 at 384 threads)
  const KernelConfig config{
      "TmagemmTmaConfig",
      {{int_field("kBM", c.bm), int_field("kBN", c.bn), int_field("kBK", c.bk), int_field("kStages", c.stages),
        int_field("kConsumers", c.consumers), int_field("kGroupM", c.group_m)},
       {bool_field("kSplitN", c.split_n)},
       {int_field("kStagingChunks", std::max(1, c.staging_chunks))},
       {int_field("kClusterM", c.cluster_m), int_field("kClusterN", c.cluster_n), int_field("kClusterK", c.split_k)},
       {bool_field("kStoreTma", c.store_tma), bool_field("kOutPlain", c.store_tma && out_plain)},
       {bool_field("kAKMajor", a_kmajor), bool_field("kBKMajor", b_kmajor), bool_field("kF16", f16)},
       {int_field("kFp8A", fp8_a), int_field("kFp8B", fp8_b), int_field("kPromote", c.promote),
        int_field("kPromoteCols", c.promote_n)},
       {int_field("kOut", out), int_field("kProducerRegs", realloc ? 40 : 0),
        int_field("kConsumerRegs", realloc ? 232 : 0)},
       {bool_field("kTrace", trace), bool_field("kGrouped", grouped), bool_field("kStreamK", c.stream_k),
        bool_field("kPingPong", c.ping_pong)}}};
  return config_kernel_spec(fmt::format("{}_{}_{}{}_{}{}{}{}{}", c.name(), in_name, a_kmajor ? "r" : "c",
                                        b_kmajor ? "c" : "r", out_names[out], c.store_tma && out_plain ? "_plain" : "",
                                        epi.suffix(), grouped ? "_grouped" : "", trace ? "_trace" : ""),
                            "gemm_persistent_tma.cuh", "tmagemm::kernels::gemm_persistent_tma", config, epi);
}

}  // namespace

jit::KernelSpec persistent_tma_spec(const GemmProblem& p, const TmaConfig& c) {
  // A row-major (K contiguous) is K-major; B column-major (K contiguous) is K-major.
  return make_spec(c, in_code(p.a.dtype), in_code(p.b.dtype), p.a.major() == Major::row, p.b.major() == Major::col,
                   out_code(p.out.dtype), epilogue_spec(p), p.op == Op::grouped_mm, out_plain(p, c));
}

std::vector<jit::KernelSpec> persistent_tma_all_specs() {
  std::vector<jit::KernelSpec> specs;
  for (const auto& c : persistent_tma_configs()) {
    if (c.ping_pong) {  // bf16 in every layout
      for (bool ak : {true, false})
        for (bool bk : {true, false}) specs.push_back(make_spec(c, 0, 0, ak, bk, 0));
      continue;
    }
    if (c.in_bytes == 1) {  // fp8: K-major only; e4m3 x e4m3 for every output, the mixed pairs on bf16
      for (int out : {0, 1, 2})
        if (!(c.store_tma && out == 2)) specs.push_back(make_spec(c, 2, 2, true, true, out));
      specs.push_back(make_spec(c, 2, 3, true, true, 0));
      specs.push_back(make_spec(c, 3, 2, true, true, 0));
      continue;
    }
    for (int in : {0, 1})
      for (bool ak : {true, false})
        for (bool bk : {true, false})
          for (int out : {0, 1, 2})
            if (!(c.store_tma && out == 2)) specs.push_back(make_spec(c, in, in, ak, bk, out));
  }
  // Epilogue variants (addmm): a sample on the first TMA-store config, so that compile-check covers every activation
  // and bias type without multiplying the table.
  for (const auto& c : persistent_tma_configs())
    if (c.store_tma) {
      for (const EpilogueSpec& e : epilogue_samples()) specs.push_back(make_spec(c, 0, 0, true, false, 0, e));
      break;
    }
  // Outputs TMA cannot address (kOutPlain): every 16-bit TMA-store config but stream-K once (bf16, A row-major, B
  // N-major), f16 and the other layouts on the first.
  bool first_plain = true;
  for (const auto& c : persistent_tma_configs())
    if (c.in_bytes == 2 && c.store_tma && !c.stream_k) {
      specs.push_back(make_spec(c, 0, 0, true, false, 0, {}, false, true));
      if (first_plain)
        for (bool ak : {true, false})
          for (bool bk : {true, false}) specs.push_back(make_spec(c, 1, 1, ak, bk, 1, {}, false, true));
      first_plain = false;
    }
  // grouped_mm: every 16-bit config but ping-pong and cluster split-K once (bf16, A row-major, B N-major; stream-K
  // too, whatever TMAGEMM_GROUPED_STREAM_K says), and the other B layout and f16 on the first direct-store and the
  // first TMA-store config.
  bool first_grouped = true, first_grouped_tma = true;
  for (const auto& c : persistent_tma_configs())
    if (c.in_bytes == 2 && !c.ping_pong && c.split_k == 1) {
      specs.push_back(make_spec(c, 0, 0, true, false, 0, {}, true));
      if (first_grouped || (first_grouped_tma && c.store_tma)) {
        specs.push_back(make_spec(c, 0, 0, true, true, 0, {}, true));
        specs.push_back(make_spec(c, 1, 1, true, false, 1, {}, true));
      }
      first_grouped = false;
      if (c.store_tma) first_grouped_tma = false;
    }
  // scaled_mm's epilogues (tensorwise, rowwise, rowwise + bf16 bias) on the first fp8 config of each accumulation.
  for (int promote : {0, 1})
    for (const auto& c : persistent_tma_configs())
      if (c.in_bytes == 1 && (c.promote > 0) == (promote > 0) && c.store_tma) {
        for (const EpilogueSpec& e : scaled_mm_epilogue_samples()) specs.push_back(make_spec(c, 2, 2, true, true, 0, e));
        break;
      }
  return specs;
}

namespace {

// Loaded kernels by (config, dtype, layouts, output, device, epilogue).
CUfunction kernel_for(const GemmProblem& p, const TmaConfig& c, bool plain) {
  static KernelCache<std::tuple<const TmaConfig*, DType, DType, Major, Major, DType, int, int, bool, bool>> loaded;
  return loaded.get({&c, p.a.dtype, p.b.dtype, p.a.major(), p.b.major(), p.out.dtype, p.device, epilogue_spec(p).code(),
                     p.op == Op::grouped_mm, plain},
                    p.device, c.smem_bytes(), [&] { return persistent_tma_spec(p, c); });
}

}  // namespace

namespace {

// Profiling builds (TMAGEMM_TRACE): one CSV row per CTA, the slots of kernels/gemm_persistent_tma.cuh's TraceSlot.
void write_trace(const GemmProblem& p, const TmaConfig& c, const KernelLaunch& launch, void** params,
                 unsigned long long** trace) {
  constexpr int kSlots = 24;  // kTraceSlots
  launch_traced(launch, params, trace, kSlots, 24,
                fmt::format("{} M={} N={} K={} grid={}", persistent_tma_spec(p, c).name, p.m, p.n, p.k,
                            launch.config().gridDimX),
                "global_start_ns,clock_start,init_done,first_load,producer_done,first_full,first_main_done,"
                "first_epi_done,last_main_done,last_epi_done,stores_read,exit,global_exit_ns,smid,tiles,prod_tile,"
                "prod_empty,prod_expect,prod_a,cons_start,packed,next_full,next_issued,unit0_stored",
                "cuLaunchKernelEx(persistent_tma)");
}

}  // namespace

StreamKLayout stream_k_layout(int64_t tiles, int64_t k_blocks, int64_t workers) {
  StreamKLayout l;
  if (workers < 1 || tiles % workers == 0 || k_blocks < 2) return l;
  const int64_t dp = tiles / workers * workers;  // the whole waves
  const int64_t r = tiles - dp;
  // kernels/scheduler.cuh stream_k_cut (keep identical): the even cut, or every tile cut alike into segments of
  // ceil(kb / s) K blocks, s = min(workers / r, kb / 2) >= 2, where that is within 6/5 of the even cut's.
  int64_t per = (r * k_blocks + workers - 1) / workers;
  if (const int64_t s = std::min(workers / r, k_blocks / 2); s >= 2) {
    const int64_t even = (k_blocks + s - 1) / s;
    if (5 * even <= 6 * per) per = even;
  }
  l.split_tiles = r;
  l.per_worker = per;
  l.max_segments = (k_blocks + per - 1) / per + 1;
  return l;
}

bool grouped_stream_k_enabled() {
  // Read at each call (cheap beside a can_implement), so that a test can switch it. On unless "0" (measured on the
  // H200, thirty-seventh session: grouped 1.095 on against 1.085 off, the lowest row 1.013 against 0.976).
  const char* v = std::getenv("TMAGEMM_GROUPED_STREAM_K");
  return v == nullptr || std::string(v) != "0";
}

bool stream_k_clean_counters_enabled() {
  const char* v = std::getenv("TMAGEMM_STREAM_K_CLEAN_COUNTERS");  // read at each launch, as the switch above
  return v != nullptr && std::string(v) == "1";
}

namespace {
std::atomic<std::uint64_t> g_clean_launches{0};
}  // namespace

std::uint64_t stream_k_clean_launches() { return g_clean_launches.load(); }

unsigned* stream_k_clean_counters(int device, cudaStream_t stream) {
  // One buffer per (device, stream), kept for the life of the process; at most kCleanCounterStreams of them (a process
  // that makes streams without end falls back to the memset on the later ones). Kernels on one stream run in its
  // order, and a PDL launch reads no global memory before its predecessor has completed, so the kernels of a stream
  // take turns on its counters; each leaves them at zero.
  static std::mutex mutex;
  static std::map<std::pair<int, unsigned long long>, unsigned*> buffers;
  unsigned long long id = 0;
  if (cudaStreamGetId(stream, &id) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(device, id);
  if (const auto it = buffers.find(key); it != buffers.end()) return it->second;
  if (buffers.size() >= kCleanCounterStreams) return nullptr;
  const runtime::ThreadLocalCaptureMode mode;  // another thread may be capturing (cuda_check.hpp)
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, kCleanCounterBytes) != cudaSuccess) {  // short of memory: the memset path needs none
    cudaGetLastError();
    return nullptr;
  }
  if (cudaMemsetAsync(ptr, 0, kCleanCounterBytes, stream) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(ptr);
    return nullptr;
  }
  buffers.emplace(key, static_cast<unsigned*>(ptr));
  return static_cast<unsigned*>(ptr);
}

namespace {

constexpr std::size_t kWorkspaceAlign = 256;

// Bytes of `slot_segments` partial-sum blocks (one cluster tile's floats each), and of `slots` tiles' counters.
std::size_t stream_k_partials_bytes(const TmaConfig& c, int64_t slot_segments) {
  const std::size_t bytes =
      static_cast<std::size_t>(slot_segments) * c.cluster_m * c.cluster_n * c.bm * c.bn * sizeof(float);
  return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}
std::size_t stream_k_counter_bytes(const TmaConfig& c, int64_t slots) {
  return static_cast<std::size_t>(slots) * c.cluster_m * c.cluster_n * c.consumers * sizeof(unsigned);
}

// grouped_mm in 2x1 clusters takes CTA tiles in pairs (kernels/scheduler.cuh pair_tile).
bool grouped_pairs(const GemmProblem& p, const TmaConfig& c) {
  return p.op == Op::grouped_mm && c.cluster_m == 2 && c.cluster_n == 1;
}

int64_t cluster_tiles_of(const GemmProblem& p, const TmaConfig& c) {
  const int64_t n_blocks = (p.n + c.bn * c.cluster_n - 1) / (c.bn * c.cluster_n);
  if (grouped_pairs(p, c))  // each group: at most one partial M block, and one CTA tile more to make its count even
    return (((p.m + c.bm - 1) / c.bm + p.batch) * n_blocks + p.batch + 1) / 2;
  const int64_t m_blocks = (p.m + c.bm * c.cluster_m - 1) / (c.bm * c.cluster_m);
  return (p.op == Op::grouped_mm ? m_blocks + p.batch : m_blocks * p.batch) * n_blocks;
}

}  // namespace

int64_t persistent_tma_workers(const GemmProblem& p, const TmaConfig& c, int64_t max_clusters) {
  const int64_t tiles = cluster_tiles_of(p, c);
  if (c.stream_k && tiles < max_clusters &&
      stream_k_layout(tiles, (p.k + c.bk - 1) / c.bk, max_clusters).split_tiles > 0)
    return max_clusters;
  return std::min(tiles, max_clusters);
}

StreamKWorkspace stream_k_workspace(const GemmProblem& p, const TmaConfig& c, int64_t workers) {
  StreamKWorkspace ws;
  if (!c.stream_k) return ws;
  const int64_t tiles = cluster_tiles_of(p, c), k_blocks = (p.k + c.bk - 1) / c.bk;
  if (p.op != Op::grouped_mm) {
    const StreamKLayout l = stream_k_layout(tiles, k_blocks, workers);
    if (l.split_tiles == 0) return ws;
    ws.partials_bytes = stream_k_partials_bytes(c, l.split_tiles * l.max_segments);
    ws.counter_bytes = stream_k_counter_bytes(c, l.split_tiles);
    ws.seg_stride = static_cast<int>(l.max_segments);
    return ws;
  }
  // grouped_mm: any count T splits r = T mod w tiles (w = workers; T < w: all T), r <= w - 1, each into at most
  // ceil(kb / per) + 1 segments with per = ceil(r kb / w) >= r kb / w, so ceil(kb / per) <= ceil(w / r) <=
  // (w + r - 1) / r and the slots hold r (ceil(kb / per) + 1) <= w + 2r - 1 <= 3w - 3 segments (a closed form: this
  // runs on every call; the exact worst over r is within 1 % of it on 132 SMs).
  if (workers < 2 || k_blocks < 2) return ws;
  ws.partials_bytes = stream_k_partials_bytes(c, 3 * workers - 3);
  ws.counter_bytes = stream_k_counter_bytes(c, workers - 1);
  return ws;
}

std::size_t persistent_tma_workspace_bytes(const GemmProblem& p, const TmaConfig& c) {
  if (!c.stream_k) return 0;
  // The grid is not known here (an SM carveout, the clusters that fit): the largest need over every grid size (a
  // stream-K launch with fewer tiles than clusters takes them all).
  const int64_t most = std::max(1, runtime::device_info(p.device).sm_count) / (c.cluster_m * c.cluster_n);
  std::size_t bytes = 0;
  for (int64_t w = 1; w <= most; ++w) {
    const StreamKWorkspace ws = stream_k_workspace(p, c, w);
    bytes = std::max(bytes, ws.partials_bytes + ws.counter_bytes);
  }
  return bytes;
}

int l2_stream_bits(const GemmProblem& p, const TmaConfig& c) {
  // grouped_mm: how many tiles read a group's B depends on the routing, which the host does not see.
  if (p.op == Op::grouped_mm || runtime::l2_stream_mode() == 0) return 0;
  // One block of cluster tiles across N: each A block is loaded once (and not again for another batch unless A
  // broadcasts); likewise B with one block across M.
  const bool a_once = p.n <= int64_t{c.bn} * c.cluster_n && (p.batch == 1 || p.a.batch_stride != 0);
  const bool b_once = p.m <= int64_t{c.bm} * c.cluster_m && (p.batch == 1 || p.b.batch_stride != 0);
  return (a_once ? 1 : 0) | (b_once ? 2 : 0);
}

void persistent_tma_launch(const GemmProblem& p, const TmaConfig& c, cudaStream_t stream, int sm_carveout,
                           void* workspace) {
  const runtime::DeviceInfo& dev = runtime::device_info(p.device);
  const std::size_t smem = c.smem_bytes();
  const bool plain = out_plain(p, c);  // kOutPlain: the kernel variant, and no tensor map for out
  CUfunction fn = kernel_for(p, c, plain);

  // fp8 elements are loaded as bytes (the wgmma instruction names their type).
  const CUtensorMapDataType type = c.in_bytes == 1          ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : p.a.dtype == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                             : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const std::size_t elem = static_cast<std::size_t>(c.in_bytes);
  const uint32_t row_elems = static_cast<uint32_t>(128 / elem);  // one 128-byte swizzled row
  CUtensorMap map_a, map_b;
  // An operand read once is also loaded without L2 promotion: measured on the H200 (docs/perf-notes.md, nineteenth
  // session), 16x128x8192x8192 bmm streamed B at 3.9 TB/s with 256-byte promotion and 4.1 without (as the skinny
  // kernel's B: runtime::l2_promotion).
  const int stream_bits = l2_stream_bits(p, c);
  const auto promotion = [&](const Operand& o, int bit) {
    return runtime::l2_promotion(row_alignment_bytes(o), (stream_bits & bit) != 0 ? CU_TENSOR_MAP_L2_PROMOTION_NONE
                                                                                  : CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  };
  // With a cluster along N each CTA loads its share of A: of the rows (K-major) or of the K rows (M-major).
  if (p.a.major() == Major::row)  // K-major: rows of K
    map_a = runtime::encode_sw128_3d(p.a.data, type, elem, p.k, p.m, p.batch, p.a.row_stride, p.a.batch_stride,
                       row_elems, c.bm / c.cluster_n, promotion(p.a, 1), "cuTensorMapEncodeTiled(a)");
  else  // M-major: stored K x M
    map_a = runtime::encode_sw128_3d(p.a.data, type, elem, p.m, p.k, p.batch, p.a.col_stride, p.a.batch_stride, 64,
                       c.bk / c.cluster_n, promotion(p.a, 1), "cuTensorMapEncodeTiled(a)");
  if (p.b.major() == Major::col)  // K-major: stored N x K; each cluster CTA loads its share of the rows
    map_b = runtime::encode_sw128_3d(p.b.data, type, elem, p.k, p.n, p.batch, p.b.col_stride, p.b.batch_stride,
                       row_elems, c.bn / c.cluster_m, promotion(p.b, 2), "cuTensorMapEncodeTiled(b)");
  else  // N-major: K x N
    map_b = runtime::encode_sw128_3d(p.b.data, type, elem, p.n, p.k, p.batch, p.b.row_stride, p.b.batch_stride, 64, c.bk,
                       promotion(p.b, 2), "cuTensorMapEncodeTiled(b)");

  CUtensorMap map_out;
  std::memset(&map_out, 0, sizeof(map_out));
  if (c.store_tma && !plain)
    map_out = runtime::encode_sw128_3d(p.out.data,
                         p.out.dtype == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                         2, p.n, p.m, p.op == Op::grouped_mm ? 1 : p.batch, p.out.row_stride, p.out.batch_stride, 64, 64,
                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "cuTensorMapEncodeTiled(out)");

  EpilogueParamsHost ep = epilogue_params(p);
  ep.group_ends = p.group_ends;
  ep.l2_stream = runtime::l2_stream_mode() == 2 ? stream_bits : 0;

  int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k), b = static_cast<int>(p.batch);
  const int cm = c.cluster_size();  // CTAs per cluster
  // grouped_mm: the group sizes live on the device; each group adds at most one partial M block.
  const int64_t cluster_tiles = cluster_tiles_of(p, c);
  const int sms = std::max(1, dev.sm_count - std::max(0, sm_carveout));
  int64_t max_clusters = sms / cm;

  unsigned long long* trace = nullptr;  // device buffer of a profiling build (TMAGEMM_TRACE)
  void* params[] = {&map_a, &map_b, &map_out, &ep, &m, &n, &k, &b, &trace};
  KernelLaunch launch(fn, stream, static_cast<unsigned>(c.threads()), smem, static_cast<unsigned>(cm));
  if (cm > 1) {
    // NOTE: clusters are placed whole inside a GPC; ask how many fit at once rather than assume sms / 2.
    launch.set_grid(max_clusters * cm);
    const int fit = launch.max_active_clusters("cuOccupancyMaxActiveClusters(persistent_tma)");
    if (fit > 0) max_clusters = std::min<int64_t>(max_clusters, fit);
  }
  const int64_t workers = persistent_tma_workers(p, c, max_clusters);
  launch.set_grid(workers * cm);
  launch.set_programmatic();  // the kernel waits for the previous one before any global read (PDL)
  if (c.stream_k) {
    // The split tiles' partial sums and counters (kernels/scheduler.cuh): the counters start at zero every launch,
    // zeroed by a memset in the workspace, or (TMAGEMM_STREAM_K_CLEAN_COUNTERS=1) the stream's clean buffer, which
    // every stream-K kernel leaves at zero. (grouped_mm: for whichever tile count the group ends give; the kernel
    // computes its own segment stride.)
    const StreamKWorkspace ws = stream_k_workspace(p, c, workers);
    if (ws.counter_bytes > 0) {
      if (workspace == nullptr)
        throw Error(ErrorCode::invalid_argument, fmt::format("{}: a stream-K launch needs its workspace", c.name()));
      ep.sk_partials = static_cast<float*>(workspace);
      ep.sk_seg_stride = ws.seg_stride;
      // NOTE: not on a captured stream (no allocation there, and a graph must not depend on state outside it), nor on
      // the per-thread default stream (one handle for many threads' streams, whose kernels could share a buffer).
      unsigned* clean = nullptr;
      if (stream_k_clean_counters_enabled() && ws.counter_bytes <= kCleanCounterBytes &&
          stream != cudaStreamPerThread && !runtime::stream_capturing(stream))
        clean = stream_k_clean_counters(p.device, stream);
      if (clean != nullptr) {
        ep.sk_counters = clean;
        g_clean_launches.fetch_add(1);
      } else {
        ep.sk_counters = reinterpret_cast<unsigned*>(static_cast<char*>(workspace) + ws.partials_bytes);
        runtime::check_cuda(cudaMemsetAsync(ep.sk_counters, 0, ws.counter_bytes, stream),
                            "cudaMemsetAsync(stream-K counters)");
      }
    }
  }
  const CUlaunchConfig& cfg = launch.config();
  if (runtime::log_enabled("launch"))
    fmt::print(stderr, "tmagemm launch {} grid={} block={} smem={} cluster={} max_clusters={} tiles={}\n",
               persistent_tma_spec(p, c).name,
               cfg.gridDimX, cfg.blockDimX, cfg.sharedMemBytes, cm, max_clusters, cluster_tiles);
  if (trace_path().empty()) {
    launch.launch(params, "cuLaunchKernelEx(persistent_tma)");
    return;
  }
  write_trace(p, c, launch, params, &trace);
}

namespace {
// True when the rows of the operand's TMA boxes start off 32-byte (sector) boundaries.
bool sector_misaligned_rows(const Operand& o) { return row_alignment_bytes(o) < 32; }

// TMA box rows that start off a 32-byte boundary cost ~4x the L2 requests of aligned ones (ncu on H200; rows
// 32-byte but not 128-byte aligned run at 0.97 against 0.995, docs/perf-notes.md). Model: the loads fall behind
// the MMAs once the rows a CTA requests per unit of MMA work exceed 4/3 of an aligned 128x256 tile's
// (384 rows per 128x256); a misaligned row counts twice, and a cluster CTA requests only its share of A and B.
// Measured with both operands off 32 bytes (3000x5000x1000): 128x256 0.77, 128x256 in 2-CTA clusters 0.94,
// 256x128 clustered 0.86 — the order this model predicts. The factor (<= 1) scales a config's throughput, relative to
// the same config on aligned rows: the weights already hold what small tiles cost there.
double misaligned_load_factor(const GemmProblem& p, const TmaConfig& c) {
  const int cm = c.cluster_m, cn = c.cluster_n;
  const auto load_factor = [&](double a_rows, double b_rows) {
    const double per_work = (a_rows / cn + b_rows / cm) / (double(c.bm) * c.bn);
    return std::min(1.0, (4.0 / 3.0) * (384.0 / (128.0 * 256.0)) / per_work);
  };
  const double a_cost = c.bm * (sector_misaligned_rows(p.a) ? 2.0 : 1.0);
  const double b_cost = c.bn * (sector_misaligned_rows(p.b) ? 2.0 : 1.0);
  return load_factor(a_cost, b_cost) / load_factor(c.bm, c.bn);
}

// The cluster tiles a launch walks: M blocks x N blocks x batch; grouped_mm: each group's M blocks of the
// representative routing (tuning_group_ends) times the N blocks, one matrix of output rows.
double cluster_tiles(const GemmProblem& p, const TmaConfig& c) {
  const int cm = c.cluster_m, cn = c.cluster_n;
  const double n_blocks = std::ceil(double(p.n) / (c.bn * cn));
  if (p.op != Op::grouped_mm) return std::ceil(double(p.m) / (c.bm * cm)) * double(p.batch) * n_blocks;
  // In 2x1 clusters the tiles are pairs of CTA tiles, a group's count made even (kernels/scheduler.cuh pair_tile).
  const bool pairs = cm == 2 && cn == 1;
  double tiles = 0;
  int64_t start = 0;
  for (int32_t end : tuning_group_ends(p.m, p.batch)) {
    const double blocks = std::ceil(double(end - start) / (pairs ? c.bm : c.bm * cm)) * n_blocks;
    tiles += pairs ? std::ceil(blocks / 2) : blocks;
    start = end;
  }
  return tiles;
}
}  // namespace

double persistent_tma_score(const GemmProblem& p, const TmaConfig& c, const runtime::DeviceInfo& d, int sm_carveout) {
  const int sms = std::max(1, d.sm_count - std::max(0, sm_carveout));
  // Predicted time ~ whole waves x (tile area / tile throughput); the score is its inverse, normalised.
  const int cm = c.cluster_m, cn = c.cluster_n;
  const bool grouped = p.op == Op::grouped_mm;
  const double tiles = cluster_tiles(p, c);
  // Stream-K shares the partial wave's tiles out by K blocks: its waves are not rounded up, but its split tiles'
  // partial sums are written and read again (fp32, each unit of a split tile), at ~3 TB/s, against a wave of ~700
  // TFLOP/s (H200 measurements, docs/perf-notes.md): counted as that many more waves.
  const double workers = std::max(1, sms / (cm * cn * c.split_k));
  double waves = c.stream_k ? std::max(1.0, tiles / workers) : std::ceil(tiles / workers);
  if (c.split_k > 1) {
    // Cluster split-K: a round of tiles on half as many clusters takes the time of its larger K half, plus the
    // exchange of one consumer's fp32 sums through distributed shared memory (an estimate, ~50 GB/s an SM: ~0.65 us
    // for 32 KB), counted as a share of a whole tile's time. (Optimistic where launch, first loads or L2 bytes per
    // FLOP set the time: forced, 128x128 ks2 read 0.78-0.84 of cuBLASLt; docs/perf-notes.md, thirty-eighth session.)
    const int64_t k_blocks = (p.k + c.bk - 1) / c.bk;
    const double half = double((k_blocks + 1) / 2) / double(k_blocks);
    const double tile_s = 2.0 * c.bm * c.bn * double(p.k) / (c.weight * kGemmFlopsPerS / sms);
    const double exchange_s = double(c.bm / c.consumers) * c.bn * 4.0 / 50e9;
    waves *= half + exchange_s / tile_s;
  }
  if (c.stream_k) {  // (grouped_mm: on the representative routing's tiles)
    const int64_t k_blocks = (p.k + c.bk - 1) / c.bk;
    const StreamKLayout l = stream_k_layout(static_cast<int64_t>(tiles), k_blocks, static_cast<int64_t>(workers));
    if (l.split_tiles > 0) {
      // The whole waves, then the longest shared-out range.
      waves = std::max(1.0, std::floor(tiles / workers) + double(l.per_worker) / double(k_blocks));
      const double units = double(l.split_tiles) * double(k_blocks) / double(std::max<int64_t>(1, l.per_worker)) +
                           double(l.split_tiles);
      const double traffic_s = units * c.bm * c.bn * cm * cn * 4.0 * 2.0 / 3.0e12;
      const double wave_s = 2.0 * c.bm * c.bn * cm * cn * double(p.k) / (c.weight * kGemmFlopsPerS / workers);
      waves += traffic_s / wave_s;
    } else {
      waves = std::ceil(tiles / workers);
    }
  }
  const double useful = double(p.m) * double(p.n) * (grouped ? 1.0 : double(p.batch));
  double score = useful * c.weight / (waves * sms * c.bm * c.bn);
  score *= misaligned_load_factor(p, c);
  return score;
}

double persistent_tma_roofline_s(const GemmProblem& p, const TmaConfig& c, const runtime::DeviceInfo& d,
                                 int sm_carveout) {
  const int sms = std::max(1, d.sm_count - std::max(0, sm_carveout));
  const double workers = std::max(1, sms / (c.cluster_m * c.cluster_n));
  const double tiles = std::max(1.0, cluster_tiles(p, c));
  const double full = std::floor(tiles / workers), rest = tiles - full * workers;
  // Compute: one CTA tile at the config's weight of kGemmFlopsPerS / SMs (fp8 twice that), slowed by misaligned rows
  // as the score is: a round's time, however few CTAs the round holds.
  const double rate = kGemmFlopsPerS * (c.in_bytes == 1 ? 2.0 : 1.0);
  const double tile_compute_s =
      2.0 * c.bm * c.bn * double(p.k) / (c.weight * misaligned_load_factor(p, c) * rate / sms);
  // Bytes: the problem's compulsory bytes (traffic; grouped_mm: B of the groups the representative routing reaches),
  // each tile its share of them, a round's streamed at kStreamBytesPerS.
  double bytes = traffic(p).bytes;
  if (p.op == Op::grouped_mm) {  // a group the representative routing leaves empty reads no B
    int64_t start = 0, empty = 0;
    for (int32_t end : tuning_group_ends(p.m, p.batch)) {
      empty += end == start;
      start = end;
    }
    bytes -= double(empty) * double(p.k) * double(p.n) * double(itemsize(p.b.dtype));
  }
  const double tile_bytes = bytes / tiles;
  // A round of r clusters streams at the card's rate at most, and at r x (bytes each keeps in flight) / (the loads'
  // latency) where that is less: the stage ring holds `stages` K blocks of the tile, each bk / K of its bytes; the
  // latency grows with the share of the SMs streaming (kLoadLatencyIdleS .. kLoadLatencyS).
  // (Memory-bound problems only: there the ring's loads come from DRAM. A compute-bound problem's operands mostly hit
  // L2, at a fraction of that latency, and its compulsory bytes say nothing of what a stage waits for.)
  const bool streamed = memory_bound(p);
  const double in_flight = c.stages * std::min(1.0, double(c.bk) / double(std::max<int64_t>(1, p.k))) * tile_bytes;
  const auto stream_s = [&](double round_bytes, double clusters) {
    if (!streamed) return round_bytes / kStreamBytesPerS;
    const double busy = std::min(1.0, clusters * c.cluster_m * c.cluster_n / sms);
    const double latency = kLoadLatencyIdleS + (kLoadLatencyS - kLoadLatencyIdleS) * busy;
    return round_bytes / std::min(kStreamBytesPerS, clusters * in_flight / latency);
  };
  // Each round takes the longer of the two: a full round of a memory-bound problem its bytes, a short last round
  // its tiles' compute (or its few CTAs' stream).
  const double full_s = full * std::max(tile_compute_s, stream_s(workers * tile_bytes, workers));
  if (rest == 0) return full_s;
  if (!c.stream_k) return full_s + std::max(tile_compute_s, stream_s(rest * tile_bytes, rest));
  // Stream-K shares the partial round's tiles out by K blocks over every cluster (stream_k_layout): each computes
  // its share of K blocks while the round's bytes stream on every cluster, then the split tiles' fp32 partial sums
  // are written and read again (the score's count of units, at ~3 TB/s).
  const int64_t k_blocks = std::max<int64_t>(1, (p.k + c.bk - 1) / c.bk);
  const double per = double(std::max<int64_t>(
      1, stream_k_layout(static_cast<int64_t>(rest), k_blocks, static_cast<int64_t>(workers)).per_worker));
  const double units = rest * double(k_blocks) / std::max(1.0, per) + rest;
  const double partials_s = units * c.bm * c.bn * c.cluster_m * c.cluster_n * 4.0 * 2.0 / 3.0e12;
  return full_s + std::max(tile_compute_s * per / double(k_blocks), stream_s(rest * tile_bytes, workers)) +
         partials_s;
}

const TmaConfig* persistent_tma_pick(const GemmProblem& p, const runtime::DeviceInfo& d, int sm_carveout) {
  const TmaConfig* best = nullptr;
  double best_score = -1;
  for (const auto& c : persistent_tma_configs()) {
    if (c.tuner_only || !persistent_tma_can_implement(p, c, d).empty()) continue;
    const double score = persistent_tma_score(p, c, d, sm_carveout);
    if (score > best_score) {
      best_score = score;
      best = &c;
    }
  }
  return best;
}

namespace {

// One table row as a tuner choice.
class TmaChoice final : public Choice {
 public:
  explicit TmaChoice(const TmaConfig& config) : config_(config), name_(config.name()) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "persistent_tma"; }
  std::string can_implement(const GemmProblem& p, const runtime::DeviceInfo& d) const override {
    return persistent_tma_can_implement(p, config_, d);
  }
  void precompile(const GemmProblem& p, int device) const override {
    jit::compile(persistent_tma_spec(p, config_), runtime::device_info(device).arch());
  }
  std::vector<jit::KernelSpec> kernel_specs(const GemmProblem& p) const override { return {persistent_tma_spec(p, config_)}; }
  void launch(const GemmProblem& p, cudaStream_t stream, const Options& o, void* workspace) const override {
    persistent_tma_launch(p, config_, stream, o.sm_carveout, workspace);
  }
  std::size_t workspace_bytes(const GemmProblem& p) const override {
    return persistent_tma_workspace_bytes(p, config_);
  }
  // The rule's score (persistent_tma_score); none for configs left to the tuner (TmaConfig::tuner_only).
  std::optional<double> heuristic_score(const GemmProblem& p, const runtime::DeviceInfo& d,
                                        int sm_carveout) const override {
    if (config_.tuner_only) return std::nullopt;
    return persistent_tma_score(p, config_, d, sm_carveout);
  }
  bool tma_tiles() const override { return true; }
  const TmaConfig& config() const { return config_; }

 private:
  const TmaConfig& config_;
  std::string name_;
};

// The backend's prune (Backend::prune): the twin domination, then the prescreen.
void prune(const GemmProblem& p, const runtime::DeviceInfo& dev, const Options& o, std::vector<Candidate>& out) {
  // A direct-store persistent-TMA config whose TMA-store twin (same tile, stages, cluster) also applies is
  // dominated: the twin measured 2-30 % faster on every shape (docs/perf-notes.md, v2). Dropping it halves the
  // persistent-TMA candidates to compile and time. A regex that excludes the twin keeps the direct config.
  for (auto& c : out) {
    const auto* cfg = persistent_tma_config_of(*c.choice);
    if (!c.reason.empty() || !cfg || cfg->store_tma) continue;
    for (const auto& twin : out) {
      const auto* t = persistent_tma_config_of(*twin.choice);
      if (twin.reason.empty() && t && t->store_tma && t->bm == cfg->bm && t->bn == cfg->bn && t->bk == cfg->bk &&
          t->consumers == cfg->consumers && t->cluster_m == cfg->cluster_m && t->cluster_n == cfg->cluster_n &&
          t->split_n == cfg->split_n && t->in_bytes == cfg->in_bytes && t->promote == cfg->promote &&
          t->promote_n == cfg->promote_n && t->split_k == cfg->split_k) {
        c.reason = fmt::format("dominated by {} (TMA-store epilogue, measured faster)", twin.choice->name());
        break;
      }
    }
  }
  // Rows of out off 16 bytes: the deferred TMA-store configs are set aside where a ping-pong one is timed.
  set_aside_deferred_plain(p, out, [](const Candidate& c) { return persistent_tma_config_of(*c.choice); });
  // Prescreen: a persistent-TMA config whose predicted time (persistent_tma_score: waves x tile area / measured
  // tile throughput, with the misaligned-row load model) is more than 1/kPrescreenRatio of the best applicable
  // one's is set aside. Measured in the bench's sustained, power-capped state, small tiles lose 2-3 % on large
  // problems where the tuner's short runs time them level or ahead (docs/perf-notes.md, v7), and each costs a
  // compile on a cold kernel cache. The ratio leaves room for the model's errors: at 0.85 it set aside the best
  // tile of 1000^3 (64x128 2x1, predicted at 0.82 of 128x128 2x1, measured 0.92 against 0.83 of cuBLASLt).
  // A regex that leaves one config keeps it (it is then the best).
  // Stream-K and cluster split-K configs never set the best (their unrounded or halved waves would set aside
  // whole-tile configs the model cannot rank against them); one is timed only where it is predicted ahead of every
  // whole-tile config, i.e. where the last wave is partial enough (or SMs idle enough) to pay for its split tiles.
  // Memory-bound problems (memory_bound: MoE decode, the 64-expert rows of 64 tokens each) give a config the model
  // sets aside a second chance: kept where its roofline (persistent_tma_roofline_s: compute or compulsory bytes,
  // whichever takes longer) is within the same ratio of the best whole-tile config's. There a tile's measured
  // compute throughput says little about its time: on 64 experts x 512 decode tokens x 2048 x 7168 the model set
  // aside every tile but 64x256 (64x128 predicted at 1.40x its time) where both stream the same 1.8 GB of weights,
  // in 4 and 8 rounds of 132 tiles of 256 and 128 columns (docs/perf-notes.md, fortieth session). A stream-K
  // config whose launch shares out a short round is timed there too where its roofline is within the same ratio of
  // the best whole-tile one's: a memory-bound problem's short round runs at one tile's compute, and on the CTAs it
  // holds, which stream-K shares out over every SM while the round's bytes stream (64 experts x 64 tokens x 2048 x
  // 7168: 280 tiles of 64x256, a last round of 16; 16 x 28672 x 8192: one round of 112). The roofline does not rank
  // it against whole tiles: a round on 112 of 132 SMs streamed a 470 MB weight in 111.1 us, the same boxes over 132
  // in 106.9 (lab/probes/tile_stream.cu grid, forty-second session), and its partial sums overlap the stream.
  const bool streams = memory_bound(p);
  // A stream-K config whose launch shares out a partial round of tiles (otherwise it runs the whole-tile schedule).
  const int sms = std::max(1, dev.sm_count - std::max(0, o.sm_carveout));
  const auto shares_a_round = [&](const TmaConfig& c) {
    const int64_t workers = std::max(1, sms / (c.cluster_m * c.cluster_n));
    return stream_k_layout(cluster_tiles_of(p, c), (p.k + c.bk - 1) / c.bk, workers).split_tiles > 0;
  };
  double best_score = 0, best_roofline = 0;
  bool whole_tiles = false, roofline_set = false;
  for (const auto& c : out)
    if (const auto* cfg = persistent_tma_config_of(*c.choice); cfg && c.reason.empty() && !cfg->stream_k &&
                                                                cfg->split_k == 1) {
      best_score = std::max(best_score, persistent_tma_score(p, *cfg, dev, o.sm_carveout));
      whole_tiles = true;
      // (a wave-fitting tile, kept only where the compute model ranks it first, sets no roofline to meet)
      if (streams && !cfg->only_when_best) {
        const double r = persistent_tma_roofline_s(p, *cfg, dev, o.sm_carveout);
        best_roofline = roofline_set ? std::min(best_roofline, r) : r;
        roofline_set = true;
      }
    }
  if (!whole_tiles)
    for (const auto& c : out)
      if (const auto* cfg = persistent_tma_config_of(*c.choice); cfg && c.reason.empty())
        best_score = std::max(best_score, persistent_tma_score(p, *cfg, dev, o.sm_carveout));
  for (auto& c : out)
    if (const auto* cfg = persistent_tma_config_of(*c.choice); cfg && c.reason.empty()) {
      const double s = persistent_tma_score(p, *cfg, dev, o.sm_carveout);
      if ((cfg->stream_k || cfg->split_k > 1) && whole_tiles && s <= best_score &&
          !(cfg->stream_k && streams && roofline_set && shares_a_round(*cfg) &&
            kPrescreenRatio * persistent_tma_roofline_s(p, *cfg, dev, o.sm_carveout) <= best_roofline))
        c.reason = fmt::format("set aside: predicted {:.2f}x the time of the best whole-tile config ({} is timed "
                               "only where predicted ahead)",
                               best_score / std::max(s, 1e-12), cfg->stream_k ? "stream-K" : "cluster split-K");
      else if (cfg->only_when_best && s < best_score)
        c.reason = fmt::format("set aside: predicted {:.2f}x the time of the best persistent-TMA config (a "
                               "wave-fitting tile is kept only where it is predicted best)",
                               best_score / std::max(s, 1e-12));
      else if (s < kPrescreenRatio * best_score &&
               !(streams && roofline_set && !cfg->stream_k && cfg->split_k == 1 &&
                 kPrescreenRatio * persistent_tma_roofline_s(p, *cfg, dev, o.sm_carveout) <= best_roofline))
        c.reason = fmt::format("set aside: predicted {:.2f}x the time of the best persistent-TMA config (the "
                               "prescreen keeps those within {:.2f}x{})",
                               best_score / std::max(s, 1e-12), 1.0 / kPrescreenRatio,
                               streams ? ", by compute or by the bytes roofline" : "");
    }
}

}  // namespace

const TmaConfig* persistent_tma_config_of(const Choice& choice) {
  const auto* c = dynamic_cast<const TmaChoice*>(&choice);
  return c ? &c->config() : nullptr;
}

Backend persistent_tma_backend() {
  return Backend{.name = "persistent_tma",
                 .enumerate = [](const GemmProblem&, const runtime::DeviceInfo&, const Options&) {
                   // The table is static, so the choice objects are made once and shared.
                   static const std::vector<ChoicePtr> all = [] {
                     std::vector<ChoicePtr> v;
                     for (const auto& c : persistent_tma_configs()) v.push_back(std::make_shared<TmaChoice>(c));
                     return v;
                   }();
                   return all;
                 },
                 .prune = &prune,
                 .key_tag = [](const GemmProblem& p) {
                   return std::string(p.op == Op::grouped_mm && !grouped_stream_k_enabled() ? "-nogsk" : "");
                 }};
}

}  // namespace tmagemm::choices
