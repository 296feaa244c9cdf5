// gemm_skinny.cuh — split-K TMA + WGMMA GEMM for few rows (M <= 64): the decode-time product whose cost is reading
// B once. out (M x N) = A (M x K) * B (K x N) is computed as its transpose, out^T = B^T * A^T (swap-AB), so that N
// runs along the wgmma's 64-row side and the few rows of A along its N side (kMP = 32 or 64 columns): the tensor
// cores never pad N, and M is padded only to kMP.
//
// Grid: (tiles_n * S, 1, batch), launched as clusters of S * C CTAs along x (S = splits, C = cast: the CTAs that
// share A, 1, 2 or 4; S * C <= 8; tiles_n a multiple of C). Cluster g owns the C * BN columns from g * C * BN; its
// CTA of rank r = s * C + c owns the BN columns of tile g * C + c and reads K from s * k_split to
// min(K, (s + 1) * k_split) (k_split a multiple of BK; a split past K reads nothing and contributes zeros). The C
// CTAs of one split read the same A blocks: each loads 1/C of every A block and multicasts it to the others, and
// frees a stage in all C CTAs (their producers write into its copy of it).
//
// Roles: warps 0-3 (one warpgroup) consume, warp 4 produces. The producer's lane (thread 128) initialises the ring,
// issues the first stages' B loads before the start barrier, then fills a kStages-deep ring with TMA loads (full /
// empty mbarriers, as gemm_persistent_tma.cuh; B, read once, with an L2 evict_first policy); the consumers run
// wgmma.mma_async m64n{kMP}k16 from shared memory into fp32 registers (BN / 64 fragments) and release a stage once
// the wgmmas reading it have retired. K tails past K are zero-filled by TMA; rows past M and columns past N likewise.
//
// Layouts (128-byte swizzle, as gemm_persistent_tma.cuh; the wgmma's A is our B, its B is our A):
//   B K-major (stored N x K): BK/64 slabs of [BN][128 B], box {64, BN};  B N-major (K x N): BN/64 chunks of
//   [BK][128 B], box {64, BK}. A K-major (M x K): BK/64 slabs of [kMP][128 B], box {64, kMP / C}; A M-major
//   (K x M): one chunk of [BK][128 B], box {64, BK / C} (columns past kMP are loaded as zeros and never read).
//
// Reduction: each CTA writes its fp32 partial tile to its own shared memory as red[kMP][BN + 4] (over the ring,
// which is idle by then). After a cluster barrier, the CTA of split s sums columns [s * BN / S, (s + 1) * BN / S) of
// its tile's S partials over distributed shared memory in split order (deterministic) and stores rows < M (epilogue.cuh
// epilogue_quad: four columns in one access where aligned; consecutive threads write consecutive columns). A second
// cluster barrier keeps each CTA's shared memory alive until its peers have read it.
//
// FP8 (scaled_mm; kFp8A / kFp8B: 1 e4m3, 2 e5m2): both operands K-major (our A row-major, B column-major), 128-byte
// rows of 128 elements, wgmma k32. kPromote > 0: two-level accumulation (use_fast_accum = false): the wgmma
// accumulators restart every kPromote K blocks and are added into fp32 totals, which the reduction then sums.
//
// Config (template argument, rendered by src/choices/skinny.cpp): kBN, kBK, kStages, kMP, kF16, kFp8A, kFp8B,
// kPromote, kOut, kAKMajor, kBKMajor, kTrace.
//
// kTrace (profiling builds only, TMAGEMM_TRACE on the host): thread 0 and the producer lane record %globaltimer (ns)
// at the points of SkinnyTraceSlot into trace[blockIdx.x * kSkinnyTraceSlots + slot], written at their end.
//
// Dynamic shared memory: skinny_smem_bytes<Cfg>(); the host's SkinnyConfig::smem_bytes must agree (each rendered
// variant static_asserts it).
#pragma once
#include <cuda/ptx>
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

#include "epilogue.cuh"
#include "operand.cuh"
#include "pipeline.cuh"
#include "ptx/sync.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "tma_desc.cuh"

