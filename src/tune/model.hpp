// model.hpp — offline tuning of a model's weight shapes (`tmagemm tune --model FILE`): the model file (JSON: an M
// range and a list of weights, each {op, n, k, dtype, layout, ...}; README "Offline tuning"), the jobs it makes (one per
// weight and shape bucket of the range) and the tuning of one job. A job is tuned like a call's first use: tune::choose
// in benchmark mode on the bucket's representative problem, built here as the validator would build it for contiguous
// tensors with 256-byte aligned bases. The tuner times its own scratch copies, so no tensor of the model is allocated
// and nothing is launched on the job's (never dereferenced) addresses.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "problem/problem.hpp"
#include "tmagemm/options.hpp"
#include "tmagemm/tuning.hpp"
#include "tune/buckets.hpp"

namespace tmagemm::tune {

// One weight of the model: out(M, N) = a(M, K) @ b(K, N) for every M of the model's range; grouped_mm: G experts'
// weights b (G, K, N), M the tokens of one call (total_M), routed to the experts by offsets on the device.
struct ModelWeight {
  std::string name;                          // "weights[i]" when the file gives none
  Op op = Op::mm;                            // mm, addmm, scaled_mm or grouped_mm
  int64_t n = 0, k = 0;
  int64_t groups = 1;                        // grouped_mm: the experts G
  DType dtype = DType::bf16;                 // a and b: bf16 or f16 (mm, addmm), e4m3 (scaled_mm)
  DType out_dtype = DType::bf16;             // bf16, f16 or f32 (mm, addmm: dtype unless given)
  bool b_col_major = true;                   // layout "rc" (b = W^T of a row-major (N, K) weight) or "rr"
  bool bias = false;                         // addmm: always (an (N) vector of out's type); scaled_mm: optional
  Activation activation = Activation::none;  // addmm
  ScaleKind scale = ScaleKind::rowwise;      // scaled_mm
  bool fast_accum = true;                    // scaled_mm
  std::string describe() const;              // e.g. "mm 14336x4096 bf16 rc"
};

struct Model {
  int64_t m_min = 1, m_max = 1;  // the rows the serving process will call with
  std::vector<ModelWeight> weights;
};

// The largest m_max a model file may ask for.
inline constexpr int64_t kModelMaxRows = int64_t{1} << 20;
// The most experts a grouped_mm weight may have (the backends' own limits are theirs: can_implement says).
inline constexpr int64_t kModelMaxGroups = int64_t{1} << 16;

// Parses a model file's text. Throws Error(invalid_argument) naming `origin`, the field (e.g. "weights[2].layout")
// and the rule for malformed JSON, a missing or unknown field, a value of the wrong type or out of range, a bad M
// range (1 <= min <= max <= 2^20) or a layout whose M would not be bucketed (a column-major a).
Model parse_model(const std::string& text, const std::string& origin);

// One tuning: weight `weight` of the model on the shape bucket `bucket` (tuned on bucket.hi).
struct ModelJob {
  std::size_t weight = 0;
  MBucket bucket;
};
// Every bucket that holds an M of [m_min, m_max], for every weight, in weight order then M order; weights with the
// same shape (op, n, k, types, layout, epilogue) are tuned once (the first of them).
std::vector<ModelJob> model_jobs(const Model& model);

// The canonical problem of weight `w` with M rows on `device`, with 256-byte aligned stand-in addresses (contiguous
// a, b and out, a contiguous (N) bias, rowwise scales (M, 1) and (1, N) or tensorwise ones, grouped_mm's (G) int32
// offsets): the problem make_mm_problem / make_addmm_problem / make_scaled_mm_problem / make_grouped_mm_problem build
// for such tensors, so its tuning key is theirs.
GemmProblem model_problem(const ModelWeight& w, int64_t m, int device);

struct JobResult {
  std::string winner;
  bool tuned = false;  // false: the tuning database already had the bucket
  double seconds = 0;
};
// Tunes a job on `device` (made current) under `options` with tuning = benchmark: the bucket's winner ends in the
// tuning database, as if a call of the bucket's largest M had come first. Throws what choose() throws, and
// Error(out_of_memory) where device memory ran out for the tuning (then nothing was stored).
JobResult tune_job(const Model& model, const ModelJob& job, int device, Options options);

// preload_model (tmagemm/tuning.hpp) on a parsed model, without the warm-up runs: every bucket of every weight resolved
// on its largest M under `options` with tuning = cached_only and its choice precompiled. With `warm_runs`, appends the
// problems (stand-in addresses) to run once so that every kernel a call of the model's rows can meet is loaded: each
// bucket's largest M, and for a cuBLASLt choice one M per distinct first pick of its heuristic over the bucket's rows.
// `seconds` covers this part only.
PreloadStats preload(const Model& model, int device, Options options, std::vector<GemmProblem>* warm_runs = nullptr);

}  // namespace tmagemm::tune
