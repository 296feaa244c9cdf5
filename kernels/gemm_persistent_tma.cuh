// gemm_persistent_tma.cuh — persistent, warp-specialised TMA + WGMMA GEMM for 16-bit inputs (bf16/f16) and for
// fp8 inputs (e4m3/e5m2, scaled_mm: both operands K-major).
//
// One CTA per SM loops over output tiles (scheduler.cuh). Warpgroup 0 is the producer: one thread issues
// TMA loads of A and B tiles into a kStages-deep shared-memory ring guarded by full/empty mbarriers.
// Warpgroups 1..kConsumers are consumers: each owns BM/kConsumers rows of the tile (or, with kSplitN, all BM rows
// and BN/kConsumers columns), runs wgmma.mma_async m64nWNk16 from shared memory into fp32 registers, and stores
// its part. The other parts, each with its contract: scheduler.cuh (tiles and stream-K units), pipeline.cuh (the stage
// ring), stage_fill.cuh (a stage's layout and loads), stage_mma.cuh (a consumer's wgmmas over a stage), epilogue.cuh
// (the epilogue stage), consumer_store.cuh and tile_store.cuh (a finished tile's stores), stream_k_fixup.cuh (split
// tiles' sums), cluster_split_k.cuh (a tile's K halves summed in distributed shared memory), trace.cuh (profiling
// builds' timeline).
//
// FP8 (kFp8A / kFp8B: 1 e4m3, 2 e5m2): wgmma m64nWNk32 on K-major tiles of 128-element (128-byte) swizzled rows.
// kPromote > 0 is two-level accumulation (scaled_mm's use_fast_accum = false): the wgmma accumulators restart every
// kPromote K blocks and are added into a second set of fp32 registers (the tensor core's own fp8 accumulation keeps
// fewer bits than fp32); kPromote = 0 accumulates the whole K range in the wgmma accumulators.
// kPromoteCols > 0 (with kPromote = 1): the consumer's columns are computed in groups of kPromoteCols, one group's
// wgmmas at a time into one group-sized accumulator set, each group waited out and added into its columns of the
// totals before the next group is issued. A 64x256 fragment then holds 64 + 128 registers instead of 2 x 128, so
// two-level accumulation keeps the 128x256 tile.
//
// Layouts (per operand, chosen on the host): A is K-major (row-major M x K) or M-major (column-major);
// B is K-major (column-major K x N, i.e. stored N x K) or N-major (row-major K x N). All tiles use the
// 128-byte swizzle; stage_fill.cuh gives a stage's layout (K-major slabs, MN-major 64-wide chunks) and its loads.
// K tails: TMA zero-fills out-of-bounds box elements (and still credits the full box bytes), so the main
// loop has no masks. M/N tails: the epilogue stores only in-bounds elements.
//
// Clusters (kClusterM x kClusterN CTAs, each 1 or 2): CTA rank r sits at (r % kClusterM, r / kClusterM) of the
// cluster's tile grid. The kClusterM CTAs of one column share the B tile and the kClusterN CTAs of one row share
// the A tile: each loads 1/kClusterM of B and 1/kClusterN of A and multicasts its part into the smem of every
// CTA that shares it, at the same offset. A stage may be refilled only when the consumers of every CTA it is
// written into have released it, so consumers arrive on the empty barrier of every CTA in the cluster; full
// barriers stay local (each expects its whole stage, parts of which peers deliver). All CTAs of a cluster walk
// the same tiles and K blocks in lockstep. None exits while a peer may still arrive on its barriers: each
// producer, after its last load, waits until every stage has been released by the whole cluster once more.
// Which part each CTA loads: stage_fill.cuh.
//
// kClusterK = 2 (cluster split-K): a cluster of two CTAs shares each tile, CTA r computing the r-th half of its K
// blocks (no multicast: each loads its own stages); consumer r of CTA r adds the peer's sums, received through
// distributed shared memory, and stores the rows of consumer r (cluster_split_k.cuh). A tile takes half the K loop's
// time on twice the SMs: it pays where whole tiles leave SMs idle (fewer tiles than SMs, or a last partial wave).
//
// Config (a struct passed as the template argument, rendered by src/choices/persistent_tma.cpp):
//   kBM, kBN, kBK, kStages, kConsumers, kSplitN, kGroupM, kClusterM, kClusterN, kClusterK, kAKMajor, kBKMajor, kF16,
//   kFp8A, kFp8B, kPromote, kPromoteCols, kOut, kStoreTma, kStagingChunks, kConsumerRegs, kProducerRegs (0: no register
//   reallocation), kTrace, kGrouped, kStreamK, kPingPong, kOutPlain.
// kTrace (profiling builds only, TMAGEMM_TRACE on the host): one thread per role writes a timeline of the CTA to
// trace[blockIdx.x * kTraceSlots + slot] (SM clock cycles, plus %globaltimer at entry and exit; see TraceSlot).
// kStoreTma: the epilogue goes through per-consumer staging blocks and TMA stores (tma_out) instead of direct masked
// stores (ep); the host picks it only for 16-bit row-major outputs, kOutPlain where TMA cannot address the output.
// When each piece of a finished tile goes out (mostly under the next tile's MMAs) and how: consumer_store.cuh.
// kGrouped (grouped_mm): tiles come from scheduler.cuh's GroupedTileScheduler (group g's rows of A and out, matrix g of
// B); a tile never stores rows at or past its group's end (consumer_store.cuh). With kStreamK the partial wave of the
// grouped schedule's tiles (a count read on the device) is shared out by K blocks like mm's; the unit that finishes a
// tile stores it at once (not deferred), clipped to its group's rows.
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
#include "cluster_split_k.cuh"
#include "consumer_store.cuh"
#include "scheduler.cuh"
#include "stage_fill.cuh"
#include "stage_mma.cuh"
#include "stream_k_fixup.cuh"
#include "tile_store.cuh"
#include "tma_desc.cuh"
#include "trace.cuh"

