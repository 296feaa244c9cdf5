// tmagemm/options.hpp — per-call options. A default-constructed Options reads TMAGEMM_* environment
// variables (see README "Options"); fields assigned in code win over the environment.
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
  std::string choice_regex;                // TMAGEMM_CHOICE_REGEX=<ECMAScript regex on choice names>
  int sm_carveout = 0;                     // TMAGEMM_SM_CARVEOUT=<int >= 0>

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
