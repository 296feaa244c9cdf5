// suites.hpp — the benchmark suites of `tmagemm bench`, as data (the same shapes as docs BENCHMARKS.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tmagemm::cli {

struct BenchShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  std::string layout;    // "rr", "rc", ...: A then B, r = row-major, c = column-major
  std::string note;      // where the shape comes from (printed, not stored)
  // A as a column slice of a wider row-major buffer: A(m, k) sits at buffer[m * (K + a_pad) + a_offset + k].
  // Only for a row-major A; 0 / 0 is a dense A.
  int64_t a_pad = 0, a_offset = 0;
  // B (row-major) with ld = N + b_pad, out with ld = N + out_pad (0: dense).
  int64_t b_pad = 0, out_pad = 0;
  // addmm: the epilogue of this row ("bias", "bias+gelu_tanh", "bias+relu": bias (N) as a 1xN view, beta = alpha
  // = 1); empty: the suite's.
  std::string epilogue;
  // grouped rows (suite op "grouped_mm"; batch = G experts, m = total rows): the rows routed to each expert, in order
  // (sum m; zeros allowed).
  std::vector<int64_t> group_rows;
  std::string routing;  // grouped rows: the routing that gave group_rows (grouped_routing: "moe", "aligned:Q")
};

struct Suite {
  std::string name;
  std::string op;                 // "mm", "scaled_mm", "addmm", "bmm", "grouped_mm"
  std::string dtype;              // default input dtype
  std::vector<BenchShape> shapes;
  bool report_bandwidth = false;  // also report TB/s = bytes(A + B + C) / time (decode)
  bool report_unfused = false;    // addmm: also time the unfused pair (cuBLASLt mm, then a bias + activation kernel)
  bool report_aligned = false;    // misaligned: also time tmagemm on the same shape with 16-byte aligned operands
  bool implemented = true;        // false: the op is not implemented yet; the suite prints "skipped"
  std::string epilogue = "none";  // as written in the result rows
};

// Every suite, in the order they are listed. `default` is not among them: see expand_suite.
const std::vector<Suite>& all_suites();
// The names a `--suite` may take: every suite, plus "default" (square + llm + fp8) and "all".
std::vector<std::string> suite_names();
// The suites a --suite name stands for (throws std::invalid_argument for an unknown name).
std::vector<Suite> expand_suite(const std::string& name);

// A fixed-seed, uneven routing of `tokens` rows over `experts` groups (the grouped suite's): each row picks an expert
// with probability proportional to a weight drawn once per expert from U(0.1, 1.1). Returns the rows per expert.
std::vector<int64_t> moe_routing(int64_t experts, int64_t tokens, std::uint64_t seed = 7);

// The grouped rows' routing of `tmagemm bench --routing`: "moe" (moe_routing, the suite's own) or "aligned:Q" (Q from
// 1 to 4096): moe_routing's rows, each rounded to the nearest multiple of Q, the total kept (the rounding's surplus is
// taken from the largest groups, its shortfall given to the largest: where the total is no multiple of Q, that group
// is not one either). Measures what ragged group ends cost a tile of Q rows. Throws std::invalid_argument naming the
// rule for any other value.
std::vector<int64_t> grouped_routing(const std::string& routing, int64_t experts, int64_t tokens);

}  // namespace tmagemm::cli