namespace tmagemm::kernels {

template <class Cfg>
__global__ void __launch_bounds__((Cfg::kConsumers + 1) * 128, 1)
    gemm_persistent_tma(const __grid_constant__ TmaDesc tma_a, const __grid_constant__ TmaDesc tma_b,
                        const __grid_constant__ TmaDesc tma_out, const EpilogueParams ep, int M, int N, int K,
                        int batch, unsigned long long* trace) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using cuda::std::uint32_t;
  using cuda::std::uint64_t;
  constexpr int BM = Cfg::kBM, BN = Cfg::kBN, BK = Cfg::kBK, S = Cfg::kStages, C = Cfg::kConsumers;
  // CS: the CTAs that share (multicast) stages; CT: the whole cluster (with kClusterK, two CTAs on one tile).
  constexpr int CM = Cfg::kClusterM, CN = Cfg::kClusterN, CS = CM * CN, CK = Cfg::kClusterK, CT = CS * CK;
  static_assert((CM == 1 || CM == 2) && (CN == 1 || CN == 2), "clusters of 1 or 2 CTAs along M and along N");
  // An N-major B is loaded in whole 64-column chunks: a BN of 224 takes four, the last half of which belongs to the
  // next tile (loaded, never read by this tile's wgmma).
  constexpr bool kFp8 = Cfg::kFp8A != 0;
  static_assert((Cfg::kFp8A != 0) == (Cfg::kFp8B != 0), "both operands fp8 or both 16-bit");
  // NOTE: fp8 wgmma reads both operands K-major from shared memory (no transpose for 8-bit types).
  static_assert(!kFp8 || (Cfg::kAKMajor && Cfg::kBKMajor), "fp8 operands are K-major");
  static_assert(kFp8 || Cfg::kPromote == 0, "two-level accumulation is for fp8");
  using Op = Sw128Operand<kFp8 ? 1 : 2>;
  using Fill = StageFill<Cfg, Op>;  // the stage layout and the producer's loads (stage_fill.cuh)
  constexpr int kRowElems = Op::kRowElems;   // elements per 128-byte swizzled row (64, or 128 fp8)
  constexpr bool SN = Cfg::kSplitN;
  // kPingPong: each consumer computes whole tiles, the CTA's units taken in turn (consumer 0 the even ones), and
  // their K loops run one after the other (named barriers 8 + consumer): one consumer's MMAs run while the other
  // waits out its last wgmmas, packs and stores its tile, so a tile boundary leaves the tensor cores busy.
  constexpr bool kPP = Cfg::kPingPong;
  static_assert(!kPP || (C == 2 && !SN && !Cfg::kStreamK && !Cfg::kGrouped && Cfg::kPromote == 0 && CN == 1),
                "ping-pong: two consumers on whole tiles, 16-bit mm/bmm/addmm, clusters along M only");
  constexpr bool kWholeRows = SN || kPP;  // each consumer holds every row of the tile
  constexpr int kRowsPerConsumer = kWholeRows ? BM : BM / C;
  constexpr int MI = kRowsPerConsumer / 64;  // m64 fragments per consumer
  constexpr int WN = SN ? BN / C : BN;       // columns per consumer (the wgmma's N)
  static_assert(!SN || (WN % kRowElems == 0 && BN % C == 0), "a consumer's columns are whole 64-column chunks");
  constexpr int kABytes = Fill::kABytes, kStageBytes = Fill::kStageBytes;
  static_assert(CK == 1 || (CK == 2 && CS == 1 && C == 2 && !kWholeRows && !Cfg::kStreamK && !Cfg::kGrouped &&
                            Cfg::kPromote == 0),
                "cluster split-K: two CTAs on one tile, two consumers splitting its rows, 16-bit mm/bmm/addmm");
  using SplitK = ClusterSplitK<MI, WN>;
  static_assert(kRowsPerConsumer % 64 == 0 && MI >= 1, "each consumer owns whole m64 fragments");
  static_assert(BN % 8 == 0 && BN <= 256, "wgmma n is 8..256");
  static_assert(!Cfg::kStoreTma || WN % 32 == 0, "the TMA-store epilogue takes 64-column chunks and a 32-column tail");
  static_assert(!Cfg::kStoreTma || Cfg::kPromoteCols == 0 || WN % 64 == 0,
                "with column groups the tile is stored at once, in whole 64-column chunks");