namespace tmagemm::kernels {

// Mirrored on the host (src/choices/skinny.cpp); keep the layout identical.
struct SkinnyParams {
  int M, N, K;
  int k_split;  // K elements per split, a multiple of BK
  int splits;   // K splits (S)
  int cast;     // CTAs sharing A by multicast (C); the launch's cluster size is S * C
};

constexpr int kSkinnyThreads = 160;  // one consumer warpgroup + one producer warp

// Timeline slots of a kTrace build (per CTA): %globaltimer in ns unless said otherwise.
enum SkinnyTraceSlot : int {
  kSkEntry = 0,        // thread 0 at entry
  kSkStarted,          // thread 0 past the start barrier (barriers initialised and published)
  kSkFirstIssued,      // the producer issued its first stage's loads
  kSkLastIssued,       // ... its last stage's
  kSkFirstFull,        // thread 0 saw the first stage full
  kSkLastFull,         // ... the last stage full
  kSkMmaDone,          // ... every wgmma retired
  kSkReduceStart,      // ... past the cluster barrier before the reduction
  kSkStored,           // ... its share of the tile reduced and stored
  kSkExit,             // ... past the last cluster barrier
  kSkSmid,             // the SM (a number, not a time)
  kSkBlocks,           // K blocks of this CTA (a number)
  kSkinnyTraceSlots = 16
};
constexpr int kSkinnyRedPad = 4;     // floats of padding per row of the reduction tile

// The operand layout: 16-bit, or fp8 elements.
template <class Cfg>
using SkinnyOperand = Sw128Operand<Cfg::kFp8A != 0 ? 1 : 2>;

template <class Cfg>
constexpr int skinny_b_tile_bytes() {
  return SkinnyOperand<Cfg>::tile_bytes(Cfg::kBN, Cfg::kBK);
}
template <class Cfg>
constexpr int skinny_a_tile_bytes() {
  return SkinnyOperand<Cfg>::tile_bytes(Cfg::kAKMajor ? Cfg::kMP : SkinnyOperand<Cfg>::kRowElems, Cfg::kBK);
}
template <class Cfg>
constexpr int skinny_smem_bytes() {
  const int ring = Cfg::kStages * (skinny_b_tile_bytes<Cfg>() + skinny_a_tile_bytes<Cfg>());
  const int red = 4 * Cfg::kMP * (Cfg::kBN + kSkinnyRedPad);
  return 1024 /* alignment slack */ + (ring > red ? ring : red) + Ring<Cfg::kStages>::kBytes;
}

template <class Cfg>
__global__ void __launch_bounds__(kSkinnyThreads)
    gemm_skinny(const __grid_constant__ TmaDesc tma_a, const __grid_constant__ TmaDesc tma_b, const SkinnyParams p,
                const EpilogueParams ep, unsigned long long* trace) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using cuda::std::uint32_t;
  using cuda::std::uint64_t;
  constexpr int BN = Cfg::kBN, BK = Cfg::kBK, MP = Cfg::kMP, S = Cfg::kStages;
  // Profiling builds: each tracing thread keeps its marks in registers and writes them at its end.
  constexpr bool kTr = Cfg::kTrace;
  unsigned long long timeline[kTr ? kSkinnyTraceSlots : 1] = {};
  auto mark = [&](int slot) {
    if constexpr (kTr) {
      unsigned long long t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      timeline[slot] = t;
    }
  };
  auto flush_timeline = [&] {
    if constexpr (kTr)
      for (int s = 0; s < kSkinnyTraceSlots; ++s)
        if (timeline[s] != 0) trace[blockIdx.x * kSkinnyTraceSlots + s] = timeline[s];
  };
  if (kTr && threadIdx.x == 0) mark(kSkEntry);
  using Op = SkinnyOperand<Cfg>;
  constexpr int kRowElems = Op::kRowElems;
  constexpr bool kFp8 = Cfg::kFp8A != 0;
  constexpr int kPromote = Cfg::kPromote;
  static_assert((Cfg::kFp8A != 0) == (Cfg::kFp8B != 0), "both operands fp8 or both 16-bit");
  // NOTE: fp8 wgmma reads both operands K-major from shared memory.
  static_assert(!kFp8 || (Cfg::kAKMajor && Cfg::kBKMajor), "fp8 operands are K-major");
  static_assert(kFp8 || kPromote == 0, "two-level accumulation is for fp8");
  constexpr int MI = BN / 64;  // m64 fragments (64 columns of out each)
  constexpr int kBBytes = skinny_b_tile_bytes<Cfg>(), kABytes = skinny_a_tile_bytes<Cfg>();
  constexpr int kStageBytes = kBBytes + kABytes;
  constexpr int RP = BN + kSkinnyRedPad;
  constexpr int kRing = S * kStageBytes, kRed = 4 * MP * RP;
  static_assert(BN % 64 == 0 && BN <= 256, "whole m64 fragments; TMA boxes of at most 256 rows");
  static_assert(BK % kRowElems == 0, "BK is whole 128-byte swizzle slabs");
  static_assert(MP == 32 || MP == 64, "wgmma n = 32 or 64");
  static_assert(kBBytes % 1024 == 0 && kABytes % 1024 == 0, "NOTE: 128B-swizzle atoms must stay 1024-aligned");

