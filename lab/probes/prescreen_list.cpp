// prescreen_list.cpp — prints, for the suites' memory-bound rows, which persistent-TMA configs the tuner's
// enumeration keeps and why the others are set aside (no GPU: the fake H200 of the CPU tests).
// Build: see lab/probes/prescreen_list.sh.
#include <array>
#include <algorithm>
#include <cstdio>
#include <string>

#include "choices/persistent_tma.hpp"
#include "cpu/test_support.hpp"
#include "tune/benchmark.hpp"
#include "tune/tuner.hpp"

using namespace tmagemm;

static GemmProblem grouped(int64_t g, int64_t m, int64_t n, int64_t k) {
  GemmProblem p = test_support::fake_mm_problem(m, n, k);
  p.op = Op::grouped_mm;
  p.batch = g;
  p.b.batch_stride = k * n;
  return p;
}

static void show(const char* label, const GemmProblem& p) {
  const auto cands = tune::enumerate(p, Options::defaults_only(), test_support::fake_h200());
  int kept = 0, pre = 0, rescued = 0;
  double best = 0;  // the compute model's best whole-tile score (the prescreen's reference)
  for (const auto& c : cands)
    if (const auto* cfg = choices::persistent_tma_config_of(*c.choice);
        cfg && !cfg->stream_k && cfg->split_k == 1 && (c.reason.empty() || c.reason.rfind("set aside", 0) == 0) &&
        c.reason.find("dominated") == std::string::npos)
      best = std::max(best, choices::persistent_tma_score(p, *cfg, test_support::fake_h200(), 0));
  std::printf("%s  memory_bound=%d\n", label, memory_bound(p) ? 1 : 0);
  for (const auto& c : cands) {
    if (!choices::persistent_tma_config_of(*c.choice)) {
      if (c.reason.empty()) std::printf("   kept   %s\n", c.choice->name().c_str());
      continue;
    }
    const auto* cfg = choices::persistent_tma_config_of(*c.choice);
    const bool applies = c.reason.empty() || c.reason.rfind("set aside", 0) == 0;
    const double roof = applies ? choices::persistent_tma_roofline_s(p, *cfg, test_support::fake_h200(), 0) * 1e6 : 0;
    if (c.reason.empty()) {
      ++kept;
      const double ratio = choices::persistent_tma_score(p, *cfg, test_support::fake_h200(), 0) / best;
      const bool second = ratio < choices::kPrescreenRatio || (cfg->stream_k && ratio <= 1.0);
      rescued += second;
      std::printf("   kept   %-52s roofline %8.1f us  compute model %.2fx%s\n", c.choice->name().c_str(), roof,
                  1.0 / ratio, second ? "  (second chance)" : "");
    } else if (c.reason.rfind("set aside: predicted", 0) == 0) {
      ++pre;
      std::printf("   aside  %-52s roofline %8.1f us  (%s)\n", c.choice->name().c_str(), roof, c.reason.c_str());
    }
  }
  std::printf("   -> %d persistent-TMA kept (%d by the roofline's second chance), %d set aside by the prescreen\n",
              kept, rescued, pre);
}

static GemmProblem batched(int64_t b, int64_t m, int64_t n, int64_t k) {
  GemmProblem p = test_support::fake_mm_problem(m, n, k);
  p.op = Op::bmm;
  p.batch = b;
  p.a.batch_stride = m * k;
  p.b.batch_stride = k * n;
  p.out.batch_stride = m * n;
  return p;
}

int main() {
  for (auto s : {std::array<int64_t, 4>{32, 1024, 1024, 1024}, {64, 2048, 128, 2048}, {8, 4096, 4096, 4096},
                 {128, 512, 512, 64}, {16, 128, 8192, 8192}}) {
    char l[96];
    std::snprintf(l, sizeof l, "bmm %ld x %ldx%ldx%ld", (long)s[0], (long)s[1], (long)s[2], (long)s[3]);
    show(l, batched(s[0], s[1], s[2], s[3]));
  }
  for (int64_t m : {1, 16, 64})
    for (auto nk : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}, {28672, 8192}}) {
      char l[96];
      std::snprintf(l, sizeof l, "mm %ldx%ldx%ld", (long)m, (long)nk.first, (long)nk.second);
      show(l, test_support::fake_mm_problem(m, nk.first, nk.second));
    }
  for (int64_t m : {64, 512, 4096})
    for (auto nk : {std::pair<int64_t, int64_t>{2048, 7168}, {7168, 2048}, {14336, 4096}, {4096, 14336}}) {
      if (m != 4096 && nk.first != 2048 && nk.first != 7168) continue;
      char l[96];
      std::snprintf(l, sizeof l, "grouped 64 x %ld x %ld x %ld", (long)m, (long)nk.first, (long)nk.second);
      show(l, grouped(64, m, nk.first, nk.second));
    }
  return 0;
}
