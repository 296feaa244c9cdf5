// suites.cpp — benchmark suite data for `tmagemm bench`. Keep in step with docs BENCHMARKS.md ("Suites").
#include "suites.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>

#include <stdexcept>
#include <tuple>

namespace tmagemm::cli {

namespace {

std::vector<Suite> make_suites() {
  std::vector<Suite> s;

  // square: M = N = K, bf16, row/row.
  Suite square{"square", "mm", "bf16", {}};
  for (int64_t x : {2048, 4096, 8192}) square.shapes.push_back({1, x, x, x, "rr", "square"});
  s.push_back(square);

  // llm: bf16, A row-major; B row-major and B column-major.
  struct Llm { int64_t m, n, k; const char* note; };
  const Llm llm_shapes[] = {
      {4096, 14336, 4096, "Llama-3-8B MLP up"},  {4096, 4096, 14336, "Llama-3-8B MLP down"},
      {8192, 28672, 8192, "Llama-3-70B MLP up"}, {8192, 8192, 28672, "Llama-3-70B MLP down"},
      {4096, 6144, 4096, "Llama-3-8B QKV"},      {128, 8192, 8192, "small batch"},
      {512, 14336, 4096, "small batch"},         {3000, 5000, 1000, "ragged"},
      {1000, 1000, 1000, "small ragged"},
  };
  Suite llm{"llm", "mm", "bf16", {}};
  for (const char* layout : {"rr", "rc"})
    for (const Llm& x : llm_shapes) llm.shapes.push_back({1, x.m, x.n, x.k, layout, x.note});
  s.push_back(llm);

  // decode: M in {1, 16, 64} x (N, K); bandwidth-bound, so TB/s is reported too.
  Suite decode{"decode", "mm", "bf16", {}};
  decode.report_bandwidth = true;
  const int64_t nk[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}, {28672, 8192}};
  for (int64_t m : {1, 16, 64})
    for (const auto& x : nk) decode.shapes.push_back({1, m, x[0], x[1], "rr", "decode"});
  s.push_back(decode);

  // misaligned: llm shapes with operands TMA cannot take as they are (rows or base not 16-byte aligned): the pad
  // path, the fallback template and cuBLASLt take them. bf16, A and B row-major. Each row also times tmagemm on the
  // same shape with aligned operands (the pad path's reference point).
  Suite misaligned{"misaligned", "mm", "bf16", {}};
  misaligned.report_aligned = true;
  misaligned.shapes.push_back({1, 4096, 14336, 4095, "rr", "K odd (Llama-3-8B MLP up, K - 1)"});
  misaligned.shapes.push_back({1, 4096, 4095, 14336, "rr", "N odd (Llama-3-8B MLP down, N - 1)"});
  misaligned.shapes.push_back({1, 4096, 6144, 4096, "rr", "A = buffer[:, 1:4097] of a 4096 x 4104 buffer (QKV)", 8, 1});
  misaligned.shapes.push_back({1, 4096, 14336, 4096, "rr", "B with ld = N + 1", 0, 0, 1, 0});
  misaligned.shapes.push_back({1, 4096, 14336, 4096, "rr", "out with ld = N + 3", 0, 0, 0, 3});
  misaligned.shapes.push_back({1, 4095, 4097, 4099, "rr", "M, N, K all odd"});
  s.push_back(misaligned);

