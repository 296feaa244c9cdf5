// buckets.cpp — the shape-bucket rule and the representative problem of a bucket (see buckets.hpp).
#include "tune/buckets.hpp"

#include <fmt/format.h>

#include <bit>

namespace tmagemm::tune {

MBucket m_bucket(Op op, int64_t m) {
  if (m <= 0) return {m, m};
  const auto um = static_cast<uint64_t>(m);
  if (op == Op::grouped_mm) {
    if (m == 1) return {1, 1};
    const auto hi = static_cast<int64_t>(std::bit_ceil(um));
    return {hi / 2 + 1, hi};
  }
  if (op != Op::mm && op != Op::addmm && op != Op::scaled_mm && op != Op::bmm) return {m, m};
  if (m <= 16) return {m, m};
  if (m <= 32) return {17, 32};
  if (m <= 64) return {33, 64};
  // The octave (2^e, 2^(e+1)] holding m, in four steps.
  const int e = std::bit_width(um - 1) - 1;
  const int64_t step = int64_t{1} << (e - 2);
  const int64_t hi = (m + step - 1) / step * step;
  return {hi - step + 1, hi};
}

std::string m_bucket_refusal(const GemmProblem& p) {
  if (p.op != Op::mm && p.op != Op::addmm && p.op != Op::scaled_mm && p.op != Op::bmm && p.op != Op::grouped_mm)
    return fmt::format("op {} has no shape buckets", to_string(p.op));
  if (p.a.major() != Major::row) return "a is not row-major (M is in its leading dimension)";
  if (p.out.major() != Major::row) return "out is not row-major (M is in its leading dimension)";
  if (p.bias_kind == BiasKind::full && p.bias.major() != Major::row)
    return "the (M,N) bias is not row-major (M is in its leading dimension)";
  const auto packed = [&](const Operand& o) { return o.batch_stride == 0 || o.batch_stride == p.m * o.row_stride; };
  if (p.batch > 1 && p.op != Op::grouped_mm) {
    if (!packed(p.a)) return "a's matrices are neither packed (batch stride M x row stride) nor broadcast";
    if (!packed(p.out)) return "out's matrices are neither packed (batch stride M x row stride) nor broadcast";
    if (p.bias_kind == BiasKind::full && !packed(p.bias))
      return "the bias's matrices are neither packed (batch stride M x row stride) nor broadcast";
  }
  return {};
}

MBucket bucket_of(const GemmProblem& p, bool buckets) {
  if (!buckets || !m_bucket_refusal(p).empty()) return {p.m, p.m};
  return m_bucket(p.op, p.m);
}

GemmProblem with_m(const GemmProblem& p, int64_t m) {
  GemmProblem q = p;
  q.m = m;
  const auto rows = [&](Operand& o) {
    if (o.batch_stride != 0 && p.op != Op::grouped_mm) o.batch_stride = m * o.row_stride;
    o.rows = m;
  };
  rows(q.a);
  rows(q.out);
  if (p.bias_kind == BiasKind::full || p.bias_kind == BiasKind::col_vector) rows(q.bias);
  return q;
}

std::string m_key(const MBucket& b) { return b.exact() ? fmt::format("{}", b.lo) : fmt::format("{}..{}", b.lo, b.hi); }

}  // namespace tmagemm::tune
