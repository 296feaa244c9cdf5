// buckets.hpp — shape buckets: the rows M of the tuning key. A serving process sees a new M with every batch; the
// tuning key holds M by bucket (N, K, dtypes, layouts, alignment and epilogue stay exact), the tuner times one
// representative M per bucket (the bucket's largest) and the winner serves every M of the bucket. The rule is
// m_bucket; a problem whose M enters a stride or the alignment class keeps its exact M (m_bucket_refusal). See
// README "Shape buckets" and docs/standing.md.
#pragma once
#include <cstdint>
#include <string>

#include "problem/problem.hpp"

namespace tmagemm::tune {

// The rows of one bucket: every M with lo <= M <= hi shares one tuning key. lo == hi: M is exact.
struct MBucket {
  int64_t lo = 0, hi = 0;
  bool exact() const { return lo == hi; }
  bool operator==(const MBucket&) const = default;
};

// The rule (one family, two members):
//   grouped_mm  : total M rounded up to a power of two: (2^(e-1), 2^e] (rows split into groups by offsets the key
//                 never holds; 1 is its own class);
//   mm, addmm, scaled_mm, bmm (per-matrix M):
//                 M <= 16        exact (decode batches, each tuned on its own);
//                 17..32, 33..64 one bucket each (the skinny backend pads M to 32 or 64 rows, takes M <= 64 and its
//                                heuristic switches at 32: no bucket straddles those);
//                 M > 64         quarter octaves: the octave (2^e, 2^(e+1)] in four steps of 2^e / 4 rows
//                                (65..80, 81..96, ..., 113..128, 129..160, ..., 7169..8192, ...). Every step is a
//                                multiple of 16 rows, from 256 rows up a multiple of 64 and from 512 up of 128:
//                                the M blocks of the persistent-TMA tiles (64, 128, 256 rows; 128 or 256 per
//                                cluster) split a bucket's rows into the same count for most of its M, and a
//                                step is at most 1/4 of M, so the waves of one config differ little across it.
//   M <= 0 and other ops: exact.
MBucket m_bucket(Op op, int64_t m);

// Why `p`'s M must stay exact in its tuning key ("" when it may be bucketed): M must enter no stride and no
// alignment class, so that one layout serves every M of the bucket: A and out row-major (a column-major A or out
// has M in its leading dimension), a full (M,N) bias row-major, and the matrices of a batch either packed (batch
// stride = M x row stride) or broadcast (0).
std::string m_bucket_refusal(const GemmProblem& p);

// The bucket of `p`: m_bucket(p.op, p.m) when `buckets` (Options::m_buckets) and m_bucket_refusal is empty, else
// exact {p.m, p.m}.
MBucket bucket_of(const GemmProblem& p, bool buckets);

// `p` with M = m: the rows of a, out and an M-row bias, the batch strides of packed matrices. Used for the
// bucket's representative (the tuner's scratch copies follow these extents; the user's memory is never touched)
// and for the applicability checks at the bucket's ends. Only meaningful when m_bucket_refusal(p) is empty.
GemmProblem with_m(const GemmProblem& p, int64_t m);

// The key text of the bucket's rows: "M" when exact, else "lo..hi".
std::string m_key(const MBucket& bucket);

}  // namespace tmagemm::tune
