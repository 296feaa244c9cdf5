// fallback.hpp — the fallback backend (device side: kernels/gemm_fallback.cuh): a tiled mma.sync kernel for any
// strides and 2-byte-aligned bases, i.e. everything TMA cannot address.
// A regular backend of the tuner (registry.cpp): the only one of ours for inputs TMA refuses, and a
// competitor elsewhere (small or skinny shapes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "choices/choice.hpp"
#include "jit/jit.hpp"

namespace tmagemm::choices {

struct FallbackConfig {
  int bm, bn, bk, warps_m, warps_n;
  std::string name() const;  // e.g. "fallback_128x128x32_w2x4"
  int threads() const { return 32 * warps_m * warps_n; }
  // Dynamic shared memory of the kernel for these operand modes (kernels/gemm_fallback.cuh: two buffers per
  // operand; K-contiguous tiles are [rows][bk + 8], M/N-contiguous ones [bk][rows + 8]).
  std::size_t smem_bytes(int a_mode, int b_mode) const;
};

const std::vector<FallbackConfig>& fallback_configs();

// Above this M*N*K*batch the fallback's choices are set aside whenever a persistent-TMA choice applies (512³; the
// backend's prune, fallback.cpp).
inline constexpr double kFallbackMaxVolumeBesideTma = 134217728.0;

// Empty when the config can run the problem; else the reason.
std::string fallback_can_implement(const GemmProblem& problem, const FallbackConfig& config);

// How an operand is read: 0 = unit stride along K, 1 = unit stride along M (A) or N (B), 2 = neither.
int fallback_a_mode(const Operand& a);
int fallback_b_mode(const Operand& b);

jit::KernelSpec fallback_spec(const GemmProblem& problem, const FallbackConfig& config);
std::vector<jit::KernelSpec> fallback_all_specs();

// The launch grid (x, 1, z). Without a carveout one CTA per output tile: x = tiles (grouped raster), z = batch.
// With sm_carveout > 0 at most max(1, sm_count - sm_carveout) CTAs in all (z = 1), each looping over the
// (batch, tile) items of the problem (kernels/gemm_fallback.cuh).
struct FallbackGrid {
  int64_t x, z;
};
FallbackGrid fallback_grid(const GemmProblem& problem, const FallbackConfig& config, int sm_count, int sm_carveout);

// Enqueues the kernel on `stream`; `sm_carveout` is Options::sm_carveout (SMs left free for other kernels).
void fallback_launch(const GemmProblem& problem, const FallbackConfig& config, cudaStream_t stream,
                     int sm_carveout);

}  // namespace tmagemm::choices
