// cublaslt.hpp — the cuBLASLt backend: the top-k algorithms of cublasLtMatmulAlgoGetHeuristic for a problem,
// each offered as one choice ("cublaslt_algo<i>"). The mapping of tmagemm's row-major-semantics problem onto
// cuBLASLt's column-major matmul is plain data (CublasLtCall) so that it can be checked without a GPU.
//
// Mapping. tmagemm computes C(M,N) = A(M,K) @ B(K,N), each operand row- or column-major. cuBLASLt computes
// D(m,n) = op(A)(m,k) @ op(B)(k,n) on column-major layouts. A row-major matrix X (ld = row stride) is the
// column-major matrix X^T with the same ld, so:
//   out column-major: D = C directly          — cuBLAS A = our a, B = our b, m = M, n = N;
//   out row-major:    D = C^T = B^T @ A^T      — cuBLAS A = our b, B = our a, m = N, n = M ("swapped").
// Each input is described as stored (column-major rows x cols with its ld) and transposed by cuBLAS exactly
// when its major differs from out's (CUBLAS_OP_T), e.g. mm row/row -> row: A = b (N x K, OP_N),
// B = a (K x M, OP_N), D = out (N x M).
//
// addmm. out = act(beta * bias + alpha * (a @ b)) is run only where cuBLASLt's own epilogues compute exactly that
// (cublaslt_epilogue_reason says why not elsewhere; the tuner then uses other backends):
//   beta == 0:  bias is never read; D = alpha * op(A) @ op(B) with epilogue DEFAULT, RELU or GELU (act none, relu,
//               gelu_tanh).
//   vector bias, beta == 1: the BIAS, RELU_BIAS or GELU_BIAS epilogue adds one value per row of cuBLAS's
//               column-major D, i.e. per output column (row_vector) when out is row-major (swapped) and per output
//               row (col_vector) when out is column-major; the vector must be packed and have out's dtype.
//   full bias, act none: the bias is cuBLAS's C with cuBLAS's beta = beta (C may be out itself, in place); it must
//               have out's dtype and order.
// Every other combination (silu, sigmoid, gelu (erf), a vector along D's columns, a vector with beta != 0 and != 1,
// a full bias with an activation) is refused with the reason.
//
// scaled_mm (FP8). out = (a @ b) * scale_a * scale_b (+ bias), torch._scaled_mm's semantics, a (M,K) row-major and
// b (K,N) column-major e4m3/e5m2 (never both e5m2). Both inputs are K-major, so with either out layout cuBLAS's A is
// transposed and its B is not (the "TN" form, the only one cuBLASLt's FP8 kernels take on Hopper). The scales go
// through cuBLAS's A and B scale pointers, each with the scale of the tmagemm operand it describes: swapped (out
// row-major), cuBLAS's A is our b and gets scale_b, cuBLAS's B is our a and gets scale_a. Tensorwise: scale mode
// SCALAR_32F (one f32 each). Rowwise: scale mode OUTER_VEC_32F (where the cuBLASLt version has it), in which cuBLAS's
// A scale has one value per row of D and its B scale one per column of D: swapped, D's rows are our N columns, so
// cuBLAS's A scale is scale_b (N values) and its B scale is scale_a (M values). use_fast_accum is FAST_ACCUM. The bias
// (N values, one per output column) is the BIAS epilogue, which adds one value per row of D: only when out is
// row-major (swapped), with the bias type cuBLASLt's FP8 table gives (out's type; bf16 for an f32 out).
//
// Accuracy floor. Split-K algorithms add their partial sums by a reduction scheme: NONE (no split), COMPUTE_TYPE
// (in an fp32 workspace), INPLACE (in the output buffer, in the output type) or OUTPUT_TYPE (in a workspace, in the
// output type). With a bf16/f16 output the last two add partial sums in 16 bits, so unless
// Options::allow_reduced_precision_reduction the heuristic is asked with a reduction-scheme mask that excludes them
// (cublaslt_reduction_mask), and every algorithm it returns is checked again against that mask.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "choices/choice.hpp"
#include "problem/problem.hpp"

