// tile_stream.cu — lab probe (issue 21 point 3, fortieth session): does the pattern of 2-D TMA boxes in which a
// decode kernel reads its weight cost stream rate? Under the read flush the skinny kernel and cuBLASLt stream a 448 MB
// weight (28672 x 8192) in 110-114 us, where one lane a CTA streaming it with 1-D bulk copies takes 102.7 us
// (lab/probes/decode_floor.cu, docs/perf-notes.md). Either the boxes (64 columns x 64 rows of 128-byte swizzled rows,
// bn / 64 of them a stage) read DRAM less well than contiguous 16 KB chunks, or the gap is the kernel's own (its
// consumers, stage release, reduction). This probe streams the weight through the skinny kernel's box patterns with
// nothing consumed, beside the 1-D floor, timed as `tmagemm bench` times a run (L2 flushed by a 256 MiB write or
// read outside the timed region, CUDA events around one launch, median of 100):
//   bulk            : 132 CTAs, 8 x 16 KB ring of 1-D bulk copies over each CTA's contiguous share (the floor)
//   rr bnN bkK sS   : B N-major (K x N, the decode suite's rr): each CTA bn columns of all K (or K / split), a stage
//                     bk rows x bn columns as bn / 64 boxes of 64 columns (SWIZZLE_128B, the skinny kernel's maps)
//   rr-wide         : the same tile in boxes of 256 columns x rows (no swizzle): one box a stage, 512-byte rows
//   (every 2-D variant loads with an L2 evict_first hint, as the skinny kernel loads B; rr-nohint: without it)
//   rc bnN bkK      : B K-major (N x K row-major: nn.Linear's weight): a stage bn rows x bk of K as bk / 64 boxes
//                     of 64 K elements (128 bytes) x bn rows
// Each variant's grid is the skinny grid it mirrors (N / bn x split CTAs, one a SM at most by shared memory; no
// clusters, where the skinny kernel's splits run in clusters). Grids over 132 CTAs run in waves, the bulk floor in
// exactly one: a gap to the floor can be a wave tail, not the boxes (compare variants of one grid size first). The
// 32 MB weight streams in ~8 us, so its rows carry the launch's fixed costs (as `tmagemm bench` does).
// Build: nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o tile_stream tile_stream.cu
// Run: ./tile_stream [grid]   (stderr names each launch before it runs; `grid`: grid_mode below only)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stream_timing.cuh"

// How a CTA walks its tile: stage kb's box j lands at coordinates
//   (tile0 * t + j * step0 + kb * kstep0, tile1 * t + j * step1 + kb * kstep1)
// for the CTA's tile t = blockIdx.x / split, kb over its split's share of `blocks` stages.
struct Walk {
  int tile0, tile1, step0, step1, kstep0, kstep1;
  int boxes;         // boxes a stage
  int box_bytes;     // bytes a box
  int blocks;        // stages of one whole tile (all of K)
  int split;         // CTAs a tile (each its share of the stages)
  int evict_first;   // L2 cache hint on every box
  int stream;        // > 0: the tile count; the grid's CTAs share its tiles x blocks units in equal contiguous
                     // ranges (stream-K order: tile-major, K inner), whatever the grid. 0: tile t = blockIdx.x / split
};

constexpr int kMaxStages = 16;

// The ring walk both probe kernels share: units [u0, u1) of tile * blocks + kb through `stages` slots, a slot reused
// once its previous fill has landed; `arm` (one thread) sets the stage's expected bytes on its barrier, then
// fill(slot, tile, kb, barrier) issues the copies; at the end the last fill of every slot is awaited. The calling
// threads (the lanes of `lanes`) all wait and all call fill, after the arming; `arm` is true on one of them.
template <class Fill>
__device__ void ring_walk(uint64_t* full, int stages, long long u0, long long u1, int blocks, uint32_t stage_bytes,
                          bool arm, unsigned lanes, Fill fill) {
  for (long long u = u0; u < u1; ++u) {
    const int i = static_cast<int>(u - u0), s = i % stages;
    if (i >= stages) wait_parity(&full[s], static_cast<uint32_t>((i / stages - 1) & 1));
    const uint32_t bar = smem_u32(&full[s]);
    if (arm)
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(stage_bytes) : "memory");
    __syncwarp(lanes);
    fill(s, static_cast<int>(u / blocks), static_cast<int>(u % blocks), bar);
  }
  const int n = static_cast<int>(u1 - u0);
  for (int i = max(0, n - stages); i < n; ++i) wait_parity(&full[i % stages], static_cast<uint32_t>((i / stages) & 1));
}

