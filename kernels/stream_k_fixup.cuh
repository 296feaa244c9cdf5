// stream_k_fixup.cuh — a split stream-K tile's partial sums (persistent TMA's kStreamK configs; the schedule is
// scheduler.cuh's StreamKSchedule): each unit of the tile writes its sums to the workspace and arrives on the tile's
// counter; the unit that arrives last adds every unit's sums and finishes the tile. A unit reads the counter before it
// writes: when every other unit has arrived it is the last, and keeps its sums in its accumulators (segment 0) or
// writes them without a fence or a count (a later segment). Measured on an H100 (forty-fourth session), against
// writing, fencing (every thread) and counting in every unit: forced stream-K configs on the waves shapes 2-11 %
// faster (128x256 on 2560^3 0.792 -> 0.877 of cuBLASLt), the 64-row ones on decode 0-5 %.
//
// Contract:
//   takes   one consumer warpgroup's fp32 accumulators (MI m64 fragments of WN / 2 values per thread, the wgmma's
//           fragment order), the tile's workspace slot (its index among the shared-out tiles), its segment seg of
//           nseg (seg 0 holds the tile's first K blocks), the CTA's rank in its cluster and the consumer's index;
//           ep.sk_partials ([slot][seg][cluster CTA][BM x BN] floats, seg_stride segments a slot: the host's
//           ep.sk_seg_stride, or the kernel's own StreamKSchedule::max_segments for grouped_mm) and ep.sk_counters
//           (one per slot, CTA and consumer; zero at launch);
//   leaves  every counter it used at zero again (the last unit to arrive wraps it to 0: every unit of the tile has
//           arrived by then), so a counter buffer zeroed once stays zero across launches and needs no memset before each
//           (src/choices/persistent_tma.cpp, TMAGEMM_STREAM_K_CLEAN_COUNTERS);
//           `rows`: how many of the consumer's rows (from its first) the tile stores (its m_end less the first row);
//           the sums of rows at or past it are neither written nor read (decode's few rows: 1 of a 64-row tile);
//   gives   stream_k_arrive: 0 for a unit that is not last, 1 for the last with its sums in the workspace, 2 for the
//           last that is segment 0 with its sums still in `acc` (after the acquire: every other unit's sums are
//           visible); stream_k_sum: fragment mi as every unit's sums added in segment order 0, 1, ..., nseg - 1
//           (the result does not depend on which unit arrived last: two runs give the same bits), zero in the rows
//           at or past `rows` (which no store writes);
//   never   waits on another unit (the last to arrive does the work, so no CTA spins), and touches only its own
//           consumer's part of the workspace. Uses named barrier 4 + consumer (the warpgroup's 128 threads).
#pragma once
#include <cuda/std/cstdint>

#include "epilogue.cuh"
#include "ptx/sync.cuh"
#include "ptx/wgmma.cuh"

