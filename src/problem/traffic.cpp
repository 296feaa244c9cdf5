// traffic.cpp — what a problem moves at the least (FLOPs and compulsory bytes of A, B and out) and whether that makes
// it memory-bound: read by the tuner (its flushes, tie margin and sustained final) and the persistent-TMA prescreen.
#include "problem/problem.hpp"

namespace tmagemm {

Traffic traffic(const GemmProblem& p) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
  const double g = static_cast<double>(p.batch);
  const double ia = static_cast<double>(itemsize(p.a.dtype)), ib = static_cast<double>(itemsize(p.b.dtype));
  const double io = static_cast<double>(itemsize(p.out.dtype));
  if (p.op == Op::grouped_mm) return {2.0 * m * n * k, m * k * ia + g * k * n * ib + m * n * io};
  const double ga = p.a.batch_stride == 0 ? 1.0 : g, gb = p.b.batch_stride == 0 ? 1.0 : g;
  return {2.0 * m * n * k * g, ga * m * k * ia + gb * k * n * ib + g * m * n * io};
}

bool memory_bound(const GemmProblem& p) {
  const Traffic t = traffic(p);
  return t.flops < kMemoryBoundIntensity * t.bytes;
}

}  // namespace tmagemm
