// cublaslt_algo_config.cu — what cuBLASLt's heuristic picks for a row-major bf16 GEMM (the bench's layout "rr"):
// for each of its top 8 algorithms the config attributes (algo id, tile, stages, split-K count and reduction scheme,
// CTA swizzle, cluster shape) and its median time over 200 runs after a 256 MiB write flush (the bench's method), or
// with FLUSH=read after a kernel that reads the 256 MiB (L2 left holding clean lines: the bench's --flush read).
// Usage: [FLUSH=read] cublaslt_algo_config MxNxK ...   Build (from lab/probes): nvcc -O2 -arch=sm_90a -o cublaslt_algo_config cublaslt_algo_config.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cublaslt_probe.cuh"

int main(int argc, char** argv) {
  ProbeBench pb;
  const size_t ws_bytes = ProbeBench::kWorkspaceBytes;
  for (int i = 1; i < argc; ++i) {
    RowMajorGemm g;
    if (!g.parse(argv[i])) continue;
    g.create();
    cudaMemset(g.a, 0x3c, g.m * g.k * 2);
    cudaMemset(g.b, 0x3c, g.k * g.n * 2);
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res[8];
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(pb.lt, g.op, g.la, g.lb, g.lc, g.lc, pref, 8, res, &found));
    std::printf("%ldx%ldx%ld (%s flush): %d algorithms\n", g.m, g.n, g.k, pb.read_flush ? "read" : "write", found);
    for (int r = 0; r < found; ++r) {
      const cublasLtMatmulAlgo_t& al = res[r].algo;
      std::vector<float> t;
      for (int rep = 0; rep < 200; ++rep) t.push_back(pb.timed(rep & 0xff, [&] { g.run(pb, al); }));
      std::sort(t.begin(), t.end());
      const double med_us = t[t.size() / 2] * 1e3;
      std::printf(
          "  rank %d: algo %d tile %u stages %u splitK %d reduction %u swizzle %u cluster %u custom %u ws %zu: %.2f us "
          "%.1f TFLOP/s\n",
          r, cfg<int>(al, CUBLASLT_ALGO_CONFIG_ID), cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_TILE_ID),
          cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_STAGES_ID), cfg<int>(al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
          cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME), cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
          cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID), cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
          res[r].workspaceSize, med_us, 2.0 * g.m * g.n * g.k / med_us * 1e-6);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    g.destroy();
  }
  return 0;
}