  extern __shared__ unsigned char smem_raw[];
  // NOTE: the swizzle pattern uses absolute address bits; round the base up to 1024 bytes.
  unsigned char* smem = smem_raw + ((1024 - (ptx::smem_u32(smem_raw) & 1023)) & 1023);
  const Ring<S> ring(smem + (kRing > kRed ? kRing : kRed));

  const int splits = p.splits, cast = p.cast, csize = splits * cast;
  const int crank = static_cast<int>(blockIdx.x) % csize;  // == %cluster_ctarank for clusters of csize along x
  const int rank = crank / cast, ci = crank % cast;        // split index, place among the CTAs sharing A
  const int n0 = ((static_cast<int>(blockIdx.x) / csize) * cast + ci) * BN;
  const int batch = blockIdx.z;
  const int kbeg = rank * p.k_split;
  const int kend = min(p.K, kbeg + p.k_split);
  const int nkb = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // The stream starts before the start barrier: the producer's lane (thread kSkinnyProducer) prefetches the tensor
  // maps, initialises the ring itself and issues the first min(S, nkb) stages: B always (it completes on this CTA's
  // own barriers), A too when no peer shares it (cast 1); a multicast A must wait until the peers' barriers are
  // initialised, so with cast > 1 the producer arrives on the start barrier before its B loads and waits after them.
  // (Thread 0 used to initialise the ring and the producer to start after the barrier: the first load left ~0.8 us
  // after entry, of a ~10 us kernel on a 32 MB weight; B alone ahead of the barrier delayed A and read slower:
  // docs/perf-notes.md.)
  constexpr int kSkinnyProducer = 128;  // warp 4, lane 0
  const int pre = min(S, nkb);
  const uint64_t stream_once = ptx::l2_policy_evict_first();  // B is read once
  auto load_b = [&](int stage, int kb) {
    uint64_t* full = &ring.full[stage];
    unsigned char* b_dst = smem + stage * kStageBytes;
    const int k0 = kbeg + kb * BK;
    if constexpr (Cfg::kBKMajor) {
#pragma unroll
      for (int sl = 0; sl < BK / kRowElems; ++sl)
        ptx::tma_load_3d_hint(b_dst + Op::kmajor_slab(BN, sl), &tma_b, k0 + kRowElems * sl, n0, batch, full,
                              stream_once);
    } else {
#pragma unroll
      for (int j = 0; j < BN / kRowElems; ++j)
        ptx::tma_load_3d_hint(b_dst + Op::mnmajor_chunk(BK, j), &tma_b, n0 + kRowElems * j, k0, batch, full,
                              stream_once);
    }
  };
  const auto cast_mask = static_cast<cuda::std::uint16_t>(((1u << cast) - 1) << (rank * cast));
  // This CTA's part of the A block (the host's box is 1/cast of it): rows of A (K-major) or K rows (M-major).
  auto load_a = [&](int stage, int kb) {
    uint64_t* full = &ring.full[stage];
    unsigned char* a_dst = smem + stage * kStageBytes + kBBytes;
    const int k0 = kbeg + kb * BK;
    auto copy = [&](unsigned char* dst, int c0, int c1) {
      const cuda::std::int32_t c[3] = {c0, c1, batch};
      if (cast > 1)
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &tma_a, c, full,
                                        cast_mask);
      else
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, &tma_a, c, full);
    };
    if constexpr (Cfg::kAKMajor) {
      const int rows = MP / cast;
#pragma unroll
      for (int sl = 0; sl < BK / kRowElems; ++sl)
        copy(a_dst + Op::kmajor_slab(MP, sl) + ci * rows * 128, k0 + kRowElems * sl, ci * rows);
    } else {
      const int krows = BK / cast;
      copy(a_dst + ci * krows * 128, 0, k0 + ci * krows);
    }
  };
  if (threadIdx.x == kSkinnyProducer) {
    ptx::prefetch_tensormap(&tma_b);
    ptx::prefetch_tensormap(&tma_a);
    ring.init(4 * cast);  // one arrival per consumer warp of every CTA sharing A
    // NOTE: the async proxy (TMA's complete_tx) must see the initialised barriers before this thread's loads.
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    if (cast > 1) ptx::cluster_arrive_relaxed();
    // PDL: the set-up above overlaps the previous kernel's tail; the loads wait for it to complete.
    ptx::grid_dependency_wait();
    for (int kb = 0; kb < pre; ++kb) {
      // NOTE: out-of-bounds box parts are zero-filled but still counted: expect the full stage bytes.
      ring.expect(kb, kStageBytes);
      load_b(kb, kb);
      if (cast == 1) load_a(kb, kb);
      if (kTr && kb == 0) mark(kSkFirstIssued);
    }
  }
  // NOTE: peers sharing A multicast into our smem and arrive on our barriers: publish the init cluster-wide first.
  // fence.mbarrier_init already releases it to the cluster, so the arrival need not fence (a release arrival is a
  // MEMBAR.ALL.GPU in the SASS). The producer's lane arrived above.
  if (threadIdx.x != kSkinnyProducer) ptx::grid_dependency_wait();  // (PDL) before any global read
  ptx::launch_dependents();
  if (cast > 1) {
    if (threadIdx.x != kSkinnyProducer) ptx::cluster_arrive_relaxed();
    ptx::cluster_wait();
  } else {
    __syncthreads();
  }
  if (kTr && threadIdx.x == 0) mark(kSkStarted);

  float acc[MI][MP / 2];
  float total[MI][kPromote > 0 ? MP / 2 : 1];  // two-level accumulation: the fp32 sums of the finished runs
  if (warp == 4) {
    // ---------------- producer ----------------
    if (lane == 0) {
      RingPos<S> pos;
      for (int kb = 0; kb < nkb; ++kb) {
        const int stage = pos.stage;
        if (kb >= pre) {  // the first stages went out before the start barrier
          ring.wait_empty(pos);
          ring.expect(stage, kStageBytes);
          load_b(stage, kb);
        }
        if (kb >= pre || cast > 1) load_a(stage, kb);
        pos.advance();
      }
      if (kTr) mark(kSkLastIssued);
      flush_timeline();
    }
  } else {
    // ---------------- consumers ----------------
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int i = 0; i < MP / 2; ++i) {
        acc[mi][i] = 0.0f;
        if constexpr (kPromote > 0) total[mi][i] = 0.0f;
      }
    const uint32_t base = ptx::smem_u32(smem);
    // Stage 0's descriptors; the loop adds byte offsets to their address field.
    const uint64_t b_desc0 = Cfg::kBKMajor ? Op::desc_kmajor(base) : Op::desc_mnmajor(base, BK);
    const uint64_t a_desc0 = Cfg::kAKMajor ? Op::desc_kmajor(base + kBBytes) : Op::desc_mnmajor(base + kBBytes, BK);
    RingPos<S> pos;
    int prev_stage = 0;
    bool prev_held = false;  // two-level: a stage whose wgmmas may still run has not been released yet
    for (int kb = 0; kb < nkb; ++kb) {
      ring.wait_full(pos);
      if (kTr && threadIdx.x == 0 && kb == 0) mark(kSkFirstFull);
      if (kTr && threadIdx.x == 0 && kb == nkb - 1) mark(kSkLastFull);
      const uint32_t stage_off = static_cast<uint32_t>(pos.stage) * kStageBytes;
      const int run_kb = kPromote > 0 ? kb % kPromote : 1;  // 0: the run's first block overwrites the accumulators
      ptx::wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < BK / Op::kStepK; ++k16) {
        const uint32_t a_off = Cfg::kAKMajor ? Op::kmajor_step(MP, 0, k16) : Op::mnmajor_step(BK, 0, k16);
        const uint64_t da = ptx::smem_desc_add(a_desc0, stage_off + a_off);
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
          const uint32_t b_off = Cfg::kBKMajor ? Op::kmajor_step(BN, mi * 64, k16) : Op::mnmajor_step(BK, mi, k16);
          const uint64_t db = ptx::smem_desc_add(b_desc0, stage_off + b_off);
          if constexpr (kFp8)
            ptx::Mma8bit<MP, Cfg::kFp8B == 2, Cfg::kFp8A == 2>::run(acc[mi], db, da, (run_kb | k16) != 0);
          else
            ptx::Mma16<MP, Cfg::kBKMajor ? 0 : 1, Cfg::kAKMajor ? 0 : 1, Cfg::kF16>::run(acc[mi], db, da, 1);
        }
      }
      ptx::wgmma_commit();
      if (kPromote > 0 && (run_kb == kPromote - 1 || kb == nkb - 1)) {
        // The run is complete: wait for its wgmmas, free its stages, add its sum into the fp32 totals.
        ptx::wgmma_wait<0>();
        if (lane == 0) {
          if (prev_held) ring.release(prev_stage, rank * cast, cast);
          ring.release(pos.stage, rank * cast, cast);
        }
        prev_held = false;
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
          ptx::fence_accumulators(acc[mi]);
          if constexpr (kPromote > 0)
#pragma unroll
            for (int i = 0; i < MP / 2; ++i) total[mi][i] += acc[mi][i];
        }
      } else {
        if (kPromote > 0 ? prev_held : kb > 0) {
          // NOTE: release a stage only after the wgmmas reading it have completed. (Releasing each stage as soon as
          // its own wgmmas retire measured slower: perf notes, skinny v6.)
          ptx::wgmma_wait<1>();
          if (lane == 0) ring.release(prev_stage, rank * cast, cast);
        }
        prev_held = true;
        prev_stage = pos.stage;
      }
      pos.advance();
    }
    if constexpr (kPromote == 0) {
      ptx::wgmma_wait<0>();
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) ptx::fence_accumulators(acc[mi]);
    }
    if (kTr && threadIdx.x == 0) mark(kSkMmaDone);
  }
  // Every stage's loads were awaited and every wgmma has retired: the ring is idle. (The producer issues nothing
  // the consumers do not wait for.)
  __syncthreads();

  float* red = reinterpret_cast<float*>(smem);
  if (warp < 4) {
    // wgmma accumulator of fragment mi: d[i] at row 16 * warp + lane / 4 + 8 * ((i / 2) % 2) (a column of out) and
    // column 8 * (i / 4) + 2 * (lane % 4) + i % 2 (a row of out). Row stride RP = BN + 4 puts the 32 lanes of one
    // store on 32 distinct banks (8t + g).
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int i = 0; i < MP / 2; ++i) {
        const int col = mi * 64 + 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
        const int row = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        if (row >= p.M) continue;  // padding rows: never read by the reduction
        if constexpr (kPromote > 0)
          red[row * RP + col] = total[mi][i];
        else
          red[row * RP + col] = acc[mi][i];
      }
  }
  // Every CTA's partial tile is written and visible to the cluster. The release covers shared memory only (a full
  // release arrival would also wait for global memory: MEMBAR.ALL.GPU). Split 1 reads only its own tile: a CTA barrier.
  if (splits > 1) {
    cuda::ptx::fence_sync_restrict(cuda::ptx::sem_release, cuda::ptx::space_shared, cuda::ptx::scope_cluster);
    ptx::cluster_arrive_relaxed();
    ptx::cluster_wait();
  } else {
    __syncthreads();
  }
  if (kTr && threadIdx.x == 0) mark(kSkReduceStart);

  // CTA `rank` reduces and stores columns [c0, c0 + cols) of the tile, 4 per thread and step. With the split count
  // known at compile time (1, 2, 4, 8: every count the tuner runs) a unit's KS remote loads are issued back to back
  // and then summed in split order; a loop over a runtime count waited for each load in turn (the M = 1 decode
  // shapes spent ~0.6 us here with 4 splits, the 64-row ones ~1.9 us with 2: docs/perf-notes.md).
  const int cols = BN / splits, quads = cols / 4, c0 = rank * cols;
  const int rows = min(MP, p.M);
  auto reduce_store = [&](auto splits_c) {
    constexpr int KS = decltype(splits_c)::value;  // 0: the runtime count
    for (int u = threadIdx.x; u < rows * quads; u += kSkinnyThreads) {
      const int row = u / quads, col = c0 + 4 * (u % quads);
      float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if constexpr (KS == 1) {
        sum = *reinterpret_cast<const float4*>(red + row * RP + col);  // this CTA's own tile: a local load (LDS)
      } else if constexpr (KS > 0) {
        float4 v[KS];
#pragma unroll
        for (int s = 0; s < KS; ++s)
          v[s] = ptx::ld_shared_cluster_f32x4(red + row * RP + col, static_cast<uint32_t>(s * cast + ci));
#pragma unroll
        for (int s = 0; s < KS; ++s) {
          sum.x += v[s].x;
          sum.y += v[s].y;
          sum.z += v[s].z;
          sum.w += v[s].w;
        }
      } else {
        for (int s = 0; s < splits; ++s) {
          const float4 v = ptx::ld_shared_cluster_f32x4(red + row * RP + col, static_cast<uint32_t>(s * cast + ci));
          sum.x += v.x;
          sum.y += v.y;
          sum.z += v.z;
          sum.w += v.w;
        }
      }
      epilogue_quad<Cfg::kOut, typename Cfg::Epi>(ep, sum, batch, row, n0 + col, p.N);
    }
  };
  switch (splits) {
    case 1: reduce_store(cuda::std::integral_constant<int, 1>{}); break;
    case 2: reduce_store(cuda::std::integral_constant<int, 2>{}); break;
    case 4: reduce_store(cuda::std::integral_constant<int, 4>{}); break;
    case 8: reduce_store(cuda::std::integral_constant<int, 8>{}); break;
    default: reduce_store(cuda::std::integral_constant<int, 0>{}); break;
  }
  if (kTr && threadIdx.x == 0) mark(kSkStored);
  // Peers have finished reading this CTA's partial tile. NOTE: a relaxed arrival orders nothing; it suffices because
  // each remote load's value is summed (FADDs under the load's own predicate) before any branch, store or barrier,
  // so no load of a peer's memory is in flight when a thread arrives. scripts/check-skinny-reduction.py checks
  // this in the SASS of every variant; run it after changing this kernel.
  if (splits > 1 || cast > 1) {  // a lone CTA (split 1, cast 1) has no peer to wait for
    ptx::cluster_arrive_relaxed();
    ptx::cluster_wait();
  }
  if constexpr (kTr) {
    if (threadIdx.x == 0) {
      mark(kSkExit);
      unsigned smid;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
      timeline[kSkSmid] = smid;
      timeline[kSkBlocks] = static_cast<unsigned long long>(nkb) + 1;  // + 1: a CTA with no K block still shows
      flush_timeline();
    }
  }
#endif
}

}  // namespace tmagemm::kernels
