// problem.hpp — GemmProblem: the validated, canonical description of one GEMM call. Every backend
// reads this (never the user's TensorViews). Built only by the make_*_problem functions, which
// throw tmagemm::Error(invalid_argument | unsupported) naming the argument and the rule; validate_options
// checks the per-call Options the same way.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tmagemm/options.hpp"
#include "tmagemm/types.hpp"

namespace tmagemm {

enum class Op { mm, addmm, scaled_mm, bmm, grouped_mm };
const char* to_string(Op op) noexcept;

// Which index of a matrix is contiguous. row: the column index has unit stride (C order);
// col: the row index has unit stride (Fortran order); strided: neither (fallback backends only).
enum class Major { row, col, strided };
const char* to_string(Major major) noexcept;

// One matrix operand, canonicalised. For A: rows=M, cols=K. B: rows=K, cols=N. out: rows=M, cols=N.
// Element (b, i, j) lives at data + (b*batch_stride + i*row_stride + j*col_stride) * itemsize.
// Canonicalisation: the stride of a dimension of extent 1 is free, so validation rewrites it to make the
// layout row- or col-major where possible (the free stride becomes the other extent rounded up to
// 16 bytes), so that e.g. an (M,1) column with strides (1,1) is a col-major matrix with ld = round16(M).
struct Operand {
  const void* data = nullptr;
  DType dtype = DType::bf16;
  int64_t rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 0;
  int64_t batch_stride = 0;  // 0 for rank-2 operands (and for broadcast batches)

  Major major() const noexcept;   // from the (canonical) strides
  int64_t ld() const noexcept;    // the non-unit stride for row/col; row_stride when strided
  bool empty() const noexcept { return rows == 0 || cols == 0; }
};

// TMA compatibility of one operand (can the tensor-memory accelerator address it as a 2-D/3-D tensor).
// ok == false comes with a reason that names the rule, e.g.
// "base address 0x...02 is not 16-byte aligned", "row stride 11 elements x 2 bytes = 22 bytes is not a multiple of 16".
struct TmaCompat {
  bool ok = true;
  std::string reason;
};
TmaCompat can_use_tma(const TensorView& view);
TmaCompat can_use_tma(const Operand& operand);

// The alignment every row (and batch) of the operand starts on: the largest power of two, at most 128 bytes,
// that divides the base address, the leading dimension and the batch stride in bytes. On an H200 TMA box rows
// starting off 32-byte boundaries cost ~4x the L2 requests of aligned ones (docs/perf-notes.md).
int row_alignment_bytes(const Operand& operand) noexcept;

enum class BiasKind { none, row_vector /* (N) or (1,N) */, col_vector /* (M,1) */, full /* (M,N) */ };
enum class ScaleKind { none, tensorwise, rowwise };

struct GemmProblem {
  Op op = Op::mm;
  int device = 0;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  Operand a, b, out;
  // addmm / scaled_mm
  BiasKind bias_kind = BiasKind::none;
  Operand bias;                 // rows/cols as given after broadcasting rules: (1,N), (M,1) or (M,N)
  float alpha = 1.0f, beta = 1.0f;
  Activation act = Activation::none;
  // scaled_mm
  ScaleKind scale_kind = ScaleKind::none;
  const float* scale_a = nullptr;  // 1 value (tensorwise) or M values (rowwise)
  const float* scale_b = nullptr;  // 1 value (tensorwise) or N values (rowwise)
  bool fast_accum = false;
  // grouped_mm: `batch` groups; group g owns rows [group_ends[g-1], group_ends[g]) of a and out (a and out are
  // rank 2, total M rows) and matrix g of b. The ends are int32 in device memory (read by the kernel only).
  const int32_t* group_ends = nullptr;