  // Profiling builds only (trace.cuh): every call site tests kTr first, so that normal builds do not read the clock.
  constexpr bool kTr = Cfg::kTrace;
  Timeline<kTr> timeline;
  auto mark = [&](int slot, unsigned long long value) { timeline.mark(slot, value); };
  auto flush_timeline = [&] { timeline.flush(trace); };
  if (kTr && threadIdx.x == 0) {
    mark(kTrGlobalStart, global_timer_ns());
    mark(kTrClockStart, clock64());
  }

  extern __shared__ unsigned char smem_raw[];
  // NOTE: the swizzle pattern uses absolute address bits; round the base up to 1024 bytes.
  const uint32_t raw_addr = ptx::smem_u32(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
  constexpr int kStagingBytes = Cfg::kStagingChunks * kStagingBlockBytes;  // per consumer (tile_store.cuh)
  unsigned char* staging = smem + S * kStageBytes;  // only with kStoreTma
  // kClusterK: the peer's sums for this CTA's receiving consumer (one consumer's fragments in fp32).
  unsigned char* ks_buf = staging + (Cfg::kStoreTma ? C * kStagingBytes : 0);
  const Ring<S> ring(ks_buf + (CK > 1 ? SplitK::kBytes : 0));

  // NOTE: read through a shuffle so that the compiler knows the warpgroup index is warp-uniform (CUTLASS's
  // canonical_warp_group_idx): the consumers' stage offsets and wgmma descriptors then stay in uniform registers
  // instead of being rebuilt in vector registers and moved (R2UR) before every wgmma.
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
  const int tid = threadIdx.x % 128;

  // grouped_mm: the groups' tile counts and rows, once per CTA (`batch` is the group count; every thread takes part).
  __shared__ cuda::std::conditional_t<Cfg::kGrouped, GroupSchedule, char> group_sched;
  // Stream-K: per consumer, whether its warpgroup's unit arrived last on a split tile (set by its thread 0).
  __shared__ cuda::std::conditional_t<Cfg::kStreamK, int[4], int[1]> sk_flag;
  __shared__ cuda::std::conditional_t<Cfg::kStreamK, StreamKSchedule, char> sk_work;  // the schedule (stream-K)
  __shared__ cuda::std::conditional_t<(CK > 1), cuda::std::uint64_t[2], char> ks_bars;  // cluster split-K: full, empty
  constexpr bool kPairs = Fill::kPairs;  // grouped_mm in 2x1 clusters: CTA tiles taken in pairs
  constexpr int kSchedM = kPairs ? BM : BM * CM;  // rows of a schedule tile
  // PDL: the group ends are the first global data read (everything before this is set-up of our own).
  if constexpr (Cfg::kGrouped) {
    ptx::grid_dependency_wait();
    load_group_schedule(group_sched, ep.group_ends, batch, M, N, kSchedM, BN * CN, kPairs);
  }

  if (threadIdx.x == 0) {
    ptx::prefetch_tensormap(&tma_a);
    ptx::prefetch_tensormap(&tma_b);
    if constexpr (Cfg::kStoreTma && !Cfg::kOutPlain) ptx::prefetch_tensormap(&tma_out);
    if constexpr (CK > 1) {  // (ring.init's fence releases these too)
      cuda::ptx::mbarrier_init(&ks_bars[0], 1);
      cuda::ptx::mbarrier_init(&ks_bars[1], 1);
    }
    ring.init((kPP ? 1 : C) * 4 * CS);  // one arrival per consumer warp (of the stage's consumer) of every cluster CTA
  }
  // NOTE: peers multicast into our smem and arrive on our barriers: publish the init cluster-wide before either
  // happens. Every thread arrives now and waits after its role's set-up, so the round trip overlaps that. The wait
  // is executed by whole warps: a lone lane's wait compiles to a slow divergent path (measured ~400 cycles).
  if constexpr (CT > 1)
    ptx::cluster_arrive_relaxed();  // fence.mbarrier_init above released the initialisation
  else
    __syncthreads();

  if (kTr && threadIdx.x == 0) mark(kTrInitDone, clock64());
  // PDL: the barriers and tensor-map prefetches above overlap the previous kernel's tail; no thread reads global memory
  // (the TMA loads, the epilogue's vectors, stream-K's workspace) before that kernel has completed.
  if constexpr (!Cfg::kGrouped) ptx::grid_dependency_wait();
  ptx::launch_dependents();

  const uint32_t rank = CT > 1 ? ptx::cluster_ctarank() : 0;
  // Place in the cluster's tile grid, and (kClusterK) which half of a tile's K blocks.
  const int rm = static_cast<int>(rank % CS) % CM, rn = static_cast<int>(rank % CS) / CM,
            rk = static_cast<int>(rank) / CS;
  const auto sched = [&] {
    if constexpr (Cfg::kGrouped)
      return GroupedTileScheduler(group_sched, ep.group_ends, batch, M, N, kSchedM, BN * CN, Cfg::kGroupM, kPairs);
    else
      return TileScheduler(M, N, batch, BM * CM, BN * CN, Cfg::kGroupM);
  }();
  const int first_tile = blockIdx.x / CT, tile_step = gridDim.x / CT;
  const int k_blocks = (K + BK - 1) / BK;
  // The K blocks [kb0, kb1) of unit u this CTA computes: stream-K's range of the tile, with kClusterK this CTA's half
  // (rank 0 the first ceil(k_blocks / 2); the host refuses K of one block), else all of them.
  const int ks_half = (k_blocks + 1) / 2;
  const auto unit_kb0 = [&](const WorkUnit& u) { return Cfg::kStreamK ? u.kb0 : CK > 1 ? rk * ks_half : 0; };
  const auto unit_kb1 = [&](const WorkUnit& u) {
    return Cfg::kStreamK ? u.kb1 : CK > 1 && rk == 0 ? ks_half : k_blocks;
  };
  // The units of work of this CTA's cluster: whole tiles, and with kStreamK the K ranges of the last waves' tiles.
  static_assert(!Cfg::kStreamK || Cfg::kPromote == 0, "stream-K: 16-bit inputs only");
  const StreamKSchedule work_regs = StreamKSchedule::make(sched.total, k_blocks, tile_step, false);
  if constexpr (Cfg::kStreamK) {
    if (threadIdx.x == 0) sk_work = StreamKSchedule::make(sched.total, k_blocks, tile_step, true);
    __syncthreads();
  }
  const StreamKSchedule& work = [&]() -> const StreamKSchedule& {
    if constexpr (Cfg::kStreamK)
      return sk_work;
    else
      return work_regs;
  }();
  // A split tile's segments in the workspace: grouped_mm's tile count is known here only (the host sized the workspace
  // for any count), the others' the host computed the same way.
  const auto seg_stride = [&] { return Cfg::kGrouped ? work.max_segments() : ep.sk_seg_stride; };

  // ---------------- producer: loads (stage_fill.cuh) ----------------
  const Fill fill(&tma_a, &tma_b, smem, ring, rm, rn, ep.l2_stream);
  // Fills `stage` with K block kb of tile tc (the caller has seen the stage empty).
  auto issue_stage = [&](const TileCoord& tc, int kb, int stage, bool first) { fill.fill(tc, kb, stage, first, mark); };
  // This CTA's tile of cluster tile (or pair) t.
  auto tile_of = [&](int t) {
    if constexpr (kPairs) {
      return sched.pair_tile(t, rm);
    } else {
      TileCoord tc = sched.tile(t);
      tc.m0 += rm * BM;  // may lie past M (or N) at the grid's edge: TMA then fills zeros
      tc.n0 += rn * BN;
      return tc;
    }
  };
  // The first tile's first stages are issued here, on the prologue's straight-line path: the producer loop's code
  // is laid out after the consumers' (measured ~800 cycles to reach it from a cold instruction cache). Fresh
  // stages need no empty-barrier wait.
  int prefilled = 0;
  if (threadIdx.x < 32) {
    if constexpr (CT > 1) ptx::cluster_wait();  // NOTE: before the first multicast into a peer
    WorkUnit u0;
    if (threadIdx.x == 0 && work.template first<Cfg::kStreamK>(first_tile, u0)) {
      const TileCoord tc = tile_of(u0.tile);
      const int kb0 = unit_kb0(u0), n = unit_kb1(u0) - kb0;
      prefilled = n < S ? n : S;
      if (kTr) mark(kTrProdTile, clock64());
      for (int kb = 0; kb < prefilled; ++kb) issue_stage(tc, kb0 + kb, kb, kTr && kb == 0);
    }
  }

  if (wg == 0) {
    // ---------------- producer ----------------
    if constexpr (Cfg::kProducerRegs > 0) ptx::setmaxnreg_dec<Cfg::kProducerRegs>();
    if constexpr (CT > 1)
      if (threadIdx.x >= 32) ptx::cluster_wait();
    if (tid == 0) {
      RingPos<S> pos = RingPos<S>::fresh_after(prefilled);
      WorkUnit u;
      for (bool more = work.template first<Cfg::kStreamK>(first_tile, u), first = true; more;
           more = work.template next<Cfg::kStreamK>(first_tile, u), first = false) {
        const TileCoord tc = tile_of(u.tile);
        const int kb0 = unit_kb0(u), kb1 = unit_kb1(u);
        for (int kb = kb0 + (first ? prefilled : 0); kb < kb1; ++kb) {
          ring.wait_empty(pos);
          issue_stage(tc, kb, pos.stage, false);
          pos.advance();
        }
      }
      if (kTr) mark(kTrProducerDone, clock64());
      if constexpr (CS > 1) {
        // NOTE: the peer's consumers arrive on our empty barriers until they finish; wait for every stage to be
        // released once more (a never-filled stage passes at once) so that this CTA outlives those arrivals.
        ring.drain(pos);
      }
      if (kTr) flush_timeline();
    }
  } else {
    // ---------------- consumers ----------------
    if constexpr (Cfg::kProducerRegs > 0) ptx::setmaxnreg_inc<Cfg::kConsumerRegs>();
    if constexpr (CT > 1) ptx::cluster_wait();
    const int cidx = wg - 1;
    const int lane = threadIdx.x % 32;
    // A stage is freed in every CTA of the cluster (their producers multicast into our copy of it).
    RingPos<S> pos;
    constexpr int kPromote = Cfg::kPromote;
    // Columns per promotion group (the wgmma's N) and the groups of a K block.
    constexpr int PG = kPromote > 0 && Cfg::kPromoteCols > 0 ? Cfg::kPromoteCols : WN;
    constexpr int kGroups = WN / PG;
    static_assert(WN % PG == 0 && PG % 8 == 0, "promotion groups are whole 8-column blocks of the fragment");
    static_assert(kGroups == 1 || (kPromote == 1 && Cfg::kBKMajor), "column groups promote every K block (K-major B)");
    float acc[MI][PG / 2];
    float total[MI][kPromote > 0 ? WN / 2 : 1];  // two-level accumulation: the fp32 sums of the finished runs
    // Stage 0's descriptors (offset 0 of A and of B); the loop adds byte offsets to their address field.
    const uint32_t smem_base = ptx::smem_u32(smem);
    const uint64_t a_desc0 = Cfg::kAKMajor ? Op::desc_kmajor(smem_base) : Op::desc_mnmajor(smem_base, BK);
    // With kSplitN a consumer reads its own columns of B: rows of a K-major slab or 64-column chunks.
    const uint32_t b_cols = SN ? (Cfg::kBKMajor ? cidx * WN * 128 : Op::mnmajor_chunk(BK, cidx * (WN / kRowElems))) : 0;
    const uint64_t b_desc0 = Cfg::kBKMajor ? Op::desc_kmajor(smem_base + kABytes + b_cols)
                                           : Op::desc_mnmajor(smem_base + kABytes + b_cols, BK);

    const bool tracer = kTr && cidx == 0 && tid == 0;
    int tiles_done = 0;
    // The finished tiles' stores (consumer_store.cuh): deferred pieces under the next tile's K blocks, or at once.
    using Stores = ConsumerStores<Cfg, MI, WN, kWholeRows, (kGroups > 1)>;
    constexpr bool kDeferred = Stores::kDeferred;
    typename Stores::Packed packed;
    TileCoord pending{};
    int next_unit = Stores::kUnits, chunk_seq = 0;
    Stores stores{next_unit, pending, cidx, N, packed, chunk_seq, staging, tma_out, ep};
    auto store_piece = [&] {
      if (stores.store_next() && tracer) mark(tiles_done == 1 ? kTrFirstEpiDone : kTrLastEpiDone, clock64());
    };
    // Cluster split-K's exchange with the peer CTA (cluster_split_k.cuh).
    SplitK ks{nullptr, nullptr, 0};
    if constexpr (CK > 1) ks = SplitK{ks_bars, ks_buf, rank ^ 1u};
    if (tracer) mark(kTrConsStart, clock64());
    WorkUnit u;
    int unit_index = 0;  // ping-pong: the CTA's units counted, consumer unit_index % 2 takes each
    for (bool more = work.template first<Cfg::kStreamK>(first_tile, u); more;
         more = work.template next<Cfg::kStreamK>(first_tile, u)) {
      const int t = u.tile;
      // The unit's K blocks (whole tiles: all of them, known at compile time without kStreamK). The loops count
      // j = kb - kb0 from 0, as a whole tile's do.
      const int kb0 = unit_kb0(u), n_kb = unit_kb1(u) - kb0;
      // NOTE: a K half without a block would wait forever on a stage its producer never fills (the host refuses K of
      // one block for cluster split-K; this stops a bypass loudly instead).
      if constexpr (CK > 1)
        if (n_kb < 1) __trap();
      if constexpr (kPP) {
        const int index = unit_index++;
        if ((index & 1) != cidx) {  // the other consumer's unit: its stages are skipped
          for (int j = 0; j < n_kb; ++j) pos.advance();
          continue;
        }
        // NOTE: the turn: the other consumer has issued its unit's last K block (it arrives after its loop).
        if (index > 0) ptx::named_barrier_sync(8 + cidx, 256);
      }
      const TileCoord tc = tile_of(t);
      // This consumer's part of the tile: its first row and column, and the epilogue vectors of its fragments.
      const int row_base = tc.m0 + (kWholeRows ? 0 : cidx * kRowsPerConsumer), col_base = tc.n0 + (SN ? cidx * WN : 0);
      using Vectors = TileVectors<WN, MI, typename Cfg::Epi>;
      Vectors vecs;
      int prev_stage = 0;
      bool prev_held = false;  // two-level: a stage whose wgmmas may still run has not been released yet
      if constexpr (kPromote > 0) {  // zeroed once a tile: the promotions then add without a select
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
          for (int i = 0; i < WN / 2; ++i) total[mi][i] = 0.0f;
      }
      // A consumer whose rows all lie at or past the tile's last row (grouped_mm: a group's last tile; mm: the M edge)
      // has nothing to compute: it only takes part in the ring (waits for each stage and releases it), and the other
      // consumer's wgmmas have the tensor cores to themselves. (Its fragments are never stored.)
      const bool idle = kPromote == 0 && !SN && !kPP && row_base >= tc.m_end;
      if (idle) {
        for (int j = 0; j < n_kb; ++j) {
          ring.wait_full(pos);
          if (lane == 0) ring.template release<CS>(pos.stage);
          pos.advance();
        }
      } else {
        // One K block of the unit (j = kb - kb0). Stream-K peels the unit's first K block off (kPeeled), so that its
        // first wgmma overwrites the accumulators by a compile-time flag: the accumulators are then dead between
        // units, and a split tile's sums may be added into them (a runtime flag makes ptxas keep them live into the
        // next unit's wgmmas and serialise every wgmma, C7515, or spill them).
        auto k_block = [&](const int j, auto peeled) {
          constexpr bool kPeeled = decltype(peeled)::value;
          const int kb = kb0 + j;
          ring.wait_full(pos);
          if (tracer && t == first_tile && kb == 0) mark(kTrFirstFull, clock64());
          if (tracer && tiles_done == 1 && j == 0) mark(kTrNextFull, clock64());
          // Descriptors of this stage = those of stage 0 plus the stage's offset; each wgmma adds a constant.
          const uint32_t stage_off = static_cast<uint32_t>(pos.stage) * kStageBytes;
          // The K block's place in its accumulation run (two-level fp8).
          const int run_kb = kPromote > 0 ? kb % kPromote : kb;
  #pragma unroll
          for (int g = 0; g < kGroups; ++g) {
            // The first wgmma of an accumulation run (the unit's, or with kPromote > 0 the run's) overwrites.
            stage_mmas<Cfg, Op, MI, WN, PG, kWholeRows>(acc, a_desc0, b_desc0, stage_off, g, cidx,
                                                        kPromote > 0 ? run_kb : kPeeled ? 0 : j);
            if (g == 0) {
              if (tracer && tiles_done == 1 && j == 0) mark(kTrNextIssued, clock64());
              // A piece of the previous tile, while this K block's MMAs run; after odd K blocks only where the unit
              // has K blocks for that (a piece takes ~940 cycles of the consumer, a K block ~1,000 of MMAs: a piece
              // after every block let the tensor cores run dry at each tile's start, ~790 cycles a tile).
              if constexpr (kDeferred)
                if (next_unit < Stores::kUnits && (n_kb < 2 * Stores::kUnits + 1 || (j & 1) == 1)) {
                  store_piece();
                  if (tracer && tiles_done == 1 && next_unit == 1) mark(kTrUnit0Stored, clock64());
                }
              if constexpr (!Cfg::Epi::kIdentity)
                if (j == n_kb - 1) {  // the epilogue's vectors, under this K block's MMAs
                  if constexpr (Vectors::kLoads) vecs.load(ep, tc.ab, row_base, col_base, tc.m_end, N);
                  if constexpr (!Vectors::kBiasRow && !Vectors::kBiasCol)
                    prefetch_bias<typename Cfg::Epi>(ep, tc.ab, row_base, kRowsPerConsumer, tc.m_end, col_base, WN, N);
                }
            }
            if constexpr (kPromote > 0) {
              if (run_kb == kPromote - 1 || j == n_kb - 1) {
                // The run is complete: wait for its wgmmas, free its stages after the last group, add its sum into
                // the group's columns of the fp32 total.
                ptx::wgmma_wait<0>();
                if (g == kGroups - 1) {
                  if (lane == 0) {
                    if (prev_held) ring.template release<CS>(prev_stage);
                    ring.template release<CS>(pos.stage);
                  }
                  prev_held = false;
                }
  #pragma unroll
                for (int mi = 0; mi < MI; ++mi) {
                  ptx::fence_accumulators(acc[mi]);
  #pragma unroll
                  for (int i = 0; i < PG / 2; ++i) total[mi][g * (PG / 2) + i] += acc[mi][i];
                }
              } else {
                if (prev_held) {
                  ptx::wgmma_wait<1>();  // NOTE: release a stage only after the wgmmas reading it have completed.
                  if (lane == 0) ring.template release<CS>(prev_stage);
                }
                prev_held = true;
                prev_stage = pos.stage;
              }
            }
          }
          if constexpr (kPromote == 0) {
            if (!kPeeled && j > 0) {
              // NOTE: release a stage only after the wgmmas reading it have completed.
              ptx::wgmma_wait<1>();
              if (lane == 0) ring.template release<CS>(prev_stage);
            }
            prev_stage = pos.stage;
          }
          pos.advance();
        };
        // Peeled too where the epilogue writes the accumulators (bias, activation, scales: apply_epilogue works in
        // place): else those writes reach the next tile's first wgmmas through the runtime flag (C7515).
        // (Cluster split-K adds the peer's sums into the accumulators too.)
        if constexpr (Cfg::kStreamK || CK > 1 || (kPromote == 0 && !Cfg::Epi::kIdentity)) {
          k_block(0, cuda::std::true_type{});
          for (int j = 1; j < n_kb; ++j) k_block(j, cuda::std::false_type{});
        } else {
          for (int j = 0; j < n_kb; ++j) k_block(j, cuda::std::false_type{});
        }
        if constexpr (kPP) {  // the other consumer's turn, if it has a unit after this one
          WorkUnit nu = u;
          if (work.template next<false>(first_tile, nu)) ptx::named_barrier_arrive(8 + (1 - cidx), 256);
        }
        if constexpr (kPromote == 0) {
          ptx::wgmma_wait<0>();
          if (lane == 0) ring.template release<CS>(prev_stage);
        }
      }
      if (tracer) mark(t == first_tile ? kTrFirstMainDone : kTrLastMainDone, clock64());
      ++tiles_done;
      if constexpr (kDeferred)
        while (next_unit < Stores::kUnits) store_piece();  // fewer K blocks than pieces: the rest of the previous tile
      if constexpr (CK > 1) {
        // Cluster split-K: consumer rk finishes its rows from its own sums and the peer's; the other consumer sends
        // its sums to the peer (whose consumer of the same index finishes them) and stores nothing. Consumers whose
        // rows lie past M are idle in both CTAs alike.
        if (idle) continue;
        if (cidx != rk) {
          ks.send(acc, tid);
          continue;
        }
        ks.receive(acc, tid, 4 + cidx);
      }
      // Stream-K: how many units' workspace sums this unit's tile is finished from (0: its own accumulators).
      // (Negative: segment 0's sums are this unit's accumulators, not in the workspace; one register for both.)
      int reduce_segments = 0;
      if constexpr (Cfg::kStreamK) {
        int seg, nseg, slot;
        work.split(u, seg, nseg, slot);
        if (nseg > 1) {
          // A split tile: this unit's partial sums go to the workspace and it arrives on the tile's counter; the unit
          // that arrives last adds every unit's sums in segment order and stores the tile (stream_k_fixup.cuh). An
          // idle consumer (rows past the tile's last row) has nothing to add or store.
          if (idle) continue;
          const int how = stream_k_arrive<MI, WN, BM, BN, CS, C>(acc, ep, seg_stride(), slot, seg, nseg, rank, cidx,
                                                                 tid, tc.m_end - row_base, sk_flag);
          if (how == 0) continue;
          reduce_segments = how == 2 ? -nseg : nseg;
        }
      }
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        const int row0 = tc.m0 + (kWholeRows ? mi : cidx * MI + mi) * 64;
        const int col0 = tc.n0 + (SN ? cidx * WN : 0);
        // The epilogue stage in registers, then the store (packed for the TMA store, or direct).
        auto finish = [&](float (&d)[WN / 2]) {
          apply_epilogue<WN, typename Cfg::Epi>(ep, d, tc.ab, row0, col0, tc.m_end, N, vecs, mi);
          stores.store(d, tc, mi, row0, col0);
        };
        if constexpr (kPromote > 0) {
          finish(total[mi]);
        } else if (Cfg::kStreamK && reduce_segments != 0) {
          stream_k_sum<MI, WN, BM, BN, CS>(acc[mi], ep, seg_stride(), u.tile - work.dp_tiles,
                                           reduce_segments < 0 ? -reduce_segments : reduce_segments,
                                           reduce_segments < 0, rank, cidx, mi, tid, tc.m_end - row_base);
          finish(acc[mi]);
        } else {
          ptx::fence_accumulators(acc[mi]);
          finish(acc[mi]);
        }
      }
      if (tracer && tiles_done == 1) mark(kTrPacked, clock64());
      if constexpr (kDeferred) {
        pending = tc;
        next_unit = 0;
      } else if (tracer) {
        mark(t == first_tile ? kTrFirstEpiDone : kTrLastEpiDone, clock64());
      }
    }
    if constexpr (kDeferred)
      while (next_unit < Stores::kUnits) store_piece();
    if constexpr (CK > 1) ks.finish();
    if (tracer) mark(kTrTiles, tiles_done);
    // NOTE: shared memory must outlive the TMA stores that read it; only their reads need to be done here (the
    // writes complete with the grid), so the CTA does not wait out the global write latency.
    if constexpr (Cfg::kStoreTma)
      if (tid == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
    if (tracer) mark(kTrStoresRead, clock64());
  }
  if (kTr && wg == 1 && tid == 0) {
    mark(kTrExit, clock64());
    mark(kTrGlobalExit, global_timer_ns());
    mark(kTrSmid, sm_id());
    flush_timeline();
  }
#endif
}

}  // namespace tmagemm::kernels
