// stage_mma.cuh — one consumer's wgmmas over one stage of the persistent TMA kernel's ring (gemm_persistent_tma.cuh).
//
// Contract:
//   takes   the consumer's accumulators (MI m64 fragments of PG columns: PG = WN, or one column group of two-level fp8
//           accumulation), the matrix descriptors of stage 0's A and B tiles (the consumer's own columns of B with
//           kSplitN), the stage's byte offset, the column group g and the consumer's index;
//   issues  wgmma.fence, then for each wgmma K step of the K block (16 16-bit or 32 fp8 elements: operand.cuh) and each
//           m64 fragment one wgmma.mma_async m64nPGk from shared memory, then wgmma.commit_group. The block's first
//           wgmmas (K step 0) overwrite the accumulators where `run` (the block's place in its accumulation run) is 0,
//           else add into them; later steps always add;
//   waits   for nothing: the caller waits the group out (wgmma_wait) before it releases the stage or reads acc.
#pragma once
#include <cuda/std/cstdint>

#include "operand.cuh"
#include "ptx/wgmma.cuh"

namespace tmagemm::kernels {

// Cfg: the kernel's config; Op: the operand layout (Sw128Operand<2> or <1>); kWholeRows: the consumer holds every row
// of the tile (kSplitN, ping-pong), else the MI fragments from row cidx * MI * 64.
template <class Cfg, class Op, int MI, int WN, int PG, bool kWholeRows>
__device__ __forceinline__ void stage_mmas(float (&acc)[MI][PG / 2], cuda::std::uint64_t a_desc0,
                                           cuda::std::uint64_t b_desc0, cuda::std::uint32_t stage_off, int g,
                                           int cidx, int run) {
  constexpr int BM = Cfg::kBM, BN = Cfg::kBN, BK = Cfg::kBK;
  ptx::wgmma_fence();
#pragma unroll
  for (int k16 = 0; k16 < BK / Op::kStepK; ++k16) {
    const cuda::std::uint32_t b_off =
        Cfg::kBKMajor ? Op::kmajor_step(BN, g * PG, k16) : Op::mnmajor_step(BK, 0, k16);
    const cuda::std::uint64_t db = ptx::smem_desc_add(b_desc0, stage_off + b_off);
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int frag = kWholeRows ? mi : cidx * MI + mi;  // which 64-row block of the tile
      const cuda::std::uint32_t a_off =
          Cfg::kAKMajor ? Op::kmajor_step(BM, frag * 64, k16) : Op::mnmajor_step(BK, frag, k16);
      const cuda::std::uint64_t da = ptx::smem_desc_add(a_desc0, stage_off + a_off);
      if constexpr (Cfg::kFp8A != 0)
        ptx::Mma8bit<PG, Cfg::kFp8A == 2, Cfg::kFp8B == 2>::run(acc[mi], da, db, (run | k16) != 0);
      else
        ptx::Mma16<WN, Cfg::kAKMajor ? 0 : 1, Cfg::kBKMajor ? 0 : 1, Cfg::kF16>::run(acc[mi], da, db,
                                                                                   (run | k16) != 0);
    }
  }
  ptx::wgmma_commit();
}

}  // namespace tmagemm::kernels
