// scheduler.cuh — persistent tile schedule for the GEMM kernels.
//
// Contract:
//   takes   the problem extents (M, N, batch), the tile (BM, BN) and a raster group size G. With clusters the
//           tile is the cluster's tile (cluster_m x BM rows) and each CTA adds rank x BM to m0 itself;
//   gives   tiles numbered 0 .. total-1, each mapped to (batch, m0, n0) exactly once. A persistent CTA with
//           (or cluster) index i walks tiles i, i + P, i + 2P, ... (P = CTAs or clusters in the grid). Within one
//           batch, tiles are grouped:
//           G consecutive M-blocks form a group and the M index varies fastest inside it, so CTAs that run
//           at the same time share B columns and a small band of A rows (L2 reuse).
//   never   touches memory (the grouped schedule below reads the group end rows); it is index arithmetic, identical
//           in every thread.
//
// GroupedTileScheduler (grouped_mm, the MoE forward): group g owns rows [end[g-1], end[g]) of A and of out (end[-1] =
//   0) and matrix g of B. It takes the groups' tile prefix sums, computed once per CTA into shared memory by
//   load_group_schedule, and reads a tile's group rows from the end rows (ends are clamped to [0, M]; a group whose
//   end is below the previous end is empty, and offsets that decrease make groups overlap: torch's rule is
//   non-decreasing offsets; the end rows must not change during the launch), and gives tiles numbered 0 .. total-1,
//   each mapped to (g, m0, n0) with m0 an absolute row of A/out and m_end = end[g]: rows at or past m_end belong to
//   the next group and are never stored. Within a group tiles are grouped as above.
#pragma once

namespace tmagemm::kernels {

struct TileCoord {
  int batch;  // the batch of B (grouped: the group)
  int m0;     // first row of the tile
  int n0;     // first column of the tile
  int ab;     // the batch of A and of out (grouped: 0, A and out are one matrix of all the groups' rows)
  int m_end;  // rows at or past this one are not stored (M; grouped: the group's end)
  // Clusters along M: the cluster's CTAs load this tile's B together (each a part, multicast to all). False where a
  // grouped pair's two CTA tiles need different B (GroupedTileScheduler::pair_tile): each CTA then loads all of it.
  bool share_b = true;
};

// Within one matrix of m_blocks x n_blocks tiles: tile r of a raster of group_m consecutive M blocks.
__device__ inline void raster_tile(int r, int m_blocks, int n_blocks, int group_m, int& mb, int& nb) {
  const int group_tiles = group_m * n_blocks;
  const int group = r / group_tiles;
  const int first_m = group * group_m;
  const int rows_in_group = min(m_blocks - first_m, group_m);
  const int in_group = r - group * group_tiles;
  mb = first_m + in_group % rows_in_group;
  nb = in_group / rows_in_group;
}

struct TileScheduler {
  int m_blocks, n_blocks, tiles_per_batch, total, group_m, bm, bn, m;

  __device__ TileScheduler(int M, int N, int batch, int tile_m, int tile_n, int group)
      : m_blocks((M + tile_m - 1) / tile_m),
        n_blocks((N + tile_n - 1) / tile_n),
        tiles_per_batch(m_blocks * n_blocks),
        total(m_blocks * n_blocks * batch),
        group_m(group < 1 ? 1 : group),
        bm(tile_m),
        bn(tile_n),
        m(M) {}

