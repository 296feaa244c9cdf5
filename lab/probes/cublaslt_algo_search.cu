// cublaslt_algo_search.cu — does cuBLASLt have faster kernels for a shape than its heuristic's top 4 (the bench's
// baseline and the tuner's cuBLASLt choices)? Row-major bf16 C = A B (the bench's layout "rr", as the column-major
// C^T = B^T A^T), random operands. Every algorithm id cublasLtMatmulAlgoGetIds lists, and for each every tile, K-block
// stage setting (the automatic-depth ones), split-K count (1-4, each reduction scheme the algorithm offers), CTA
// swizzle and custom option its capabilities allow, that cublasLtMatmulAlgoCheck accepts: pass 1 times each 3 times
// (median) after the flush; pass 2 times the 24 fastest and the heuristic's top 4, interleaved round by round, 60
// rounds, and prints them by median with the heuristic's best as 1.000.
// DUMP=1 prints every pass-1 median. FLUSH=write (default; a 256 MiB memset before each run, as the bench) or read (a kernel reading the 256 MiB).
// Usage: [FLUSH=read] cublaslt_algo_search MxNxK ...
// Build (from lab/probes): nvcc -O2 -arch=sm_90a -o cublaslt_algo_search cublaslt_algo_search.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cublaslt_probe.cuh"

// Random bf16 in [-1, 1) from a hash of the index (the tensor cores' power depends on the data).
__global__ void fill_random(__nv_bfloat16* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = __float2bfloat16(static_cast<float>(h & 0xffff) / 32768.0f - 1.0f);
  }
}

template <class T>
void set(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, T v) {
  cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &v, sizeof v);
}

struct Cand {
  cublasLtMatmulAlgo_t algo;
  std::string label;
  bool heuristic;
  std::vector<float> t;
  float med() {
    std::vector<float> s = t;
    std::sort(s.begin(), s.end());
    return s.empty() ? 1e30f : s[s.size() / 2];
  }
};

std::string describe(const cublasLtMatmulAlgo_t& al) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "algo %d tile %u stages %u splitK %d red %u swz %u custom %u cluster %u",
                cfg<int>(al, CUBLASLT_ALGO_CONFIG_ID), cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_TILE_ID),
                cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_STAGES_ID), cfg<int>(al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
                cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
                cfg<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
                static_cast<unsigned>(cfg<uint16_t>(al, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)));
  return buf;
}

