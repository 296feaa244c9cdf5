// b_copy.cuh — the pad path's copy of an N-major 16-bit B whose rows TMA cannot read (row pitch or base off 16 bytes),
// made inside the persistent GEMM (gemm_persistent_tma.cuh kBCopy) by the producer warpgroup's three idle warps while
// the consumers compute, instead of by a copy kernel before it.
//
// Contract:
//   raster    a kBCopy kernel walks its tiles down whole columns of M blocks (group kBCopyGroupM), so that a wave of tiles
//             needs few column panels of B: on 4096 x 14336 x 4096 with 256 x 256 cluster tiles a wave spans ~4 panels
//             (~8 MB of B per wave, ~0.2 TB/s of copy) where the mm raster's groups of 8 span ~17 (~0.7 TB/s).
//   items     B's aligned copy (ep.bc_dst, row pitch ep.bc_dst_ld elements, what tma_b reads) is cut into items: K
//             block c (BK rows) of column panel p (PW = BN x cluster_n columns: the schedule's tile columns), each
//             item into BK / 8 parts of 8 rows. Parts are handed out by an atomic counter (ep.bc_next) in the order the
//             tiles first need them: panel p is first used by wave floor(p R / P) of the raster (R = M blocks of a
//             raster column, P = workers), so the order is by that wave, then by K block, then by panel.
//   workers   each of warps 1..3 of every CTA takes parts until none is left: a part's 8 x (PW / 8) 16-bit blocks go
//             out kInFlight at a time per lane (each block one 16-byte store; its source the two aligned 16-byte loads
//             around it, shifted into place where the row is off 16 bytes; element by element at a row's end), then
//             the warp adds 1 to ep.bc_ready[p * k_blocks + c] with release semantics. Columns at or past N, rows at or
//             past K are not written (TMA zero-fills past the copy's extents); no source byte past a row's last
//             element is read.
//   wait      the producer thread, before its TMA loads of B's K block c for panel p: spins until the item's count is
//             BK / 8 (acquire), then fences the async proxy so that its TMA loads see the generic-proxy writes.
//   never     deadlocks: workers wait on nothing, and a part is only ever taken by a running warp, so every part is
//             eventually copied whether or not every CTA of the grid is resident.
//   host      zeroes bc_ready and bc_next before the launch (src/choices/pad_tma.cpp).
#pragma once
#include <cuda/atomic>
#include <cuda/ptx>
#include <cuda/std/cstdint>

#include "epilogue.cuh"
#include "window.cuh"

namespace tmagemm::kernels {

// A kBCopy kernel's raster group (scheduler.cuh raster_tile): whole columns of M blocks for any M up to 2^20 rows.
constexpr int kBCopyGroupM = 8192;
constexpr int kBCopyPartRows = 16;  // rows of B a worker copies between two counts
constexpr int kBCopyInFlight = 3;  // passes of 32 chunks a warp loads before it stores them

struct BCopyPlan {
  int panels, k_blocks, items, pw, bk, rows_first, workers;