  __device__ TileCoord tile(int t) const {
    const int b = t / tiles_per_batch;
    int mb, nb;
    raster_tile(t - b * tiles_per_batch, m_blocks, n_blocks, group_m, mb, nb);
    return TileCoord{b, mb * bm, nb * bn, b, m};
  }
};

// Stream-K (persistent TMA's kStreamK configs). A launch of P workers (CTAs, or clusters) over T tiles of kb K blocks
// each: when T is not a multiple of P, the last partial wave would leave most workers idle. The tiles of the whole
// waves are data-parallel (worker w takes tiles w, w + P, ...); the T mod P tiles of the partial wave are shared out by
// K blocks: their kb x (T - dp_tiles) iterations are cut into P equal ranges,
// worker w taking iterations [w L, (w + 1) L) (L = per_worker) after its data-parallel tiles. A range cuts its tiles
// into units (tile, K blocks [kb0, kb1)); a tile split between workers has nseg units, seg 0 the one with its first K
// blocks. Every unit of a split tile leaves its partial sums in a workspace slot; the last to finish adds them all in
// segment order (fixed: the result does not depend on which worker was last) and stores the tile. Index arithmetic
// only; the host (persistent_tma.cpp) computes the same numbers for the workspace.
struct WorkUnit {
  int tile;      // tile index (the schedulers' numbering)
  int kb0, kb1;  // K blocks [kb0, kb1) of the tile
};

// Mirrored on the host (src/choices/persistent_tma.cpp stream_k_layout): keep the two identical.
// The shared-out range's cut, for r = T mod P tiles of kb K blocks on P workers: L (per_worker) K blocks a worker, and
// the iterations a tile takes in the range (stride). Either the ranges run on across tiles (stride kb, L = ceil(r kb /
// P): the most even cut), or, where P / r >= 2 tiles' segments fit a worker each, every tile is cut alike into
// ceil(kb / L) segments of L = ceil(kb / s) K blocks (s = min(P / r, kb / 2); stride: the segments' whole length, its
// last segment shorter), one segment a worker, so that no range crosses a tile, all ranges start together at the
// same K offsets (the tiles of a row or column read the same operand blocks at once, as whole tiles do), and a tile
// has s units at most: taken where L <= 6/5 x the even cut's. Measured on an H100 (forty-fourth session; forced,
// against the even cut in the same run): 2304 x 2304 x 8192 on 128x256 0.918 -> 1.039 of cuBLASLt (30 tiles cut in 4),
// 6144 x 1536 x 4096 0.893 -> 0.917, 4224^3 0.932 -> 0.945; the shapes where one segment a worker does not fit unchanged.
__device__ inline void stream_k_cut(int r, int kb, int P, int& per_worker, int& stride) {
  per_worker = (r * kb + P - 1) / P;
  stride = kb;
  const int s = min(P / r, kb / 2);
  if (s < 2) return;
  const int L = (kb + s - 1) / s;
  if (5 * L > 6 * per_worker) return;
  per_worker = L;
  stride = (kb + L - 1) / L * L;
}

// An aggregate (a stream-K kernel keeps it in shared memory, so that it does not hold registers across the K loop).
struct StreamKSchedule {
  int total, k_blocks, workers, dp_tiles, sk_iters, per_worker, kb_stride;

  __device__ static StreamKSchedule make(int tiles, int kb, int P, bool enabled) {
    StreamKSchedule s{tiles, kb, P, tiles, 0, 1, kb};
    const int waves = tiles / P, rem = tiles % P;
    if (!enabled || rem == 0 || kb < 2) return s;
    s.dp_tiles = waves * P;
    stream_k_cut(rem, kb, P, s.per_worker, s.kb_stride);
    s.sk_iters = rem * s.kb_stride;
    return s;
  }