  // waves: shapes whose tile count lands just past a multiple of the SMs, so a last partial wave idles most of the
  // GPU (1000³ is 32 tiles of 128x256 on 132 SMs; 4224³ is 544 = 4.12 waves). bf16, A and B row-major.
  Suite waves{"waves", "mm", "bf16", {}};
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1000, 1000, 1000}, {1536, 1536, 1536},
                         {2560, 2560, 2560}, {3000, 5000, 1000}, {1024, 12288, 4096}, {2304, 2304, 8192},
                         {6144, 1536, 4096}, {4224, 4224, 4224}})
    waves.shapes.push_back({1, m, n, k, "rr", "partial last wave"});
  s.push_back(waves);

  // fp8 (scaled_mm, e4m3 in, bf16 out): A row-major, B column-major (torch's layout rule); each shape with tensorwise
  // and rowwise scales, each with fast (use_fast_accum) and two-level accumulation. The decode rows (M <= 64) also
  // report TB/s.
  Suite fp8{"fp8", "scaled_mm", "e4m3", {}};
  fp8.epilogue = "tensorwise+fast|tensorwise|rowwise+fast|rowwise";
  fp8.report_bandwidth = true;
  std::vector<BenchShape> fp8_shapes = {
      {1, 8192, 8192, 8192, "rc", "square"},          {1, 4096, 14336, 4096, "rc", "Llama-3-8B MLP up"},
      {1, 4096, 4096, 14336, "rc", "Llama-3-8B MLP down"}, {1, 8192, 28672, 8192, "rc", "Llama-3-70B MLP up"},
      {1, 128, 8192, 8192, "rc", "small batch"},
      // (3000x5000x1024 in the issue: N = 5000 is refused by torch._scaled_mm's rule, N divisible by 16.)
      {1, 3000, 5008, 1024, "rc", "ragged"}};
  for (int64_t m : {1, 16, 64})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {28672, 8192}})
      fp8_shapes.push_back({1, m, n, k, "rc", "decode"});
  for (const BenchShape& x : fp8_shapes)
    for (const char* epilogue : {"tensorwise+fast", "tensorwise", "rowwise+fast", "rowwise"}) {
      BenchShape row = x;
      row.epilogue = epilogue;
      fp8.shapes.push_back(row);
    }
  s.push_back(fp8);

  // addmm: bias (N) as a 1xN view, beta = alpha = 1; each shape with three epilogues, the ones cuBLASLt fuses
  // (EPILOGUE_BIAS, GELU_BIAS (tanh approximation), RELU_BIAS). bf16, A row-major.
  Suite addmm{"addmm", "addmm", "bf16", {}};
  addmm.epilogue = "bias|bias+gelu_tanh|bias+relu";
  addmm.report_unfused = true;
  for (const BenchShape& x : {BenchShape{1, 4096, 14336, 4096, "rr", "Llama-3-8B MLP up"},
                              BenchShape{1, 8192, 8192, 8192, "rr", "square"},
                              BenchShape{1, 8192, 28672, 8192, "rc", "Llama-3-70B MLP up"},
                              BenchShape{1, 128, 8192, 8192, "rr", "small batch"},
                              BenchShape{1, 16, 4096, 4096, "rr", "decode"},
                              BenchShape{1, 3000, 5000, 1000, "rr", "ragged"}})
    for (const char* epilogue : {"bias", "bias+gelu_tanh", "bias+relu"}) {
      BenchShape row = x;
      row.epilogue = epilogue;
      addmm.shapes.push_back(row);
    }
  s.push_back(addmm);

  // bmm: (B, M, N, K), bf16, A and B row-major; each operand B dense matrices one after another. The baseline is
  // cuBLASLt's strided-batched matmul.
  Suite bmm{"bmm", "bmm", "bf16", {}};
  for (auto [batch, m, n, k, note] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t, const char*>{32, 1024, 1024, 1024, "square"},
        {64, 2048, 128, 2048, "narrow N"},
        {8, 4096, 4096, 4096, "large square"},
        {128, 512, 512, 64, "many small, K = 64"},
        {16, 128, 8192, 8192, "small M"}})
    bmm.shapes.push_back({batch, m, n, k, "rr", note});
  s.push_back(bmm);

  // grouped (grouped_mm, the MoE forward): (G, total M, N, K) with the tokens routed unevenly over the experts
  // (moe_routing); a (total M, K) row-major, each expert's weight b[g] an (N, K) row-major matrix (layout "rc", as
  // nn.Linear keeps it). The baseline is the better of cublasGemmGroupedBatchedEx and one cuBLASLt call per group.
  // The MoE decode rows (G = 64, 64 or 512 tokens) read every routed expert's weights once: TB/s is reported.
  Suite grouped{"grouped", "grouped_mm", "bf16", {}};
  grouped.report_bandwidth = true;
  for (int64_t experts : {8, 64})
    for (int64_t tokens : {4096, 32768})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{14336, 4096}, {4096, 14336}, {2048, 7168}})
        grouped.shapes.push_back({experts, tokens, n, k, "rc", "MoE"});
  for (int64_t tokens : {64, 512})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{2048, 7168}, {7168, 2048}})
      grouped.shapes.push_back({64, tokens, n, k, "rc", "MoE decode"});
  for (BenchShape& x : grouped.shapes) {
    x.group_rows = moe_routing(x.batch, x.m);
    x.routing = "moe";
  }
  s.push_back(grouped);
  return s;
}

}  // namespace

std::vector<int64_t> moe_routing(int64_t experts, int64_t tokens, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> weight(0.1, 1.1);
  std::vector<double> w(static_cast<std::size_t>(experts));
  for (double& x : w) x = weight(rng);
  std::discrete_distribution<int64_t> pick(w.begin(), w.end());
  std::vector<int64_t> rows(static_cast<std::size_t>(experts), 0);
  for (int64_t t = 0; t < tokens; ++t) ++rows[static_cast<std::size_t>(pick(rng))];
  return rows;
}

