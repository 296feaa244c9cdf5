// pad_tma_test.cpp (CPU) — the pad path's rules: which problems it takes (operands TMA refuses only for alignment),
// the scratch it asks for, its reasons in words, and the tuner's candidates for a misaligned problem.
#include <gtest/gtest.h>

#include <string>

#include "choices/choice.hpp"
#include "choices/pad_tma.hpp"
#include "cpu/test_support.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::choices {
namespace {

using test_support::fake_mm_problem;

runtime::DeviceInfo hopper() { return test_support::fake_h200(); }

// The pad-path candidates of `p` (name -> reason).
std::vector<Candidate> pad_candidates(const GemmProblem& p) {
  std::vector<Candidate> out;
  for (const auto& c : tune::enumerate(p, Options::defaults_only(), hopper()))
    if (std::string(c.choice->backend()) == "pad_tma") out.push_back(c);
  return out;
}

TEST(PadTma, TakesOddKWithScratchForAOnly) {
  // 4096 x 14336 x 4095, A row-major (pitch 4095 x 2 bytes: not a multiple of 16), B column-major (ld 4095 too).
  GemmProblem p = fake_mm_problem(4096, 14336, 4095, true);
  std::size_t bytes = 0;
  EXPECT_EQ(pad_tma_plan(p, &bytes), "");
  // Both operands are re-pitched to 8192-byte rows (128-byte granularity), each 256-byte aligned.
  EXPECT_EQ(bytes, std::size_t{4096} * 8192 + std::size_t{14336} * 8192);
  // B row-major (K x N = 4095 x 14336): its rows are 28672 bytes, TMA takes it; only A is copied.
  p = fake_mm_problem(4096, 14336, 4095, false);
  EXPECT_EQ(pad_tma_plan(p, &bytes), "");
  EXPECT_EQ(bytes, std::size_t{4096} * 8192);
}

TEST(PadTma, TakesAnOffsetBaseAndOddNAndSaysWhyNot) {
  GemmProblem p = fake_mm_problem(4096, 14336, 4096);
  std::size_t bytes = 1;
  EXPECT_EQ(pad_tma_plan(p, &bytes), "a and b are TMA-aligned already (persistent TMA takes the problem as it is)");
  EXPECT_EQ(bytes, 0u);
  p.a.data = static_cast<const char*>(p.a.data) + 2;  // one bf16 element off
  EXPECT_EQ(pad_tma_plan(p, &bytes), "");
  EXPECT_EQ(bytes, std::size_t{4096} * 8192);
  // N odd: B (K x N row-major) has 4095-element rows, and so has out: only B is copied; the direct-store configs
  // write out in place with masked stores, the TMA-store ones with plain realigned stores from their staging blocks
  // (no copy of out), which then dominate their twins.
  p = fake_mm_problem(4096, 4095, 14336);
  EXPECT_EQ(pad_tma_plan(p, &bytes), "");
  EXPECT_EQ(bytes, std::size_t{14336} * 8192);
  int tma_store_kept = 0, dominated = 0;
  for (const auto& c : pad_candidates(p)) {
    EXPECT_EQ(c.choice->workspace_bytes(p), std::size_t{14336} * 8192) << c.choice->name();
    if (c.choice->name().find("_tmastore") != std::string::npos)
      tma_store_kept += c.reason.empty();
    else
      dominated += c.reason.find("dominated by pad_persistent_tma_") != std::string::npos;
  }
  EXPECT_GE(tma_store_kept, 1);
  EXPECT_GE(dominated, 1);
  // What it does not take, in words.
  GemmProblem strided = fake_mm_problem(256, 256, 255);
  strided.a.col_stride = 2;
  strided.a.row_stride = 1023;
  EXPECT_EQ(pad_tma_plan(strided), "a has no unit stride (the pad path copies whole rows)");
  GemmProblem batched = fake_mm_problem(256, 256, 255);
  batched.batch = 4;
  batched.op = Op::bmm;
  EXPECT_EQ(pad_tma_plan(batched), "the pad path takes mm and addmm (not bmm)");
}

TEST(PadTma, TunerSeesPrescreenedPadChoicesOnlyForMisalignedProblems) {
  // Aligned, or only out's rows misaligned (ld N + 3: persistent TMA's TMA-store configs store it in place with
  // plain realigned stores): every pad choice is refused with the reason.
  GemmProblem out_only = fake_mm_problem(4096, 14336, 4096);
  out_only.out.row_stride = 14339;
  for (const GemmProblem& p : {fake_mm_problem(4096, 4096, 4096), out_only})
    for (const auto& c : pad_candidates(p))
      EXPECT_EQ(c.reason, "a and b are TMA-aligned already (persistent TMA takes the problem as it is)");
  // ... and persistent TMA's TMA-store configs but stream-K take out_only as it is.
  int tma_store_kept = 0;
  for (const auto& c : tune::enumerate(out_only, Options::defaults_only(), hopper())) {
    const std::string& name = c.choice->name();
    if (name.rfind("persistent_tma_", 0) != 0 || name.find("_tmastore") == std::string::npos ||
        name.find("_fp8_") != std::string::npos)
      continue;
    if (name.find("_sk") != std::string::npos) {  // stream-K: not with plain stores
      EXPECT_EQ(c.reason, "stream-K configs need an output TMA can address (rows and base on 16 bytes)");
      continue;
    }
    tma_store_kept += c.reason.empty();
    EXPECT_TRUE(c.reason.empty() || c.reason.find("set aside") != std::string::npos) << name << ": " << c.reason;
    // Out's rows off 16 bytes: only ping-pong configs store them (the deferred ones are set aside in words).
    if (name.find("_pp") == std::string::npos)
      EXPECT_EQ(c.reason.rfind("set aside: out's rows are off 16 bytes", 0), 0u) << name << ": " << c.reason;
  }
  EXPECT_GE(tma_store_kept, 1);
  // The same for the pad path's choices on N odd (B copied, out's rows 4095 elements), and not where out's rows are
  // on 16 bytes (K odd: out ld 14336) or where the regex leaves no ping-pong config.
  int deferred_aside = 0, pp_kept = 0;
  for (const auto& c : pad_candidates(fake_mm_problem(4096, 4095, 14336))) {
    const std::string& name = c.choice->name();
    if (name.find("_tmastore") == std::string::npos) continue;
    if (name.find("_pp") != std::string::npos) {
      pp_kept += c.reason.empty();
    } else {
      deferred_aside += c.reason.rfind("set aside: out's rows are off 16 bytes", 0) == 0;
      EXPECT_FALSE(c.reason.empty()) << name;
    }
  }
  EXPECT_GE(pp_kept, 1);
  EXPECT_GE(deferred_aside, 1);
  for (const auto& c : pad_candidates(fake_mm_problem(4096, 14336, 4095)))
    EXPECT_EQ(c.reason.find("out's rows are off 16 bytes"), std::string::npos) << c.choice->name();
  Options only = Options::defaults_only();
  only.choice_regex = "^persistent_tma_128x256x64_s4_c2_g8_tmastore$";
  for (const auto& c : tune::enumerate(out_only, only, hopper()))
    if (c.choice->name() == "persistent_tma_128x256x64_s4_c2_g8_tmastore") EXPECT_EQ(c.reason, "") << c.reason;
  // K odd: some pad choices are benchmarked; small tiles are set aside by the prescreen on the padded problem.
  int kept = 0, set_aside = 0;
  for (const auto& c : pad_candidates(fake_mm_problem(4096, 14336, 4095, true))) {
    EXPECT_EQ(c.choice->name().rfind("pad_persistent_tma_", 0), 0u) << c.choice->name();
    kept += c.reason.empty();
    set_aside += c.reason.find("set aside: predicted") != std::string::npos;
  }
  EXPECT_GE(kept, 1);
  EXPECT_GE(set_aside, 1);
  // Switched off, they are gone from the benchmarked set.
  Options o = Options::defaults_only();
  o.pad_tma = false;
  for (const auto& c : tune::enumerate(fake_mm_problem(4096, 14336, 4095, true), o, hopper()))
    if (std::string(c.choice->backend()) == "pad_tma") EXPECT_FALSE(c.reason.empty());
}

}  // namespace
}  // namespace tmagemm::choices