  // The unit of iteration `it` of the shared-out range, up to the worker's range end.
  __device__ WorkUnit shared_unit(int it, int it_end) const {
    const int rel = it / kb_stride, kb0 = it - rel * kb_stride;
    return WorkUnit{dp_tiles + rel, kb0, min(k_blocks, kb0 + (it_end - it))};
  }
  __device__ int range_end(int w) const { return min((w + 1) * per_worker, sk_iters); }
  // The most units a split tile of this launch has (split's nseg <= this): the workspace's segments a slot. The host
  // computes it too where it knows the tile count (mm, bmm, addmm); grouped_mm's kernel takes its own, since the
  // count comes from the group ends on the device (the host sizes the workspace for any count).
  __device__ int max_segments() const { return (k_blocks + per_worker - 1) / per_worker + 1; }
  // Worker w's first unit; false when it has none. (Only the unit is kept between calls: the schedule state is
  // recomputed from it, so that little stays live in registers across the K loop.) kShared = false: whole tiles only
  // (the plain persistent loop w, w + P, ...; the stream-K paths compile away).
  template <bool kShared>
  __device__ bool first(int w, WorkUnit& u) const {
    if constexpr (!kShared) {
      u = WorkUnit{w, 0, k_blocks};
      return w < total;
    }
    if (w < dp_tiles) {
      u = WorkUnit{w, 0, k_blocks};
      return true;
    }
    const int it = w * per_worker;
    if (it >= sk_iters) return false;
    u = shared_unit(it, range_end(w));
    return true;
  }
  // The unit after `u` of worker w; false when it has none left.
  template <bool kShared>
  __device__ bool next(int w, WorkUnit& u) const {
    if constexpr (!kShared) {
      u.tile += workers;
      return u.tile < total;
    }
    if (u.tile < dp_tiles) {
      if (u.tile + workers < dp_tiles) {
        u.tile += workers;
        return true;
      }
      const int it = w * per_worker;
      if (it >= sk_iters) return false;
      u = shared_unit(it, range_end(w));
      return true;
    }
    // (The iteration after the unit: past a tile's last K block, the next tile's first.)
    const int it = (u.tile - dp_tiles) * kb_stride + (u.kb1 == k_blocks ? kb_stride : u.kb1), end = range_end(w);
    if (it >= end) return false;
    u = shared_unit(it, end);
    return true;
  }
  // A shared-out unit's place among the units of its tile: segment `seg` of `nseg` (nseg 1: the whole tile), and the
  // tile's workspace slot.
  __device__ void split(const WorkUnit& u, int& seg, int& nseg, int& slot) const {
    if (u.tile < dp_tiles) {
      seg = 0;
      nseg = 1;
      slot = -1;
      return;
    }
    slot = u.tile - dp_tiles;
    const int first_w = slot * kb_stride / per_worker, last_w = ((slot + 1) * kb_stride - 1) / per_worker;
    seg = (slot * kb_stride + u.kb0) / per_worker - first_w;
    nseg = last_w - first_w + 1;
  }
};

constexpr int kMaxGroups = 256;  // grouped_mm: groups one launch takes (the host refuses more)

// Shared memory of the grouped schedule: prefix[g] = tiles of the groups before g (prefix[G] = all). Only the prefix
// sums live here (1 KB): the largest TMA-store tiles leave less than 2 KB of shared memory beside their ring and
// staging blocks; a group's rows are read again from the (read-only, L1-cached) end rows when a tile needs them.
struct GroupSchedule {
  int prefix[kMaxGroups + 1];
};

// Group g's rows [start, end): the end rows clamped to [0, M], a group whose end is below the previous end empty.
__device__ inline void group_rows(const int* ends, int g, int M, int& start, int& end) {
  start = g == 0 ? 0 : min(max(__ldg(ends + g - 1), 0), M);
  end = max(min(max(__ldg(ends + g), 0), M), start);
}

// Every thread of the CTA calls this once (it synchronises the CTA): reads the groups' ends (int32, device memory)
// and writes their tile prefix sums. Needs blockDim.x >= 256 (one thread per group, 8 warps for the scan).
// `even`: each group's count rounded up to even (pair_tile's CTA tiles: a pair never spans two groups).
__device__ inline void load_group_schedule(GroupSchedule& gs, const int* ends, int groups, int M, int N, int tile_m,
                                           int tile_n, bool even = false) {
  const int n_blocks = (N + tile_n - 1) / tile_n;
  const int g = threadIdx.x;
  int tiles = 0;
  if (g < groups) {
    int start, end;
    group_rows(ends, g, M, start, end);
    tiles = (end - start + tile_m - 1) / tile_m * n_blocks;
    if (even) tiles += tiles & 1;
  }
  // Inclusive scan over the first 256 threads: within each warp by shuffles, then the warps' totals, which are read
  // from the prefix array itself (its entries 32 w + 32 hold warp w's sums) before it is completed.
  const int lane = g % 32, warp = g / 32;
  int v = tiles;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int u = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += u;
  }
  if (g < kMaxGroups) gs.prefix[g + 1] = v;
  __syncthreads();
  int before = 0;
  if (g < kMaxGroups)
    for (int w = 0; w < warp; ++w) before += gs.prefix[32 * w + 32];
  __syncthreads();
  if (g < kMaxGroups && g < groups) gs.prefix[g + 1] = before + v;
  if (g == 0) gs.prefix[0] = 0;
  __syncthreads();
}