namespace tmagemm::choices {

// Device memory every cuBLASLt choice needs for its workspace (the heuristic is limited to it).
inline constexpr std::size_t kCublasLtWorkspaceBytes = std::size_t{32} << 20;
// Heuristic algorithms offered per problem unless TMAGEMM_CUBLASLT_TOP_K says otherwise (1..16).
inline constexpr int kCublasLtDefaultTopK = 4;
inline constexpr int kCublasLtMaxTopK = 16;

// The configuration search: besides the heuristic's top picks, cuBLASLt's own kernels in configurations its heuristic
// does not rank. Measured with lab/probes/cublaslt_algo_search.cu (H100, docs/perf-notes.md "Forty-seventh session"):
// on the waves shapes cuBLASLt has wave-fitting tiles (128x208 on 2560^3, 128x336 on 2304x2304x8192, 128x280 on
// 6144x1536x4096) 4-14 % faster than its heuristic's best of 4. Each candidate is one algorithm configuration
// (tile, custom option, cluster shape; no split-K), named "cublaslt_a<algo>_t<rows>x<cols>_o<custom>_c<x>x<y>", the
// same algorithm at every M of a bucket; the tuner times it like one of our kernels (it must beat the heuristic's
// picks beyond the near-tie margin). 16-bit inputs only. On unless TMAGEMM_CUBLASLT_SEARCH=0: tuned on the H100 in the
// forty-eighth session it took waves from 1.004 to 1.055 of cuBLASLt (2304x2304x8192 1.147, 2560^3 1.124, 4224^3
// 1.085; lowest row 0.999), for 35 % more tuning time (docs/perf-notes.md "Forty-eighth session").
// The candidates (cublaslt_search_configs): for each M of cublaslt_search_model_ms, the kCublasLtSearchTilesPerM tiles
// with the best wave model (cublaslt_search_tiles) among those the heuristic's first algorithm offers, each in the
// kCublasLtSearchVariants (custom option, cluster) pairs, and the best tiles at the call's own M (fitted) in
// kCublasLtFittedVariants too, where cublasLtMatmulAlgoCheck accepts them (at most 28 a problem). The bucket's are
// tuned with the bucket; the fitted ones are timed at their own M: a bucket's tuning at its last M cannot find the
// tile that fits another M's waves (H100, forty-eighth session: 2304x2304x8192 tuned at M = 2560 ran the heuristic's
// pick, 0.993, where 128x336 fits M = 2304 in one round and ran 1.144 in the probe).
struct CublasLtTile {
  uint32_t id = 0;  // cublasLtMatmulTile_t
  int rows = 0, cols = 0;
};
inline constexpr int kCublasLtSearchTilesPerM = 2;  // best tiles of each modelled M
struct CublasLtSearchVariant {
  uint32_t custom;   // CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION
  uint16_t cluster;  // cublasLtClusterShape_t
  int cx, cy;        // its extents
};
// The pairs that won most of the probe's shapes (custom 7 or 5 with 1x1 clusters, 7 with 2x1).
inline constexpr CublasLtSearchVariant kCublasLtSearchVariants[] = {{7, 2, 1, 1}, {5, 2, 1, 1}, {7, 3, 2, 1}};

// The tile of cublasLt.h's table with this id (rows along cuBLAS's m, columns along its n), if the table has it.
const CublasLtTile* cublaslt_tile(uint32_t id);

// The rows the search models a problem with: the first, middle and last M of M's shape bucket (the rule of
// tune/buckets.hpp m_bucket for mm / addmm / bmm), so that every M of one tuning key gets the same candidates (a
// stored winner is found again) and a wave-fitting tile of any part of the bucket is among them; empty for M <= 64
// (decode: the skinny kernels' domain, no search).
std::vector<int64_t> cublaslt_search_model_ms(int64_t m);

// The wave model: of the `offered` tile ids (from cublasLtMatmulAlgoCapGetAttribute), those of 128 rows and 64..512
// columns (the tiles that won on the probe's shapes, but for 1536^3's 192x96, which the heuristic ranks first there
// itself; admitting 64-, 192- and 256-row tiles put the model's picks past the winners on 5 of 8 shapes), ordered by
// predicted time on cuBLAS's (m, n, k) x batch over `sm_count` SMs: rounds of
// tiles (ceil(tiles / SMs)) x tile area / (1 + 24 (1/rows + 1/cols)) (a tile's per-FLOP cost falls with its size);
// the first `count`. Needs no GPU.
std::vector<CublasLtTile> cublaslt_search_tiles(uint64_t m, uint64_t n, int64_t batch, int sm_count,
                                                const std::vector<uint32_t>& offered, int count);

// The variants tried besides kCublasLtSearchVariants on the tiles fitted to the call's own M: custom option 3 with 1x1
// and 2x2 clusters (the probe's winners on 4224^3 and 3000x5000x1000, neither M the last of its bucket).
inline constexpr CublasLtSearchVariant kCublasLtFittedVariants[] = {{3, 2, 1, 1}, {3, 6, 2, 2}};

// One configuration of the search: a tile in a variant; `bucket` when it is of the bucket's list (the same at every M
// of the bucket), `fitted` when the tile is one of the kCublasLtSearchTilesPerM best of the wave model at the
// problem's own M (a configuration is of the bucket's list, fitted, or both).
struct CublasLtSearchConfig {
  CublasLtTile tile;
  CublasLtSearchVariant variant;
  bool bucket = false;
  bool fitted = false;
};

// The search's configurations for a problem of `m` rows (m > 64), cuBLAS's other extent `other`, where the problem's
// rows are cuBLAS's n when `rows_along_n` (a swapped call), else its m: the bucket's (the best tiles at each M of
// cublaslt_search_model_ms in each kCublasLtSearchVariants pair: the same list at every M of a bucket) then the
// fitted tiles' other pairs (kCublasLtFittedVariants) and, where a fitted tile is none of the bucket's, its
// kCublasLtSearchVariants. Those not of the bucket's list exist at their own M only (Choice::m_only: never a
// candidate of the bucket's tuning, even where another M of the bucket has the same one); the tuner times every
// fitted one at its M with the library's ranks (tune/tuner.cpp, library_rank_at_m). Needs no GPU; cuBLASLt may still
// refuse some (cublasLtMatmulAlgoCheck).
std::vector<CublasLtSearchConfig> cublaslt_search_configs(int64_t m, uint64_t other, bool rows_along_n, int64_t batch,
                                                          int sm_count, const std::vector<uint32_t>& offered);

// Whether the configuration search runs: unless TMAGEMM_CUBLASLT_SEARCH is "0".
bool cublaslt_search_enabled();

// Empty when cuBLASLt can express `problem` (op, dtypes, layouts, strides, addmm's epilogue, scaled_mm's scales);
// otherwise the reason, in words. Needs no GPU. Accepts mm, bmm and addmm (see cublaslt_epilogue_reason) with
// bf16 x bf16 or f16 x f16 inputs and an output of the input type or f32, every matrix row- or column-major with
// ld >= the rows of its column-major form, batch < 2^31; and scaled_mm with the FP8 rules above (a row-major, b
// column-major, 16-byte aligned matrices, rowwise scales only where cublaslt_version() has OUTER_VEC_32F).
std::string cublaslt_reason_unsupported(const GemmProblem& problem);

// The cuBLASLt version this build can use (major * 10000 + minor * 100 + patch): cublasLtGetVersion() of the loaded
// library, but no newer than the header it was compiled against (CUBLAS_VERSION), since an attribute value the header
// lacks cannot be set. Needs no GPU.
int cublaslt_version();

// The first cuBLASLt version with CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F (scaled_mm's rowwise scales).
inline constexpr int kCublasLtOuterVectorScaleVersion = 120900;

// Empty when cuBLASLt `version` has a scale mode for scaled_mm's `kind` (tensorwise: always; rowwise: OUTER_VEC_32F,
// from kCublasLtOuterVectorScaleVersion); otherwise the reason. Needs no GPU.
std::string cublaslt_scale_mode_reason(ScaleKind kind, int version);

// Empty when a device of compute capability cc_major.cc_minor runs cuBLASLt's kernels for `problem`: FP8 (scaled_mm)
// needs 8.9 or later, and rowwise (outer-vector) scales 9.0; otherwise the reason. Other ops: always empty. Needs no
// GPU.
std::string cublaslt_device_reason(const GemmProblem& problem, int cc_major, int cc_minor);

// Empty when one of cuBLASLt's epilogues computes `problem`'s epilogue exactly (always for mm and bmm; for addmm and
// scaled_mm's bias see the rules above); otherwise the reason, in words, e.g. "cuBLASLt has no epilogue for
// act=silu". Only the epilogue (op, act, alpha, beta, bias kind, bias dtype, bias layout against out's) is judged
// here; cublaslt_reason_unsupported checks the rest. Needs no GPU.
std::string cublaslt_epilogue_reason(const GemmProblem& problem);

// The cublasLtEpilogue_t value (CUBLASLT_MATMUL_DESC_EPILOGUE) that computes `problem`'s epilogue: DEFAULT for mm and
// bmm, a beta == 0 addmm, a full bias and scaled_mm without a bias; RELU or GELU for a beta == 0 addmm with act relu
// or gelu_tanh; BIAS, RELU_BIAS or GELU_BIAS for a vector bias (BIAS for scaled_mm's). Only meaningful when
// cublaslt_epilogue_reason(problem) is empty.
int cublaslt_epilogue(const GemmProblem& problem);

// One matrix of the column-major cuBLASLt call, as stored in memory.
struct CublasLtMatrix {
  const char* name = "";         // which tmagemm operand it is: "a", "b" or "out"
  const void* data = nullptr;
  DType dtype = DType::bf16;
  uint64_t rows = 0, cols = 0;   // column-major extents of the stored matrix
  int64_t ld = 0;                // leading dimension (elements)
  int64_t batch_stride = 0;      // elements between batches (0: broadcast); used when batch > 1
  bool transpose = false;        // cuBLAS applies op T to it (inputs only)
  uint32_t alignment = 256;      // bytes (power of two <= 256) dividing the base, ld and batch stride in bytes
};

// The cuBLASLt call that computes a problem: D(m,n) = epilogue(alpha * op(A) @ op(B) + beta * C [+ bias]), D = out.
struct CublasLtCall {
  bool swapped = false;          // out row-major: cuBLAS A is our b and cuBLAS B is our a
  uint64_t m = 0, n = 0, k = 0;  // cuBLAS's m, n, k
  int64_t batch = 1;
  CublasLtMatrix a, b, c;        // cuBLAS's A, B and D (= out)
  // cuBLAS's C: out itself ("out", never read: beta == 0) unless a full bias is added ("bias", read with beta; it
  // may be out itself, in place).
  CublasLtMatrix c_in;
  float alpha = 1.0f, beta = 0.0f;  // cuBLAS's scalars
  int epilogue = 1;                 // cublasLtEpilogue_t (1: CUBLASLT_EPILOGUE_DEFAULT), see cublaslt_epilogue
  // The bias vector of the BIAS epilogues (call.m packed elements, one per row of D); null for other epilogues.
  const void* bias = nullptr;
  DType bias_dtype = DType::bf16;
  uint32_t bias_alignment = 256;    // bytes (power of two <= 256) dividing the bias pointer
  // scaled_mm (FP8): cuBLAS's A and B scale pointers (device f32: the scale of the tmagemm operand each matrix is, so
  // scale_b is cuBLAS's A scale when swapped), their scale mode (cublasLtMatmulMatrixScale_t, the same for A and B:
  // SCALAR_32F tensorwise, OUTER_VEC_32F rowwise) and FP8 fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM).
  bool scaled = false;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  int scale_mode = 0;
  bool fast_accum = false;
};

// Only meaningful when cublaslt_reason_unsupported(problem) is empty.
CublasLtCall cublaslt_call(const GemmProblem& problem);

// The CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK (cublasLtReductionScheme_t bits) the heuristic is asked with for
// output type `out`: every scheme (CUBLASLT_REDUCTION_SCHEME_MASK) for an f32 output, where each one adds in fp32,
// or when `allow_reduced` (Options::allow_reduced_precision_reduction); else NONE | COMPUTE_TYPE, the schemes that
// add partial sums in fp32. Needs no GPU.
uint32_t cublaslt_reduction_mask(DType out, bool allow_reduced);

// True when an algorithm configured with reduction scheme `scheme` (CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME) is
// allowed by `mask`, i.e. uses no scheme bit outside it (NONE, 0, is always allowed). Needs no GPU.
bool cublaslt_reduction_allowed(uint32_t scheme, uint32_t mask);

// How many heuristic algorithms to offer: TMAGEMM_CUBLASLT_TOP_K (1..16) when set and not empty, else 4.
// A malformed value throws Error(invalid_argument) naming the variable.
int cublaslt_top_k();

// Indices into `problems` (one GEMM at several M, usually a shape bucket's rows) of the first problem for each distinct
// algorithm cuBLASLt's heuristic picks first (rank 0) among them, under `options` (SM carveout, reduction mask). A
// cuBLASLt choice runs that pick at each M, and CUDA loads a library kernel on its first launch (lazy loading: ~3 ms
// each on the H200, docs/perf-notes.md), so tmagemm::preload_model runs one problem per distinct pick. Host work: one
// heuristic query per problem (~0.1-0.3 ms). Problems cuBLASLt cannot take are skipped.
std::vector<std::size_t> cublaslt_distinct_first_picks(const std::vector<GemmProblem>& problems,
                                                       const Options& options);

}  // namespace tmagemm::choices