std::vector<int64_t> grouped_routing(const std::string& routing, int64_t experts, int64_t tokens) {
  std::vector<int64_t> rows = moe_routing(experts, tokens);
  if (routing == "moe") return rows;
  const std::string prefix = "aligned:";
  int64_t q = 0;
  if (routing.rfind(prefix, 0) == 0) {
    const std::string digits = routing.substr(prefix.size());
    const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
    if (!digits.empty() && digits.size() <= 4 && std::all_of(digits.begin(), digits.end(), digit))
      q = std::stoll(digits);
  }
  if (q < 1 || q > 4096)
    throw std::invalid_argument("routing '" + routing + "': expected moe or aligned:Q with Q from 1 to 4096");
  int64_t sum = 0;
  for (int64_t& r : rows) {
    r = (r + q / 2) / q * q;
    sum += r;
  }
  // The rounding's surplus or shortfall, one Q a group, largest groups first; what is left under Q (a total that is no
  // multiple of Q) to the largest.
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return rows[x] > rows[y]; });
  for (std::size_t pass = 0; pass < 2 * order.size() && (sum - tokens >= q || tokens - sum >= q); ++pass) {
    int64_t& r = rows[order[pass % order.size()]];
    const int64_t step = sum > tokens ? (r >= q ? -q : 0) : q;
    r += step;
    sum += step;
  }
  if (!order.empty()) rows[order.front()] += tokens - sum;
  return rows;
}

const std::vector<Suite>& all_suites() {
  static const std::vector<Suite> suites = make_suites();
  return suites;
}

std::vector<std::string> suite_names() {
  std::vector<std::string> names = {"default", "all"};
  for (const Suite& s : all_suites()) names.push_back(s.name);
  return names;
}

std::vector<Suite> expand_suite(const std::string& name) {
  auto find = [](const std::string& n) -> const Suite& {
    for (const Suite& s : all_suites())
      if (s.name == n) return s;
    throw std::invalid_argument("unknown suite '" + n + "'");
  };
  if (name == "default") return {find("square"), find("llm"), find("fp8")};
  // Ad-hoc scaled_mm rows: "fp8:MxNxK@EPILOGUE,..." (EPILOGUE as in the fp8 suite: tensorwise, rowwise, each with
  // "+fast"), e.g. "fp8:8192x8192x8192@rowwise,128x8192x8192@tensorwise+fast".
  if (name.rfind("fp8:", 0) == 0) {
    Suite custom = find("fp8");
    custom.name = "fp8-custom";
    custom.shapes.clear();
    std::size_t pos = 4;
    while (pos < name.size()) {
      const std::size_t end = std::min(name.find(',', pos), name.size());
      const std::string item = name.substr(pos, end - pos);
      const std::size_t at = item.find('@');
      BenchShape shape;
      shape.layout = "rc";
      shape.note = "custom";
      shape.epilogue = at == std::string::npos ? "" : item.substr(at + 1);
      static const char* kEpilogues[] = {"tensorwise+fast", "tensorwise", "rowwise+fast", "rowwise"};
      bool known = false;
      for (const char* e : kEpilogues) known |= shape.epilogue == e;
      if (std::sscanf(item.c_str(), "%ldx%ldx%ld", &shape.m, &shape.n, &shape.k) != 3 || !known)
        throw std::invalid_argument("bad fp8 row '" + item +
                                    "' (expected MxNxK@EPILOGUE, EPILOGUE tensorwise or rowwise, optionally +fast)");
      custom.shapes.push_back(shape);
      pos = end + 1;
    }
    return {custom};
  }
  // Ad-hoc shapes: "MxNxK[:layout],..." (layout rr by default), e.g. "3000x5000x1000:rc,1000x1000x1000".
  if (name.find('x') != std::string::npos && name.find_first_not_of("0123456789x:rc,") == std::string::npos) {
    Suite custom{"custom", "mm", "bf16", {}};
    std::size_t pos = 0;
    while (pos < name.size()) {
      const std::size_t end = std::min(name.find(',', pos), name.size());
      const std::string item = name.substr(pos, end - pos);
      BenchShape shape;
      shape.layout = "rr";
      const std::size_t colon = item.find(':');
      if (colon != std::string::npos) shape.layout = item.substr(colon + 1);
      if (std::sscanf(item.c_str(), "%ldx%ldx%ld", &shape.m, &shape.n, &shape.k) != 3 || shape.layout.size() != 2)
        throw std::invalid_argument("bad shape '" + item + "' (expected MxNxK[:layout])");
      shape.note = "custom";
      custom.shapes.push_back(shape);
      pos = end + 1;
    }
    return {custom};
  }
  if (name == "all") return all_suites();
  return {find(name)};
}

}  // namespace tmagemm::cli