struct GroupedTileScheduler {
  const GroupSchedule* gs;
  const int* ends;
  int groups, m, n_blocks, total, group_m, bm, bn;

  // `pairs`: the schedule holds CTA tiles in pairs (pair_tile); total counts the pairs.
  __device__ GroupedTileScheduler(const GroupSchedule& s, const int* group_ends, int G, int M, int N, int tile_m,
                                  int tile_n, int group, bool pairs = false)
      : gs(&s),
        ends(group_ends),
        groups(G),
        m(M),
        n_blocks((N + tile_n - 1) / tile_n),
        total(pairs ? s.prefix[G] / 2 : s.prefix[G]),
        group_m(group < 1 ? 1 : group),
        bm(tile_m),
        bn(tile_n) {}

  // Pairs (grouped_mm in 2x1 clusters; the schedule built with tile_m = one CTA's rows and `even`): the tiles above
  // are CTA tiles, and pair t (t < total / 2) is CTA tiles 2t (cluster rank 0) and 2t + 1 (rank 1). A 256-row cluster
  // tile would leave its second CTA idle wherever a group's rows end in its first half (a tenth of the CTA tiles at
  // G = 64 x 32768 tokens of the bench's routing); pairs keep both busy. The two share B (multicast) when they are
  // the same group's same N block; otherwise each loads its own. A group's odd count adds one CTA tile past its
  // rows (m_end = m0: nothing to compute or store).
  __device__ TileCoord pair_tile(int t, int rank) const {
    TileCoord mine = tile(2 * t + rank);
    const TileCoord peer = tile(2 * t + 1 - rank);
    // NOTE: both CTAs must reach the same share_b (each expects a whole B per stage, half of it from the peer when
    // shared). The added CTA tile takes its peer's B, shared: it loads no B of its own. (Its partner is always real.)
    const bool mine_added = mine.m_end == mine.m0, peer_added = peer.m_end == peer.m0;
    if (mine_added) {
      mine.batch = peer.batch;
      mine.n0 = peer.n0;
    }
    mine.share_b = mine_added || peer_added || (mine.batch == peer.batch && mine.n0 == peer.n0);
    return mine;
  }

  __device__ TileCoord tile(int t) const {
    int lo = 0, hi = groups - 1;  // the group g with prefix[g] <= t < prefix[g + 1] (empty groups are skipped)
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (gs->prefix[mid] <= t)
        lo = mid;
      else
        hi = mid - 1;
    }
    const int g = lo;
    int start, end;
    group_rows(ends, g, m, start, end);
    const int m_blocks = (end - start + bm - 1) / bm;
    int mb, nb;
    const int r = t - gs->prefix[g];
    if (r >= m_blocks * n_blocks) return TileCoord{g, start, 0, 0, start};  // an odd group's added CTA tile (pairs)
    raster_tile(r, m_blocks, n_blocks, group_m, mb, nb);
    return TileCoord{g, start + mb * bm, nb * bn, 0, end};
  }
};

}  // namespace tmagemm::kernels