namespace tmagemm::kernels {

// Whether this thread's rows of fragment mi, the lower (h = 0) and upper (h = 1) of its pair 8 apart, are below
// `rows` (for_each_fragment_pair's layout: value i is in row 16 warp + lane / 4 + 8 ((i / 2) % 2) of the fragment).
__device__ __forceinline__ bool stream_k_row_kept(int rows, int mi, int h, int tid) {
  return mi * 64 + 16 * (tid / 32) + (tid % 32) / 4 + 8 * h < rows;
}

// The arrival of this unit on its split tile. Returns 0 when another unit finishes the tile, 1 when this one does
// from the workspace (every unit's sums there, its own too), 2 when this one does with its own sums (segment 0) still
// in `acc` and nothing of it written. The counter is read first: when every other unit has arrived already (each
// counts after its sums are released), this unit is the last and writes nothing (seg 0) or its sums without a fence
// or a count (its own threads read them back). Else its sums are written, released by one fence of thread 0 after
// the warpgroup's barrier (the barrier orders the other threads' stores before it: the release is cumulative), and
// it counts. `flag` is a shared word per consumer.
template <int MI, int WN, int BM, int BN, int CS, int C>
__device__ __forceinline__ int stream_k_arrive(float (&acc)[MI][WN / 2], const EpilogueParams& ep, int seg_stride,
                                               int slot, int seg, int nseg, cuda::std::uint32_t rank, int cidx,
                                               int tid, int rows, int* flag) {
  constexpr int kFloats = MI * (WN / 2);  // per thread
  constexpr long long kSegStep = static_cast<long long>(CS) * BM * BN;
  // (The counter's address is formed where it is used: a pointer kept across the stores would hold registers.)
  const auto counter = [&] { return ep.sk_counters + (slot * CS + static_cast<int>(rank)) * C + cidx; };
  ptx::named_barrier_sync(4 + cidx, 128);  // every thread has read the last arrival's flag
  if (tid == 0) {
    unsigned seen;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(seen) : "l"(counter()) : "memory");
    const bool last = seen == static_cast<unsigned>(nseg - 1);
    // Every other unit has arrived and none touches the counter again: zero for the next launch.
    if (last) *counter() = 0u;
    flag[cidx] = last ? (seg == 0 ? 2 : 3) : 0;
  }
  ptx::named_barrier_sync(4 + cidx, 128);
  const int early = flag[cidx];
  if (early == 2) return 2;
  const float* slot_base = ep.sk_partials + (static_cast<long long>(slot) * seg_stride * CS + rank) * (BM * BN) +
                           cidx * (kFloats * 128);
  float* mine = const_cast<float*>(slot_base) + seg * kSegStep;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    ptx::fence_accumulators(acc[mi]);
    const bool keep0 = stream_k_row_kept(rows, mi, 0, tid), keep1 = stream_k_row_kept(rows, mi, 1, tid);
#pragma unroll
    for (int i = 0; i < WN / 2; ++i)
      if ((i & 2) ? keep1 : keep0) __stcg(mine + (mi * (WN / 2) + i) * 128 + tid, acc[mi][i]);
  }
  if (early != 0) return 1;  // (each thread reads back only what it wrote: program order)
  ptx::named_barrier_sync(4 + cidx, 128);  // (also: every thread has read `early` before thread 0 writes the flag)
  if (tid == 0) {
    __threadfence();  // the warpgroup's sums before the arrival (release, cumulative through the barrier)
    // Counts 0, 1, ..., nseg - 1 and wraps to 0 on the last arrival (atomicInc's bound): zero for the next launch.
    const unsigned before = atomicInc(counter(), static_cast<unsigned>(nseg - 1));
    flag[cidx] = before == static_cast<unsigned>(nseg - 1);
    if (flag[cidx]) __threadfence();  // the other units' sums after their arrivals (acquire)
  }
  ptx::named_barrier_sync(4 + cidx, 128);
  return flag[cidx] ? 1 : 0;
}

// Fragment mi of the tile: the `segments` units' sums (this one's too: the same values) added in segment order into
// `d` (the accumulators, dead here: the next unit's first wgmma overwrites them).
// own_in_d: segment 0 is this unit's and `d` holds it (stream_k_arrive returned 2): only segments 1, ... are read.
template <int MI, int WN, int BM, int BN, int CS>
__device__ __forceinline__ void stream_k_sum(float (&d)[WN / 2], const EpilogueParams& ep, int seg_stride, int slot,
                                             int segments, bool own_in_d, cuda::std::uint32_t rank, int cidx, int mi,
                                             int tid, int rows) {
  constexpr long long kSegStep = static_cast<long long>(CS) * BM * BN;
  // (The slot's address again from the unit: a pointer kept from the arrival would hold registers.)
  const float* part = ep.sk_partials + (static_cast<long long>(slot) * seg_stride * CS + rank) * (BM * BN) +
                      (cidx * MI + mi) * (WN / 2) * 128 + tid;
  ptx::fence_accumulators(d);
  const bool keep0 = stream_k_row_kept(rows, mi, 0, tid), keep1 = stream_k_row_kept(rows, mi, 1, tid);
  if (!own_in_d) {
#pragma unroll
    for (int i = 0; i < WN / 2; ++i) d[i] = (i & 2) ? (keep1 ? __ldcg(part + i * 128) : 0.0f)
                                                    : (keep0 ? __ldcg(part + i * 128) : 0.0f);
  }
  for (int q = 1; q < segments; ++q) {
    part += kSegStep;
#pragma unroll
    for (int i = 0; i < WN / 2; ++i)
      if ((i & 2) ? keep1 : keep0) d[i] += __ldcg(part + i * 128);
  }
}

}  // namespace tmagemm::kernels
