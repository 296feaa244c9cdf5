// tmagemm/options.hpp — per-call options. A default-constructed Options reads TMAGEMM_* environment
// variables (see README "Options"); fields assigned in code win over the environment.
//
// allow_reduced_precision_reduction is the analogue of torch's allow_bf16_reduced_precision_reduction: when false
// (default) no choice may reduce split-K partial sums in the 16-bit output type. tmagemm's own kernels add partial
// sums in fp32 either way; true lets cuBLASLt offer algorithms that add them in bf16/f16 (in the output buffer or
// a 16-bit workspace) and widens the tuner's accuracy check to match. It changes nothing for f32 outputs.
#pragma once
#include <string>

typedef struct CUstream_st* cudaStream_t;

namespace tmagemm {

enum class Tuning { benchmark, heuristic, cached_only };
const char* to_string(Tuning tuning) noexcept;

struct Options {
  cudaStream_t stream = nullptr;           // (no env var: streams are process-local)
  Tuning tuning = Tuning::benchmark;       // TMAGEMM_TUNING=benchmark|heuristic|cached_only
  bool persistent_tma = true;              // TMAGEMM_PERSISTENT_TMA=0|1
  bool fallback = true;                    // TMAGEMM_FALLBACK=0|1
  bool cublaslt = true;                    // TMAGEMM_CUBLASLT=0|1
  bool skinny = true;                      // TMAGEMM_SKINNY=0|1 (split-K kernels for M <= 64)
  bool pad_tma = true;                     // TMAGEMM_PAD_TMA=0|1 (persistent TMA on re-pitched copies of operands
                                           // TMA refuses for alignment: odd K or N, a base off 16 bytes; with
                                           // cublaslt on too, cuBLASLt's algorithms on the same copies)
  bool allow_reduced_precision_reduction = false;  // TMAGEMM_ALLOW_REDUCED_PRECISION_REDUCTION=0|1 (see above)
  std::string choice_regex;                // TMAGEMM_CHOICE_REGEX=<ECMAScript regex on choice names>
  int sm_carveout = 0;                     // TMAGEMM_SM_CARVEOUT=<int >= 0>
  bool m_buckets = true;                   // TMAGEMM_M_BUCKETS=0|1: the tuning key holds M by bucket (README "Shape
                                           // buckets"; one tuning serves every M of a bucket); 0: M exact
  bool library_ranks_per_m = true;         // TMAGEMM_LIBRARY_RANKS_PER_M=0|1: at an M of a bucket other than its
                                           // largest, cuBLASLt's ranks are timed at that M once (stored), against the
                                           // bucket's winner where that is not cuBLASLt's first pick; 0: the
                                           // bucket's winner runs as is
  bool sustained_tuning = true;            // TMAGEMM_SUSTAINED_TUNING=0|1: benchmark tuning of a compute-bound
                                           // problem larger than L2 times its near-tied finalists alone back to back
                                           // (the power-capped state of a loop; src/tune/benchmark.hpp); 0: not

  // Defaults, then TMAGEMM_* environment variables on top. A malformed value throws
  // Error(invalid_argument) naming the variable.
  Options();
  // Plain defaults, ignoring the environment.
  static Options defaults_only();

 private:
  struct NoEnv {};
  explicit Options(NoEnv) {}
};

}  // namespace tmagemm
