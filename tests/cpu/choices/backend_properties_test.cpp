// backend_properties_test.cpp (CPU) — the tuning properties each backend holds behind the Backend and Choice
// interfaces (choices/choice.hpp): the one on/off table (every backend has its row, its Options field and its
// TMAGEMM_* variable, which the disabled message, Backend::enabled and the database key read), the prunes (the
// persistent-TMA twin domination and prescreen, the fallback set aside beside any TMA-tile choice), the heuristic's
// score, pick and TMA-tile rule, and the tie policy, on a fake H200.
#include <gtest/gtest.h>

#include <cctype>
#include <optional>
#include <set>
#include <string>

#include "choices/choice.hpp"
#include "choices/fallback.hpp"
#include "choices/persistent_tma.hpp"
#include "choices/skinny.hpp"
#include "cpu/test_support.hpp"
#include "tune/tuner.hpp"

namespace tmagemm::choices {
namespace {

runtime::DeviceInfo h200() { return test_support::fake_h200(); }

GemmProblem problem(int64_t m, int64_t n, int64_t k) { return test_support::fake_mm_problem(m, n, k); }

// A choice with settable tuning properties that can run anything and launches nothing.
class FakeChoice final : public Choice {
 public:
  FakeChoice(std::string name, bool tma_tiles, std::optional<double> score = std::nullopt)
      : name_(std::move(name)), tma_tiles_(tma_tiles), score_(score) {}
  const std::string& name() const override { return name_; }
  const char* backend() const override { return "fake"; }
  std::string can_implement(const GemmProblem&, const runtime::DeviceInfo&) const override { return {}; }
  void precompile(const GemmProblem&, int) const override {}
  void launch(const GemmProblem&, cudaStream_t, const Options&, void*) const override {}
  std::optional<double> heuristic_score(const GemmProblem&, const runtime::DeviceInfo&, int) const override {
    return score_;
  }
  bool tma_tiles() const override { return tma_tiles_; }