// One lane streams the CTA's stages through a ring of `stages` slots of boxes x box_bytes; nothing is consumed (a
// slot is reused once its previous fill has landed).
__global__ void tile_stream(const __grid_constant__ CUtensorMap map, Walk w, int stages, unsigned* sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t full[kMaxStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&full[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("prefetch.tensormap [%0];" ::"l"(&map) : "memory");
  uint64_t policy = 0;
  if (w.evict_first) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  // The CTA's units [u0, u1) of tile * blocks + kb.
  long long u0, u1;
  if (w.stream) {
    const long long total = static_cast<long long>(w.stream) * w.blocks;  // w.stream: the tile count
    u0 = total * blockIdx.x / gridDim.x;
    u1 = total * (blockIdx.x + 1) / gridDim.x;
  } else {
    const int t = blockIdx.x / w.split, part = blockIdx.x % w.split;
    const int per = (w.blocks + w.split - 1) / w.split;
    const int kb0 = part * per, kb1 = min(w.blocks, kb0 + per);
    u0 = static_cast<long long>(t) * w.blocks + kb0;
    u1 = static_cast<long long>(t) * w.blocks + max(kb0, kb1);
  }
  const uint32_t stage_bytes = static_cast<uint32_t>(w.boxes * w.box_bytes);
  // NOTE: SWIZZLE_128B boxes land on 1024-byte aligned shared memory; the dynamic area follows the static barriers.
  const uint32_t base = (smem_u32(smem) + 1023u) & ~1023u;
  ring_walk(full, stages, u0, u1, w.blocks, stage_bytes, true, 1u, [&](int s, int t, int kb, uint32_t bar) {
    for (int j = 0; j < w.boxes; ++j) {
      const int c0 = w.tile0 * t + j * w.step0 + kb * w.kstep0;
      const int c1 = w.tile1 * t + j * w.step1 + kb * w.kstep1;
      const uint32_t dst = base + static_cast<uint32_t>((s * w.boxes + j) * w.box_bytes);
      if (w.evict_first)
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
            " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
            "l"(&map), "r"(c0), "r"(c1), "r"(bar), "l"(policy)
            : "memory");
      else
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
            "l"(&map), "r"(c0), "r"(c1), "r"(bar)
            : "memory");
    }
  });
  if (smem[0] == 0x7f && smem[1] == 0x7e) *sink = 1;
}

// Rows: the same unit walk (stream order over `tiles` x `blocks` units, equal contiguous ranges a CTA), each unit
// `rows` 1-D bulk copies of `seg` bytes: row r of unit (t, kb) starts at byte (t * tr + kb * kr + r) * pitch +
// t * tc + kb * kc. rr (K x N): tr 0, kr bk, tc bn * 2, kc 0; rc (N x K): tr bn, kr 0, tc 0, kc bk * 2. The warp's
// 32 lanes issue the copies; lane 0 arms the stage first.
struct Rows {
  long long pitch;
  int tr, kr, tc, kc;
  int rows, seg;
  int blocks, tiles;
};

__global__ void rows_stream(const unsigned char* wt, Rows w, int stages, unsigned* sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t full[kMaxStages];
  const int lane = threadIdx.x;
  if (lane == 0) {
    for (int s = 0; s < stages; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncwarp();
  const long long total = static_cast<long long>(w.tiles) * w.blocks;
  const long long u0 = total * blockIdx.x / gridDim.x, u1 = total * (blockIdx.x + 1) / gridDim.x;
  const uint32_t stage_bytes = static_cast<uint32_t>(w.rows * w.seg);
  const uint32_t base = (smem_u32(smem) + 1023u) & ~1023u;
  ring_walk(full, stages, u0, u1, w.blocks, stage_bytes, lane == 0, 0xffffffffu, [&](int s, int t, int kb, uint32_t bar) {
    const long long row0 = static_cast<long long>(t) * w.tr + static_cast<long long>(kb) * w.kr;
    const long long col = static_cast<long long>(t) * w.tc + static_cast<long long>(kb) * w.kc;
    for (int r = lane; r < w.rows; r += 32)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                       base + static_cast<uint32_t>(s * stage_bytes + r * w.seg)),
                   "l"(wt + (row0 + r) * w.pitch + col), "r"(w.seg), "r"(bar)
                   : "memory");
  });
  if (lane == 0 && smem[0] == 0x7f && smem[1] == 0x7e) *sink = 1;
}

using EncodeFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeFn encoder() {
  static EncodeFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (!p || q != cudaDriverEntryPointSuccess) {
      std::printf("no cuTensorMapEncodeTiled\n");
      std::exit(1);
    }
    return reinterpret_cast<EncodeFn>(p);
  }();
  return fn;
}

// A 2-D bf16 map over `inner` x `outer` elements (row pitch `inner`), box box0 x box1.
CUtensorMap encode(void* base, uint64_t inner, uint64_t outer, uint32_t box0, uint32_t box1, bool swizzle) {
  CUtensorMap m;
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {inner * 2};
  const cuuint32_t box[2] = {box0, box1};
  const cuuint32_t es[2] = {1, 1};
  const CUresult r = encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, es,
                               CU_TENSOR_MAP_INTERLEAVE_NONE,
                               swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled failed (%d): inner %llu outer %llu box %u x %u\n", static_cast<int>(r),
                static_cast<unsigned long long>(inner), static_cast<unsigned long long>(outer), box0, box1);
    std::exit(1);
  }
  return m;
}

// Times one probe kernel (`kernel` with its arguments after the launch configuration) on `grid` CTAs of one warp with
// `smem` bytes of ring, at least 117 KiB so that one CTA holds an SM (as the skinny kernel's rings do).
template <class... Params, class... Args>
void run_probe(Ctx& c, const char* label, void (*kernel)(Params...), int grid, int smem, int stages, double bytes,
               bool read, Args... args) {
  if (stages > kMaxStages || smem > 227 * 1024) {
    std::printf("  %-34s skipped (smem %d)\n", label, smem);
    return;
  }
  const int smem_launch = std::max(smem, 117 * 1024);
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_launch));
  std::fprintf(stderr, "launch %s grid %d smem %d\n", label, grid, smem_launch);
  const float us = time_med(c, read, 100, [&] { kernel<<<grid, 32, smem_launch, c.st>>>(args..., stages, c.sink); });
  CK(cudaGetLastError());
  std::printf("  %-34s grid %4d: %8.2f us  %5.2f TB/s\n", label, grid, us, bytes / (us * 1e-6) / 1e12);
}

void run_walk(Ctx& c, const char* label, const CUtensorMap& map, const Walk& w, int stages, int tiles,
              double bytes, bool read, int grid_override = 0) {
  const int grid = grid_override > 0 ? grid_override : tiles * w.split;
  run_probe(c, label, tile_stream, grid, stages * w.boxes * w.box_bytes + 1024, stages, bytes, read, map, w);
}

void run_rows(Ctx& c, const char* label, const unsigned char* wt, const Rows& w, int stages, int grid, double bytes,
              bool read) {
  run_probe(c, label, rows_stream, grid, stages * w.rows * w.seg + 1024, stages, bytes, read, wt, w);
}