int main(int argc, char** argv) {
  ProbeBench pb;
  const cublasLtHandle_t lt = pb.lt;
  const size_t ws_bytes = ProbeBench::kWorkspaceBytes;
  const bool read_flush = pb.read_flush;
  for (int i = 1; i < argc; ++i) {
    RowMajorGemm g;
    if (!g.parse(argv[i])) continue;
    g.create();
    const long m = g.m, n = g.n, k = g.k;
    fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(g.a), m * k, 1);
    fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(g.b), k * n, 2);
    CK(cudaDeviceSynchronize());
    const cublasLtMatmulDesc_t op = g.op;
    const cublasLtMatrixLayout_t la = g.la, lb = g.lb, lc = g.lc;
    auto time_one = [&](const cublasLtMatmulAlgo_t& al) -> float {
      cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
      const float ms = pb.timed(0x5a, [&] { st = g.run(pb, al); });
      return st == CUBLAS_STATUS_SUCCESS && cudaGetLastError() == cudaSuccess ? ms : 1e30f;
    };

    // The heuristic's top 4 (what the bench's baseline and the tuner's cublaslt_algo0..3 are).
    std::vector<Cand> heur;
    {
      cublasLtMatmulPreference_t pref;
      CK(cublasLtMatmulPreferenceCreate(&pref));
      CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                              sizeof ws_bytes));
      cublasLtMatmulHeuristicResult_t res[4];
      int found = 0;
      CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 4, res, &found));
      for (int r = 0; r < found; ++r) heur.push_back({res[r].algo, "heuristic " + std::to_string(r), true, {}});
      cublasLtMatmulPreferenceDestroy(pref);
    }

    // Enumerate.
    int ids[256];
    int nids = 0;
    CK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF,
                                CUDA_R_16BF, 256, ids, &nids));
    std::vector<Cand> all;
    long tried = 0;
    // Only the algorithm ids the heuristic offers (algo 66 on sm_90: the others are older kernels), over every cluster
    // shape up to 4 CTAs (an sm_90 algorithm refuses the automatic one).
    std::vector<int> heur_ids;
    for (auto& h : heur) heur_ids.push_back(cfg<int>(h.algo, CUBLASLT_ALGO_CONFIG_ID));
    const uint16_t clusters[] = {CUBLASLT_CLUSTER_SHAPE_AUTO, CUBLASLT_CLUSTER_SHAPE_1x1x1, CUBLASLT_CLUSTER_SHAPE_2x1x1,
                                 CUBLASLT_CLUSTER_SHAPE_4x1x1, CUBLASLT_CLUSTER_SHAPE_1x2x1, CUBLASLT_CLUSTER_SHAPE_2x2x1,
                                 CUBLASLT_CLUSTER_SHAPE_1x4x1};
    for (int d = 0; d < nids; ++d) {
      if (std::find(heur_ids.begin(), heur_ids.end(), ids[d]) == heur_ids.end()) continue;
      cublasLtMatmulAlgo_t base;
      if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF,
                                 CUDA_R_16BF, ids[d], &base) != CUBLAS_STATUS_SUCCESS)
        continue;
      size_t w = 0;
      uint32_t tiles[1024];
      uint32_t stages[64];
      int split_ok = 0, swz_ok = 0, custom_max = 0;
      uint32_t red_mask = 0;
      cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof tiles, &w);
      const int ntiles = static_cast<int>(w / sizeof(uint32_t));
      cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_STAGES_IDS, stages, sizeof stages, &w);
      int nstages = static_cast<int>(w / sizeof(uint32_t));
      cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &split_ok, sizeof split_ok, &w);
      cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &red_mask, sizeof red_mask, &w);
      cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swz_ok, sizeof swz_ok, &w);
      cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &custom_max, sizeof custom_max, &w);
      // Stage settings: the automatic-depth ones where offered (32..38), else every one listed, else undefined.
      std::vector<uint32_t> st;
      for (int s = 0; s < nstages; ++s)
        if (stages[s] >= CUBLASLT_MATMUL_STAGES_8xAUTO) st.push_back(stages[s]);
      if (st.empty()) st.assign(stages, stages + nstages);
      if (st.empty()) st.push_back(CUBLASLT_MATMUL_STAGES_UNDEFINED);
      std::vector<uint32_t> tl(tiles, tiles + ntiles);
      if (tl.empty()) tl.push_back(CUBLASLT_MATMUL_TILE_UNDEFINED);
      for (uint32_t tile : tl)
        for (uint32_t s : st)
          for (int sk = 1; sk <= (split_ok ? 4 : 1); ++sk)
            for (uint32_t red = 0; red <= (sk > 1 ? 4u : 0u); red = red ? red << 1 : 1) {
              if (sk > 1 && !(red & red_mask)) continue;
              if (sk == 1 && red != 0) continue;
              for (int swz = 0; swz <= (swz_ok ? 1 : 0); ++swz)
                for (int cu = 0; cu <= custom_max; ++cu)
                  for (uint16_t cl : clusters) {
                  cublasLtMatmulAlgo_t al = base;
                  set<uint16_t>(al, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, cl);
                  set<uint32_t>(al, CUBLASLT_ALGO_CONFIG_TILE_ID, tile);
                  set<uint32_t>(al, CUBLASLT_ALGO_CONFIG_STAGES_ID, s);
                  set<int32_t>(al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, sk);
                  set<uint32_t>(al, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, red);
                  set<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, static_cast<uint32_t>(swz));
                  set<uint32_t>(al, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, static_cast<uint32_t>(cu));
                  ++tried;
                  cublasLtMatmulHeuristicResult_t chk{};
                  if (cublasLtMatmulAlgoCheck(lt, op, la, lb, lc, lc, &al, &chk) != CUBLAS_STATUS_SUCCESS) continue;
                  if (chk.workspaceSize > ws_bytes) continue;
                  all.push_back({al, describe(al), false, {}});
                }
            }
    }
    std::printf("%ldx%ldx%ld (%s flush): %d algorithm ids, %ld configs tried, %zu accepted, heuristic %zu\n", m, n, k,
                read_flush ? "read" : "write", nids, tried, all.size(), heur.size());
    std::fflush(stdout);
    // Pass 1: 3 runs each (the first run of a config also loads its module: one warm-up run first), in a fixed
    // shuffled order, within PASS1_SECONDS (default 30) a shape: the configs not reached are left out (counted).
    {
      uint32_t h = 12345;
      for (size_t j = all.size(); j > 1; --j) {
        h = h * 1664525u + 1013904223u;
        std::swap(all[j - 1], all[h % j]);
      }
    }
    const double limit_s = std::getenv("PASS1_SECONDS") ? std::atof(std::getenv("PASS1_SECONDS")) : 30.0;
    cudaEvent_t p0, p1;
    cudaEventCreate(&p0);
    cudaEventCreate(&p1);
    cudaEventRecord(p0);
    size_t timed = 0;
    for (auto& cnd : all) {
      time_one(cnd.algo);
      for (int r = 0; r < 3; ++r) cnd.t.push_back(time_one(cnd.algo));
      ++timed;
      cudaEventRecord(p1);
      cudaEventSynchronize(p1);
      float el = 0;
      cudaEventElapsedTime(&el, p0, p1);
      if (el * 1e-3 > limit_s) break;
    }
    all.resize(timed);
    std::printf("  pass 1 timed %zu configs\n", timed);
    if (std::getenv("DUMP"))  // every pass-1 median, for a model of the configs (lab analysis)
      for (auto& cnd : all)
        std::printf("  cfg %.2f us %s\n", cnd.med() * 1e3f, describe(cnd.algo).c_str());
    std::sort(all.begin(), all.end(), [](Cand& x, Cand& y) { return x.med() < y.med(); });
    std::vector<Cand> fin(heur.begin(), heur.end());
    for (size_t j = 0; j < all.size() && j < 24; ++j) fin.push_back({all[j].algo, all[j].label, false, {}});
    for (auto& cnd : fin) time_one(cnd.algo);
    for (int r = 0; r < 60; ++r)
      for (auto& cnd : fin) cnd.t.push_back(time_one(cnd.algo));
    float hbest = 1e30f;
    for (auto& cnd : fin)
      if (cnd.heuristic) hbest = std::min(hbest, cnd.med());
    std::sort(fin.begin(), fin.end(), [](Cand& x, Cand& y) { return x.med() < y.med(); });
    for (auto& cnd : fin) {
      const float us = cnd.med() * 1e3f;
      std::printf("  %8.2f us %6.1f TFLOP/s  %.3f of the heuristic's best  %s%s\n", us, 2.0 * m * n * k / us * 1e-6,
                  hbest / cnd.med(), cnd.heuristic ? "[heuristic] " : "", describe(cnd.algo).c_str());
    }
    std::fflush(stdout);
    g.destroy();
  }
  return 0;
}