 private:
  std::string name_;
  bool tma_tiles_;
  std::optional<double> score_;
};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

TEST(BackendSwitches, OneRowPerBackendWithItsFieldAndVariable) {
  std::set<std::string> names;
  for (const Backend& b : backends()) {
    names.insert(b.name);
    const BackendSwitch& s = backend_switch(b.name);
    EXPECT_STREQ(s.backend, b.name);
    EXPECT_EQ(std::string(s.env), "TMAGEMM_" + upper(s.field_name)) << b.name;
    // The row's field is the one that turns the backend on and off.
    Options o = Options::defaults_only();
    EXPECT_TRUE(b.enabled(o)) << b.name;
    o.*s.field = false;
    EXPECT_FALSE(b.enabled(o)) << b.name;
    for (const Backend& other : backends())
      if (&other != &b) EXPECT_TRUE(other.enabled(o)) << other.name << " off with " << b.name;
  }
  EXPECT_EQ(backend_switches().size(), backends().size());
  for (const BackendSwitch& s : backend_switches()) EXPECT_EQ(names.count(s.backend), 1u) << s.backend;
  EXPECT_THROW(backend_switch("no_such_backend"), std::logic_error);
  // The public fields and variables as the documentation names them.
  EXPECT_EQ(backend_switch("persistent_tma").field, &Options::persistent_tma);
  EXPECT_EQ(backend_switch("fallback").field, &Options::fallback);
  EXPECT_EQ(backend_switch("cublaslt").field, &Options::cublaslt);
  EXPECT_EQ(backend_switch("skinny").field, &Options::skinny);
  EXPECT_STREQ(backend_switch("persistent_tma").env, "TMAGEMM_PERSISTENT_TMA");
  EXPECT_STREQ(backend_switch("skinny").env, "TMAGEMM_SKINNY");
}

TEST(BackendSwitches, EachVariableSetsItsField) {
  for (const BackendSwitch& s : backend_switches()) {
    test_support::EnvGuard guard(s.env, "0");
    const Options o;
    EXPECT_FALSE(o.*s.field) << s.env;
    for (const BackendSwitch& other : backend_switches())
      if (&other != &s) EXPECT_TRUE(o.*other.field) << other.env << " with " << s.env << "=0";
  }
}

TEST(BackendSwitches, DisabledMessageNamesTheBackendsOwnVariable) {
  for (const BackendSwitch& s : backend_switches()) {
    Options o = Options::defaults_only();
    o.*s.field = false;
    const std::string expected =
        std::string("backend ") + s.backend + " disabled (Options::" + s.field_name + " / " + s.env + ")";
    int seen = 0;
    for (const auto& c : tune::enumerate(problem(16, 4096, 4096), o, h200()))
      if (std::string(c.choice->backend()) == s.backend) {
        ++seen;
        EXPECT_EQ(c.reason, expected);
      }
    EXPECT_GT(seen, 0) << s.backend;
  }
  // The skinny backend's message names TMAGEMM_SKINNY (it once said TMAGEMM_FALLBACK).
  Options o = Options::defaults_only();
  o.skinny = false;
  for (const auto& c : tune::enumerate(problem(16, 4096, 4096), o, h200()))
    if (std::string(c.choice->backend()) == "skinny") {
      EXPECT_EQ(c.reason, "backend skinny disabled (Options::skinny / TMAGEMM_SKINNY)");
      break;
    }
}

TEST(BackendSwitches, DatabaseKeyTagsInTableOrder) {
  const GemmProblem p = problem(3000, 5000, 1000);
  const std::string plain = tune::tuning_key(p, h200());
  Options o = Options::defaults_only();
  for (const BackendSwitch& s : backend_switches()) o.*s.field = false;
  EXPECT_EQ(tune::database_key(p, o, h200()), plain + "|-tma-fallback-cublaslt-skinny-pad");
  o = Options::defaults_only();
  o.skinny = false;
  EXPECT_EQ(tune::database_key(p, o, h200()), plain + "|-skinny");
  o.persistent_tma = false;
  o.sm_carveout = 4;
  EXPECT_EQ(tune::database_key(p, o, h200()), plain + "|-tma-skinny-carve4");
}

TEST(BackendProperties, OnlyPersistentTmaHasTmaTilesAndScores) {
  const GemmProblem p = problem(4096, 4096, 4096);
  for (const Backend& b : backends())
    for (const auto& c : b.enumerate(p, h200(), Options::defaults_only())) {
      const bool tma = std::string(b.name) == "persistent_tma";
      EXPECT_EQ(c->tma_tiles(), tma) << c->name();
      if (!tma) {
        EXPECT_FALSE(c->heuristic_score(p, h200(), 0).has_value()) << c->name();
        continue;
      }
      const TmaConfig* cfg = persistent_tma_config_of(*c);
      ASSERT_NE(cfg, nullptr);
      const auto s = c->heuristic_score(p, h200(), 8);
      if (cfg->tuner_only) {
        EXPECT_FALSE(s.has_value()) << c->name();
      } else {
        ASSERT_TRUE(s.has_value()) << c->name();
        EXPECT_EQ(*s, persistent_tma_score(p, *cfg, h200(), 8)) << c->name();
      }
    }
}

TEST(BackendProperties, TiePolicyIsTheLibrarysOnlyForCublasLt) {
  for (const Backend& b : backends())
    for (const auto& c : b.enumerate(problem(256, 256, 256), h200(), Options::defaults_only()))
      EXPECT_EQ(c->tie_policy() == TiePolicy::library_rank, std::string(b.name) == "cublaslt") << c->name();
}

TEST(BackendProperties, HeuristicPickIsTheSkinnyRule) {
  for (const Backend& b : backends()) {
    if (std::string(b.name) != "skinny") {
      EXPECT_EQ(b.heuristic_pick, nullptr) << b.name;
      continue;
    }
    ASSERT_NE(b.heuristic_pick, nullptr);
    for (int64_t m : {1, 16, 48, 64, 65})
      for (int carveout : {0, 12})
        EXPECT_EQ(b.heuristic_pick(problem(m, 4096, 4096), h200(), carveout),
                  skinny_heuristic_choice(problem(m, 4096, 4096), 132, carveout));
  }
}

TEST(BackendProperties, PrunesBelongToPersistentTmaFallbackAndPadTma) {
  for (const Backend& b : backends()) {
    const std::string name = b.name;
    EXPECT_EQ(b.prune != nullptr, name == "persistent_tma" || name == "fallback" || name == "pad_tma") << name;
  }
}

// The persistent-TMA prune on its own candidates: twins dominate direct-store configs, the prescreen sets aside what
// is predicted far behind; a candidate with a reason is left alone.
TEST(BackendProperties, PersistentTmaPruneDominatesAndPrescreens) {
  const GemmProblem p = problem(4096, 4096, 4096);
  const Backend b = persistent_tma_backend();
  std::vector<Candidate> cands;
  for (const auto& c : b.enumerate(p, h200(), Options::defaults_only())) cands.push_back({c, {}});
  cands.front().reason = "kept as it was";
  b.prune(p, h200(), Options::defaults_only(), cands);
  EXPECT_EQ(cands.front().reason, "kept as it was");
  int dominated = 0, prescreened = 0, kept = 0;
  for (const auto& c : cands) {
    dominated += c.reason.rfind("dominated by ", 0) == 0;
    prescreened += c.reason.rfind("set aside: predicted", 0) == 0;
    kept += c.reason.empty();
  }
  EXPECT_GT(dominated, 0);
  EXPECT_GT(prescreened, 0);
  EXPECT_GT(kept, 0);
  for (const auto& c : cands)
    if (c.choice->name() == "persistent_tma_64x128x64_s8_c1_g8_tmastore")
      EXPECT_NE(c.reason.find("set aside: predicted 2.00x the time of the best persistent-TMA config (the prescreen "
                              "keeps those within 1.33x)"),
                std::string::npos)
          << c.reason;
}

// The fallback's prune reads only Choice::tma_tiles of the other candidates: any applicable TMA-tile choice on a
// problem above kFallbackMaxVolumeBesideTma sets the fallback aside; a not-applicable one, or a small problem, not.
TEST(BackendProperties, FallbackPruneStandsAsideBesideAnyTmaTileChoice) {
  const Backend b = fallback_backend();
  auto reasons = [&](const GemmProblem& p, bool tma_tiles, const std::string& tma_reason) {
    std::vector<Candidate> cands;
    cands.push_back({std::make_shared<FakeChoice>("fake_tiles", tma_tiles), tma_reason});
    for (const auto& c : b.enumerate(p, h200(), Options::defaults_only())) cands.push_back({c, {}});
    b.prune(p, h200(), Options::defaults_only(), cands);
    std::set<std::string> r;
    for (std::size_t i = 1; i < cands.size(); ++i) r.insert(cands[i].reason);
    return r;
  };
  const GemmProblem large = problem(1024, 1024, 1024), small = problem(512, 512, 512);  // 2^30 and exactly 512^3
  const auto aside = reasons(large, true, "");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(*aside.begin(),
            "set aside: persistent TMA applies and M*N*K*batch = 1.07e+09 > 1.34e+08, where the fallback measured "
            "under 1/3 of cuBLASLt");
  EXPECT_EQ(reasons(large, false, ""), std::set<std::string>{""});
  EXPECT_EQ(reasons(large, true, "not applicable"), std::set<std::string>{""});
  EXPECT_EQ(reasons(small, true, ""), std::set<std::string>{""});
}

// The heuristic reads only the properties: the best heuristic_score wins, a backend's pick goes first, and where the
// rows of A and B both start off 32-byte sectors the first applicable choice without TMA tiles wins.
TEST(BackendProperties, HeuristicReadsScoresPicksAndTmaTiles) {
  const GemmProblem p = problem(4096, 4096, 4096);
  const auto low = std::make_shared<FakeChoice>("low", true, 1.0);
  const auto high = std::make_shared<FakeChoice>("high", true, 2.0);
  const auto plain = std::make_shared<FakeChoice>("plain", false);
  const auto unscored_tiles = std::make_shared<FakeChoice>("unscored_tiles", true);
  std::vector<Candidate> cands = {{unscored_tiles, {}}, {plain, {}}, {low, {}}, {high, {}}};
  EXPECT_EQ(tune::heuristic_choice(p, cands, h200()), high);
  cands[3].reason = "refused";
  EXPECT_EQ(tune::heuristic_choice(p, cands, h200()), low);
  cands[2].reason = "refused";
  EXPECT_EQ(tune::heuristic_choice(p, cands, h200()), unscored_tiles);  // no score applies: the first applicable
  // The skinny backend's pick, when it applies, goes first.
  const GemmProblem few = problem(16, 4096, 4096);
  const auto skinny = std::make_shared<FakeChoice>("skinny_64x64_st12_split2", false);
  std::vector<Candidate> with_skinny = {{high, {}}, {skinny, {}}};
  EXPECT_EQ(tune::heuristic_choice(few, with_skinny, h200()), skinny);
  with_skinny[1].reason = "refused";
  EXPECT_EQ(tune::heuristic_choice(few, with_skinny, h200()), high);
  // Rows of 2000 bytes (A) and 624 bytes (B): both 16 bytes off a sector every other row.
  const GemmProblem off = problem(200, 312, 1000);
  std::vector<Candidate> both = {{unscored_tiles, {}}, {high, {}}, {plain, {}}};
  EXPECT_EQ(tune::heuristic_choice(off, both, h200()), plain);
  both[2].reason = "refused";  // no choice without TMA tiles applies: the score rule decides
  EXPECT_EQ(tune::heuristic_choice(off, both, h200()), high);
}

}  // namespace
}  // namespace tmagemm::choices