  __device__ BCopyPlan(int M, int N, int K, int bm_cluster, int pw_, int bk_, int group_m, int workers_)
      : panels((N + pw_ - 1) / pw_),
        k_blocks((K + bk_ - 1) / bk_),
        items(0),
        pw(pw_),
        bk(bk_),
        rows_first(0),
        workers(workers_) {
    const int m_blocks = (M + bm_cluster - 1) / bm_cluster;
    rows_first = m_blocks < group_m ? m_blocks : group_m;
    items = panels * k_blocks;
  }
  // The wave that first uses panel p, and the first panel of wave w.
  __device__ int wave_of(int p) const { return static_cast<int>((static_cast<long long>(p) * rows_first) / workers); }
  __device__ int first_panel(int w) const {
    return static_cast<int>((static_cast<long long>(w) * workers + rows_first - 1) / rows_first);
  }
  // Item i of the need order: (panel, K block).
  __device__ void item(int i, int& p, int& c) const {
    int w = 0, base = 0;
    for (;;) {
      const int p0 = first_panel(w), p1 = min(panels, first_panel(w + 1));
      const int n = (p1 - p0) * k_blocks;
      if (n > 0 && (i < base + n || p1 >= panels)) {
        const int j = i - base, np = p1 - p0;
        c = j / np;
        p = p0 + j % np;
        return;
      }
      base += n;
      ++w;
    }
  }
};

// Warps 1..3 of the producer warpgroup: copy parts until none is left.
// A part's rows are walked as their source chunks: row r's columns [col0, col0 + cols) lie in the nb + 1 aligned
// 16-byte chunks from the one holding its first element (nb = ceil(cols / 8)). A pass of the warp loads 32
// consecutive chunks of the part (lane l the pass's chunk l) and stores 31 blocks: lane l < 31 whose chunk is one of
// its row's first nb stores destination block jc of that row, the 16 bytes from its chunk and the next (lane l + 1's,
// by shuffle) shifted by the row's misalignment. kBCopyInFlight passes are loaded before their stores.
__device__ inline void b_copy_worker(const BCopyPlan& plan, const EpilogueParams& ep, int N, int K, int lane) {
  using cuda::std::uintptr_t;
  const char* src = static_cast<const char*>(ep.bc_src);
  char* dst = static_cast<char*>(ep.bc_dst);
  constexpr int kParts = 64 / kBCopyPartRows;  // NOTE: BK is 64 for every 16-bit config (static_assert in the kernel)
  const int parts = plan.items * kParts;
  for (;;) {
    int i = 0;
    if (lane == 0) i = static_cast<int>(atomicAdd(ep.bc_next, 1u));
    i = __shfl_sync(0xffffffffu, i, 0);
    if (i >= parts) break;
    int p, c;
    plan.item(i / kParts, p, c);
    const int col0 = p * plan.pw, k0 = c * plan.bk + (i % kParts) * kBCopyPartRows;
    const int rows = max(0, min(K - k0, kBCopyPartRows)), cols = min(plan.pw, N - col0);
    const int nb = (cols + 7) / 8, nc = nb + 1, total = rows * nc;  // destination blocks and source chunks a row
    // Row r's first source byte, its aligned chunk 0, and the byte past the source row's last element.
    auto row_src = [&](int r) { return src + ((static_cast<long long>(k0) + r) * ep.bc_src_ld + col0) * 2; };
    auto row_end = [&](int r) { return src + ((static_cast<long long>(k0) + r) * ep.bc_src_ld + N) * 2; };
#pragma unroll 1
    for (int t0 = 0; t0 < total; t0 += 31 * kBCopyInFlight) {
      // Whether pass chunk t was loaded: it lies wholly inside its source row (computed again where it is used).
      auto chunk_of = [&](int t, bool& ok) {
        const int r = t / nc, jc = t - r * nc;
        const char* chunk = reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(row_src(r)) & ~uintptr_t{15}) + 16 * jc;
        ok = t < total && chunk + 16 <= row_end(r);
        return chunk;
      };
      uint4 v[kBCopyInFlight];
#pragma unroll
      for (int u = 0; u < kBCopyInFlight; ++u) {
        bool ok;
        const char* chunk = chunk_of(t0 + 31 * u + lane, ok);
        v[u] = ok ? __ldg(reinterpret_cast<const uint4*>(chunk)) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kBCopyInFlight; ++u) {
        uint4 next;
        next.x = __shfl_down_sync(0xffffffffu, v[u].x, 1);
        next.y = __shfl_down_sync(0xffffffffu, v[u].y, 1);
        next.z = __shfl_down_sync(0xffffffffu, v[u].z, 1);
        next.w = __shfl_down_sync(0xffffffffu, v[u].w, 1);
        bool ok;
        chunk_of(t0 + 31 * u + lane, ok);
        const unsigned ok_bits = __ballot_sync(0xffffffffu, ok);
        const int t = t0 + 31 * u + lane, r = t / nc, jc = t - r * nc;
        if (lane == 31 || t >= total || jc >= nb) continue;
        const char* s = row_src(r) + 16 * jc;
        char* d = dst + ((static_cast<long long>(k0) + r) * ep.bc_dst_ld + col0 + 8 * jc) * 2;
        const int n = min(8, cols - 8 * jc);
        const unsigned sh = static_cast<unsigned>(reinterpret_cast<uintptr_t>(s) & 15);
        const bool lo_ok = (ok_bits >> lane) & 1u, hi_ok = sh == 0 || ((ok_bits >> (lane + 1)) & 1u);
        uint4 out;
        if (n == 8 && lo_ok && hi_ok) {
          out = sh == 0 ? v[u] : shift_window(v[u], next, sh);
        } else {  // a partial block, or one whose chunks pass the source row's end: element by element
          unsigned short e[8];
#pragma unroll
          for (int q = 0; q < 8; ++q) e[q] = q < n ? *reinterpret_cast<const unsigned short*>(s + 2 * q) : 0;
          out = make_uint4(e[0] | unsigned(e[1]) << 16, e[2] | unsigned(e[3]) << 16, e[4] | unsigned(e[5]) << 16,
                           e[6] | unsigned(e[7]) << 16);
        }
        if (n == 8)
          *reinterpret_cast<uint4*>(d) = out;
        else
          store_prefix16(d, out, 2 * n);
      }
    }
    __threadfence();
    __syncwarp();
    if (lane == 0)
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(ep.bc_ready[p * plan.k_blocks + c])
          .fetch_add(1u, cuda::memory_order_release);
  }
}

// The producer thread: waits until item (p, c) is in place (k_blocks: K blocks a panel).
__device__ __forceinline__ void b_copy_wait(const EpilogueParams& ep, int p, int c, int k_blocks) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(ep.bc_ready[p * k_blocks + c]);
  while (count.load(cuda::memory_order_acquire) < 64u / kBCopyPartRows) {
  }
  // NOTE: the copy was written through the generic proxy; the TMA loads that read it go through the async proxy.
  cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
}

}  // namespace tmagemm::kernels