// `tile_stream grid` (forty-second session): is the skinny grids' gap to the 1-D floor their CTA count (112 of 132
// SMs on 28672 / 256 tiles) or the boxes? The floor on 112 CTAs, the box walks over all 132 SMs in stream-K order
// (equal contiguous unit ranges), and the same tiles read by 1-D bulk copies of their rows (512 B to 2 KB a row).
void grid_mode(Ctx& c, unsigned char* w) {
  struct Shape {
    int n, k;
  };
  for (int read = 1; read >= 0; --read) {
    std::printf("== flush %s\n", read ? "read" : "write");
    for (Shape s : {Shape{14336, 4096}, Shape{28672, 8192}}) {
      const double bytes = 2.0 * s.n * s.k;
      std::printf(" weight N %d x K %d (%.0f MB)\n", s.n, s.k, bytes / 1e6);
      for (int g : {132, 112}) {
        CK(cudaFuncSetAttribute(bulk_stream<8, 16384>, cudaFuncAttributeMaxDynamicSharedMemorySize, 8 * 16384));
        const unsigned long long share = (static_cast<unsigned long long>(bytes) / g) / 16384 * 16384;
        std::fprintf(stderr, "launch bulk %d\n", g);
        const float us =
            time_med(c, read, 100, [&] { bulk_stream<8, 16384><<<g, 32, 8 * 16384, c.st>>>(w, share, c.sink); });
        std::printf("  %-34s grid %4d: %8.2f us  %5.2f TB/s\n", "bulk 8 x 16 KB (1-D floor)", g, us,
                    static_cast<double>(share) * g / (us * 1e-6) / 1e12);
      }
      char label[64];
      // rr boxes (the skinny kernel's maps): tile grid, then stream order over 132 CTAs.
      for (int bn : {256, 128}) {
        const int bk = 64, stages = bn == 256 ? 5 : 8, tiles = s.n / bn;
        const CUtensorMap map = encode(w, s.n, s.k, 64, bk, true);
        const Walk tile{bn, 0, 64, 0, 0, bk, bn / 64, 64 * bk * 2, s.k / bk, 1, 1};
        std::snprintf(label, sizeof label, "rr bn%d bk%d s%d split1", bn, bk, stages);
        run_walk(c, label, map, tile, stages, tiles, bytes, read);
        Walk st = tile;
        st.stream = tiles;
        for (int g : {132, 264}) {
          std::snprintf(label, sizeof label, "rr-stream bn%d bk%d s%d", bn, bk, stages);
          run_walk(c, label, map, st, stages, tiles, bytes, read, g);
        }
      }
      {
        const CUtensorMap map = encode(w, s.n, s.k, 256, 64, false);
        Walk st{256, 0, 256, 0, 0, 64, 1, 256 * 64 * 2, s.k / 64, 1, 1};
        st.stream = s.n / 256;
        run_walk(c, "rr-wide-stream bn256 (1 box) s5", map, st, 5, s.n / 256, bytes, read, 132);
      }
      // rr rows by 1-D bulk copies: bn * 2 bytes a row, bk rows a stage.
      struct RB {
        int bn, bk, stages;
      };
      for (RB v : {RB{256, 64, 5}, RB{512, 32, 5}, RB{1024, 16, 5}, RB{256, 32, 8}}) {
        const Rows r{2LL * s.n, 0, v.bk, v.bn * 2, 0, v.bk, v.bn * 2, s.k / v.bk, s.n / v.bn};
        std::snprintf(label, sizeof label, "rr-rows bn%d bk%d s%d", v.bn, v.bk, v.stages);
        run_rows(c, label, w, r, v.stages, 132, bytes, read);
        if (v.bn == 256 && v.bk == 64) {
          std::snprintf(label, sizeof label, "rr-rows bn%d bk%d s%d (tile grid)", v.bn, v.bk, v.stages);
          // One CTA a tile: the grid equals the tile count, so the stream ranges are whole tiles.
          run_rows(c, label, w, r, v.stages, s.n / v.bn, bytes, read);
        }
      }
      // rc (N x K): boxes in stream order, and rows of bk * 2 bytes by 1-D bulk copies.
      {
        const CUtensorMap map = encode(w, s.k, s.n, 64, 256, true);
        Walk st{0, 256, 64, 0, 64, 0, 1, 64 * 256 * 2, s.k / 64, 1, 1};
        st.stream = s.n / 256;
        run_walk(c, "rc-stream bn256 bk64 s5", map, st, 5, s.n / 256, bytes, read, 132);
      }
      for (RB v : {RB{64, 256, 5}, RB{128, 256, 3}, RB{32, 512, 6}}) {
        const Rows r{2LL * s.k, v.bn, 0, 0, v.bk * 2, v.bn, v.bk * 2, s.k / v.bk, s.n / v.bn};
        std::snprintf(label, sizeof label, "rc-rows bn%d bk%d s%d", v.bn, v.bk, v.stages);
        run_rows(c, label, w, r, v.stages, 132, bytes, read);
      }
    }
  }
}

