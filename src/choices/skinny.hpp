// skinny.hpp — the skinny backend (device side: kernels/gemm_skinny.cuh): split-K, swap-AB TMA + WGMMA kernels for
// problems with few rows (M <= 64), the decode-time GEMMs whose cost is reading B once. The K range is split over
// a cluster of 1..8 CTAs whose partial tiles are summed through distributed shared memory, so one launch covers
// the whole product (no workspace, no second kernel) and the result does not depend on timing. The CTAs of 2 or 4
// adjacent N tiles may share each A block by TMA multicast (the cluster is then splits x cast CTAs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "choices/choice.hpp"
#include "jit/jit.hpp"

namespace tmagemm::choices {

struct SkinnyConfig {
  int bn, bk, stages;
  int in_bytes = 2;  // 2: bf16/f16 inputs; 1: fp8 (scaled_mm: K-major A and B)
  std::string name() const;  // e.g. "skinny_128x64_st4", "skinny_fp8_128x128_st4"
  // Dynamic shared memory of the kernel for `mp` padded rows (kernels/gemm_skinny.cuh: 1 KiB of alignment slack,
  // the larger of the TMA ring and the fp32 reduction tile, the ring's barriers). An M-major A takes 64 columns a
  // stage whatever mp is.
  std::size_t smem_bytes(int mp, bool a_k_major) const;
};

const std::vector<SkinnyConfig>& skinny_configs();

// The split counts offered for each config.
const std::vector<int>& skinny_splits();

// The multicast group sizes offered (CTAs of adjacent N tiles that share each A block: one loads 1/cast of it and
// multicasts it to the others); a choice's cluster is splits x cast <= 8 CTAs.
const std::vector<int>& skinny_casts();

// Rows the kernel pads M to (the wgmma's n): 32 or 64.
int skinny_padded_m(int64_t m);

// Empty when the config with `splits` K splits and `cast` CTAs sharing A can run the problem; else the reason.
std::string skinny_can_implement(const GemmProblem& problem, const SkinnyConfig& config, int splits, int cast = 1);

// K elements per CTA of a cluster: the K blocks shared out evenly, in whole blocks.
int64_t skinny_k_split(int64_t k, const SkinnyConfig& config, int splits);

// CTAs in a choice's grid: N tiles x splits x batch (the multicast group changes the clusters, not the count).
int64_t skinny_grid_ctas(const GemmProblem& problem, const SkinnyConfig& config, int splits);

// Empty when the choice's grid fits in the SMs that Options::sm_carveout leaves (max(1, sm_count - sm_carveout);
// always with no carveout); else the reason, e.g. "grid of 224 CTAs exceeds the 120 SMs left by sm_carveout = 12".
// The skinny grid is not persistent (each CTA owns one K share of one N tile), so such a choice refuses rather than
// run more CTAs than the SMs it may use.
std::string skinny_carveout_reason(const GemmProblem& problem, const SkinnyConfig& config, int splits, int sm_count,
                                   int sm_carveout);

// The split count the heuristic uses: the smallest whose CTAs (N tiles x batch x splits) cover 4/5 of the SMs,
// capped by the largest offered split and by the K blocks (two a CTA). With sm_carveout > 0 the SMs are those the
// carveout leaves, and no split above 1 makes the grid larger than them.
int skinny_heuristic_splits(const GemmProblem& problem, const SkinnyConfig& config, int sm_count, int sm_carveout = 0);

// The name of the skinny choice the heuristic mode takes (whether or not it applies), or empty to leave the problem
// to the other backends. Up to 64 rows: the widest of the 256x64x5 and 128x128x4 tiles whose N tiles alone cover
// 4/5 of the SMs, unsplit (empty above 32 rows: persistent TMA measured ahead there); else 64x64x12 with
// skinny_heuristic_splits. Calibrated on the decode suite (docs/perf-notes.md, skinny v2: each pick was the
// fastest skinny choice or within ~3 % of it; heuristic decode geomean 1.033 of cuBLASLt, 64x4096x4096 the worst
// at 0.909). With sm_carveout > 0 the rule counts the SMs the carveout leaves, and a pick whose grid would exceed
// them (skinny_carveout_reason) is empty instead.
std::string skinny_heuristic_choice(const GemmProblem& problem, int sm_count, int sm_carveout = 0);

jit::KernelSpec skinny_spec(const GemmProblem& problem, const SkinnyConfig& config);
std::vector<jit::KernelSpec> skinny_all_specs();

// Enqueues the kernel on `stream`. Throws Error(unsupported) with skinny_carveout_reason, launching nothing, when
// the grid exceeds the SMs that `sm_carveout` (Options::sm_carveout) leaves.
void skinny_launch(const GemmProblem& problem, const SkinnyConfig& config, int splits, int cast, cudaStream_t stream,
                   int sm_carveout);

// The config, split count and multicast group of a skinny choice; null / 0 for other backends' choices.
const SkinnyConfig* skinny_config_of(const Choice& choice, int* splits = nullptr, int* cast = nullptr);

// A skinny choice's name: "<config>_split<S>", with "_cast<C>" when C > 1.
std::string skinny_choice_name(const SkinnyConfig& config, int splits, int cast = 1);

}  // namespace tmagemm::choices