  std::string describe() const;   // e.g. "mm(4096x4096 row, 4096x14336 col) bf16->bf16"
};

// Where a pointer lives, as the CUDA runtime reports it. Validation asks through a replaceable hook so
// that CPU-only tests can describe device memory without a GPU.
struct PointerInfo {
  bool is_device = false;  // device or managed memory usable by kernels on `device`
  int device = -1;
};
using PointerQuery = std::function<PointerInfo(const void*)>;
// Installs a query (tests); an empty function restores the default (one cuPointerGetAttributes call through
// the driver entry point, else cudaPointerGetAttributes).
void set_pointer_query(PointerQuery query);
PointerInfo query_pointer(const void* p);

// Checks the Options fields that code can set to invalid values (the environment's are checked when Options reads
// them): choice_regex must compile as an ECMAScript regular expression and sm_carveout must be >= 0. Throws
// Error(invalid_argument) naming the field and the rule. Every public op calls it before any GPU work; the last
// valid regex is remembered, so a call with the same pattern does not compile it again.
void validate_options(const Options& options);

// Builders: validate the views and build the canonical problem, or throw Error.
GemmProblem make_mm_problem(const TensorView& a, const TensorView& b, const TensorView& out);
GemmProblem make_addmm_problem(const TensorView& bias, const TensorView& a, const TensorView& b,
                               const TensorView& out, float beta, float alpha, Activation act);
GemmProblem make_scaled_mm_problem(const TensorView& a, const TensorView& b, const TensorView& scale_a,
                                   const TensorView& scale_b, const TensorView* bias, const TensorView& out,
                                   bool use_fast_accum);
GemmProblem make_bmm_problem(const TensorView& a, const TensorView& b, const TensorView& out);
// grouped_mm: a (total_M, K), b (G, K, N), offs (G) int32 (the cumulative end row of each group), out (total_M, N).
GemmProblem make_grouped_mm_problem(const TensorView& a, const TensorView& b, const TensorView& offs,
                                    const TensorView& out);

// A problem's FLOPs and the bytes of A, B and out it moves at the least, each read or written once (traffic.cpp).
// grouped_mm: its total_M rows of A and out once and B's G matrices (a group owns about M / G of the rows, not M);
// every other op: `batch` problems of M x N x K, an operand broadcast over the batch (batch stride 0) read once.
struct Traffic {
  double flops = 0, bytes = 0;
};
Traffic traffic(const GemmProblem& problem);
// FLOPs per byte of A + B + out below which a problem counts as memory-bound (H200: ~700 TFLOP/s of bf16 GEMM
// against ~4.3 TB/s of copy bandwidth is ~160). grouped_mm's MoE rows of 64 experts x 64 tokens each (4096 x 14336 x
// 4096: 63 FLOP a byte, 4.1 TB/s measured) and of 512 decode tokens (8) are memory-bound; counted as G problems of
// total_M rows each (as before the thirty-ninth session), they read 1,792 and 387. Read by the tuner (flushes, tie
// margin, sustained final: tune/benchmark.hpp) and by the persistent-TMA prescreen (its roofline second chance).
inline constexpr double kMemoryBoundIntensity = 160.0;
bool memory_bound(const GemmProblem& problem);

// grouped_mm's representative routing, which the tuner times and the heuristic scores (the user's offsets decide
// nothing, and the tuning key holds the shape class, not the offsets): groups of uneven popularity, group g weighted
// 0.5 + frac((g + 1) x 0.618...) (a golden-ratio sequence in [0.5, 1.5)), so that group sizes are no multiple of any
// tile, as a router's are. (An even split made whole tiles of the larger tile shapes, and the tuner chose a 512-row
// cluster tile that a real routing filled to 62 %.) With more than kSampledTokensPerGroup tokens a group on average
// the M rows split in proportion to the weights; with fewer (MoE decode) each token is routed at random in proportion
// to them (fixed seed), so that groups are left empty as a router leaves them: 64 tokens over 64 groups reach ~40
// groups, where the proportional split reached 59 and ranked the tiles for a tile count that no routing has
// (docs/perf-notes.md, twenty-third session). Returns the G end rows; the last is M.
inline constexpr int64_t kSampledTokensPerGroup = 16;
std::vector<int32_t> tuning_group_ends(int64_t m, int64_t groups);

// The routings the tuner times a grouped_mm class under: the representative one (tuning_group_ends) first; for a
// sparse class (M <= kSampledTokensPerGroup x G: MoE decode) kTuningRoutings - 1 more draws of the same router with
// other seeds (those that differ from the draws before them: one group or no rows has one routing). A sparse class's
// tile count moves with the draw (64 tokens over 64 groups: 35 groups reached by the representative draw, 38 by the
// bench's), and with it a persistent kernel's last round, so one draw can rank two tiles level that another
// separates: the tuner's 64x256 and 64x128 read 0.2705 / 0.2710 ms on the representative draw of 64 x 64 x 2048 x
// 7168, and the bench's draw ran 64x256 at 3.67 TB/s where its sibling rows read 4.0-4.15 (docs/perf-notes.md,
// thirty-ninth session). A candidate's time is its mean over the draws: the class's decision is made for routings as
// they come, not for one. Dense classes: the representative routing alone (their groups' sizes move by a few percent
// between draws, their tile counts barely).
inline constexpr int kTuningRoutings = 3;
std::vector<std::vector<int32_t>> tuning_group_routings(int64_t m, int64_t groups);

}  // namespace tmagemm