int main(int argc, char** argv) {
  Ctx c = make_ctx();
  const size_t max_bytes = size_t{28672} * 8192 * 2;
  unsigned char* w = make_weight(max_bytes);
  if (argc > 1 && std::string(argv[1]) == "grid") {
    grid_mode(c, w);
    CK(cudaDeviceSynchronize());
    std::printf("done\n");
    return 0;
  }
  struct Shape {
    int n, k;
  };
  for (int read = 1; read >= 0; --read) {
    std::printf("== flush %s\n", read ? "read" : "write");
    for (Shape s : {Shape{4096, 4096}, Shape{14336, 4096}, Shape{28672, 8192}}) {
      const double bytes = 2.0 * s.n * s.k;
      std::printf(" weight N %d x K %d (%.0f MB)\n", s.n, s.k, bytes / 1e6);
      {
        CK(cudaFuncSetAttribute(bulk_stream<8, 16384>, cudaFuncAttributeMaxDynamicSharedMemorySize, 8 * 16384));
        const unsigned long long share = (static_cast<unsigned long long>(bytes) / 132) / 16384 * 16384;
        std::fprintf(stderr, "launch bulk\n");
        const float us = time_med(c, read, 100, [&] { bulk_stream<8, 16384><<<132, 32, 8 * 16384, c.st>>>(w, share, c.sink); });
        std::printf("  %-34s grid %4d: %8.2f us  %5.2f TB/s\n", "bulk 8 x 16 KB (1-D floor)", 132, us,
                    static_cast<double>(share) * 132 / (us * 1e-6) / 1e12);
      }
      // rr: map inner N, outer K. Box 64 columns x bk rows; a stage bn / 64 boxes side by side.
      struct RR {
        int bn, bk, stages, split;
      };
      for (RR v : {RR{256, 64, 5, 1}, RR{256, 64, 5, 2}, RR{256, 64, 5, 4}, RR{128, 64, 8, 1}, RR{128, 64, 8, 2},
                   RR{128, 64, 4, 2}, RR{64, 64, 12, 2}, RR{64, 64, 12, 4}}) {
        if (s.n / v.bn * v.split > 4 * 132) continue;
        const CUtensorMap map = encode(w, s.n, s.k, 64, v.bk, true);
        // evict_first, as the skinny kernel loads B; without the hint too for the 256-column tiles.
        const Walk wk{v.bn, 0, 64, 0, 0, v.bk, v.bn / 64, 64 * v.bk * 2, s.k / v.bk, v.split, 1};
        char label[64];
        std::snprintf(label, sizeof label, "rr bn%d bk%d s%d split%d", v.bn, v.bk, v.stages, v.split);
        run_walk(c, label, map, wk, v.stages, s.n / v.bn, bytes, read);
        if (v.bn == 256 && v.split <= 2) {
          const Walk plain{v.bn, 0, 64, 0, 0, v.bk, v.bn / 64, 64 * v.bk * 2, s.k / v.bk, v.split, 0};
          std::snprintf(label, sizeof label, "rr-nohint bn%d bk%d s%d split%d", v.bn, v.bk, v.stages, v.split);
          run_walk(c, label, map, plain, v.stages, s.n / v.bn, bytes, read);
        }
      }
      // rr-wide: one box of 256 columns x rows a stage (no swizzle, 512-byte rows); and 1024-column tiles as four
      // such boxes (2 KB of each row a stage), split to fill the SMs.
      {
        const CUtensorMap map = encode(w, s.n, s.k, 256, 64, false);
        const Walk wk{256, 0, 256, 0, 0, 64, 1, 256 * 64 * 2, s.k / 64, 1, 1};
        run_walk(c, "rr-wide bn256 (1 box 256x64) s5", map, wk, 5, s.n / 256, bytes, read);
        const Walk wk2{256, 0, 256, 0, 0, 64, 1, 256 * 64 * 2, s.k / 64, 2, 1};
        run_walk(c, "rr-wide bn256 (1 box 256x64) s5 sp2", map, wk2, 5, s.n / 256, bytes, read);
        const CUtensorMap map16 = encode(w, s.n, s.k, 256, 16, false);
        for (int split : {2, 4, 8}) {
          if (s.n / 1024 * split > 264) continue;
          const Walk w4{1024, 0, 256, 0, 0, 16, 4, 256 * 16 * 2, s.k / 16, split, 1};
          char label[64];
          std::snprintf(label, sizeof label, "rr-wide bn1024 (4 x 256x16) s6 sp%d", split);
          run_walk(c, label, map16, w4, 6, s.n / 1024, bytes, read);
        }
      }
      // rc: map inner K, outer N (nn.Linear's weight). A stage bk / 64 boxes of 64 K x bn rows.
      struct RC {
        int bn, bk, stages, split;
      };
      for (RC v : {RC{256, 64, 5, 1}, RC{256, 64, 5, 2}, RC{128, 64, 8, 2}, RC{64, 256, 5, 2}, RC{128, 128, 5, 2},
                   RC{64, 64, 12, 2}}) {
        if (s.n / v.bn * v.split > 4 * 132) continue;
        const CUtensorMap map = encode(w, s.k, s.n, 64, v.bn, true);
        const Walk wk{0, v.bn, 64, 0, v.bk, 0, v.bk / 64, 64 * v.bn * 2, s.k / v.bk, v.split, 1};
        char label[64];
        std::snprintf(label, sizeof label, "rc bn%d bk%d s%d split%d", v.bn, v.bk, v.stages, v.split);
        run_walk(c, label, map, wk, v.stages, s.n / v.bn, bytes, read);
      }
    }
  }
  CK(cudaDeviceSynchronize());
  std::printf("done\n");
  return 0;
}
