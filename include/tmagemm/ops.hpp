// tmagemm/ops.hpp — the GEMM operations. Semantics follow torch (mm, addmm, _scaled_mm, bmm).
// Every check of the arguments happens before any GPU work; on error nothing is written to `out`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tmagemm/options.hpp"
#include "tmagemm/types.hpp"

namespace tmagemm {

// out(M,N) = a(M,K) @ b(K,N)
void mm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options = {});

// out = act(beta * bias + alpha * (a @ b)); bias broadcasts as (N), (1,N), (M,1) or (M,N), or one element ((1) or (1,1))
// added to every element.
void addmm(const TensorView& bias, const TensorView& a, const TensorView& b, const TensorView& out,
           float beta = 1.0f, float alpha = 1.0f, Activation act = Activation::none,
           const Options& options = {});

// out = (scale_a * scale_b) * (a @ b) [+ bias]; fp8 a (M,K) row-major, b (K,N) column-major, K % 16 == 0;
// scales fp32, tensorwise (one value each) or rowwise ((M,1) and (1,N)). bias bf16/fp16 (N), optional.
void scaled_mm(const TensorView& a, const TensorView& b, const TensorView& scale_a, const TensorView& scale_b,
               const TensorView* bias, const TensorView& out, bool use_fast_accum = false,
               const Options& options = {});

// out(B,M,N) = a(B,M,K) @ b(B,K,N); a batch stride of 0 broadcasts.
void bmm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options = {});

// grouped_mm (torch._grouped_mm's 2-D x 3-D form, the MoE forward): a (total_M, K) and b (G, K, N), bf16 or f16;
// offs (G) int32 in device memory, the cumulative end row of each group (group g owns rows [offs[g-1], offs[g]) of a and
// out, offs[-1] = 0; groups may be empty); out (total_M, N). The offsets are read on the device (no host
// synchronisation: the call can be captured in a CUDA graph and replayed with new offsets). torch's rule is offsets
// non-decreasing with offs[G-1] = total_M; on the device an offset past total_M is clamped to it, a group whose end
// is below the previous end is empty, and rows past offs[G-1] are not written. The 3-D x 3-D form is bmm.
void grouped_mm(const TensorView& a, const TensorView& b, const TensorView& offs, const TensorView& out,
                const Options& options = {});

// What the dispatcher would consider for one call: every choice, applicable or not and why.
struct ChoiceReport {
  std::string name;
  std::string backend;
  bool applicable = false;
  std::string reason;                 // empty when applicable
  std::optional<double> tuned_ms;     // known time from the tuning database, if any
  bool selected = false;              // the choice a call would run now
};
struct Explanation {
  std::string problem;                // one-line description of the problem (op, shapes, strides, dtypes)
  std::vector<ChoiceReport> choices;
  std::string to_string() const;      // a printable table
};

Explanation explain_mm(const TensorView& a, const TensorView& b, const TensorView& out,
                       const Options& options = {});
Explanation explain_addmm(const TensorView& bias, const TensorView& a, const TensorView& b,
                          const TensorView& out, float beta = 1.0f, float alpha = 1.0f,
                          Activation act = Activation::none, const Options& options = {});
Explanation explain_bmm(const TensorView& a, const TensorView& b, const TensorView& out,
                        const Options& options = {});
Explanation explain_grouped_mm(const TensorView& a, const TensorView& b, const TensorView& offs, const TensorView& out,
                               const Options& options = {});
Explanation explain_scaled_mm(const TensorView& a, const TensorView& b, const TensorView& scale_a,
                              const TensorView& scale_b, const TensorView* bias, const TensorView& out,
                              bool use_fast_accum, const Options& options = {});

}  // namespace tmagemm
