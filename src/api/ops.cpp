// ops.cpp — the public ops: validate (src/problem), then the one dispatch point (src/dispatch).
#include <fmt/format.h>

#include "dispatch/dispatch.hpp"
#include "problem/problem.hpp"
#include "tmagemm/error.hpp"
#include "tmagemm/ops.hpp"

namespace tmagemm {

void mm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options) {
  dispatch::run(make_mm_problem(a, b, out), options);
}

void addmm(const TensorView& bias, const TensorView& a, const TensorView& b, const TensorView& out, float beta,
           float alpha, Activation act, const Options& options) {
  dispatch::run(make_addmm_problem(bias, a, b, out, beta, alpha, act), options);
}

void scaled_mm(const TensorView& a, const TensorView& b, const TensorView& scale_a, const TensorView& scale_b,
               const TensorView* bias, const TensorView& out, bool use_fast_accum, const Options& options) {
  dispatch::run(make_scaled_mm_problem(a, b, scale_a, scale_b, bias, out, use_fast_accum), options);
}

void bmm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options) {
  dispatch::run(make_bmm_problem(a, b, out), options);
}

Explanation explain_mm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options) {
  return dispatch::explain(make_mm_problem(a, b, out), options);
}

Explanation explain_addmm(const TensorView& bias, const TensorView& a, const TensorView& b, const TensorView& out,
                          float beta, float alpha, Activation act, const Options& options) {
  return dispatch::explain(make_addmm_problem(bias, a, b, out, beta, alpha, act), options);
}

Explanation explain_bmm(const TensorView& a, const TensorView& b, const TensorView& out, const Options& options) {
  return dispatch::explain(make_bmm_problem(a, b, out), options);
}

std::string Explanation::to_string() const {
  std::string s = fmt::format("explain {}\n", problem);
  for (const auto& c : choices) {
    s += fmt::format("  {} {:<40} {:<16} ", c.selected ? "*" : " ", c.name, c.backend);
    if (c.applicable)
      s += c.tuned_ms ? fmt::format("applicable, tuned {:.4f} ms", *c.tuned_ms) : std::string("applicable");
    else
      s += "not applicable: " + c.reason;
    s += "\n";
  }
  return s;
}

}  // namespace tmagemm
