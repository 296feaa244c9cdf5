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
//   never   touches memory; it is pure index arithmetic and identical in every thread.
#pragma once

namespace tmagemm::kernels {

struct TileCoord {
  int batch;
  int m0;  // first row of the tile
  int n0;  // first column of the tile
};

struct TileScheduler {
  int m_blocks, n_blocks, tiles_per_batch, total, group_m, bm, bn;

  __device__ TileScheduler(int M, int N, int batch, int tile_m, int tile_n, int group)
      : m_blocks((M + tile_m - 1) / tile_m),
        n_blocks((N + tile_n - 1) / tile_n),
        tiles_per_batch(m_blocks * n_blocks),
        total(m_blocks * n_blocks * batch),
        group_m(group < 1 ? 1 : group),
        bm(tile_m),
        bn(tile_n) {}

  __device__ TileCoord tile(int t) const {
    const int b = t / tiles_per_batch;
    const int r = t - b * tiles_per_batch;
    const int group_tiles = group_m * n_blocks;
    const int group = r / group_tiles;
    const int first_m = group * group_m;
    const int rows_in_group = min(m_blocks - first_m, group_m);
    const int in_group = r - group * group_tiles;
    const int mb = first_m + in_group % rows_in_group;
    const int nb = in_group / rows_in_group;
    return TileCoord{b, mb * bm, nb * bn};
  }
};

}  // namespace tmagemm::kernels
